"""Root-cause ranking (research §11): which matched entry explains the failure.

Rules, in order:
1. Hung: the job is still running and its log has not grown for longer than `hung_after`.
2. Scheduler state beats log text: a state an entry lists in `states` (TIMEOUT, PREEMPTED,
   NODE_FAIL, OUT_OF_MEMORY, CANCELLED, OOMKilled, ...) decides; `COMPLETED` with exit 0 is
   healthy. Exit codes/signals an entry lists in `exit_codes` become hits placed after the
   last log line, with that entry's role (139 → segfault, 137 → weak host OOM).
3. Fatal hits: a hit is *explained* when another fatal entry lists it in `explains` (any
   order) or in `explains_later` and has a hit before it (two entries explaining each other
   cancel out unless one edge is order-free and the other is not). Among the unexplained
   hits, the *final failure cluster* is the latest hit plus every earlier one within
   `cluster_gap` lines of the next; earlier hits were followed by a running job and were not
   fatal. The root is the EARLIEST hit of that cluster; ties go to higher specificity.
   (A chained traceback's first exception is printed first, so it wins by the same rule; one
   line is claimed by the most specific entry matching it, so `torch.OutOfMemoryError: CUDA
   out of memory` is a GPU OOM, never the host `MemoryError` rule.)
4. No fatal hit: weak evidence (bare `Killed`, exit 137) → its entry, low confidence.
5. Only wrappers (ChildFailedError, SIGTERM cascades, KeyboardInterrupt): the earliest
   wrapper, lowest confidence.
6. Nothing: `unknown` when the job failed (exit code, FAILED state) or a traceback was seen;
   otherwise healthy.
Every other qualifying entry is listed in `also` with why it ranked lower.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from labctl.diagnose.catalog import Catalog, Entry
from labctl.diagnose.hits import CatalogHit
from labctl.diagnose.jobstate import JobState

CLUSTER_GAP = 2000
MESSAGE_LINES = 3


@dataclass
class Cand:
    hit: CatalogHit
    idx: int
    entry: Entry
    count: int


@dataclass
class Ranked:
    decided_by: str  # scheduler | hung | log | exit_code | none
    root: Cand | None
    confidence: float
    unknown: bool = False
    also: list[tuple[Cand, str]] = field(default_factory=list)
    events: list[Cand] = field(default_factory=list)
    root_exc: str | None = None  # exception type from the same event when the root line has none


def _pos(c: Cand) -> str:
    h = c.hit
    if h.synthetic == "scheduler":
        return "scheduler"
    return f"line {h.line}" if h.line is not None else f"line -{h.from_end} from end"


def rank(
    cat: Catalog,
    hits: Mapping[int, list[CatalogHit]],
    counts: Mapping[int, int],
    sched: JobState | None = None,
    *,
    complete: bool = True,
    saw_traceback: bool = False,
    cluster_gap: int = CLUSTER_GAP,
) -> Ranked:
    cands: list[Cand] = []
    short: list[tuple[Cand, str]] = []
    for i, hs in hits.items():
        e = cat.entries[i]
        for h in hs:
            c = Cand(h, i, e, counts.get(i, len(hs)))
            if c.count < e.min_hits:
                short.append((c, f"seen {c.count} time(s); needs {e.min_hits}"))
                break
            cands.append(c)
    for code in sched.codes if sched else []:
        for i in cat.exit_map.get(code, []):
            h = CatalogHit(entry=i, rel=0, text=f"exit code {code}", synthetic="scheduler")
            cands.append(Cand(h, i, cat.entries[i], 1))
    events = [c for c in cands if c.entry.role == "event"]
    cands = [c for c in cands if c.entry.role != "event"]
    if sched and sched.word in cat.state_map:
        j = cat.state_map[sched.word]
        if cat.entries[j].role == "event":
            h = CatalogHit(
                entry=j, rel=0, text=f"scheduler state {sched.state}", synthetic="scheduler"
            )
            events.append(Cand(h, j, cat.entries[j], 1))
    out = _decide(cat, cands, sched=sched, complete=complete, saw_tb=saw_traceback, gap=cluster_gap)
    out.events = _first_per_entry(events)
    out.also.extend(short)
    return out


def _first_per_entry(cands: list[Cand]) -> list[Cand]:
    seen: dict[int, Cand] = {}
    for c in sorted(cands, key=lambda c: -c.hit.from_end):
        seen.setdefault(c.idx, c)
    return list(seen.values())


def _decide(
    cat: Catalog,
    cands: list[Cand],
    *,
    sched: JobState | None,
    complete: bool,
    saw_tb: bool,
    gap: int,
) -> Ranked:
    said = _by_scheduler(cat, cands, sched)
    if said is not None:
        return said
    fatal = [c for c in cands if c.entry.role == "fatal"]
    if fatal:
        return _rank_fatal(cat, fatal, cands, complete, gap)
    weak = [c for c in cands if c.entry.role == "weak"]
    wrappers = [c for c in cands if c.entry.role == "wrapper"]
    if weak or wrappers:
        pool = weak or wrappers
        root = max(pool, key=lambda c: (c.hit.from_end, c.entry.specificity))
        rest = [c for c in _first_per_entry(cands) if c.idx != root.idx]
        why = "weak evidence too" if weak else "another wrapper"
        conf = 0.45 if weak else 0.3
        by = "exit_code" if root.hit.synthetic == "scheduler" else "log"
        return Ranked(by, root, conf, also=[(c, _lesser(c, why)) for c in rest])
    if saw_tb or (sched is not None and sched.failed):
        return Ranked("exit_code" if sched and sched.failed else "log", None, 0.2, unknown=True)
    return Ranked("none", None, 0.9 if complete else 0.75)


def _synthetic(cat: Catalog, j: int, text: str) -> Cand:
    """A candidate the scheduler (not a log line) stands for."""
    return Cand(CatalogHit(entry=j, rel=0, text=text, synthetic="scheduler"), j, cat.entries[j], 1)


def _by_scheduler(cat: Catalog, cands: list[Cand], sched: JobState | None) -> Ranked | None:
    """What the scheduler decides alone: a running job whose log went silent is hung; a
    state the catalog maps is authoritative; COMPLETED (and nothing failed) is healthy."""
    if sched and sched.running and sched.log_age is not None and sched.log_age > sched.hung_after:
        j = cat.by_id["hung_no_output"]
        text = f"no output for {int(sched.log_age)} s (threshold {int(sched.hung_after)} s)"
        why = "the job is still running; hung is decided from the log's age"
        also = [(c, why) for c in _first_per_entry(cands)]
        return Ranked("hung", _synthetic(cat, j, text), 0.8, also=also)
    word = sched.word if sched else None
    if word and word in cat.state_map and cat.entries[cat.state_map[word]].role != "event":
        j = cat.state_map[word]
        own = sorted(
            (c for c in cands if c.idx == j and not c.hit.synthetic), key=lambda c: -c.hit.from_end
        )
        agree = bool(own) or any(c.entry.category == cat.entries[j].category for c in cands)
        text = f"scheduler state {sched.state if sched else word}"
        root = own[0] if own else _synthetic(cat, j, text)
        why = f"scheduler state {word} is authoritative"
        also = [(c, why) for c in _first_per_entry(cands) if c.idx != j]
        return Ranked("scheduler", root, 0.95 if agree else 0.9, also=also)
    if word == "COMPLETED" and not (sched and sched.failed):
        why = "the scheduler says the job completed successfully"
        return Ranked("scheduler", None, 0.9, also=[(c, why) for c in _first_per_entry(cands)])
    return None


def _lesser(c: Cand, default: str) -> str:
    if c.entry.role == "wrapper":
        return "wrapper: a report of another process's failure"
    if c.entry.role == "weak":
        return "weak evidence (SIGKILL is not proof of OOM)"
    return default


def _edge(cat: Catalog, d: int, c: int) -> int:
    if c in cat.explains_any[d]:
        return 2
    return 1 if c in cat.explains_later[d] else 0


def _explainer(cat: Catalog, c: Cand, by_entry: dict[int, list[Cand]], gap: int) -> Cand | None:
    """The fatal hit that explains `c`: an `explains` edge (any order) or an `explains_later`
    edge from an earlier hit, within `gap` lines (scheduler-derived hits have no position)."""
    for d_idx, ds in by_entry.items():
        if d_idx == c.idx:
            continue
        s, back = _edge(cat, d_idx, c.idx), _edge(cat, c.idx, d_idx)
        if s == 0 or back == 2:  # no edge, or c explains d whatever the order
            continue
        near = [d for d in ds if _close(d, c, gap)]
        if s == 1:
            near = [d for d in near if d.hit.from_end > c.hit.from_end]
        if near:
            return max(near, key=lambda d: d.hit.from_end)
    return None


def _close(d: Cand, c: Cand, gap: int) -> bool:
    if d.hit.synthetic == "scheduler" or c.hit.synthetic == "scheduler":
        return True
    return abs(d.hit.from_end - c.hit.from_end) <= gap


def _rank_fatal(
    cat: Catalog, fatal: list[Cand], cands: list[Cand], complete: bool, gap: int
) -> Ranked:
    explained = _explained(cat, fatal, cands, gap)
    free = [c for c in fatal if id(c) not in explained] or list(fatal)
    free.sort(key=lambda c: (c.hit.from_end, -c.entry.specificity))
    cluster = [free[0]]
    for c in free[1:]:
        if c.hit.from_end - cluster[-1].hit.from_end > gap:
            break
        cluster.append(c)
    root = max(cluster, key=lambda c: (c.hit.from_end, c.entry.specificity, -c.idx))
    root, exc = _message_of(root, cluster, cands)
    others = {c.entry.category for c in cluster if c.entry.category != root.entry.category}
    conf = 0.75 if root.entry.category == "code_error" else 0.9
    conf -= 0.1 * min(3, len(others)) + (0.0 if complete else 0.05)
    by = "exit_code" if root.hit.synthetic == "scheduler" else "log"
    also = _also_fatal(root, cluster, cands, explained)
    out = Ranked(by, root, round(max(conf, 0.3), 2), also=also)
    out.root_exc = exc
    return out


def _explained(
    cat: Catalog, fatal: list[Cand], cands: list[Cand], gap: int
) -> dict[int, tuple[Cand, Cand]]:
    """id(candidate) -> (candidate, the hit that explains it). When every fatal hit is
    explained, the fatal ones are not (one of them is the root cause)."""
    by_entry: dict[int, list[Cand]] = {}
    for c in fatal:
        by_entry.setdefault(c.idx, []).append(c)
    explained: dict[int, tuple[Cand, Cand]] = {}
    for c in cands:
        d = _explainer(cat, c, by_entry, gap)
        if d is not None:
            explained[id(c)] = (c, d)
    if not any(id(c) not in explained for c in fatal):
        fatal_ids = {id(c) for c in fatal}
        explained = {k: v for k, v in explained.items() if k not in fatal_ids}
    return explained


def _message_of(root: Cand, cluster: list[Cand], cands: list[Cand]) -> tuple[Cand, str | None]:
    """The root (a more specific line right after it may describe the same event better)
    and the exception type its message belongs to."""
    # A multi-line exception message: a more specific line right after the root describes
    # the same event better ("RuntimeError: Failed to import ..." + "...so: undefined symbol").
    same = [
        c
        for c in cluster
        if 0 < root.hit.from_end - c.hit.from_end <= MESSAGE_LINES
        and c.entry.specificity > root.entry.specificity
        and c.hit.synthetic is None
    ]
    exc = None
    if same:
        exc = root.hit.exc
        root = max(same, key=lambda c: (c.entry.specificity, c.hit.from_end))
    if root.hit.exc is None and exc is None:
        # the exception line whose message continues on the root line, else a later hit of
        # the same entry that prints one
        above = [
            c
            for c in cands
            if 0 < c.hit.from_end - root.hit.from_end <= MESSAGE_LINES and c.hit.exc
        ]
        later = [c for c in cluster if c.idx == root.idx and c.hit.exc]
        pick = min(above, key=lambda c: c.hit.from_end) if above else None
        pick = pick or (max(later, key=lambda c: c.hit.from_end) if later else None)
        exc = pick.hit.exc if pick else None
    return root, exc


def _also_fatal(
    root: Cand, cluster: list[Cand], cands: list[Cand], explained: dict[int, tuple[Cand, Cand]]
) -> list[tuple[Cand, str]]:
    also: dict[int, tuple[Cand, str]] = {}
    for c in sorted(cands, key=lambda c: -c.hit.from_end):
        if c.idx == root.idx or c.idx in also:
            continue
        if id(c) in explained:
            d = explained[id(c)][1]
            also[c.idx] = (c, f"explained by {d.entry.id} ({_pos(d)})")
        elif c.entry.role != "fatal":
            also[c.idx] = (c, _lesser(c, "outranked"))
        elif any(c is x for x in cluster):
            also[c.idx] = (c, f"later than the root cause ({_pos(c)} vs {_pos(root)})")
        else:
            also[c.idx] = (c, "earlier event; the job kept running long after it (not fatal)")
    return list(also.values())
