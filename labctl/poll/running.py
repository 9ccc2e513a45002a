"""RUNNING is not progress: the progress half of poll, glued onto `labctl.progress`.

For every running job poll adds shell probes to the cluster's second script (one
round trip per cluster):

    p<i>.o / p<i>.e   the new bytes of the stdout / stderr log since the stored offset
                      (`_rr`: first sight reads a tail; a log that shrank starts over; at
                      most max_read bytes, the newest), with its size and the read start;
    p<i>.r            per-trial result files: one bounded `find` under the job's WorkDir;
    p<i>.w.<k>        W&B run files (`run-*.wandb` in WorkDir/wandb or WorkDir/*/wandb,
                      newer than the job's start): path, size, head (to match the run's
                      SLURM job id) and the block-aligned tail (the last history step).

`labctl.poll.probes` builds those probes; the raw bytes ride on the job dict
(`progress_raw`) to the main thread, where `observe` (pure, clock injected) reads them
(`labctl.poll.sources`: the sources and the job's counter) against the stored state and
asks `cadence.decide` for the progress verdict: running-progressing / running-stalled
(second consecutive miss) / running-unverified, or a terminal verdict when a death marker
says the job is dying. `labctl.poll.verdict.decide` makes it the job's verdict.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labctl.poll.sources import Counter, Sources, api_dict, choose_counter, metrics, read_sources
from labctl.records import rfc3339

SIGNALS = ("entropy", "grad_norm", "kl", "is_log_ratio", "rollout_kl")


@dataclass(frozen=True)
class ProgressSettings:
    cadence: Any = None  # labctl.progress.cadence.CadenceConfig (None: its defaults)
    max_read: int = 4 << 20
    first_tail: int = 256 << 10
    wandb_files: bool = True
    wandb_head: int = 32 << 10
    wandb_tail: int = 256 << 10
    results_depth: int = 4
    wandb_api_key: str = ""
    wandb_base_url: str = "https://api.wandb.ai"
    state_dir: Any = None  # pathlib.Path: where the wandb client may keep its files
    job_overrides: tuple[tuple[str, Mapping[str, Any]], ...] = ()  # (name pattern, cadence keys)

    def cadence_for(self, name: str | None) -> Any:
        from labctl.progress.cadence import CadenceConfig

        cfg = self.cadence or CadenceConfig()
        for pattern, overrides in self.job_overrides:
            if fnmatch.fnmatchcase(name or "", pattern):
                cfg = cfg.for_job(overrides)
        return cfg


@dataclass(frozen=True)
class Observed:
    """What poll saw of a running job this poll."""

    verdict: str  # the progress verdict (labctl.poll.verdict.decide makes it the job's)
    cause: str | None
    record: dict[str, Any]  # the job record's `progress`
    state: dict[str, Any]  # what the store keeps for the next poll


def observe(
    job: dict[str, Any],
    prev: Mapping[str, Any] | None,
    *,
    now: float,
    settings: ProgressSettings,
    progress_regex: str | None = None,
) -> Observed:
    """A running job's progress, from its probed sources against the stored state."""
    from labctl.progress.cadence import CadenceState, decide

    prev = prev or {}
    src = read_sources(job, prev, progress_regex)
    counter = choose_counter(src, prev.get("source"))
    obs = _observation(job, now, counter, src)
    cadence = prev.get("cadence")
    decision = decide(
        CadenceState.from_dict(cadence) if cadence else None,
        obs,
        settings.cadence_for(job.get("name")),
    )
    record = progress_record(decision, counter, src, now)
    state = {
        "logs": {k: {"path": v["path"], "state": v["state"]} for k, v in src.logs.items()},
        "cadence": decision.state.to_dict(),
        "source": counter.source,
        "wandb_path": src.wandb.path if src.wandb is not None else prev.get("wandb_path"),
        "wandb_step": src.wandb.step if src.wandb is not None else prev.get("wandb_step"),
        "record": record,
    }
    return Observed(decision.verdict, decision.cause, record, state)


def _observation(job: Mapping[str, Any], now: float, counter: Counter, src: Sources) -> Any:
    from labctl.progress.cadence import Observation

    scan = counter.scan
    return Observation(
        now=now,
        value=counter.value,
        counter_key=counter.key,
        total=scan.total if scan is not None else None,
        phase=scan.phase if scan is not None else None,
        finished=bool(scan.finished) if scan is not None else False,
        markers=src.markers,
        job_start=job.get("start_epoch"),
        attempt=f"{job.get('restarts') or 0}@{job.get('start_epoch')}",
        new_bytes=src.new_bytes,
    )


def progress_record(decision: Any, counter: Counter, src: Sources, now: float) -> dict[str, Any]:
    """The job record's `progress` (labctl.poll.schema.PROGRESS)."""
    p = decision.progress
    found = metrics(src)
    record = {
        "counter": counter.name,
        "value": p["value"],
        "previous": p["prev"],
        "delta": p["delta"],
        "total": p["total"],
        "rate_per_h": p["rate_per_h"],
        "last_change": rfc3339(p["last_advance_at"]),
        "age_s": p["age_s"],
        "allowance_s": p["allowance_s"],
        "eta": rfc3339(now + p["eta_s"]) if p["eta_s"] is not None else None,
        "phase": p["phase"],
        "source": counter.source,
        "format": counter.scan.source if counter.scan is not None else None,
        "stall_suspect": p["stall_suspect"],
        "misses": p["misses"],
        "in_grace": p["in_grace"],
        "metrics": found,
        "signals": {k: found[k] for k in SIGNALS if k in found},
        "markers": [
            {k: m.to_dict()[k] for k in ("kind", "cause", "severity", "line")}
            for m in src.markers[-4:]
        ],
        "evidence": decision.evidence,
        "log_bytes_read": src.new_bytes,
        "trials": src.trials.to_dict() if src.trials is not None else None,
        "wandb": src.wandb.to_dict(now) if src.wandb is not None else None,
        "wandb_api": api_dict(src.api, now) if src.api is not None else None,
    }
    if src.api is not None and src.api.state in ("crashed", "failed"):
        record["evidence"] = [*decision.evidence, f"W&B says run {src.api.run_id} {src.api.state}"]
    return record
