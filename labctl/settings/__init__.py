"""Every configuration setting labctl knows: one declarative table.

`config init` writes this table as a complete TOML file, `config show` prints each
effective value with where it came from, and the loader type-checks the file against it.
A command that needs settings adds them under its own section, in the module for what it
is for: `house.py` (output, paths, mcp, secrets, backends), `jobs.py` (poll, progress,
guard, experiments, cron, supervise), `rlhealth.py`, `tools.py` (gate, merge-green,
strip-yaml-comments, prune-disk, health); `SETTINGS` below lists the sections in the order
`config init` writes them. `setting.py` has the `Setting` type.

Precedence (highest first): a command-line flag, an environment variable, the config
file, the default. Environment variables are the ones each ecosystem already uses
(GITHUB_TOKEN, HF_TOKEN, WANDB_API_KEY, SUPABASE_URL, DATABASE_URL …), so labctl works
where the user's other tools work.
"""

from __future__ import annotations

from typing import Any

from labctl.settings.house import BACKENDS, DATABASE, MCP, OUTPUT, PATHS, SECRETS
from labctl.settings.jobs import CRON, EXPERIMENTS, GUARD, POLL, PROGRESS, SUPERVISE
from labctl.settings.rlhealth import RL_HEALTH
from labctl.settings.setting import Setting
from labctl.settings.tools import GATE, HEALTH, MERGE_GREEN, PRUNE, STRIP_YAML

__all__ = ["BY_KEY", "LIST_DEFAULTS", "LIST_SECTIONS", "SETTINGS", "SUBTABLES", "Setting"]

SETTINGS: tuple[Setting, ...] = (
    *OUTPUT,
    *PATHS,
    *POLL,
    *PROGRESS,
    *GATE,
    *MERGE_GREEN,
    *STRIP_YAML,
    *GUARD,
    *EXPERIMENTS,
    *CRON,
    *SUPERVISE,
    *RL_HEALTH,
    *MCP,
    *SECRETS,
    *BACKENDS,
    *PRUNE,
    *HEALTH,
    *DATABASE,
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}

# Sections holding arrays of tables (validated by the command that uses them).
# A dotted name ("prune.rules") is an array of tables inside a section: [[prune.rules]].
LIST_SECTIONS: dict[str, str] = {
    "clusters": "clusters to poll: name, host (`local` or an SSH alias), scheduler, …",
    "gates": "gates: name, table, [[gates.require]] benchmark/metric/threshold; or a streak",
    "prune.rules": "what prune-disk may delete: kind (hf_cache, traces, cache_dir, glob), "
    "root, min_age_days, keep, …",
}

# Tables nested in a section whose keys the command names (validated by that command).
SUBTABLES: dict[str, str] = {
    "merge_green.repos": 'per-repo overrides: [merge_green.repos."owner/name"] takes '
    "merge_method, approve, blocking_labels, update_branch, strict_skipped, allow_forks",
    "mcp.tools": '[mcp.tools."name"] per tool: enabled = false hides it, allow_writes = '
    "true|false overrides [mcp] allow_writes for it",
}

DEFAULT_CLUSTERS: list[dict[str, Any]] = [
    {"name": "local", "host": "local", "scheduler": "slurm"},
]
DEFAULT_PRUNE_RULES: list[dict[str, Any]] = [
    {"kind": "hf_cache"},
    {"kind": "traces", "root": "~/experiments/traces"},
]
# The tables each array has when the config file has none.
LIST_DEFAULTS: dict[str, list[dict[str, Any]]] = {
    "clusters": DEFAULT_CLUSTERS,
    "prune.rules": DEFAULT_PRUNE_RULES,
}
