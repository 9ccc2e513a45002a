"""diagnose: name the root cause of a failed job from its log (the public entry points).

    diagnose_path(path, *, window=4 MiB, max_window=64 MiB, full=False, sched=None, ...)
    diagnose_chunks(chunks, *, sched=None, tail=False, source=None, ...)
    diagnose_text(text, **kw)
    group(diagnoses) / catalog_records() / explain(id) / self_check()

Each diagnose_* returns one `diagnosis` dict (documented in labctl/diagnose/__init__.py).
A log that cannot be read raises `LogUnreadable` (a BackendError: exit 3, reason
"unreadable"); the caller turns it into an `error` record and goes on.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from labctl.diagnose import reader
from labctl.diagnose.catalog import Catalog
from labctl.diagnose.jobstate import JobState
from labctl.diagnose.load import default_catalog
from labctl.diagnose.rank import CLUSTER_GAP, Ranked
from labctl.diagnose.record import Findings, build
from labctl.diagnose.scan import DEFAULT_BLOCK
from labctl.errors import UsageError
from labctl.redact import Redactor

DEFAULT_WINDOW = 4 << 20
DEFAULT_MAX_WINDOW = 64 << 20
SchedLike = JobState | Mapping[str, Any] | None


def _conclusive(r: Ranked, acc: Findings) -> bool:
    """Can nothing before the regions read so far change the verdict? Explanations and the
    failure cluster reach at most CLUSTER_GAP lines, so a fatal root at least that far from
    the start of what was read is final. Scheduler/hung verdicts do not depend on the text."""
    if r.decided_by in ("hung", "scheduler"):
        return True
    root = r.root
    if root is None or root.entry.role != "fatal":
        return False
    return root.hit.from_end <= acc.lines - CLUSTER_GAP


def diagnose_path(
    path: str | os.PathLike[str],
    *,
    window: int = DEFAULT_WINDOW,
    max_window: int = DEFAULT_MAX_WINDOW,
    full: bool = False,
    sched: SchedLike = None,
    catalog: Catalog | None = None,
    redactor: Redactor | None = None,
    threads: int | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """Diagnose one log file (plain or .gz): tail-first unless `full`."""
    cat = catalog or default_catalog()
    p = Path(path)
    size = reader.file_size(p)
    js = JobState.coerce(sched)
    if js is not None and js.running and js.log_age is None:
        age = (time.time() if now is None else now) - p.stat().st_mtime
        js = JobState(js.state, js.exit_code, js.signal, js.reason, max(age, 0.0), js.hung_after)
    acc = Findings()
    whole = reader.streamed_whole(p)
    if whole is not None:  # a gzipped or UTF-16 log cannot be read from its end
        acc.add(reader.stream_whole(cat, p, threads, gz=whole == "gzip"))
        info: dict[str, Any] = {"mode": "stream", "complete": True}
    else:
        try:
            with p.open("rb") as f:
                info = _read_file(
                    cat,
                    f,
                    acc,
                    size=size,
                    js=js,
                    window=window,
                    max_window=max_window,
                    full=full,
                    threads=threads,
                )
        except OSError as exc:
            raise reader.unreadable(p, exc) from None
    ranked = acc.ranked(cat, js, info["complete"])
    info.update(size=size, bytes_read=acc.bytes, regions=acc.regions, lines_scanned=acc.lines)
    return build(cat, ranked, acc, js=js, source=str(path), info=info, redactor=redactor)


def _read_file(
    cat: Catalog,
    f: Any,
    acc: Findings,
    *,
    size: int,
    js: JobState | None,
    window: int,
    max_window: int,
    full: bool,
    threads: int | None,
) -> dict[str, Any]:
    if full or size <= window:
        acc.add(reader.scan_segment(cat, f, 0, size, threads).result)
        return {"mode": "full", "complete": True}
    end, step, budget = size, max(window, 1), max(window, max_window)
    head = reader.read_head(f)  # a tail region knows where a later run starts (restarts.py)
    while True:
        start = max(0, end - step)
        seg = reader.scan_segment(cat, f, start, end, threads, head)
        acc.add(seg.result)
        if start == 0:
            return {"mode": "tail", "complete": True}
        if acc.bytes >= budget or _conclusive(acc.ranked(cat, js, False), acc):
            return {"mode": "tail", "complete": False}
        end = seg.start
        step = min(acc.bytes, budget - acc.bytes)


def diagnose_chunks(
    chunks: Iterable[bytes],
    *,
    sched: SchedLike = None,
    tail: bool = False,
    source: str | None = None,
    catalog: Catalog | None = None,
    redactor: Redactor | None = None,
    threads: int | None = None,
    block: int = DEFAULT_BLOCK,
) -> dict[str, Any]:
    """Diagnose a stream of byte chunks (stdin, a remote `tail -c`), scanned as it comes.

    `tail=True` says the stream starts mid-log: its first partial line is dropped and line
    numbers are only given from the end.
    """
    cat = catalog or default_catalog()
    acc = Findings()
    if not tail:  # a stream from the log's start may be UTF-16 (its byte-order mark says)
        chunks = reader.transcoded(chunks)
    acc.add(reader.scan_chunks(cat, chunks, tail=tail, threads=threads, block=block))
    js = JobState.coerce(sched)
    ranked = acc.ranked(cat, js, not tail)
    info: dict[str, Any] = {"mode": "stream", "complete": not tail, "size": None}
    info.update(bytes_read=acc.bytes, regions=1, lines_scanned=acc.lines)
    return build(cat, ranked, acc, js=js, source=source, info=info, redactor=redactor)


def diagnose_text(text: str, **kw: Any) -> dict[str, Any]:
    return diagnose_chunks([text.encode("utf-8")], **kw)


# -- grouping, catalog ----------------------------------------------------------------------
def group(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One `diagnosis_group` record per fingerprint (healthy diagnoses are skipped).

    Items are diagnosis dicts or records carrying one under "diagnosis" (e.g. job records);
    the job is taken from the record's `job_id`/`job`/`id`, the file from `source`.
    """
    groups: dict[str, dict[str, Any]] = {}
    for item in items:
        d = item.get("diagnosis") if isinstance(item.get("diagnosis"), Mapping) else item
        assert isinstance(d, Mapping)
        fp = d.get("fingerprint")
        if not fp:
            continue
        g = groups.get(fp)
        if g is None:
            ev = d.get("evidence") or [{}]
            g = groups[fp] = {
                "kind": "diagnosis_group",
                "fingerprint": fp,
                "category": d.get("category"),
                "catalog_id": d.get("catalog_id"),
                "title": d.get("title"),
                "severity": d.get("severity"),
                "retryable": d.get("retryable"),
                "exception_type": d.get("exception_type"),
                "example": ev[0].get("text"),
                "count": 0,
                "sources": [],
                "jobs": [],
            }
        g["count"] += 1
        src = d.get("source") or item.get("source")
        if src and src not in g["sources"]:
            g["sources"].append(src)
        job = next((item.get(k) for k in ("job_id", "job", "id") if item.get(k) is not None), None)
        if job is not None and job not in g["jobs"]:
            g["jobs"].append(job)
    return sorted(groups.values(), key=lambda g: (-g["count"], g["fingerprint"]))


def catalog_records(catalog: Catalog | None = None) -> list[dict[str, Any]]:
    return (catalog or default_catalog()).records()


def explain(ident: str, catalog: Catalog | None = None) -> dict[str, Any]:
    cat = catalog or default_catalog()
    if ident not in cat.by_id:
        close = difflib.get_close_matches(ident, list(cat.by_id), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"no catalog entry {ident!r}{hint}", reason="usage")
    return cat.entry(ident).record()
