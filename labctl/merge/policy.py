"""merge-green's settings: the allowlist, the per-repo policy, and which repos to visit."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from labctl.errors import ConfigError, UsageError

METHODS = ("merge", "squash", "rebase")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_TARGET = re.compile(r"^(?P<repo>[^#\s]+)(?:#(?P<numbers>[0-9]+(?:,[0-9]+)*))?$")
# per-repo override keys and their types
OVERRIDES: dict[str, type] = {
    "merge_method": str,
    "approve": bool,
    "blocking_labels": list,
    "update_branch": bool,
    "strict_skipped": bool,
    "allow_forks": bool,
}


@dataclass(frozen=True)
class Policy:
    """What merge-green may do in one repo."""

    merge_method: str = "squash"
    approve: bool = False
    blocking_labels: tuple[str, ...] = ("do-not-merge", "wip")
    update_branch: bool = False
    strict_skipped: bool = False
    allow_forks: bool = False


@dataclass(frozen=True)
class Settings:
    allowlist: tuple[str, ...]
    policy: Policy = field(default_factory=Policy)
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    max_wait_s: float = 180.0
    mergeable_polls: int = 4

    def policy_for(self, repo: str) -> Policy:
        extra = dict(self.overrides.get(repo, {}))
        if "blocking_labels" in extra:
            extra["blocking_labels"] = tuple(extra["blocking_labels"])
        return replace(self.policy, **extra)


@dataclass(frozen=True)
class Target:
    repo: str
    numbers: tuple[int, ...] = ()  # empty: every open PR


def _check_overrides(table: Mapping[str, Any], allowlist: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for repo, values in table.items():
        where = f'merge_green.repos."{repo}"'
        if repo not in allowlist:
            raise ConfigError(f"{where} names a repo that is not in merge_green.allowlist")
        for key, value in values.items():
            kind = OVERRIDES.get(key)
            if kind is None:
                raise ConfigError(f"{where}: unknown key {key} (known: {', '.join(OVERRIDES)})")
            if not isinstance(value, kind) or (kind is list and not _strings(value)):
                raise ConfigError(f"{where}: {key} must be {kind.__name__}")
            if key == "merge_method" and value not in METHODS:
                raise ConfigError(f"{where}: merge_method must be one of {', '.join(METHODS)}")
        out[repo] = dict(values)
    return out


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def load(config: Any, *, merge_method: str | None = None, strict_skipped: bool = False) -> Settings:
    """Settings from the config; command-line flags win over every repo's value."""
    allowlist = tuple(config.get("merge_green.allowlist"))
    for name in allowlist:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(f"merge_green.allowlist: {name!r} is not owner/name")
    labels = config.get("merge_green.blocking_labels")
    if not _strings(labels):
        raise ConfigError("merge_green.blocking_labels must be a list of label names")
    overrides = _check_overrides(config.subtable("merge_green.repos"), allowlist)
    for values in overrides.values():
        if merge_method:
            values["merge_method"] = merge_method
        if strict_skipped:
            values["strict_skipped"] = True
    policy = Policy(
        merge_method=merge_method or config.get("merge_green.merge_method"),
        approve=config.get("merge_green.approve"),
        blocking_labels=tuple(labels),
        update_branch=config.get("merge_green.update_branch"),
        strict_skipped=strict_skipped or config.get("merge_green.strict_skipped"),
        allow_forks=config.get("merge_green.allow_forks"),
    )
    return Settings(
        allowlist=allowlist,
        policy=policy,
        overrides=overrides,
        max_wait_s=max(0.0, config.get("merge_green.max_wait_s")),
        mergeable_polls=max(0, config.get("merge_green.mergeable_polls")),
    )


def targets(args: list[str], allowlist: tuple[str, ...]) -> list[Target]:
    """`owner/name` or `owner/name#12,13` per argument; none: the whole allowlist."""
    if not args:
        return [Target(name) for name in allowlist]
    out = []
    for arg in args:
        m = _TARGET.match(arg.strip())
        if m is None or not _NAME.match(m["repo"]):
            raise UsageError(f"{arg!r}: give a repo as owner/name, or owner/name#NUMBER")
        numbers = tuple(int(n) for n in (m["numbers"] or "").split(",") if n)
        out.append(Target(m["repo"], numbers))
    return out
