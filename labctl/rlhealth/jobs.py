"""One `job` record -> its sources (logs, W&B run file, W&B API) -> an `rl_health` record.

A log that does not exist is noted (`logs_missing`), not an error; a cluster or W&B that
cannot be reached gives an `error` record (exit 3) and the job is still judged on what
could be read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labctl.errors import LabctlError
from labctl.records import error_record
from labctl.rlhealth.history import History
from labctl.rlhealth.logread import LocalFile, RangeSource
from labctl.rlhealth.run import Options, api_history, ident, job_live, read_source, record


def _paths(rec: Mapping[str, Any], opts: Options) -> list[str]:
    out: list[str] = []
    for key in ("stdout", "stderr"):
        path = rec.get(key)
        if isinstance(path, str) and path and path not in out:
            out.append(path)
    wandb = (rec.get("progress") or {}).get("wandb") or {}
    if opts.wandb and isinstance(wandb.get("path"), str):
        out.append(wandb["path"])
    return out


def _source(rec: Mapping[str, Any], path: str, opts: Options) -> RangeSource:
    transport = opts.transport_for(rec.get("cluster"))
    if transport is None or transport.is_local:
        return LocalFile(path)
    from labctl.backends.clusterfs import RemoteFile

    return RemoteFile(transport, path, timeout=opts.timeout)


def _where(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {"cluster": rec.get("cluster"), "job_id": rec.get("job_id")}


def assess_job(
    rec: Mapping[str, Any], opts: Options, why: str
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the `rl_health` record, `error` records for sources that could not be read)."""
    histories: list[tuple[History, str | None]] = []
    errors: list[dict[str, Any]] = []
    missing: list[str] = []
    for path in _paths(rec, opts):
        try:
            src = _source(rec, opts.check(rec.get("cluster"), path), opts)
            histories.append((read_source(src, path, opts), path))
        except LabctlError as exc:  # outside the tool server's roots: not read
            errors.append(exc.record() | _where(rec))
        except FileNotFoundError:
            missing.append(path)
        except OSError as exc:
            errors.append(
                error_record("unreadable", f"cannot read {path}: {exc.strerror}", path=path)
                | _where(rec)
            )
        except Exception as exc:  # a transport failure for this source: keep going
            reason = getattr(exc, "reason", "unreadable")
            errors.append(error_record(reason, f"cannot read {path}: {exc}") | _where(rec))
    run_path = _api_run(rec, opts)
    if run_path is not None:
        try:
            histories.append((api_history(run_path, opts), f"wandb:{run_path}"))
        except Exception as exc:
            reason = getattr(exc, "reason", "unreachable")
            errors.append(error_record(reason, str(exc), stage="wandb_api") | _where(rec))
    if not histories:
        histories.append((History("log"), None))
    out = record(histories, job_live(rec, opts), opts, ident(rec, why))
    out["logs_missing"] = missing
    return out, errors


def _api_run(rec: Mapping[str, Any], opts: Options) -> str | None:
    api = (rec.get("progress") or {}).get("wandb_api") or {}
    project = opts.wandb_project(rec.get("cluster"))
    if not (opts.wandb and opts.wandb_api_key and project and api.get("run_id")):
        return None
    return f"{project}/{api['run_id']}"
