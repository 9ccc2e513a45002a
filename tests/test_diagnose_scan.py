"""Bounded reading: tail-first windows, gzip, \\r lines, block boundaries, garbage input."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.diagnose import LogUnreadable, diagnose_chunks, diagnose_path, diagnose_text

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus"
OOM_TB = (
    'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    main()\n'
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"
)
HEALTHY = "{'loss': 1.2345, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.01}\n"
MIB = 1 << 20


def key(d: dict[str, Any]) -> tuple[Any, ...]:
    ev = [(e["origin"], e["line"], e["line_from_end"], e["text"]) for e in d["evidence"]]
    also = sorted((a["catalog_id"], a["line"]) for a in d["also_matched"])
    return d["category"], d["catalog_id"], d["fingerprint"], ev, also, d["requeued"]


def _write_log(path: Path, body_lines: int, tail: str, head: str = "") -> None:
    with path.open("w") as f:
        f.write(head)
        f.write(HEALTHY * body_lines)
        f.write(tail)


def test_tail_first_reads_only_the_window(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    _write_log(log, 400_000, OOM_TB)  # ~30 MB
    d = diagnose_path(log)
    assert d["category"] == "cuda_oom"
    assert d["bytes_read"] == 4 * MIB and d["window"]["mode"] == "tail"
    assert d["window"]["complete"] is False
    ev = d["evidence"][0]
    assert ev["line"] is None and ev["line_from_end"] == 1  # absolute number unknown
    full = diagnose_path(log, full=True)
    assert full["bytes_read"] == log.stat().st_size and full["evidence"][0]["line"] == 400_004
    assert full["fingerprint"] == d["fingerprint"]
    code = tmp_path / "code.log"
    _write_log(code, 400_000, 'Traceback (most recent call last):\n  File "t.py"\nKeyError: 1\n')
    c = diagnose_path(code)  # a final root well inside the window: no widening
    assert c["category"] == "code_error" and c["bytes_read"] == 4 * MIB


def test_sparse_4gb_log_tail_first_is_bounded(tmp_path: Path) -> None:
    log = tmp_path / "huge.log"
    tail = (HEALTHY * 2000 + OOM_TB).encode()
    with log.open("wb") as f:
        f.truncate(4 << 30)
        f.seek((4 << 30) - len(tail))
        f.write(tail)
    d = diagnose_path(log)
    assert d["category"] == "cuda_oom" and d["bytes_read"] <= 4 * MIB
    healthy = tmp_path / "healthy.log"
    with healthy.open("wb") as f:
        f.truncate(1 << 30)
        f.seek((1 << 30) - 10_000 * len(HEALTHY))
        f.write(HEALTHY.encode() * 10_000)
    h = diagnose_path(healthy, max_window=16 * MIB)
    assert h["category"] == "healthy" and h["bytes_read"] <= 16 * MIB
    assert h["window"]["regions"] >= 2 and h["window"]["complete"] is False


def test_widening_finds_a_cause_before_the_window(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    watchdog = (
        "[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, "
        "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n"
    )
    # the OOM is 160 (long) lines before the 1 MiB window; the watchdog alone is a symptom,
    # so the reader widens and finds the OOM that explains it
    frame = "frame #{}: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout() + 0x1e6 " + "x" * 8000
    with log.open("w") as f:
        f.write(HEALTHY * 20_000 + OOM_TB)
        f.write("".join(frame.format(i) + "\n" for i in range(160)))
        f.write(watchdog)
    d = diagnose_path(log, window=1 * MIB)
    assert d["category"] == "cuda_oom", d["also_matched"]
    assert d["window"]["regions"] >= 2


def test_memory_stays_bounded_on_a_full_scan(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    _write_log(log, 700_000, OOM_TB)  # ~52 MB
    tracemalloc.start()
    d = diagnose_path(log, full=True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert d["category"] == "cuda_oom"
    assert peak < 40 * MIB, peak  # a few 8 MiB blocks, never the log


def test_gzip_logs_are_streamed(tmp_path: Path) -> None:
    plain = tmp_path / "a.log"
    _write_log(plain, 5000, OOM_TB)
    gz = tmp_path / "a.log.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = diagnose_path(plain), diagnose_path(gz)
    assert key(a) == key(b) and b["window"]["mode"] == "stream"
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(gzip.compress(plain.read_bytes())[:500])
    with pytest.raises(LogUnreadable) as err:
        diagnose_path(bad)
    assert err.value.reason == "unreadable" and err.value.exit_code == 3


def test_unreadable_paths(tmp_path: Path) -> None:
    for p in (tmp_path / "missing.log", tmp_path):
        with pytest.raises(LogUnreadable, match="cannot read"):
            diagnose_path(p)


def test_carriage_return_only_lines() -> None:
    frames = "".join(f" {i}%|#   | {i}/100 [00:0{i % 10}<00:09]\r" for i in range(50))
    d = diagnose_text(
        frames + "RuntimeError: CUDA error: an illegal memory access was encountered\r"
    )
    assert d["category"] == "segfault" and d["evidence"][0]["line"] == 51
    crlf = diagnose_text(
        HEALTHY.replace("\n", "\r\n") * 10 + "OSError: [Errno 28] No space left on device\r\n"
    )
    assert crlf["category"] == "disk_full" and crlf["evidence"][0]["line"] == 11
    assert crlf["window"]["lines_scanned"] == 11


def test_very_long_lines_and_binary_noise() -> None:
    blob = b"\x00\xff" * (3 * MIB)  # 6 MiB without a line break
    text = blob + b" CUDA out of memory. Tried to allocate 1 GiB\n" + HEALTHY.encode()
    d = diagnose_chunks([text])
    assert d["category"] == "cuda_oom"
    assert len(d["evidence"][0]["text"]) <= 400


def test_block_boundaries_and_threads_do_not_change_the_result() -> None:
    log = (HEALTHY * 300 + OOM_TB + HEALTHY * 3 + "Killed\n").encode()
    ref = diagnose_chunks([log], threads=1)
    assert ref["category"] == "cuda_oom"
    for block in (4096, 5000, 1 << 16):
        for threads in (1, 2):
            assert key(diagnose_chunks([log], block=block, threads=threads)) == key(ref)


def test_tail_stream_has_relative_line_numbers() -> None:
    d = diagnose_chunks(
        [b"partial line CUDA out of memory\n", HEALTHY.encode(), OOM_TB.encode()], tail=True
    )
    assert d["category"] == "cuda_oom" and d["window"]["complete"] is False
    assert all(e["line"] is None for e in d["evidence"])
    assert d["evidence"][0]["line_from_end"] == 1 and d["window"]["lines_scanned"] == 5


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000), st.integers(min_value=1, max_value=300))
def test_garbage_never_raises(data: bytes, step: int) -> None:
    chunks = [data[i : i + step] for i in range(0, len(data), step)]
    d = diagnose_chunks(chunks, block=4096)
    assert d["kind"] == "diagnosis" and d["category"]


SAMPLES = [
    (HEALTHY * 50 + OOM_TB + "\r\n".join(["x"] * 5) + "\rKilled\r\n").encode(),
    *(p.read_bytes() for p in sorted(CORPUS.glob("*.log"))[::9]),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SAMPLES))), st.lists(st.integers(0, 10**6), max_size=12))
def test_random_chunk_splits_give_the_same_diagnosis(which: int, cuts: list[int]) -> None:
    data = SAMPLES[which]
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert key(diagnose_chunks(chunks, block=4096)) == key(diagnose_chunks([data]))


def test_hung_from_the_log_mtime(tmp_path: Path) -> None:
    import os

    log = tmp_path / "running.log"
    _write_log(log, 10, "")
    os.utime(log, (1_000_000, 1_000_000))
    sched = {"state": "RUNNING", "hung_after": 600}
    d = diagnose_path(log, sched=sched, now=1_000_000 + 3600)
    assert d["category"] == "hung_no_output" and d["scheduler"]["log_age"] == 3600
    assert diagnose_path(log, sched=sched, now=1_000_000 + 60)["category"] == "healthy"


def test_read_error_mid_stream_stops_the_workers() -> None:
    import threading

    def chunks():  # type: ignore[no-untyped-def]
        yield (HEALTHY * 200_000).encode()  # > one block: worker threads start
        raise OSError("connection lost")

    before = threading.active_count()
    with pytest.raises(OSError, match="connection lost"):
        diagnose_chunks(chunks(), threads=2)
    assert threading.active_count() <= before
