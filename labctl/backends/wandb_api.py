"""The W&B public API: one paged runs query per project, through the real `wandb` client.

`Api().runs(project, filters)` asks for the lightweight run fragment (id, displayName,
state, createdAt, heartbeatAt, historyLineCount): one query per page of 200 runs, bounded
to runs created after the oldest running job's start. `historyLineCount` is a monotone
counter; `heartbeatAt` and `state` are evidence only (heartbeats come from a background
process and keep a hung run "running"). WANDB_BASE_URL points the client at another server
(tests use a local fake GraphQL server). The client's own files (wandb-core debug logs,
settings) go under labctl's state dir unless the user set WANDB_* dirs.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from labctl.errors import BackendError

PER_PAGE = 200
MAX_RUNS = 2000
_LOCK = threading.Lock()  # one wandb client at a time (the service is process-wide)


@dataclass
class ApiRun:
    run_id: str
    display_name: str | None
    state: str | None
    created_at: float | None
    heartbeat_at: float | None
    history_line_count: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _epoch(text: Any) -> float | None:
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _quiet_dirs(state_dir: Path) -> None:
    base = state_dir / "wandb"
    for name, sub in (("WANDB_DIR", ""), ("WANDB_CACHE_DIR", "cache"),
                      ("WANDB_CONFIG_DIR", "config"), ("WANDB_DATA_DIR", "data")):  # fmt: skip
        if not os.environ.get(name):
            path = base / sub
            try:
                path.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError:  # a full or read-only state dir: the client's own defaults
                continue
            os.environ[name] = str(path)
    os.environ.setdefault("WANDB_SILENT", "true")


def _classify(exc: BaseException) -> str:
    text = f"{type(exc).__name__} {exc}".lower()
    if any(s in text for s in ("401", "403", "unauthorized", "permission", "api key")):
        return "auth"
    return "unreachable"


def _backend_error(exc: BaseException, where: str) -> BackendError:
    """One line naming the server and what was asked (the client's first line of text)."""
    message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return BackendError(
        f"W&B API ({where}): {type(exc).__name__}: {message}", reason=_classify(exc)
    )


def fetch_runs(
    project: str,
    *,
    api_key: str,
    base_url: str,
    timeout: float,
    created_after: float | None,
    state_dir: Path,
) -> list[ApiRun]:
    """The project's runs (newest pages first are not needed: created_after bounds it)."""
    with _LOCK:
        _quiet_dirs(state_dir)
        try:
            import wandb

            api = wandb.Api(
                overrides={"base_url": base_url}, api_key=api_key, timeout=max(1, int(timeout))
            )
            filters = {"createdAt": {"$gt": _iso(created_after)}} if created_after else {}
            runs = api.runs(project, filters=filters, per_page=PER_PAGE)
            out: list[ApiRun] = []
            for run in runs:
                # attribute access maps snake_case onto the fragment's camelCase fields
                count = getattr(run, "history_line_count", None)
                out.append(
                    ApiRun(
                        run_id=str(run.id),
                        display_name=getattr(run, "display_name", None),
                        state=getattr(run, "state", None),
                        created_at=_epoch(getattr(run, "created_at", None)),
                        heartbeat_at=_epoch(getattr(run, "heartbeat_at", None)),
                        history_line_count=int(count) if count is not None else None,
                    )
                )
                if len(out) >= MAX_RUNS:
                    break
            return out
        except Exception as exc:
            raise _backend_error(exc, f"{base_url}, project {project}") from None


MAX_HISTORY_KEYS = 16


def fetch_history(
    run_path: str,
    *,
    api_key: str,
    base_url: str,
    timeout: float,
    samples: int,
    state_dir: Path,
    pick: Callable[[list[str]], list[str]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """Sampled history rows of one run (`entity/project/run_id`) and the keys asked for.

    `pick` chooses, from the run's history keys, the ones worth fetching (at most 16). Each
    key is asked for on its own (`run.history(keys=[k], samples=...)`): the server returns
    only rows that hold every key asked for, so keys logged at different steps would
    otherwise hide each other. Rows are merged by `_step`.
    """
    with _LOCK:
        _quiet_dirs(state_dir)
        try:
            import wandb

            api = wandb.Api(
                overrides={"base_url": base_url}, api_key=api_key, timeout=max(1, int(timeout))
            )
            run = api.run(run_path)
            raw = getattr(run, "history_keys", None) or {}
            raw = json.loads(raw) if isinstance(raw, str) else raw
            available = sorted(raw.get("keys") or {})
            keys = pick(available)[:MAX_HISTORY_KEYS]
            merged: dict[Any, dict[str, Any]] = {}
            for key in keys:
                for row in run.history(samples=samples, keys=[key], pandas=False):
                    merged.setdefault(row.get("_step"), {}).update(row)
            return list(merged.values()), keys
        except Exception as exc:
            raise _backend_error(exc, f"{base_url}, run {run_path}") from None
