"""`[[guard.rules]]`: one table per rule, checked here so a typo is a config error (exit 2).

    [[guard.rules]]                    # at most 6 RUNNING RL jobs per cluster
    kind = "max_running"
    bucket = "RL"                      # the table's buckets ([buckets.RL] rules); or
    names = ["rl-*"]                   # job name patterns (both given: both must match)
    limit = 6
    per = "cluster"                    # or "all": one count across clusters
    clusters = ["c1"]                  # optional: only these clusters
    # include_pending: unset, `labctl guard` counts RUNNING jobs (the runbook's "at most 6
    # RUNNING") and `guard admit` counts running + pending (a queued job takes a slot when
    # it starts); true counts pending jobs in both, false in neither

    [[guard.rules]]                    # a concluded series gets no new jobs
    kind = "concluded"
    names = ["exp1-*"]                 # job name patterns; and/or
    experiments = ["exp1"]             # experiment names (their job name patterns); and/or
    complete = true                    # every experiment under <[experiments] root>/complete

    [[guard.rules]]                    # snapshot caps are hard
    kind = "max_count"
    command = "sandbox snapshots list --json"   # prints JSON rows (array or JSON Lines)
    rows = "items"                     # optional: dotted path to the rows
    where = { owner = "me" }           # optional: count only rows whose fields match (glob)
    label = "id"                       # optional: the field naming a row in the violation
    limit = 20

    [[guard.rules]]                    # database registration is manual
    kind = "forbid_setting"
    files = ["configs/**/*.yaml"]      # globs (relative to the current directory)
    key = "enable_db_registration"     # dotted path; a bare name matches at any depth
    value = true                       # the forbidden value (default true)

Every rule may have `name` (shown in its violations) and `message` (a human hint).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import ConfigError

KINDS = ("max_running", "concluded", "max_count", "forbid_setting")
_KEYS: dict[str, set[str]] = {
    "max_running": {"bucket", "names", "limit", "per", "clusters", "include_pending"},
    "concluded": {"names", "experiments", "complete", "clusters"},
    "max_count": {"command", "rows", "where", "label", "limit", "host", "timeout_s"},
    "forbid_setting": {"files", "key", "value"},
}
_COMMON = {"kind", "name", "message"}


@dataclass(frozen=True)
class Rule:
    kind: str
    name: str
    message: str | None = None
    limit: int = 0
    bucket: str | None = None
    names: tuple[str, ...] = ()
    clusters: tuple[str, ...] = ()
    per: str = "cluster"
    include_pending: bool | None = None  # None: pending jobs count only for admission
    experiments: tuple[str, ...] = ()
    complete: bool = False
    command: str | None = None
    rows: str | None = None
    where: Mapping[str, str] = field(default_factory=dict)
    label: str | None = None
    host: str = "local"
    timeout_s: float = 60.0
    files: tuple[str, ...] = ()
    key: str | None = None
    value: Any = True


class _Table:
    def __init__(self, index: int, table: Mapping[str, Any]) -> None:
        self.where = f"[[guard.rules]] #{index + 1}"
        self.table = table

    def fail(self, message: str) -> ConfigError:
        return ConfigError(f"config: {self.where}: {message}", key="guard.rules")

    def text(self, key: str, default: str | None = None) -> Any:
        value = self.table.get(key, default)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise self.fail(f"{key} must be a non-empty string")
        return value

    def words(self, key: str) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(f"{key} must be a list of non-empty strings")
        return tuple(value)

    def count(self, key: str) -> int:
        value = self.table.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(f"{key} must be a whole number >= 0")
        return value


def _job_rule(t: _Table, base: dict[str, Any]) -> Rule:
    from labctl.render.buckets import ALIASES

    bucket = t.text("bucket")
    if bucket is not None:
        if ALIASES.get(bucket.lower()) is None:
            raise t.fail(f"bucket {bucket!r}: buckets are RL, SFT, Datagen, Eval, Other")
        bucket = ALIASES[bucket.lower()]
    base.update(bucket=bucket, names=t.words("names"), clusters=t.words("clusters"))
    if base["kind"] == "max_running":
        if bucket is None and not base["names"]:
            raise t.fail("max_running needs a bucket or names")
        per = t.text("per", "cluster")
        if per not in ("cluster", "all"):
            raise t.fail('per must be "cluster" or "all"')
        pending = t.table.get("include_pending")
        if pending is not None and not isinstance(pending, bool):
            raise t.fail("include_pending must be true or false")
        base.update(limit=t.count("limit"), per=per, include_pending=pending)
    else:
        complete = t.table.get("complete", False)
        if not isinstance(complete, bool):
            raise t.fail("complete must be true or false")
        base.update(experiments=t.words("experiments"), complete=complete)
        if not (base["names"] or base["experiments"] or complete):
            raise t.fail("concluded needs names, experiments or complete = true")
    return Rule(**base)


def _count_rule(t: _Table, base: dict[str, Any]) -> Rule:
    where = t.table.get("where", {})
    if not isinstance(where, dict) or not all(isinstance(v, str) for v in where.values()):
        raise t.fail("where must be a table of strings (field = glob)")
    timeout = t.table.get("timeout_s", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise t.fail("timeout_s must be a positive number")
    return Rule(
        **base,
        command=t.text("command") or _missing(t, "command"),
        rows=t.text("rows"),
        where=dict(where),
        label=t.text("label"),
        host=t.text("host", "local"),
        timeout_s=float(timeout),
        limit=t.count("limit"),
    )


def _setting_rule(t: _Table, base: dict[str, Any]) -> Rule:
    files = t.words("files")
    if not files:
        raise t.fail("forbid_setting needs files (globs)")
    return Rule(
        **base,
        files=files,
        key=t.text("key") or _missing(t, "key"),
        value=t.table.get("value", True),
    )


def _missing(t: _Table, key: str) -> Any:
    raise t.fail(f"{key} is required")


def parse_rules(tables: Sequence[Any]) -> list[Rule]:
    """Validate every `[[guard.rules]]` table (ConfigError names the first bad one)."""
    rules, seen = [], set()
    for index, table in enumerate(tables):
        t = _Table(index, table if isinstance(table, Mapping) else {})
        if not isinstance(table, Mapping):
            raise t.fail("is not a table")
        kind = table.get("kind")
        if kind not in KINDS:
            raise t.fail(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        unknown = set(table) - _COMMON - _KEYS[kind]
        if unknown:
            raise t.fail(f"{kind} has no setting {sorted(unknown)[0]!r}")
        name = t.text("name", f"{kind}#{index + 1}")
        if name in seen:
            raise t.fail(f"two rules are named {name!r}")
        seen.add(name)
        base: dict[str, Any] = {"kind": kind, "name": name, "message": t.text("message")}
        if kind in ("max_running", "concluded"):
            rules.append(_job_rule(t, base))
        elif kind == "max_count":
            rules.append(_count_rule(t, base))
        else:
            rules.append(_setting_rule(t, base))
    return rules
