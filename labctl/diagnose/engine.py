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
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from labctl.diagnose import reader
from labctl.diagnose.catalog import Catalog, default_catalog
from labctl.diagnose.fingerprint import exception_type, fingerprint
from labctl.diagnose.rank import CLUSTER_GAP, JobState, Ranked, rank
from labctl.diagnose.scan import Hit, ScanResult, Traceback
from labctl.errors import UsageError
from labctl.redact import Redactor, default_redactor

DEFAULT_WINDOW = 4 << 20
DEFAULT_MAX_WINDOW = 64 << 20
EVIDENCE_HITS = 3
SchedLike = JobState | Mapping[str, Any] | None


class _Acc:
    """Scan results of regions merged back-to-front (the last region first)."""

    def __init__(self) -> None:
        self.hits: dict[int, list[Hit]] = {}
        self.counts: dict[int, int] = {}
        self.lines = 0
        self.bytes = 0
        self.tail: list[str] = []
        self.tbs: list[tuple[int, Traceback]] = []  # (header from_end, traceback)
        self.regions = 0

    def add(self, res: ScanResult) -> None:
        n = res.lines
        for i, eh in res.hits.items():
            for h in eh.hits():
                h.from_end = self.lines + n - h.rel + 1
                self.hits.setdefault(i, []).append(h)
            self.counts[i] = self.counts.get(i, 0) + eh.count
        for tb in res.tracebacks:
            self.tbs.append((self.lines + n - tb.rel + 1, tb))
            if tb.exc_rel is not None:
                tb.exc_rel = self.lines + n - tb.exc_rel + 1  # now a from_end
        if self.regions == 0:
            self.tail = res.tail
        self.lines += n
        self.bytes += res.bytes_in
        self.regions += 1

    def ranked(self, cat: Catalog, sched: JobState | None, complete: bool) -> Ranked:
        for hs in self.hits.values():
            for h in hs:
                h.line = self.lines - h.from_end + 1 if complete else None
        return rank(
            cat, self.hits, self.counts, sched, complete=complete, saw_traceback=bool(self.tbs)
        )


def _conclusive(cat: Catalog, r: Ranked, acc: _Acc) -> bool:
    if r.decided_by in ("hung", "scheduler"):
        return True
    root = r.root
    if root is None or root.entry.role != "fatal":
        return False
    if root.idx in cat.symptoms:
        return False
    return root.hit.synthetic is not None or root.hit.from_end <= acc.lines - CLUSTER_GAP


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
    acc = _Acc()
    if reader.is_gzip(p):
        acc.add(reader.stream_gzip(cat, p, threads))
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
    acc: _Acc,
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
    while True:
        start = max(0, end - step)
        seg = reader.scan_segment(cat, f, start, end, threads)
        acc.add(seg.result)
        if start == 0:
            return {"mode": "tail", "complete": True}
        if acc.bytes >= budget or _conclusive(cat, acc.ranked(cat, js, False), acc):
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
) -> dict[str, Any]:
    """Diagnose a stream of byte chunks (stdin, a remote `tail -c`), scanned as it comes.

    `tail=True` says the stream starts mid-log: its first partial line is dropped and line
    numbers are only given from the end.
    """
    cat = catalog or default_catalog()
    acc = _Acc()
    acc.add(reader.scan_chunks(cat, chunks, tail=tail, threads=threads))
    js = JobState.coerce(sched)
    ranked = acc.ranked(cat, js, not tail)
    info: dict[str, Any] = {"mode": "stream", "complete": not tail, "size": None}
    info.update(bytes_read=acc.bytes, regions=1, lines_scanned=acc.lines)
    return build(cat, ranked, acc, js=js, source=source, info=info, redactor=redactor)


def diagnose_text(text: str, **kw: Any) -> dict[str, Any]:
    return diagnose_chunks([text.encode("utf-8")], **kw)


# -- the diagnosis record -------------------------------------------------------------------
def _title(template: str, groups: Mapping[str, str]) -> str:
    out = re.sub(r"\{(\w+)\}", lambda m: groups.get(m.group(1), ""), template)
    return re.sub(r"[:\s]+$", "", out)


def _action(cat: Catalog, action: Mapping[str, Any], groups: Mapping[str, str]) -> dict[str, Any]:
    out = dict(action)
    if out.get("type") == "install_module":
        grp = str(out.get("from_group", "module"))
        module = groups.get(grp)
        out["module"] = module
        top = module.split(".")[0] if module else None
        out["package"] = cat.module_packages.get(top, top) if top else None
    return out


def _loc(h: Hit, complete: bool) -> dict[str, Any]:
    if h.synthetic == "scheduler":
        return {"line": None, "line_from_end": None}
    return {"line": h.line if complete else None, "line_from_end": h.from_end}


def _item(
    origin: str,
    from_end: int | None,
    text: str,
    before: list[str] | None = None,
    red: Redactor | None = None,
) -> dict[str, Any]:
    r = red.text if red is not None else str
    return {
        "origin": origin,
        "line": None,
        "line_from_end": from_end,
        "text": r(text),
        "before": [r(t) for t in before or []],
        "after": [],
    }


def _evidence(h: Hit, complete: bool, red: Redactor) -> dict[str, Any]:
    origin = h.synthetic or "log"
    item: dict[str, Any] = {"origin": origin, **_loc(h, complete), "text": red.text(h.text)}
    item["before"] = [red.text(t) for t in h.before]
    item["after"] = [red.text(t) for t in h.after]
    return item


def build(
    cat: Catalog,
    r: Ranked,
    acc: _Acc,
    *,
    js: JobState | None,
    source: str | None,
    info: dict[str, Any],
    redactor: Redactor | None = None,
) -> dict[str, Any]:
    red = redactor or default_redactor()
    complete = bool(info.get("complete"))
    last_tb = min(acc.tbs, key=lambda t: t[0]) if acc.tbs else None
    out: dict[str, Any] = {"kind": "diagnosis", "source": source, "failed": False}
    evidence: list[dict[str, Any]] = []
    exc: str | None = None
    if r.root is not None:
        e, h = r.root.entry, r.root.hit
        exc = h.groups.get("exc") or exception_type(h.text)
        fp = fingerprint(e.category, e.id, exc, h.key or h.text)
        evidence.append(_evidence(h, complete, red))
        more = [x for x in acc.hits.get(r.root.idx, []) if x is not h]
        for x in sorted(more, key=lambda x: -x.from_end)[: EVIDENCE_HITS - 1]:
            evidence.append(_evidence(x, complete, red))
        groups = h.groups
    elif r.unknown:
        e = cat.entry("unknown")
        groups = {}
        text = _unknown_text(acc, last_tb, js)
        exc = exception_type(text) if text else None
        fp = fingerprint(e.category, e.id, exc, text)
        if last_tb is not None:
            tb = last_tb[1]
            excerpt = tb.excerpt or [""]
            evidence.append(_item("traceback", last_tb[0], excerpt[-1], excerpt[:-1], red))
        if acc.tail:
            evidence.append(_item("tail", 1, acc.tail[-1], acc.tail[:-1], red))
    else:
        e = None
    if e is not None:
        out.update(
            failed=True,
            category=e.category,
            catalog_id=e.id,
            title=_title(e.title, groups),
            severity=e.severity,
            retryable=e.retryable,
            fix=e.fix,
            action=_action(cat, e.action, groups),
            exception_type=exc,
            fingerprint=fp,
        )
    else:
        out.update(category="healthy", catalog_id=None, title=None, severity=None)
        out.update(retryable=None, fix=None, action=None, exception_type=None, fingerprint=None)
    root_in_log = r.root is not None and r.root.hit.synthetic is None
    if r.decided_by == "scheduler" and js is not None and root_in_log:
        evidence.append(_item("scheduler", None, f"scheduler state {js.state}"))
    also = []
    for c, why in r.also:
        also.append(
            {
                "catalog_id": c.entry.id,
                "category": c.entry.category,
                "role": c.entry.role,
                **_loc(c.hit, complete),
                "count": c.count,
                "text": red.text(c.hit.text),
                "why": why,
            }
        )
    events = [
        {"catalog_id": c.entry.id, **_loc(c.hit, complete), "text": red.text(c.hit.text)}
        for c in r.events
    ]
    out.update(
        confidence=r.confidence,
        decided_by=r.decided_by,
        evidence=evidence,
        also_matched=also,
        events=events,
        requeued=any(c.entry.category == "requeue" for c in r.events),
        last_traceback=_tb_record(last_tb, red),
        bytes_read=acc.bytes,
        window=info,
        scheduler=js.record() if js is not None else None,
    )
    return out


def _unknown_text(acc: _Acc, last_tb: tuple[int, Traceback] | None, js: JobState | None) -> str:
    if last_tb is not None:
        tb = last_tb[1]
        return tb.exc_text or (tb.excerpt[-1] if tb.excerpt else "traceback")
    for line in reversed(acc.tail):
        if line.strip():
            return line
    return f"exit code {js.codes[0]}" if js and js.codes else "no output"


def _tb_record(tb: tuple[int, Traceback] | None, red: Redactor) -> dict[str, Any] | None:
    if tb is None:
        return None
    return {
        "line_from_end": tb[0],
        "exception": red.text(tb[1].exc_text) if tb[1].exc_text else None,
        "excerpt": [red.text(t) for t in tb[1].excerpt],
    }


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
