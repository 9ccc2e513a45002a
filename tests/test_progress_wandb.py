"""labctl.progress.wandb_file against real W&B offline runs (no network) and damaged copies."""

from __future__ import annotations

import random
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.wandb_fixtures import run_file, start_run, wait_for
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.progress.wandb_file import (
    BLOCK,
    MAGIC,
    find_run_dirs,
    iter_chunks,
    iter_records,
    read_wandb_file,
)

STEPS = 40


def test_live_then_finished_run(wandb_env: Path) -> None:
    run = start_run(wandb_env)
    try:
        for i in range(STEPS):
            run.log({"loss": 1.0 / (i + 1), "actor/entropy": 0.5, "note": "text is skipped"})
        path = run_file(wandb_env)
        live = wait_for(path, lambda p: p.step == STEPS - 1)
        assert not live.finished and live.exit_code is None
        assert live.metrics == {"loss": 1.0 / STEPS, "actor/entropy": 0.5}
        assert live.timestamp is not None and abs(live.timestamp - time.time()) < 120
        assert live.runtime is not None and live.runtime >= 0
        assert live.run_id == run.id and live.size == path.stat().st_size
    finally:
        run.finish()
    done = wait_for(path, lambda p: p.finished)
    assert (done.step, done.finished, done.exit_code) == (STEPS - 1, True, 0)
    assert done.bytes_read <= done.size and not done.partial_tail and done.gaps == 0


@pytest.fixture
def finished_run(wandb_env: Path) -> Path:
    """A finished run with many blocks and a history record bigger than a 32 KiB block."""
    run = start_run(wandb_env)
    for i in range(600):
        run.log({"loss": 1.0 / (i + 1), "lr": 1e-4, "grad_norm": 0.1 * i})
    run.log({f"layer{k}/weight_norm": float(k) for k in range(3000)})  # FIRST/MIDDLE/LAST
    run.log({"loss": 0.001, "grad_norm": 0.5})
    run.finish()
    path = run_file(wandb_env)
    wait_for(path, lambda p: p.finished)
    return path


def test_multi_block_run_and_big_record(finished_run: Path) -> None:
    size = finished_run.stat().st_size
    assert size > 3 * BLOCK
    kinds = {kind for kind, _ in iter_chunks(finished_run.read_bytes(), len(MAGIC))}
    assert {1, 2, 3, 4} <= kinds  # FULL, FIRST, MIDDLE and LAST chunks all occur
    p = read_wandb_file(finished_run)
    assert (p.step, p.finished, p.metrics) == (601, True, {"loss": 0.001, "grad_norm": 0.5})
    assert p.bytes_read < size  # a tail window, not the whole file
    # cut just before the last small history record: the big one is now the newest
    data = finished_run.read_bytes()
    copy = finished_run.with_name("big-last.wandb")
    copy.write_bytes(data[: _last_history_offset(data)])
    q = read_wandb_file(copy)
    assert q.step == 600 and len(q.metrics) == 200 and not q.finished


def _last_history_offset(data: bytes) -> int:
    """File offset of the chunk holding the last history record."""
    from wandb.proto import wandb_internal_pb2 as pb

    pos, last = len(MAGIC), -1
    while pos + 7 <= len(data):
        if BLOCK - pos % BLOCK < 7:
            pos += BLOCK - pos % BLOCK
            continue
        _, length, kind = struct.unpack_from("<IHB", data, pos)
        if kind == 1:
            rec = getattr(pb, "Record").FromString(data[pos + 7 : pos + 7 + length])
            if rec.WhichOneof("record_type") == "history":
                last = pos
        pos += 7 + length
    return last


def test_truncated_copies_tolerate_a_partial_last_record(finished_run: Path) -> None:
    data = finished_run.read_bytes()
    last_hist = _last_history_offset(data)
    partial = 0
    for cut in range(last_hist, last_hist + 120):
        copy = finished_run.with_name(f"cut{cut}.wandb")
        copy.write_bytes(data[:cut])
        p = read_wandb_file(copy)
        assert p.step in (600, 601) and not p.finished
        partial += p.partial_tail
        if cut - last_hist < 60:  # the small last history record is cut: the previous step
            assert p.step == 600
    assert partial > 100


def test_garbage_prepended_and_appended(finished_run: Path) -> None:
    data = finished_run.read_bytes()
    rng = random.Random(5)
    for front, back in ((12345, 0), (0, 5000), (777, 40000), (BLOCK + 3, 9)):
        copy = finished_run.with_name(f"g{front}-{back}.wandb")
        copy.write_bytes(rng.randbytes(front) + data + rng.randbytes(back))
        p = read_wandb_file(copy)
        assert (p.step, p.metrics["loss"], p.finished) == (601, 0.001, True), (front, back)


def test_find_run_dirs(finished_run: Path, wandb_env: Path) -> None:
    runs = find_run_dirs(wandb_env)
    assert len(runs) == 1
    run = runs[0]
    assert run.offline and run.latest and run.wandb_file == str(finished_run)
    assert run.run_id in finished_run.name
    nested = wandb_env / "outputs" / "exp1"
    nested.mkdir(parents=True)
    (wandb_env / "wandb").rename(nested / "wandb")
    assert [r.run_id for r in find_run_dirs(wandb_env)] == [run.run_id]
    assert find_run_dirs(wandb_env / "missing") == []


def test_importing_the_module_leaves_wandb_out() -> None:
    code = "import labctl.progress.wandb_file, sys; print('wandb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert out.stdout.strip() == b"False"


# --- the chunk format itself, on hand-made files ---------------------------------------


def write_log(records: list[bytes]) -> bytes:
    """The writer side of the format, as wandb writes it (header, 32 KiB blocks, padding)."""
    out = bytearray(MAGIC)
    for rec in records:
        first = True
        while True:
            room = BLOCK - len(out) % BLOCK
            if room < 7:
                out += b"\0" * room
                continue
            piece, rec = rec[: room - 7], rec[room - 7 :]
            kind = (1 if not rec else 2) if first else (4 if not rec else 3)
            crc = zlib.crc32(piece, zlib.crc32(bytes([kind])))
            out += struct.pack("<IHB", crc, len(piece), kind) + piece
            first = False
            if not rec:
                break
    return bytes(out)


def payloads(data: bytes) -> Iterator[bytes]:
    return (p for p in iter_records(data, len(MAGIC)) if isinstance(p, bytes))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=70000), min_size=1, max_size=6))
def test_reassembly_round_trips(records: list[bytes]) -> None:
    assert list(payloads(write_log(records))) == records


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=5000), st.binary(max_size=3000), st.integers(0, 10**6))
def test_garbage_never_raises(noise: bytes, tail: bytes, seed: int) -> None:
    data = write_log([random.Random(seed).randbytes(900) for _ in range(3)])
    for blob in (noise, noise + data, data + tail, data[: seed % len(data)], MAGIC + noise):
        list(iter_records(blob))
        list(iter_records(blob, len(MAGIC)))


def test_reader_on_garbage_files(tmp_path: Path) -> None:
    rng = random.Random(1)
    for i, size in enumerate((0, 3, 7, 100, BLOCK * 3 + 5)):
        path = tmp_path / f"run-x{i}.wandb"
        path.write_bytes((MAGIC + rng.randbytes(size))[: max(size, 0)])
        p = read_wandb_file(path)
        assert p.step is None and not p.finished and p.run_id == f"x{i}"
