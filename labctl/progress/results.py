"""Per-trial result files as a progress counter (RL/eval sweeps writing `result.json` per trial).

One bounded `find` on the cluster gives every file's mtime and size in one pass:

    cmd = find_command("/scratch/me/run42", ["result.json"], maxdepth=4)   # run it remotely
    obs = parse_find_output(stdout)        # count, partial (empty) files, newest mtime

`count_local` does the same walk on a local directory. The counter (`trials`) is the number of
non-empty files; empty ones count as `partial` (writers should use tmp + rename).
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class ResultsCount:
    count: int = 0  # non-empty matching files: the `trials` counter
    partial: int = 0  # empty matching files (being written, or failed writers)
    newest_mtime: float | None = None
    bad_lines: int = 0  # find output lines that did not parse
    globs: tuple[str, ...] = ()

    @property
    def counter_key(self) -> str:
        return "results:trials:" + ",".join(self.globs)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["globs"] = list(self.globs)
        out["counter_key"] = self.counter_key
        return out


def find_command(root: str, globs: Sequence[str] = ("result.json",), maxdepth: int = 4) -> str:
    """A POSIX `find` (GNU -printf) printing `<mtime> <size>` per matching file."""
    if not globs:
        raise ValueError("at least one glob")
    names = " -o ".join(f"-name {shlex.quote(g)}" for g in globs)
    return (
        f"find {shlex.quote(root)} -maxdepth {int(maxdepth)} -type f \\( {names} \\)"
        " -printf '%T@ %s\\n' 2>/dev/null"
    )


def parse_find_output(text: str | bytes, globs: Sequence[str] = ("result.json",)) -> ResultsCount:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    out = ResultsCount(globs=tuple(globs))
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        try:
            mtime, size = float(parts[0]), int(parts[1])
        except (ValueError, IndexError):
            out.bad_lines += 1
            continue
        _add(out, mtime, size)
    return out


def _add(out: ResultsCount, mtime: float, size: int) -> None:
    if size > 0:
        out.count += 1
    else:
        out.partial += 1
    if out.newest_mtime is None or mtime > out.newest_mtime:
        out.newest_mtime = mtime


def count_local(
    root: str | os.PathLike[str], globs: Sequence[str] = ("result.json",), maxdepth: int = 4
) -> ResultsCount:
    """The local equivalent of `find_command` (depth as find's: 1 = files directly in root)."""
    out = ResultsCount(globs=tuple(globs))
    stack = [(os.fspath(root), 0)]
    while stack:
        path, depth = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < maxdepth:
                        stack.append((entry.path, depth + 1))
                elif entry.is_file(follow_symlinks=False) and any(
                    fnmatch.fnmatchcase(entry.name, g) for g in globs
                ):
                    st = entry.stat(follow_symlinks=False)
                    _add(out, st.st_mtime, st.st_size)
            except OSError:
                continue
    return out
