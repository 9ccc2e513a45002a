"""The `diagnosis` record: merged scan results in, one JSON-ready dict out.

`Findings` collects the scan results of one log's regions (back to front, so `from_end` line
numbers are stable as the tail-first reader widens). `build` turns a ranking into the
diagnosis dict documented in labctl/diagnose/__init__.py: evidence lines (redacted, capped,
with context), the fingerprint, the resolved machine action, the also-matched entries.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.diagnose.catalog import Catalog, Entry
from labctl.diagnose.demote import Context
from labctl.diagnose.fates import also_matched, candidates, loc
from labctl.diagnose.fingerprint import exception_type, fingerprint, undouble
from labctl.diagnose.hits import CatalogHit, RegionScan, Traceback
from labctl.diagnose.jobstate import JobState
from labctl.diagnose.rank import Ranked, rank
from labctl.redact import Redactor, default_redactor

EVIDENCE_HITS = 3
_FRAME = re.compile(r'^\s+File "[^"]+", line \d+')
TB_END = 400  # a traceback whose header is this close to the end and that never ends: cut off


class Findings:
    """Scan results of regions merged back-to-front (the last region first)."""

    def __init__(self) -> None:
        self.hits: dict[int, list[CatalogHit]] = {}
        self.counts: dict[int, int] = {}
        self.lines = 0
        self.bytes = 0
        self.tail: list[str] = []
        self.tbs: list[tuple[int, Traceback]] = []  # (header from_end, traceback)
        self.ends_ignored = False  # the tail is the frames of an "Exception ignored" traceback
        self.regions = 0
        self.progress: int | None = None  # from_end of the last forward-progress line
        self.progress_by_worker = False  # ... printed by a Ray worker (relayed by the driver)
        self.restart: tuple[int, int] | None = None  # the last run: from_end, lines shared

    def add(self, res: RegionScan) -> None:
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
        if self.progress is None and res.last_progress is not None:
            self.progress = self.lines + n - res.last_progress + 1
            self.progress_by_worker = res.progress_by_worker
        if self.restart is None and res.restart is not None:
            self.restart = (self.lines + n - res.restart[0] + 1, res.restart[1])
        if self.regions == 0:
            self.tail = res.tail
            self.ends_ignored = res.ends_ignored
        self.lines += n
        self.bytes += res.bytes_in
        self.regions += 1

    def ranked(self, cat: Catalog, sched: JobState | None, complete: bool) -> Ranked:
        for hs in self.hits.values():
            for h in hs:
                h.line = self.lines - h.from_end + 1 if complete else None
        ctx = self.context(complete)
        return rank(cat, self.hits, self.counts, sched, complete=complete, ctx=ctx)

    def context(self, complete: bool = False) -> Context:
        restart = self.restart[0] if self.restart else None
        # a traceback of an earlier run says nothing about how the last one ended
        tbs = [t for t in self.tbs if restart is None or t[0] <= restart]
        last = min(tbs, key=lambda t: t[0]) if tbs else None
        cut = last is not None and last[1].exc_rel is None and last[0] <= TB_END
        return Context(
            progress_from_end=self.progress,
            progress_by_worker=self.progress_by_worker,
            ends_in_traceback=cut or (not self.ends_ignored and _ends_in_frames(self.tail)),
            last_traceback=(last[0], last[1].quiet) if last else None,
            last_exception=last[1].exc_rel if last else None,
            lines=self.lines if complete else None,
            restart=self.restart,
            last_output=_last_output(self.tail),
        )


def _last_output(tail: list[str]) -> int | None:
    """from_end of the log's last non-blank line (None when its tail is all blank)."""
    for k, text in enumerate(reversed(tail), 1):
        if text.strip():
            return k
    return None


def _ends_in_frames(tail: list[str]) -> bool:
    """The log stops in a traceback's frames (an excerpt cut before its exception line)."""
    lines = [t for t in tail if t.strip()]
    frames = sum(bool(_FRAME.match(t)) for t in lines)
    return frames >= 2 and bool(lines) and lines[-1][:1] in (" ", "\t")


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


def _evidence(h: CatalogHit, complete: bool, red: Redactor) -> dict[str, Any]:
    origin = h.synthetic or "log"
    item: dict[str, Any] = {"origin": origin, **loc(h, complete), "text": red.text(h.text)}
    item["before"] = [red.text(t) for t in h.before]
    item["after"] = [red.text(t) for t in h.after]
    return item


@dataclass
class _Root:
    """The root cause a ranking named (or the `unknown` entry), with its evidence."""

    entry: Entry | None = None
    groups: Mapping[str, str] = field(default_factory=dict)
    exc: str | None = None
    fingerprint: str | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)


def _root(
    cat: Catalog,
    r: Ranked,
    acc: Findings,
    js: JobState | None,
    complete: bool,
    red: Redactor,
) -> _Root:
    if r.root is not None:
        e, h = r.root.entry, r.root.hit
        exc = undouble(h.groups.get("exc") or h.exc or r.root_exc)
        fp = (
            fingerprint(e.category, e.id, None, "")  # the entry alone names the failure
            if e.fingerprint == "entry"
            else fingerprint(e.category, e.id, exc, h.key or h.text)
        )
        root = _Root(e, h.groups, exc, fp)
        root.evidence.append(_evidence(h, complete, red))
        more = [x for x in acc.hits.get(r.root.idx, []) if x is not h]
        for x in sorted(more, key=lambda x: -x.from_end)[: EVIDENCE_HITS - 1]:
            root.evidence.append(_evidence(x, complete, red))
        return root
    if not r.unknown:
        return _Root()
    e = cat.entry("unknown")
    last_tb = _last_traceback(acc)
    text = _unknown_text(acc, last_tb, js)
    exc = exception_type(text) if text else None
    root = _Root(e, {}, exc, fingerprint(e.category, e.id, exc, text))
    if last_tb is not None:
        excerpt = last_tb[1].excerpt or [""]
        root.evidence.append(_item("traceback", last_tb[0], excerpt[-1], excerpt[:-1], red))
    if acc.tail:
        root.evidence.append(_item("tail", 1, acc.tail[-1], acc.tail[:-1], red))
    if js is not None and js.failed:  # the scheduler's word, first: the log does not say why
        root.evidence.insert(0, _item("scheduler", None, f"scheduler: {js.describe()}"))
    return root


def _entry_fields(cat: Catalog, root: _Root) -> dict[str, Any]:
    e = root.entry
    if e is None:
        return {"failed": False, **dict.fromkeys(_ENTRY_FIELDS), "category": "healthy"}
    return {
        "failed": True,
        "category": e.category,
        "catalog_id": e.id,
        "title": _title(e.title, root.groups),
        "severity": e.severity,
        "retryable": e.retryable,
        "fix": e.fix,
        "action": _action(cat, e.action, root.groups),
        "exception_type": root.exc,
        "fingerprint": root.fingerprint,
    }


_ENTRY_FIELDS = (
    "category", "catalog_id", "title", "severity", "retryable", "fix", "action",
    "exception_type", "fingerprint",
)  # fmt: skip


def _last_traceback(acc: Findings) -> tuple[int, Traceback] | None:
    return min(acc.tbs, key=lambda t: t[0]) if acc.tbs else None


def build(
    cat: Catalog,
    r: Ranked,
    acc: Findings,
    *,
    js: JobState | None,
    source: str | None,
    info: dict[str, Any],
    redactor: Redactor | None = None,
) -> dict[str, Any]:
    """The diagnosis dict (documented in labctl/diagnose/__init__.py) of a ranking."""
    red = redactor or default_redactor()
    complete = bool(info.get("complete"))
    root = _root(cat, r, acc, js, complete, red)
    evidence = root.evidence
    root_in_log = r.root is not None and r.root.hit.synthetic is None
    if r.decided_by == "scheduler" and js is not None and root_in_log:
        evidence.append(_item("scheduler", None, f"scheduler state {js.state}"))
    events = [
        {"catalog_id": c.entry.id, **loc(c.hit, complete), "text": red.text(c.hit.text)}
        for c in r.events
    ]
    return {
        "kind": "diagnosis",
        "source": source,
        **_entry_fields(cat, root),
        "confidence": r.confidence,
        "decided_by": r.decided_by,
        "why": r.why,
        "evidence": evidence,
        "also_matched": also_matched(r, complete, red),
        "candidates": candidates(r, acc.lines, complete),
        "events": events,
        "requeued": any(c.entry.category == "requeue" for c in r.events),
        "last_traceback": _tb_record(_last_traceback(acc), red),
        "bytes_read": acc.bytes,
        "window": info,
        "scheduler": js.record() if js is not None else None,
    }


def _unknown_text(acc: Findings, last_tb: tuple[int, Traceback] | None, js: JobState | None) -> str:
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
