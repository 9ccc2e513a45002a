"""A candidate for deletion: what it is, how big, how old, and why it must be kept.

`safe` is simply "no reason to keep it". Reasons (the first one is the record's `reason`):
too_recent, keep_newest, in_use, download_in_progress, protected, hf_cache_managed,
traces_managed, other_user, outside_root, mount_point_inside, unreadable, not_uploaded,
size_mismatch, hash_mismatch, hub_unreachable, hub_repo_not_found, no_hub_repo,
wandb_staging, changed, vanished.

Cross-user safety: labctl's user is its effective uid, root included. A candidate holding
any entry (file, directory, link) owned by another uid is kept (`other_user`, with each
uid, its name and how many entries), in the first look and again in the re-check just
before deleting. Root gets no exception — it is the one user who could delete anything:
to prune another user's cache, run labctl as that user.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass, field
from typing import Any

from labctl.disk.inuse import OpenFiles
from labctl.disk.rules import Rule
from labctl.disk.usage import Usage
from labctl.records import rfc3339

MAX_LISTED = 10


@dataclass(eq=False)  # one candidate is one object: compared by identity
class Candidate:
    rule: Rule
    path: str  # as found below the rule's root
    name: str  # what a person calls it: a repo id, an experiment, an entry name
    item: str  # hf_repo | hf_incomplete | experiment | entry | match
    usage: Usage | None = None
    last_used: float | None = None  # epoch seconds
    reasons: list[tuple[str, str]] = field(default_factory=list)  # (reason, message)
    extra: dict[str, Any] = field(default_factory=dict)  # kind-specific record fields
    notes: list[str] = field(default_factory=list)
    status: str = "pending"
    applied: bool = False
    bytes_freed: int | None = None
    free_after: int | None = None

    @property
    def safe(self) -> bool:
        return not self.reasons

    @property
    def bytes(self) -> int:
        return self.usage.bytes if self.usage else 0

    @property
    def exclusive(self) -> int:
        """What deleting it should give back (hard links living elsewhere excluded; for a
        cached HF repo also payloads in the shared blob store only it uses, which the
        library's delete strategy counts and a walk that follows no symlink cannot)."""
        walked = self.usage.exclusive if self.usage else 0
        return max(walked, int(self.extra.get("hf_expected_freed") or 0))

    def keep(self, reason: str, message: str) -> None:
        if all(r != reason for r, _ in self.reasons):
            self.reasons.append((reason, message))

    def age_s(self, now: float) -> float | None:
        return None if self.last_used is None else max(0.0, now - self.last_used)

    def record(self, now: float) -> dict[str, Any]:
        u = self.usage
        age = self.age_s(now)
        rec: dict[str, Any] = {
            "kind": "candidate",
            "rule": self.rule.name,
            "rule_kind": self.rule.kind,
            "path": self.path,
            "name": self.name,
            "item": self.item,
            "bytes": u.bytes if u else None,
            "bytes_exclusive": self.exclusive if u else None,
            "files": u.files if u else None,
            "last_used": rfc3339(self.last_used),
            "age_s": round(age, 1) if age is not None else None,
            "safe": self.safe,
            "reason": self.reasons[0][0] if self.reasons else None,
            "message": self.reasons[0][1] if self.reasons else None,
            "status": self.status,
            "applied": self.applied,
            "bytes_freed": self.bytes_freed,
            "free_after": self.free_after,
            "partial": bool(u and u.partial),
        }
        if len(self.reasons) > 1:
            rec["other_reasons"] = [r for r, _ in self.reasons[1:]]
        if u is not None and (u.errors or u.vanished or u.mounts):
            rec["unreadable"] = [p for p, _ in u.errors][:MAX_LISTED]
            rec["vanished"] = u.vanished
            rec["mounts"] = u.mounts[:MAX_LISTED]
        if u is not None and u.other_owners:
            rec["other_users"] = other_users(u)
        if self.notes:
            rec["notes"] = list(self.notes)
        rec.update(self.extra)
        return rec


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def other_users(u: Usage) -> list[dict[str, Any]]:
    """Who else owns entries of the tree, most entries first."""
    ranked = sorted(u.other_owners.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"uid": uid, "user": user_name(uid), "entries": n} for uid, n in ranked]


def _other_user_message(u: Usage) -> str:
    who = ", ".join(f"{o['user']} (uid {o['uid']}): {o['entries']}" for o in other_users(u))
    return (
        f"{u.other_owned} of {u.files + u.dirs} entries belong to another user than "
        f"labctl's ({user_name(u.owner)}, uid {u.owner}): {who}; e.g. {u.other_paths[0]}"
    )


def inside(root_real: str, path: str) -> bool:
    """`path` (a real path) lies strictly inside `root_real`."""
    return path.startswith(root_real.rstrip("/") + "/")


@dataclass(frozen=True)
class Guarded:
    """A path no candidate may hold. With `managed_by` (a rule kind) it is a root that kind
    alone prunes (the Hub cache, the trace folders): a candidate of any other kind that
    holds it, is it, or lies inside it is kept too."""

    path: str  # real path
    reason: str
    message: str
    managed_by: str = ""


Protected = list[Guarded]


def check_common(
    cand: Candidate,
    *,
    now: float,
    open_files: OpenFiles,
    protected: Protected,
    min_age_s: float | None = None,
) -> None:
    """The reasons to keep that apply to every kind of candidate (`min_age_s`: instead of
    the rule's minimum age)."""
    real_parent = os.path.realpath(os.path.dirname(cand.path))
    real = os.path.join(real_parent, os.path.basename(cand.path))
    root = cand.rule.root_real
    if not (real_parent == root or inside(root, real_parent)) or real == root:
        cand.keep("outside_root", f"{cand.path} resolves outside the rule's root {root}")
        return
    for g in protected:
        if g.managed_by == cand.rule.kind:
            continue
        if g.path == real or inside(real, g.path):
            cand.keep(g.reason, f"holds {g.path}: {g.message}")
        elif g.managed_by and inside(g.path, real):
            cand.keep(g.reason, f"inside {g.path}: {g.message}")
    u = cand.usage
    if u is not None:
        if u.other_owned:
            cand.keep("other_user", _other_user_message(u))
        if u.mount_count:
            cand.keep("mount_point_inside", f"another file system is mounted at {u.mounts[0]}")
        if u.error_count:
            cand.keep(
                "unreadable", f"{u.error_count} path(s) could not be read, e.g. {u.errors[0][0]}"
            )
    held = open_files.under(real)
    if held:
        pid = open_files.owners.get(held[0])
        cand.keep("in_use", f"{len(held)} open file(s) inside, e.g. {held[0]} (pid {pid})")
    age = cand.age_s(now)
    limit = cand.rule.min_age_s if min_age_s is None else min_age_s
    if age is not None and age < limit:
        cand.keep(
            "too_recent",
            f"used {age / 86400:.1f} days ago; the rule keeps anything younger than "
            f"{limit / 86400:g} days",
        )


def keep_newest(cands: list[Candidate], n: int) -> None:
    """The rule's `keep = N`: its N most recently used candidates stay."""
    if n <= 0:
        return
    ranked = sorted(cands, key=lambda c: c.last_used or 0.0, reverse=True)
    for cand in ranked[:n]:
        cand.keep("keep_newest", f"one of the {n} most recently used under this rule")
