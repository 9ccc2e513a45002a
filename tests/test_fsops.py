"""Atomic replacement, exclusive creation and the state lock."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from labctl.errors import LockedError
from labctl.fsops import atomic_write_bytes, create_exclusive, state_lock


def test_atomic_write_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "f.yaml"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    atomic_write_bytes(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.yaml"]


def test_atomic_write_goes_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_bytes(b"a: 1\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    atomic_write_bytes(link, b"a: 2\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"a: 2\n"


def test_create_exclusive_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "2026-11-30_sweep.md"
    create_exclusive(path, b"first")
    with pytest.raises(FileExistsError):
        create_exclusive(path, b"second")
    assert path.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_state_lock_waits_then_refuses_with_a_locked_error(tmp_path: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path; from labctl.fsops import state_lock\n"
        "with state_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(3)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    start = time.monotonic()
    with pytest.raises(LockedError) as err, state_lock(tmp_path, wait_s=0.5):
        pass
    assert time.monotonic() - start >= 0.5
    assert err.value.exit_code == 3 and "another labctl run" in err.value.message
    holder.wait()
    with state_lock(tmp_path, wait_s=0.5) as lock:  # free again once the holder exits
        assert lock.exists()
