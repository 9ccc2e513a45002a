"""Helpers for the disk tests: `du` as the reference, real tmpfs mounts, dropped privileges."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import ROOT

# A root process without these capabilities is held to file modes like anyone else.
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def du(path: Path | str, *prefix: str) -> int:
    """`du -sxB1 PATH` (the reference for disk usage); errors on stderr are fine."""
    out = subprocess.run(
        [*prefix, "du", "-sxB1", str(path)], capture_output=True, text=True, check=False
    )
    return int(out.stdout.split()[0])


def write(path: Path, size: int, byte: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(byte * size)
    return path


def age(path: Path, days: float) -> None:
    """Make `path` look last written and read `days` ago."""
    import time

    t = time.time() - days * 86400
    os.utime(path, (t, t), follow_symlinks=False)


def age_tree(root: Path, days: float) -> None:
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames + dirnames:
            age(Path(dirpath) / name, days)
    age(root, days)


def can_mount() -> bool:
    return os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "16m") -> Iterator[Path]:
    """A real tmpfs mounted at `where` (skips the test when we may not mount)."""
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "labctl-test", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def no_dac_available() -> bool:
    if os.geteuid() != 0:
        return True  # already unprivileged: modes apply
    res = subprocess.run([*NO_DAC, "true"], capture_output=True, check=False)
    return res.returncode == 0


def run_unprivileged(code: str) -> str:
    """Run Python `code` with file modes enforced (as root: DAC capabilities dropped)."""
    prefix = NO_DAC if os.geteuid() == 0 else []
    res = subprocess.run(
        [*prefix, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return res.stdout
