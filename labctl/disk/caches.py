"""Candidates from tool caches (`cache_dir`: each entry of the cache folder) and from
patterns (`glob`: each match below the root), with each tool's own safety notes."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator

from labctl.disk.candidate import Candidate
from labctl.disk.rules import Rule
from labctl.disk.scan import ScanEnv

# Entries a cache keeps for its own bookkeeping: never candidates.
META_ENTRIES = frozenset({"CACHEDIR.TAG", ".lock", ".gitignore", ".git"})
TOOL_NOTES = {
    "uv": "uv hard-links its cache into virtual environments: `bytes` is du of this entry "
    "alone, `bytes_exclusive` what deleting it frees (files still linked from an "
    "environment keep their blocks); `uv cache prune` is uv's own way",
    "pip": "pip re-downloads or rebuilds it on demand (`pip cache purge` is pip's own way)",
    "torch": "torch re-downloads hub checkpoints on demand; offline compute nodes cannot",
    "wandb": "W&B artifact cache: re-downloaded on demand (`wandb artifact cache cleanup`)",
    "hf_home": "under HF_HOME: the hub cache is pruned by kind hf_cache, never by hand",
}


def _entry_candidate(rule: Rule, path: str, item: str, env: ScanEnv) -> Candidate:
    cand = Candidate(rule=rule, path=path, name=os.path.relpath(path, rule.root), item=item)
    if os.path.islink(path):
        cand.usage = env.measure(path)
        cand.keep("symlink", "a symlink: labctl deletes what lies inside its roots, "
                  "not what a link points to")  # fmt: skip
        return cand
    cand.usage = env.measure(path, label=f"{rule.kind} {cand.name}")
    if cand.usage is None:
        cand.keep("vanished", f"{path} disappeared while it was being measured")
        return cand
    u = cand.usage
    if rule.kind == "cache_dir":  # a cache is "used" when read, not only when written
        cand.last_used = max(u.newest_mtime or 0.0, u.newest_atime or 0.0) or None
    else:
        cand.last_used = u.newest_mtime
    return cand


def _tool_checks(cand: Candidate, env: ScanEnv) -> None:
    tool = cand.rule.tool
    if tool in TOOL_NOTES:
        cand.notes.append(TOOL_NOTES[tool])
    parts = os.path.relpath(cand.path, os.path.dirname(cand.rule.root)).split(os.sep)
    if tool == "wandb" and ("staging" in parts or "tmp" in parts):
        cand.keep("wandb_staging", "W&B staging/temporary files may not be uploaded yet")
    if tool == "uv":
        lock = os.path.join(cand.rule.root_real, ".lock")
        held = env.open_files.under(lock)
        if held:
            cand.keep("in_use", f"a uv process holds the cache lock {lock} "
                      f"(pid {env.open_files.owners.get(held[0])})")  # fmt: skip


def collect_one(rule: Rule, path: str, env: ScanEnv) -> Candidate:
    from labctl.disk.candidate import check_common

    item = "entry" if rule.kind == "cache_dir" else "match"
    cand = _entry_candidate(rule, path, item, env)
    if cand.usage is not None:
        _tool_checks(cand, env)
        check_common(cand, now=env.now, open_files=env.open_files, protected=env.protected)
    return cand


def _outermost(paths: list[str]) -> list[str]:
    """Drop matches inside another match (the outer one's deletion covers them)."""
    out: list[str] = []
    for p in sorted(paths):
        if out and p.startswith(out[-1].rstrip("/") + "/"):
            continue
        out.append(p)
    return out


def candidate_paths(rule: Rule) -> list[str]:
    root = rule.root
    if not os.path.isdir(root):
        return []
    if rule.kind == "cache_dir":
        with os.scandir(root) as it:
            names = sorted(e.name for e in it if e.name not in META_ENTRIES)
        return [os.path.join(root, n) for n in names]
    matches = glob.glob(rule.pattern, root_dir=root, recursive=True)
    return _outermost([os.path.join(root, m.rstrip("/")) for m in matches if m not in ("", ".")])


def collect(rule: Rule, env: ScanEnv) -> Iterator[Candidate]:
    for path in candidate_paths(rule):
        yield collect_one(rule, path, env)
