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
(`progress_raw`) to the main thread, where `observe` (pure, clock injected) scans them
against the stored state and asks `cadence.decide` for the verdict: running-progressing /
running-stalled (second consecutive miss) / running-unverified, or a terminal verdict
when a death marker says the job is dying. The counter comes from, in this order and
sticking with the source used before while it still answers: result files (when the
cluster names them), the log, the W&B run file, the W&B API (`historyLineCount`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from labctl.poll.wandb_run import WandbSeen, match_wandb
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


def match_api(runs: Any, job: Mapping[str, Any], wandb: WandbSeen | None) -> Any:
    """The job's run among the W&B project's runs: the run id of its run file, else the
    newest run named like the job and created after it started."""
    if not runs:
        return None
    if wandb is not None and wandb.run_id:
        exact = [r for r in runs if r.run_id == wandb.run_id]
        if exact:
            return exact[0]
    start = job.get("start_epoch")
    named = [
        r for r in runs
        if r.display_name and r.display_name == job.get("name")
        and (start is None or r.created_at is None or r.created_at >= start - 300)
    ]  # fmt: skip
    return max(named, key=lambda r: r.created_at or 0) if named else None


def _api_dict(api: Any, now: float) -> dict[str, Any]:
    return {
        "run_id": api.run_id,
        "state": api.state,
        "history_line_count": api.history_line_count,
        "heartbeat_at": rfc3339(api.heartbeat_at),
        "heartbeat_age_s": None if api.heartbeat_at is None else max(0.0, now - api.heartbeat_at),
    }


def _scan_logs(raw: Mapping[str, Any], prev: Mapping[str, Any], cfg: Any) -> dict[str, Any]:
    from labctl.progress.logscan import scan_chunk
    from labctl.progress.logstate import ScanState

    out: dict[str, Any] = {}
    for which, got in raw.items():
        old = (prev.get("logs") or {}).get(which) or {}
        state = None
        if old.get("path") == got["path"] and old.get("state") is not None:
            state = ScanState.from_dict(old["state"])
        if got["size"] < 0:
            out[which] = {"path": got["path"], "state": old.get("state"), "result": None}
            continue
        res = scan_chunk(got["data"], state, start=got["start"], size=got["size"], config=cfg)
        out[which] = {"path": got["path"], "state": res.state.to_dict(), "result": res}
    return out


def _metrics(results: Sequence[Any], wandb: WandbSeen | None) -> dict[str, float]:
    from labctl.progress.metrics import canonical

    merged: dict[str, float] = {}
    if wandb is not None:
        merged.update(canonical(wandb.metrics))
    for res in results:
        merged.update(res.metrics)
    return merged


def observe(
    job: dict[str, Any],
    prev: Mapping[str, Any] | None,
    *,
    now: float,
    settings: ProgressSettings,
    progress_regex: str | None = None,
) -> tuple[str, str | None, dict[str, Any], dict[str, Any]]:
    """(verdict, cause, the record's `progress`, the state to store) for a running job."""
    from labctl.progress.cadence import CadenceState, Observation, decide
    from labctl.progress.logstate import ScanConfig
    from labctl.progress.results import parse_find_output

    prev = prev or {}
    raw = job.get("progress_raw") or {"logs": {}, "results": None, "wandb": []}
    scan_cfg = ScanConfig(progress_regex=progress_regex)
    logs = _scan_logs(raw["logs"], prev, scan_cfg)
    results = [v["result"] for v in logs.values() if v["result"] is not None]
    wandb = match_wandb(raw["wandb"], job, prev.get("wandb_path"))
    if wandb is not None and wandb.step is None and wandb.path == prev.get("wandb_path"):
        wandb.step = prev.get("wandb_step")  # no history record in the tail: no new step
    trials = parse_find_output(raw["results"]) if raw["results"] is not None else None
    api = match_api(job.get("wandb_api_runs"), job, wandb)

    candidates: dict[str, tuple[float | None, str | None, Any]] = {}
    if trials is not None and (trials.count or trials.partial):
        candidates["results"] = (float(trials.count), trials.counter_key, None)
    for res in results:
        if res.value is not None and "log" not in candidates:
            candidates["log"] = (res.value, res.counter_key, res)
    if wandb is not None and wandb.step is not None:
        candidates["wandb_file"] = (float(wandb.step), f"wandb:{wandb.run_id}:_step", None)
    if api is not None and api.history_line_count is not None:
        key = f"wandb_api:{api.run_id}:historyLineCount"
        candidates["wandb_api"] = (float(api.history_line_count), key, None)
    order = ["results", "log", "wandb_file", "wandb_api"]
    chosen = prev.get("source") if prev.get("source") in candidates else None
    chosen = chosen or next((s for s in order if s in candidates), None)
    value, counter_key, res = candidates.get(chosen or "", (None, None, None))
    markers = [m for r in results for m in r.markers]
    obs = Observation(
        now=now,
        value=value,
        counter_key=counter_key,
        total=res.total if res is not None else None,
        phase=res.phase if res is not None else None,
        finished=bool(res.finished) if res is not None else False,
        markers=markers,
        job_start=job.get("start_epoch"),
        attempt=f"{job.get('restarts') or 0}@{job.get('start_epoch')}",
        new_bytes=sum(r.bytes_read for r in results) if results else None,
    )
    cadence = prev.get("cadence")
    decision = decide(
        CadenceState.from_dict(cadence) if cadence else None,
        obs,
        settings.cadence_for(job.get("name")),
    )
    metrics = _metrics(results, wandb)
    p = decision.progress
    record = {
        "counter": (res.counter if res is not None else None)
        or {"results": "trials", "wandb_file": "step", "wandb_api": "history_lines"}.get(
            chosen or ""
        ),
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
        "source": chosen,
        "format": res.source if res is not None else None,
        "stall_suspect": p["stall_suspect"],
        "misses": p["misses"],
        "in_grace": p["in_grace"],
        "metrics": metrics,
        "signals": {k: metrics[k] for k in SIGNALS if k in metrics},
        "markers": [
            {k: m.to_dict()[k] for k in ("kind", "cause", "severity", "line")} for m in markers[-4:]
        ],
        "evidence": decision.evidence,
        "log_bytes_read": obs.new_bytes,
        "trials": trials.to_dict() if trials is not None else None,
        "wandb": wandb.to_dict(now) if wandb is not None else None,
        "wandb_api": _api_dict(api, now) if api is not None else None,
    }
    if api is not None and api.state in ("crashed", "failed"):
        record["evidence"] = [*decision.evidence, f"W&B says run {api.run_id} {api.state}"]
    state = {
        "logs": {k: {"path": v["path"], "state": v["state"]} for k, v in logs.items()},
        "cadence": decision.state.to_dict(),
        "source": chosen,
        "wandb_path": wandb.path if wandb is not None else prev.get("wandb_path"),
        "wandb_step": wandb.step if wandb is not None else prev.get("wandb_step"),
        "record": record,
    }
    return decision.verdict, decision.cause, record, state
