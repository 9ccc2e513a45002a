"""A running job's progress sources, read from the raw bytes its probes brought back
(`labctl.poll.probes`): its logs (scanned on from the stored offset), per-trial result
files, its W&B run file and its W&B API run; and which of them is its counter.

The counter comes from, in this order and sticking with the source used before while it
still answers: result files (when the cluster names them), the log, the W&B run file, the
W&B API (`historyLineCount`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.poll.wandb_run import WandbSeen, match_wandb
from labctl.records import rfc3339

ORDER = ("results", "log", "wandb_file", "wandb_api")
# the counter's name when the log's format does not give one
COUNTER_NAMES = {"results": "trials", "wandb_file": "step", "wandb_api": "history_lines"}


@dataclass
class Sources:
    """What a running job's probes showed this poll."""

    logs: dict[str, dict[str, Any]] = field(default_factory=dict)  # o/e -> path, state, result
    wandb: WandbSeen | None = None
    trials: Any = None  # labctl.progress.results.ResultsCount: result files counted
    api: Any = None  # labctl.backends.wandb_api.ApiRun: the job's run in the W&B project

    @property
    def scans(self) -> list[Any]:
        """The log scans (labctl.progress.logscan.ScanResult) of the logs read this poll."""
        return [v["result"] for v in self.logs.values() if v["result"] is not None]

    @property
    def markers(self) -> list[Any]:
        return [m for r in self.scans for m in r.markers]

    @property
    def new_bytes(self) -> int | None:
        scans = self.scans
        return sum(r.bytes_read for r in scans) if scans else None


@dataclass(frozen=True)
class Counter:
    """The job's progress counter this poll: which source, its value and identity."""

    source: str | None = None
    value: float | None = None
    key: str | None = None
    scan: Any = None  # the log's ScanResult when the log is the source

    @property
    def name(self) -> str | None:
        named = self.scan.counter if self.scan is not None else None
        return named or COUNTER_NAMES.get(self.source or "")


def read_sources(
    job: Mapping[str, Any], prev: Mapping[str, Any], progress_regex: str | None
) -> Sources:
    """Scan the new bytes of the job's logs and decode its W&B and result-file answers."""
    from labctl.progress.logstate import ScanConfig
    from labctl.progress.results import parse_find_output

    raw = job.get("progress_raw") or {"logs": {}, "results": None, "wandb": []}
    src = Sources(logs=_scan_logs(raw["logs"], prev, ScanConfig(progress_regex=progress_regex)))
    src.wandb = match_wandb(raw["wandb"], job, prev.get("wandb_path"))
    if (
        src.wandb is not None
        and src.wandb.step is None
        and src.wandb.path == prev.get("wandb_path")
    ):
        src.wandb.step = prev.get("wandb_step")  # no history record in the tail: no new step
    src.trials = parse_find_output(raw["results"]) if raw["results"] is not None else None
    src.api = match_api(job.get("wandb_api_runs"), job, src.wandb)
    return src


def choose_counter(src: Sources, used_before: str | None) -> Counter:
    """The counter to judge the job by (see the module docstring for the order)."""
    found: dict[str, Counter] = {}
    trials, wandb, api = src.trials, src.wandb, src.api
    if trials is not None and (trials.count or trials.partial):
        found["results"] = Counter("results", float(trials.count), trials.counter_key)
    for res in src.scans:
        if res.value is not None and "log" not in found:
            found["log"] = Counter("log", res.value, res.counter_key, res)
    if wandb is not None and wandb.step is not None:
        found["wandb_file"] = Counter(
            "wandb_file", float(wandb.step), f"wandb:{wandb.run_id}:_step"
        )
    if api is not None and api.history_line_count is not None:
        key = f"wandb_api:{api.run_id}:historyLineCount"
        found["wandb_api"] = Counter("wandb_api", float(api.history_line_count), key)
    chosen = used_before if used_before in found else None
    chosen = chosen or next((s for s in ORDER if s in found), None)
    return found.get(chosen or "", Counter())


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


def api_dict(api: Any, now: float) -> dict[str, Any]:
    return {
        "run_id": api.run_id,
        "state": api.state,
        "history_line_count": api.history_line_count,
        "heartbeat_at": rfc3339(api.heartbeat_at),
        "heartbeat_age_s": None if api.heartbeat_at is None else max(0.0, now - api.heartbeat_at),
    }


def metrics(src: Sources) -> dict[str, float]:
    """Every recognised metric by its short name: the W&B run file's, then the logs'."""
    from labctl.progress.metrics import canonical

    merged: dict[str, float] = {}
    if src.wandb is not None:
        merged.update(canonical(src.wandb.metrics))
    for res in src.scans:
        merged.update(res.metrics)
    return merged


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
