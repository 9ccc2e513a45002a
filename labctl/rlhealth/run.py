"""Wiring: job records and JOB arguments -> their sources -> a history -> `rl_health` records.

Sources of one job, all bounded: its stdout and stderr logs (locally, or on its cluster
through the transport poll and diagnose use: one round trip for the size, one for the
regions), the W&B run file poll matched to it, and with an API key and the cluster's
`wandb_project`, the run's sampled history through the W&B API. The richest history is
judged; every source read is listed with the bytes it cost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.records import error_record, parse_rfc3339, rfc3339
from labctl.rlhealth.config import Config
from labctl.rlhealth.history import History
from labctl.rlhealth.keys import CANONICAL, lookup
from labctl.rlhealth.logread import LocalFile, RangeSource, parse, plan
from labctl.rlhealth.select import UntestedRule, acts_on, is_running
from labctl.rlhealth.signals_run import Live
from labctl.rlhealth.verdict import decide

WANDB_MAGIC = b":W&B"


@dataclass
class Options:
    cfg: Config = field(default_factory=Config)
    now: float = 0.0
    rule: UntestedRule = field(default_factory=UntestedRule)
    is_rl: Callable[[Mapping[str, Any]], bool] = lambda rec: True
    all_jobs: bool = False
    wandb: bool = True
    wandb_api_key: str = ""
    wandb_base_url: str = "https://api.wandb.ai"
    state_dir: Path | None = None
    transport_for: Callable[[str | None], Any] = lambda name: None
    wandb_project: Callable[[str | None], str | None] = lambda name: None
    timeout: float = 120.0
    # (cluster or None, a log path the caller named) -> the path to read; raises to refuse
    # it (the command passes labctl.confine.log_path, which acts under the tool server)
    check: Callable[[str | None, str], str] = lambda cluster, path: path


def is_run_file(path: str, head: bytes = b"") -> bool:
    return path.endswith(".wandb") or head.startswith(WANDB_MAGIC)


def read_source(src: RangeSource, path: str, opts: Options) -> History:
    size = src.size()
    regions = plan(size, opts.cfg.read)
    data = src.read(regions)
    if is_run_file(path, data[0][:8] if data else b""):
        from labctl.rlhealth.wandbread import parse_run_file

        return parse_run_file(regions, data, size)
    return parse(regions, data, size)


def _summary(h: History, path: str | None) -> dict[str, Any]:
    first, last = h.step_range()
    return {
        "source": h.source,
        "path": path,
        "points": h.steps,
        "first_step": first,
        "last_step": last,
        "bytes_read": h.read.get("bytes_read"),
        "file_size": h.read.get("file_size"),
        "regions": len(h.read.get("regions") or []),
    }


def record(
    histories: list[tuple[History, str | None]], live: Live, opts: Options, ident: dict[str, Any]
) -> dict[str, Any]:
    """The `rl_health` record: the richest history judged, every source listed."""
    usable = [(h, p) for h, p in histories if h.points]
    h, path = max(usable or histories, key=lambda hp: (hp[0].steps, len(hp[0].present())))
    verdict = decide(h, opts.cfg.thresholds, live)
    first, last = h.step_range()
    sampled = len(h.read.get("regions") or []) > 1
    return {
        "kind": "rl_health",
        **ident,
        **verdict,
        "source": h.source,
        "path": path,
        "steps": {
            "points": h.steps,
            "first": first,
            "last": last,
            "restarts": h.restarts,
            "sampled": sampled,
        },
        "sources": [_summary(x, p) for x, p in histories],
        "bytes_read": sum(int(x.read.get("bytes_read") or 0) for x, _ in histories),
        "observed_at": rfc3339(opts.now),
    }


def assess_path(path: str, opts: Options) -> dict[str, Any]:
    """A log file or W&B run file on this machine (a JOB argument)."""
    src = LocalFile(path)
    h = read_source(src, path, opts)
    last = max((p.time for p in h.points if p.time is not None), default=src.mtime)
    live = Live(now=opts.now, last_write=last, source=h.source)
    return record([(h, path)], live, opts, {"cluster": None, "job_id": None, "name": None})


def pick_keys(available: list[str]) -> list[str]:
    """The W&B history keys worth fetching: the preferred key of each canonical metric."""
    best: dict[str, tuple[int, str]] = {}
    for key in available:
        hit = lookup(key)
        if hit is not None and (hit[0] not in best or hit[1] < best[hit[0]][0]):
            best[hit[0]] = (hit[1], key)
    return [best[c][1] for c in CANONICAL if c in best]


def api_history(run_path: str, opts: Options) -> History:
    from labctl.backends.wandb_api import fetch_history
    from labctl.rlhealth.wandbread import from_rows

    rows, keys = fetch_history(
        run_path,
        api_key=opts.wandb_api_key,
        base_url=opts.wandb_base_url,
        timeout=opts.timeout,
        samples=opts.cfg.wandb_samples,
        state_dir=opts.state_dir or Path(os.getcwd()),
        pick=pick_keys,
    )
    return from_rows(rows, read={"keys": keys, "rows": len(rows)})


def assess_wandb_run(run_path: str, opts: Options) -> dict[str, Any]:
    h = api_history(run_path, opts)
    last = max((p.time for p in h.points if p.time is not None), default=None)
    live = Live(now=opts.now, last_write=last, source="wandb_api")
    return record([(h, f"wandb:{run_path}")], live, opts, {"cluster": None, "job_id": None,
                                                            "name": None})  # fmt: skip


def job_live(rec: Mapping[str, Any], opts: Options) -> Live:
    progress = rec.get("progress") or {}
    observed = parse_rfc3339(rec.get("observed_at")) or opts.now
    age = rec.get("log_age_s")
    return Live(
        now=opts.now,
        last_write=observed - float(age) if isinstance(age, int | float) else None,
        last_advance=parse_rfc3339(progress.get("last_change")),
        alive=is_running(rec),
    )


def ident(rec: Mapping[str, Any], why: str | None) -> dict[str, Any]:
    return {
        "cluster": rec.get("cluster"),
        "job_id": rec.get("job_id"),
        "name": rec.get("name"),
        "key": rec.get("key"),
        "verdict": rec.get("verdict"),
        "selected": why,
    }


def run(records: Iterator[dict[str, Any]], opts: Options) -> Iterator[dict[str, Any]]:
    """Pass every record through; after each job it acts on, its `rl_health` record."""
    from labctl.rlhealth.jobs import assess_job

    for rec in records:
        yield rec
        if rec.get("kind") != "job":
            continue
        why = acts_on(rec, rule=opts.rule, is_rl=opts.is_rl, now=opts.now,
                      all_jobs=opts.all_jobs)  # fmt: skip
        if why is not None:
            out, errors = assess_job(rec, opts, why)
            yield from errors
            if out is not None:
                yield out


def for_arguments(
    args: list[str], opts: Options, lookup: Callable[[str | None, str], list[dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """JOB arguments: a file (log or W&B run file), `wandb:ENTITY/PROJECT/RUN`, or a job id
    (`[CLUSTER:]JOB_ID`) that `lookup(cluster, job_id)` finds in the last poll's records,
    newest first."""
    from labctl.rlhealth.jobs import assess_job

    for arg in args:
        if os.path.exists(arg):
            try:
                yield assess_path(opts.check(None, arg), opts)
            except OSError as exc:
                yield error_record("unreadable", f"cannot read {arg}: {exc.strerror}", path=arg)
            continue
        if arg.startswith("wandb:"):
            yield assess_wandb_run(arg.removeprefix("wandb:"), opts)
            continue
        cluster, _, job_id = arg.rpartition(":")
        found = lookup(cluster or None, job_id)
        if not found:
            yield error_record(
                "not_found",
                f"{arg}: not a file, and no job {job_id} in the last poll's state",
                argument=arg,
            )
            continue
        out, errors = assess_job(found[0], opts, "argument")
        yield from errors
        if out is not None:
            yield out
