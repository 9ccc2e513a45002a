"""prune-disk from start to end: measure the volume, collect candidates from every rule,
decide, and (with apply) delete oldest first until free space is back above the
threshold plus the margin, re-checking each candidate just before deleting it.

Statuses: `would_delete` (dry run), `deleted`, `failed`, `not_needed` (safe, but free
space is enough without it, or it is on another volume), `kept` (a reason says why).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from labctl.disk import caches, hfcache, traces
from labctl.disk.candidate import Candidate, keep_newest
from labctl.disk.rules import Rule
from labctl.disk.scan import ScanEnv
from labctl.volumes import GB, Volume, existing_ancestor, free_bytes, volume

COLLECTORS: dict[str, ModuleType] = {
    "hf_cache": hfcache,
    "traces": traces,
    "cache_dir": caches,
    "glob": caches,
}


@dataclass(frozen=True)
class Target:
    path: str  # the volume to keep free
    min_free: int  # bytes
    margin: int  # bytes
    apply: bool = False
    everything: bool = False  # --all: every safe candidate, whatever the free space

    @property
    def goal(self) -> int:
        return self.min_free + self.margin


def disk_record(vol: Volume, target: Target, phase: str, **extra: Any) -> dict[str, Any]:
    rec = {
        "kind": "disk",
        "phase": phase,
        "path": vol.path,
        "mount": vol.mount,
        "total": vol.total,
        "free": vol.free,
        "used": vol.used,
        "min_free": target.min_free,
        "goal_free": target.goal,
        "below_threshold": vol.free < target.min_free,
        "applied": target.apply,
        "message": f"{vol.free / GB:.1f} GB free on {vol.mount} "
        f"(threshold {target.min_free / GB:g} GB)",
    }
    rec.update(extra)
    return rec


def collect_all(rules: list[Rule], env: ScanEnv) -> Iterator[Candidate | dict[str, Any]]:
    for rule in rules:
        found: list[Candidate] = []
        for item in COLLECTORS[rule.kind].collect(rule, env):
            if isinstance(item, Candidate):
                found.append(item)
            else:
                yield item
        keep_newest([c for c in found if c.last_used is not None], rule.keep)
        yield from found


def _order(cands: list[Candidate], device: int, target: Target) -> list[Candidate]:
    """Safe candidates, oldest first; those on another volume only with --all."""
    safe = [c for c in cands if c.safe]
    for c in safe:
        if c.usage is not None and c.usage.device != device and not target.everything:
            c.status = "not_needed"
            c.notes.append("on another volume than the one being freed")
    pending = [c for c in safe if c.status == "pending"]
    return sorted(pending, key=lambda c: (c.last_used is None, c.last_used or 0.0, c.path))


def plan_dry(order: list[Candidate], free: int, target: Target) -> int:
    """Mark what a real run would delete; returns the projected free space."""
    for c in order:
        if target.everything or free < target.goal:
            c.status = "would_delete"
            free += c.exclusive
        else:
            c.status = "not_needed"
    return free


def recheck(cand: Candidate, env: ScanEnv) -> Candidate:
    """The candidate as it is now: re-measured, re-aged, re-verified (hashes for traces)."""
    env.refresh_open_files()
    env.verify = "hash"
    fresh: Candidate = COLLECTORS[cand.rule.kind].collect_one(cand.rule, cand.path, env)
    fresh.extra.pop("_error", None)
    for reason, message in cand.reasons:  # keep-N was decided with all candidates in view
        fresh.keep(reason, message)
    return fresh


def delete(cand: Candidate, env: ScanEnv) -> tuple[int, list[str]]:
    from labctl.disk.remove import OutsideRoot, remove_inside

    if cand.rule.kind == "hf_cache":
        return hfcache.delete(cand, env)
    device = cand.usage.device if cand.usage else None
    try:
        out = remove_inside(cand.rule.root_real, cand.path, device=device, owner=env.uid)
    except OutsideRoot:
        return 0, [f"{cand.path} is not inside {cand.rule.root_real}"]
    return out.bytes_freed, [f"{p}: {r}" for p, r in out.errors]


def apply_one(cand: Candidate, env: ScanEnv, target: Target) -> Candidate:
    from labctl.errors import LabctlError

    fresh = recheck(cand, env)
    if not fresh.safe:
        fresh.status = "kept"
        fresh.notes.append("re-checked just before deleting: kept")
        return fresh
    try:
        freed, problems = delete(fresh, env)
    except (OSError, LabctlError) as exc:
        freed, problems = 0, [str(getattr(exc, "message", None) or exc)]
    fresh.applied = True
    fresh.bytes_freed = freed
    fresh.free_after = free_bytes(target.path)
    fresh.status = "failed" if problems else "deleted"
    if problems:
        fresh.keep("delete_failed", "; ".join(problems[:3]))
    return fresh


def prune(rules: list[Rule], target: Target, env: ScanEnv) -> Iterator[dict[str, Any]]:
    path = existing_ancestor(target.path)
    target = Target(path, target.min_free, target.margin, target.apply, target.everything)
    vol = volume(path)
    yield disk_record(vol, target, "before")
    env.refresh_open_files()
    cands: list[Candidate] = []
    for item in collect_all(rules, env):
        if isinstance(item, Candidate):
            cands.append(item)
        else:
            yield item
    order = _order(cands, vol.device, target)
    extra: dict[str, Any] = {"open_files_complete": env.open_files.complete}
    if not target.apply:
        extra["projected_free"] = plan_dry(order, vol.free, target)
        planned = {id(c) for c in order}
        for c in [*order, *(c for c in cands if id(c) not in planned)]:
            if c.status == "pending":
                c.status = "kept"
            yield c.record(env.now)
    else:
        free = vol.free
        handled: set[int] = set()
        for c in order:
            if not target.everything and free >= target.goal:
                break
            handled.add(id(c))
            done = apply_one(c, env, target)
            free = done.free_after if done.free_after is not None else free
            yield done.record(env.now)
        for c in cands:
            if id(c) not in handled:
                c.status = "not_needed" if c.safe else "kept"
                yield c.record(env.now)
    yield disk_record(volume(path), target, "after", **extra)


def default_target_path(environ: Any) -> str:
    return os.path.normpath(environ.get("HOME") or "/")
