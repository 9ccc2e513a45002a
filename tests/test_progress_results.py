"""labctl.progress.results: per-trial result files as a counter."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from labctl.progress.results import count_local, find_command, parse_find_output


def make_trials(root: Path) -> None:
    for i in range(5):
        d = root / "trials" / f"t{i:03d}"
        d.mkdir(parents=True)
        (d / "result.json").write_text('{"reward": 1}' if i < 4 else "")  # one still empty
        os.utime(d / "result.json", (1_750_000_000 + i, 1_750_000_000 + i))
    (root / "trials" / "t000" / "notes.txt").write_text("x")
    deep = root / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "result.json").write_text("{}")  # beyond maxdepth 4


def test_parse_find_output() -> None:
    text = "1750000000.25 120\n1750000300.5 0\nnot a line\n\n1750000100 64\n"
    r = parse_find_output(text)
    assert (r.count, r.partial, r.newest_mtime, r.bad_lines) == (2, 1, 1750000300.5, 1)
    assert r.to_dict()["counter_key"] == "results:trials:result.json"


def test_find_command_matches_the_local_walk(tmp_path: Path) -> None:
    make_trials(tmp_path)
    local = count_local(tmp_path, ["result.json"], maxdepth=4)
    assert (local.count, local.partial, local.newest_mtime) == (4, 1, 1_750_000_004)
    cmd = find_command(str(tmp_path), ["result.json"], maxdepth=4)
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, check=True).stdout
    assert parse_find_output(out).to_dict() == local.to_dict()
    assert count_local(tmp_path, ["result.json"], maxdepth=7).count == 5
    assert count_local(tmp_path / "missing").count == 0
    with pytest.raises(ValueError):
        find_command(str(tmp_path), [])
