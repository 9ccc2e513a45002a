"""The `[[clusters]]` tables of the config, validated into `ClusterConfig`s.

Every problem is one line naming the cluster and the key (a `config` error, exit 2), and
nothing is polled when any cluster is misconfigured. Keys:

    name          unique; letters, digits, `.`, `_`, `-`
    host          "local" (default) or an SSH host alias from ~/.ssh/config
    ssh_options   extra ssh arguments, e.g. ["-F", "/path/ssh_config"]
    scheduler     "slurm" (default), "command" or "supervise" (labctl.cluster.scheduler)
    users         whose jobs to watch (default: the login user on the cluster)
    accounts      SLURM accounts to watch (ANDed with users by SLURM)
    all_users     true: every user's jobs (overrides users)
    skip          job-name patterns (fnmatch) that are out of scope: counted, not analysed
    timeout_s     seconds the whole poll of this cluster may take (default poll.timeout_s)
    path_prepend  directories put in front of PATH on the cluster
    accounting    slurm: false when the cluster has no slurmdbd (no sacct; jobs that leave
                  the queue become `unknown`)
    command       command scheduler: a shell command printing JSON / JSON Lines job rows
    rows          command scheduler: dotted path to the list of rows in a JSON document
    fields        command scheduler: labctl field -> dotted path in a row
    states        command scheduler: the scheduler's state -> labctl verdict
    runs_dir      supervise scheduler: where the runs registered (default: the state dir's)
    progress_regex  a regex with a named group (?P<step>...) for logs of no known format
    results       per-trial result file names (globs, e.g. ["result.json"]): their count
                  under the job's WorkDir is its progress counter
    wandb_project "entity/project" to ask the W&B API about (with an API key configured)
    log_roots     directories holding this cluster's job logs and work dirs: under
                  `labctl mcp`, the only places its tools may read them (labctl.confine)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.cluster.scheduler import SCHEDULERS, check_config, owner_of
from labctl.confine import parse_roots
from labctl.errors import ConfigError, UsageError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_WORD = re.compile(r"^[^\s,]+$")
_PROJECT = re.compile(r"^[\w.-]+/[\w.-]+$")
# Keys every cluster takes; each scheduler adds its own (labctl.cluster.scheduler).
COMMON_KEYS = frozenset(
    {
        "name",
        "host",
        "ssh_options",
        "scheduler",
        "users",
        "all_users",
        "skip",
        "timeout_s",
        "path_prepend",
        "progress_regex",
        "results",
        "wandb_project",
        "log_roots",
    }
)
KEYS = COMMON_KEYS | {k for spec in SCHEDULERS.values() for k in spec.keys}


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    host: str = "local"
    ssh_options: tuple[str, ...] = ()
    scheduler: str = "slurm"
    users: tuple[str, ...] = ()
    accounts: tuple[str, ...] = ()
    all_users: bool = False
    skip: tuple[str, ...] = ()
    timeout_s: float = 60.0
    path_prepend: tuple[str, ...] = ()
    accounting: bool = True
    command: str | None = None
    rows: str | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    states: Mapping[str, str] = field(default_factory=dict)
    progress_regex: str | None = None
    results: tuple[str, ...] = ()
    wandb_project: str | None = None
    log_roots: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)  # the scheduler's own keys

    @property
    def is_local(self) -> bool:
        return self.host == "local"


class _Checker:
    def __init__(self, index: int, table: Mapping[str, Any]) -> None:
        name = table.get("name")
        label = f"name {name!r}" if isinstance(name, str) else "no name"
        self.where = f"[[clusters]] #{index + 1} ({label})"
        self.table = table

    def fail(self, message: str, key: str | None = None) -> ConfigError:
        return ConfigError(
            f"config: {self.where}: {message}", **({"key": f"clusters.{key}"} if key else {})
        )

    def text(
        self, key: str, default: str | None = None, pattern: re.Pattern[str] | None = None
    ) -> Any:
        value = self.table.get(key, default)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{key} must be a non-empty string", key)
        if pattern is not None and not pattern.match(value):
            raise self.fail(f"{key} {value!r} is not allowed here", key)
        if "\n" in value or "\0" in value:
            raise self.fail(f"{key} must be one line", key)
        return value

    def words(self, key: str, pattern: re.Pattern[str] | None = None) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(f"{key} must be a list of non-empty strings", key)
        for v in value:
            if "\n" in v or "\0" in v or (pattern is not None and not pattern.match(v)):
                raise self.fail(f"{key}: {v!r} is not allowed (no spaces, commas, newlines)", key)
        return tuple(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(f"{key} must be true or false", key)
        return value

    def number(self, key: str, default: float) -> float:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.fail(f"{key} must be a positive number of seconds", key)
        return float(value)

    def mapping(self, key: str) -> dict[str, str]:
        value = self.table.get(key, {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
        ):
            raise self.fail(f"{key} must be a table of strings", key)
        return dict(value)


def _check_keys(chk: _Checker, table: Mapping[str, Any]) -> None:
    for key in table:
        if key not in KEYS:
            hint = difflib.get_close_matches(key, sorted(KEYS), n=1)
            raise chk.fail(
                f"unknown key {key!r}" + (f" (did you mean {hint[0]!r}?)" if hint else ""), key
            )


def cluster_from_table(
    index: int, table: Mapping[str, Any], default_timeout: float
) -> ClusterConfig:
    chk = _Checker(index, table)
    _check_keys(chk, table)
    if "name" not in table:
        raise chk.fail("name is required", "name")
    name = chk.text("name", pattern=_NAME)
    host = chk.text("host", "local")
    if host.startswith("-") or any(c.isspace() for c in host):
        raise chk.fail(f"host {host!r} is not a host name or SSH alias", "host")
    scheduler = chk.text("scheduler", "slurm")
    if scheduler not in SCHEDULERS:
        raise chk.fail(f"scheduler must be one of {', '.join(SCHEDULERS)}, not {scheduler!r}")
    ssh_options = chk.words("ssh_options")
    if ssh_options and host == "local":
        raise chk.fail("ssh_options given but host is local", "ssh_options")
    cfg = ClusterConfig(
        name=name,
        host=host,
        ssh_options=ssh_options,
        scheduler=scheduler,
        users=chk.words("users", _WORD),
        accounts=chk.words("accounts", _WORD),
        all_users=chk.flag("all_users", False),
        skip=chk.words("skip"),
        timeout_s=chk.number("timeout_s", default_timeout),
        path_prepend=chk.words("path_prepend"),
        accounting=chk.flag("accounting", True),
        command=chk.text("command"),
        rows=chk.text("rows"),
        fields=chk.mapping("fields"),
        states=chk.mapping("states"),
        progress_regex=chk.text("progress_regex"),
        results=chk.words("results"),
        wandb_project=chk.text("wandb_project", pattern=_PROJECT),
        log_roots=parse_roots(table.get("log_roots", []), f"clusters.{name}.log_roots"),
        options={k: table[k] for k in SCHEDULERS[scheduler].keys if k in table},
    )
    _check_scheduler(chk, cfg, table)
    _check_progress(chk, cfg)
    return cfg


def _check_scheduler(chk: _Checker, cfg: ClusterConfig, table: Mapping[str, Any]) -> None:
    check_config(cfg, chk.fail)
    for key in table:
        owner = owner_of(key)
        if owner is not None and owner != cfg.scheduler:
            raise chk.fail(f'{key} is only for scheduler = "{owner}"', key)


def _check_progress(chk: _Checker, cfg: ClusterConfig) -> None:
    if cfg.progress_regex is None:
        return
    try:
        rx = re.compile(cfg.progress_regex.encode())
    except re.error as exc:
        raise chk.fail(f"progress_regex does not compile: {exc}", "progress_regex") from None
    if "step" not in rx.groupindex:
        raise chk.fail("progress_regex needs a named group (?P<step>...)", "progress_regex")


def clusters_from_config(
    tables: Sequence[Mapping[str, Any]], *, default_timeout: float, only: Sequence[str] = ()
) -> list[ClusterConfig]:
    """Validate every `[[clusters]]` table; `only` selects clusters by name (in that order
    of the config). An unknown name in `only` is a usage error."""
    if not tables:
        raise ConfigError("config: no [[clusters]] configured: nothing to poll")
    clusters: list[ClusterConfig] = []
    seen: set[str] = set()
    for index, table in enumerate(tables):
        if not isinstance(table, Mapping):
            raise ConfigError(f"config: [[clusters]] #{index + 1} is not a table")
        cfg = cluster_from_table(index, table, default_timeout)
        if cfg.name in seen:
            raise ConfigError(f"config: two [[clusters]] are named {cfg.name!r}", key="clusters")
        seen.add(cfg.name)
        clusters.append(cfg)
    if only:
        missing = [n for n in only if n not in seen]
        if missing:
            raise UsageError(
                f"--cluster {missing[0]!r}: no such cluster (configured: {', '.join(sorted(seen))})"
            )
        clusters = [c for c in clusters if c.name in set(only)]
    return clusters


def configured_clusters(config: Any, only: Sequence[str] = ()) -> list[ClusterConfig]:
    """The `[[clusters]]` of a loaded labctl config, validated (`timeout_s` defaults to
    `poll.timeout_s`); `only` selects clusters by name."""
    return clusters_from_config(
        config.table_list("clusters"), default_timeout=config.get("poll.timeout_s"), only=only
    )


def cluster_named(config: Any, name: str | None) -> ClusterConfig | None:
    """The configured cluster of this name, validated as poll validates it; None when no
    configured cluster has that name."""
    if not name:
        return None
    tables = [t for t in config.table_list("clusters") if t.get("name") == name]
    if not tables:
        return None
    (cluster,) = clusters_from_config(tables, default_timeout=config.get("poll.timeout_s"))
    return cluster
