"""Property tests for the log scanner: chunking never changes the answer, input never crashes."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.progress.formats import parse_hf_dict, parse_levanter, parse_progress_line, parse_tqdm
from labctl.progress.logscan import ScanConfig, ScanResult, ScanState, _reverse_blocks, scan_chunk

FIX = Path(__file__).resolve().parent / "fixtures" / "progress"
FIXTURES = {p.name: p.read_bytes() for p in sorted(FIX.glob("*.log"))}
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def feed(data: bytes, cuts: list[int], config: ScanConfig | None = None) -> ScanResult:
    cfg = config or ScanConfig()
    state: ScanState | None = None
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    result = scan_chunk(b"", None, config=cfg)
    for lo, hi in itertools.pairwise(bounds):
        result = scan_chunk(data[lo:hi], state, start=lo, size=hi, config=cfg)
        state = result.state
    return result


def answer(r: ScanResult) -> tuple[object, ...]:
    return (r.counter, r.value, r.total, r.source, r.phase, r.finished, r.counter_key, r.metrics)


@st.composite
def hf_logs(draw: st.DrawFn) -> bytes:
    """An HF-Trainer-shaped log: `\\r` frames, metric dicts, nested eval bars, noise lines."""
    total = draw(st.integers(5, 400))
    out = [b"[INFO|trainer.py:2128] >> ***** Running training *****\n"]
    if draw(st.booleans()):
        out.append(b"\rMap: 100%|##########| 9000/9000 [00:01<00:00, 9000.00 examples/s]\n")
    step = 0
    for _ in range(draw(st.integers(1, 40))):
        event = draw(st.sampled_from(["frames", "frames", "dict", "eval", "noise", "ckpt"]))
        epoch = f"{step / total:.2f}"
        if event == "frames" and step < total:
            for _ in range(draw(st.integers(1, 12))):
                step = min(total, step + draw(st.integers(0, 3)))
                pct, secs = step * 100 // total, step % 60
                out.append(
                    f"\r{pct:3d}%|##   | {step}/{total} [00:{secs:02d}<01:00, 1.1it/s]".encode()
                )
        elif event == "dict":
            loss = round(draw(st.floats(0, 5, allow_nan=False)), 4)
            line = f"{{'loss': {loss}, 'grad_norm': 1.0, 'learning_rate': 5e-06, 'epoch': {epoch}}}"
            out.append(b"\r" + b" " * 40 + b"\r" + line.encode() + b"\n")
        elif event == "eval":
            n = draw(st.integers(1, 8))
            out.extend(
                f"\n\r{k * 100 // n:3d}%|#    | {k}/{n} [00:00<00:00, 9.0it/s]\x1b[A".encode()
                for k in range(n + 1)
            )
            line = f"{{'eval_loss': 0.5, 'eval_runtime': 1.5, 'epoch': {epoch}}}"
            out.append(b"\n\r" + b" " * 30 + b"\x1b[A\r" + line.encode() + b"\n")
        elif event == "noise":
            out.append(
                draw(st.sampled_from([b"\nwandb: WARNING x\n", b"NCCL INFO ring 0\n", b"\n"]))
            )
        elif event == "ckpt":
            out.append(f"\nSaving model checkpoint to out/checkpoint-{step}\n".encode())
    return b"".join(out)


cut_lists = st.lists(st.integers(1, 200_000), max_size=8)


@SETTINGS
@given(hf_logs(), cut_lists)
def test_random_chunking_gives_the_whole_read_answer(log: bytes, cuts: list[int]) -> None:
    cuts = [c % max(1, len(log)) for c in cuts]
    assert answer(feed(log, cuts)) == answer(scan_chunk(log))


@SETTINGS
@given(st.sampled_from(sorted(FIXTURES)), cut_lists)
def test_random_chunking_of_fixtures(name: str, cuts: list[int]) -> None:
    log = FIXTURES[name]
    cuts = [c % len(log) for c in cuts]
    assert answer(feed(log, cuts)) == answer(scan_chunk(log))


@SETTINGS
@given(hf_logs(), st.integers(1, 64), st.integers(8, 4096))
def test_tail_reads_never_invent_a_counter(log: bytes, first_tail: int, max_read: int) -> None:
    """Reads that skip bytes (first sight, the cap) only ever report values the log shows."""
    cfg = ScanConfig(first_tail=first_tail, max_read=max_read)
    whole = scan_chunk(log)
    start = max(0, len(log) - first_tail)
    r = scan_chunk(log[start:], None, start=start, size=len(log), config=cfg)
    if r.value is not None:
        assert r.total == whole.total and r.value <= (whole.value or 0)


@SETTINGS
@given(st.binary(max_size=3000), st.binary(max_size=200), st.integers(0, 10_000))
def test_garbage_never_raises(noise: bytes, more: bytes, start: int) -> None:
    frag = FIXTURES["hf_trainer_running.log"][start % 4000 :][:1500]
    data = noise + frag + more + frag[::-1]
    r1 = scan_chunk(data, None, start=start, size=start + len(data))
    r2 = scan_chunk(more + noise, r1.state, start=start + len(data) + 7, size=start + 10**6)
    scan_chunk(noise, r2.state, start=0, size=len(noise))  # shrank: a reset
    r1.to_dict()
    r2.to_dict()


@SETTINGS
@given(st.text(max_size=400))
def test_recognisers_accept_any_text(text: str) -> None:
    bar = "%|| 1/2 [00:01<00:01, 1it/s]"
    for candidate in (text, "{'" + text + "}", text + bar, "Progress on:" + text):
        line = candidate.encode("utf-8", "surrogatepass")
        parse_progress_line(line)
        parse_tqdm(line)
        parse_hf_dict(line)
        parse_levanter(line)


@SETTINGS
@given(st.binary(max_size=3000), st.integers(1, 300))
def test_reverse_blocks_cover_the_buffer(buf: bytes, block: int) -> None:
    lines: list[bytes] = []
    for parts, offsets in _reverse_blocks(buf, block):
        for line, off in zip(parts, offsets, strict=False):
            assert buf[off : off + len(line)] == line
            body = line.rstrip(b"\r\n")
            assert b"\r" not in body and b"\n" not in body
        lines[0:0] = parts
    assert b"".join(lines) == buf
