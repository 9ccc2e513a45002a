"""The experiments under a root: which are active, which complete (--list builds on it)."""

from __future__ import annotations

from pathlib import Path

from labctl.experiments.match import valid_name


def names_in(folder: Path) -> list[str]:
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and valid_name(p.name))
    except OSError:
        return []


def complete_names(root: Path) -> list[str]:
    return names_in(root / "complete")
