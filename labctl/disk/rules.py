"""`[[prune.rules]]`: what prune-disk may consider, read and checked once.

    [[prune.rules]]
    kind = "hf_cache"            # hf_cache | traces | cache_dir | glob
    root = "~/.cache/huggingface/hub"   # hf_cache: HF_HUB_CACHE, else $HF_HOME/hub
    min_age_days = 7             # younger than this (last use): kept
    keep = 0                     # the N most recently used candidates of this rule: kept

    [[prune.rules]]
    kind = "traces"              # experiments/traces/<experiment>/, one candidate each
    root = "~/experiments/traces"
    repo = "lab/rl-traces"       # Hub repo holding traces/<experiment>/ ({experiment} allowed)
    repo_type = "dataset"
    path_in_repo = "traces/{experiment}"
    repos = { exp7 = "lab/exp7-traces" }   # per-experiment repo overrides

    [[prune.rules]]
    kind = "cache_dir"           # each entry of a tool's cache: pip, uv, torch, wandb …
    root = "~/.cache/pip"
    tool = "pip"                 # default: guessed from the folder name

    [[prune.rules]]
    kind = "glob"                # files or folders matching a pattern below root
    root = "~/sessions"
    pattern = "*/logs/*.log"

A root is expanded (`~`, relative to $HOME) and resolved once; nothing outside it is
ever deleted. The Hub cache and the trace folders (MANAGED) are pruned by their
own kind only, whatever other rules say.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import ConfigError
from labctl.volumes import expand

KINDS = ("hf_cache", "traces", "cache_dir", "glob")
DEFAULT_TRACES_ROOT = "~/experiments/traces"
# Roots one kind alone prunes: no other rule's candidate may hold or lie inside them.
MANAGED = {
    "hf_cache": "pruned by kind hf_cache only, through huggingface_hub",
    "traces": "trace folders are pruned by kind traces only, once verified on the Hub",
}
TOOLS = ("pip", "uv", "torch", "wandb", "hf_home", "other")
_COMMON = {"kind", "root", "name", "min_age_days", "keep"}
_ALLOWED = {
    "hf_cache": _COMMON | {"incomplete_min_age_min"},
    "traces": _COMMON | {"repo", "repo_type", "revision", "path_in_repo", "repos"},
    "cache_dir": _COMMON | {"tool"},
    "glob": _COMMON | {"pattern"},
}


@dataclass(frozen=True)
class Rule:
    kind: str
    root: str  # absolute, as configured (expanded)
    name: str
    min_age_s: float
    keep: int
    pattern: str = ""
    tool: str = ""
    repo: str = ""
    repo_type: str = "dataset"
    revision: str = "main"
    path_in_repo: str = "traces/{experiment}"
    repos: Mapping[str, str] = field(default_factory=dict)
    incomplete_min_age_s: float = 3600.0

    @property
    def root_real(self) -> str:
        return os.path.realpath(self.root)


def hf_home(environ: Mapping[str, str]) -> str:
    if environ.get("HF_HOME"):
        return expand(environ["HF_HOME"], environ)
    xdg = environ.get("XDG_CACHE_HOME") or expand("~/.cache", environ)
    return os.path.join(expand(xdg, environ), "huggingface")


def hf_hub_cache(environ: Mapping[str, str]) -> str:
    """Where huggingface_hub keeps its cache: HF_HUB_CACHE, else $HF_HOME/hub."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if environ.get(name):
            return expand(environ[name], environ)
    return os.path.join(hf_home(environ), "hub")


def managed_roots(rules: list[Rule], environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(kind, real root) of every root in MANAGED: each such rule's, and the defaults (the
    Hub cache huggingface_hub uses, the default trace folders) whether or not a rule of
    that kind is configured."""
    found = {
        ("hf_cache", os.path.realpath(hf_hub_cache(environ))),
        ("traces", os.path.realpath(expand(DEFAULT_TRACES_ROOT, environ))),
    }
    found |= {(r.kind, r.root_real) for r in rules if r.kind in MANAGED}
    return sorted(found)


def hf_token_paths(environ: Mapping[str, str]) -> list[str]:
    """The login token files (never deleted, whatever a rule says)."""
    home = hf_home(environ)
    token = environ.get("HF_TOKEN_PATH") or os.path.join(home, "token")
    stored = environ.get("HF_STORED_TOKENS_PATH") or os.path.join(home, "stored_tokens")
    return [expand(token, environ), expand(stored, environ)]


def _number(raw: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{where}: {key} must be a number >= 0, not {value!r}")
    return float(value)


def _string(raw: Mapping[str, Any], key: str, default: str, where: str) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be a string, not {value!r}")
    return value


def parse_rule(
    raw: Mapping[str, Any], index: int, environ: Mapping[str, str], min_age_days: float
) -> Rule:
    where = f"config [[prune.rules]] #{index + 1}"
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    unknown = sorted(set(raw) - _ALLOWED[kind])
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} for kind {kind!r}")
    root = _string(raw, "root", "", where)
    if not root:
        if kind == "hf_cache":
            root = hf_hub_cache(environ)
        elif kind == "traces":
            root = DEFAULT_TRACES_ROOT
        else:
            raise ConfigError(f"{where}: kind {kind!r} needs a root")
    root = expand(root, environ)
    if root == "/" or root == expand("~", environ):
        raise ConfigError(f"{where}: root {root} is too broad; name the folder to prune")
    keep = raw.get("keep", 0)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise ConfigError(f"{where}: keep must be an integer >= 0, not {keep!r}")
    pattern = _string(raw, "pattern", "", where)
    if kind == "glob" and (not pattern or pattern.startswith("/") or ".." in pattern.split("/")):
        raise ConfigError(f"{where}: glob needs a relative pattern without '..', not {pattern!r}")
    tool = _string(raw, "tool", "", where) or _guess_tool(root)
    if kind == "cache_dir" and tool not in TOOLS:
        raise ConfigError(f"{where}: tool must be one of {', '.join(TOOLS)}, not {tool!r}")
    repos = raw.get("repos", {})
    if not isinstance(repos, dict) or not all(isinstance(v, str) for v in repos.values()):
        raise ConfigError(f'{where}: repos must be a table of experiment = "org/repo"')
    return Rule(
        kind=kind,
        root=root,
        name=_string(raw, "name", "", where) or f"{kind}:{root}",
        min_age_s=_number(raw, "min_age_days", min_age_days, where) * 86400,
        keep=keep,
        pattern=pattern,
        tool=tool if kind == "cache_dir" else "",
        repo=_string(raw, "repo", "", where),
        repo_type=_string(raw, "repo_type", "dataset", where),
        revision=_string(raw, "revision", "main", where),
        path_in_repo=_string(raw, "path_in_repo", "traces/{experiment}", where),
        repos=dict(repos),
        incomplete_min_age_s=_number(raw, "incomplete_min_age_min", 60, where) * 60,
    )


def _guess_tool(root: str) -> str:
    base = os.path.basename(root.rstrip("/")).lower()
    if base == "huggingface":
        return "hf_home"
    return base if base in TOOLS else "other"


def parse_rules(
    tables: list[dict[str, Any]], environ: Mapping[str, str], min_age_days: float
) -> list[Rule]:
    rules = [parse_rule(t, i, environ, min_age_days) for i, t in enumerate(tables)]
    names = [r.name for r in rules]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"config [[prune.rules]]: two rules named {dupes[0]!r}; give each a name")
    return rules
