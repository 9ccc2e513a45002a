"""Root-cause ranking (research §11; issue 15): which matched entry explains the failure.

Rules, in order:
1. Hung: the job is still running and its log has not grown for longer than `hung_after`.
2. Scheduler state beats log text: a state an entry lists in `states` (TIMEOUT, PREEMPTED,
   NODE_FAIL, OUT_OF_MEMORY, CANCELLED, OOMKilled, ...) decides; `COMPLETED` with exit 0 is
   healthy. Exit codes/signals an entry lists in `exit_codes` become hits placed after the
   last log line, with that entry's role (139 → segfault, 137 → weak host OOM). The log's
   own LAST end report (LSF "Exited with exit code N.", PBS "Exit Status: N", a pod's
   exitCode; `exit` entries) counts the same way; a report of 0 is a success marker.
3. Demotion (demote.py): a candidate of an earlier run of a log that holds several (its first
   line recurs: an appended submission, the script's next run; restarts.py) never decides,
   nor does one the last run printed as it started when an earlier run went on past it, nor
   one at or before an end-of-job marker that progress and a later job's end follow, nor an
   exception being handled when an interrupt came (endings.py). A
   candidate written at WARNING/INFO level, followed by a success marker, followed by forward
   progress (SURVIVE_LINES or more lines later), or -- for a `survivable` message (shell/conda
   noise, a launch that failed before it ran anything, a DataLoader worker's own crash
   report) -- followed by any progress or an independent failure, or -- `last_only`, a job
   script's command -- followed by any output, or -- the same failure again -- followed by
   progress when the job went on past an earlier occurrence of it (a sweep's sub-run that
   aborts, recurring.py), was survived and is never the root cause
   (end-of-job markers are exempt, but from a later success: a later job's). Demoted
   candidates are listed in `also` with the reason; a traceback whose exception line is one
   of them was survived too.
4. Fatal hits (fatal.py): a hit is *explained* when another fatal entry lists it in
   `explains` (any order) or in `explains_later` and has a hit before it. Among the
   unexplained hits, the *final failure cluster* is the latest hit plus every earlier one
   within `cluster_gap` lines of the next. The root is the EARLIEST hit of that cluster; ties
   go to higher specificity (a chained traceback's first exception is printed first).
5. No fatal hit: weak evidence (bare `Killed`, exit 137) → its entry, low confidence; else
   only wrappers/end reports (ChildFailedError, SIGTERM cascades, "Exited with exit code 1")
   → the earliest one that no other of them explains (a keyboard interrupt explains the
   DataLoader threads' tracebacks it caused, printed before or after it), lowest confidence.
6. A failure logged at WARNING/INFO level just before (LOGGED_CAUSE_LINES) an uncaught traceback
   that no entry names is that traceback's cause: a library logs the status it is about to
   raise (TensorFlow's `W ... OP_REQUIRES failed at save_restore_v2_ops.cc: Permission denied`
   before the op's traceback), and an excerpt or a crash may cut the exception line off.
7. Nothing: `unknown` when the scheduler says the job failed (poll's verdict failed/timeout/
   out_of_memory/node_fail, a non-zero exit code: a quiet log never overrules it), or the log
   stops inside a traceback, or ends with one it did not survive; healthy after a success
   marker or when nothing failed.
Every other qualifying entry is listed in `also` with why it ranked lower (`why`).
"""

from __future__ import annotations

from collections.abc import Mapping

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.demote import (
    SURVIVE_LINES,
    Cand,
    Context,
    Ranked,
    Why,
    after_failure,
    end_reports,
    independent_later,
    opening_survived,
    pos,
    why_not,
)
from labctl.diagnose.endings import earlier_jobs, handled
from labctl.diagnose.fatal import CLUSTER_GAP, explained_by, lesser, rank_fatal, reported
from labctl.diagnose.hits import CatalogHit
from labctl.diagnose.jobstate import JobState
from labctl.diagnose.recurring import recurrences

LOGGED_CAUSE_LINES = 3  # a logged failure this close above an uncaught traceback names it


def rank(
    cat: Catalog,
    hits: Mapping[int, list[CatalogHit]],
    counts: Mapping[int, int],
    sched: JobState | None = None,
    *,
    complete: bool = True,
    saw_traceback: bool = False,
    cluster_gap: int = CLUSTER_GAP,
    ctx: Context | None = None,
) -> Ranked:
    ctx = ctx or Context(last_traceback=(1, False) if saw_traceback else None)
    cands: list[Cand] = []
    short: list[tuple[Cand, Why]] = []
    for i, hs in hits.items():
        e = cat.entries[i]
        for h in hs:
            c = Cand(h, i, e, counts.get(i, len(hs)))
            if c.count < e.min_hits:
                short.append((c, Why("too_few", f"seen {c.count} time(s); needs {e.min_hits}")))
                break
            cands.append(c)
    for code in sched.codes if sched else []:
        for i in cat.exit_map.get(code, []):
            cands.append(_synthetic(cat, i, f"exit code {code}"))
    events = [c for c in cands if c.entry.role == "event"]
    exits = [c for c in cands if c.entry.role == "exit"]
    successes, reported = end_reports(cat, cands)
    successes += [c for c in cands if c.entry.role == "success"]
    cands = [c for c in cands if c.entry.role not in ("event", "success", "exit")] + reported
    if sched and sched.word in cat.state_map:
        j = cat.state_map[sched.word]
        if cat.entries[j].role == "event":
            events.append(_synthetic(cat, j, f"scheduler state {sched.state}"))
    out = _decide(cat, cands, successes, sched=sched, complete=complete, gap=cluster_gap, ctx=ctx)
    out.events = _first_per_entry(events)
    out.also.extend(short)
    out.also.extend(_earlier_reports(exits, out))
    return out


def _earlier_reports(exits: list[Cand], out: Ranked) -> list[tuple[Cand, Why]]:
    """End reports before the last one (an attempt the log does not end with): the last decides."""
    if len(exits) < 2:
        return []
    last = min(exits, key=lambda c: c.hit.from_end)
    seen = {c.idx for c, _ in out.also}  # one per entry, as in `also`; the root is another hit
    why = Why("earlier_report", f"an earlier end report; the last one decides ({pos(last)})", last)
    return [
        (c, why)
        for c in _first_per_entry([c for c in exits if c is not last and c.idx not in seen])
    ]


def _synthetic(cat: Catalog, j: int, text: str) -> Cand:
    """A candidate the scheduler (not a log line) stands for."""
    return Cand(CatalogHit(entry=j, rel=0, text=text, synthetic="scheduler"), j, cat.entries[j], 1)


def _first_per_entry(cands: list[Cand]) -> list[Cand]:
    seen: dict[int, Cand] = {}
    for c in sorted(cands, key=lambda c: -c.hit.from_end):
        seen.setdefault(c.idx, c)
    return list(seen.values())


def _by_scheduler(cat: Catalog, cands: list[Cand], sched: JobState | None) -> Ranked | None:
    """Hung, or a scheduler state that decides (TIMEOUT, PREEMPTED, ...), or COMPLETED."""
    if sched and sched.running and sched.log_age is not None and sched.log_age > sched.hung_after:
        j = cat.by_id["hung_no_output"]
        text = f"no output for {int(sched.log_age)} s (threshold {int(sched.hung_after)} s)"
        root = _synthetic(cat, j, text)
        why = "the job is still running; hung is decided from the log's age"
        also = [(c, Why("hung", why, by=root)) for c in _first_per_entry(cands)]
        return Ranked("hung", root, 0.8, also=also, why=why)
    word = sched.word if sched else None
    if word and word in cat.state_map and cat.entries[cat.state_map[word]].role != "event":
        j = cat.state_map[word]
        own = sorted(
            (c for c in cands if c.idx == j and not c.hit.synthetic), key=lambda c: -c.hit.from_end
        )
        agree = bool(own) or any(c.entry.category == cat.entries[j].category for c in cands)
        text = f"scheduler state {(sched.state if sched else None) or word}"
        root = own[0] if own else _synthetic(cat, j, text)
        why = f"scheduler state {word} is authoritative"
        decides = Why("scheduler", why, by=root)
        also = [(c, decides) for c in _first_per_entry(cands) if c.idx != j]
        return Ranked("scheduler", root, 0.95 if agree else 0.9, also=also, why=why)
    if word == "COMPLETED" and not (sched and sched.failed):
        why = "the scheduler says the job completed successfully"
        also = [(c, Why("completed", why)) for c in _first_per_entry(cands)]
        return Ranked("scheduler", None, 0.9, also=also, why=why)
    return None


def _decide(
    cat: Catalog,
    cands: list[Cand],
    successes: list[Cand],
    *,
    sched: JobState | None,
    complete: bool,
    gap: int,
    ctx: Context,
) -> Ranked:
    decided = _by_scheduler(cat, cands, sched)
    if decided is not None:
        return decided
    demoted = _demoted(cat, cands, successes, ctx, gap)
    live = [c for c in cands if id(c) not in demoted]
    out = _rank_live(cat, live, complete, gap)
    if out is None:
        out = _logged_cause(cands, demoted, successes, ctx)
    if out is None:
        out = _quiet(successes, sched, complete, ctx, [c for c in cands if id(c) in demoted])
    seen = {c.idx for c, _ in out.also} | ({out.root.idx} if out.root else set())
    for c in sorted(cands, key=lambda c: -c.hit.from_end):
        if id(c) in demoted and c.idx not in seen:
            seen.add(c.idx)
            out.also.append((c, demoted[id(c)]))
    return out


def _demoted(
    cat: Catalog, cands: list[Cand], successes: list[Cand], ctx: Context, gap: int
) -> dict[int, Why]:
    fatal = [c for c in cands if c.entry.role == "fatal"]
    out: dict[int, Why] = {}
    for c in cands:
        why = why_not(cat, c, successes, ctx) or handled(cat, c, cands)
        if why:
            out[id(c)] = why
    out.update(earlier_jobs(cat, cands, out, ctx))  # several jobs' ends in one file
    out.update(recurrences(cat, cands, out, ctx))  # a sweep's sub-runs that fail (recurring.py)
    earlier = [d for d in cands if id(d) in out and out[id(d)].reason == "earlier_run"]
    for c in cands:
        if id(c) not in out and (why := opening_survived(cat, c, earlier, successes, ctx)):
            out[id(c)] = why
    live = [d for d in fatal if id(d) not in out]
    for c in cands:
        if c.entry.survivable and id(c) not in out:
            why = independent_later(cat, c, live) or after_failure(cat, c, live, gap)
            if why:
                out[id(c)] = why
    return out


def _rank_live(cat: Catalog, live: list[Cand], complete: bool, gap: int) -> Ranked | None:
    fatal = [c for c in live if c.entry.role == "fatal"]
    if fatal:
        return rank_fatal(cat, fatal, live, complete, gap)
    weak = [c for c in live if c.entry.role == "weak"]
    wrappers = [c for c in live if c.entry.role in ("wrapper", "exit")]
    if not (weak or wrappers):
        return None
    pool = weak or wrappers
    explained = explained_by(cat, pool, pool, gap)  # an interrupt explains its aftermath
    free = [c for c in pool if id(c) not in explained] or pool
    root = max(free, key=lambda c: (c.hit.from_end, c.entry.specificity))
    why = "weak evidence too" if weak else "another wrapper"
    also = [
        (c, _explained_why(explained[id(c)][1]) if id(c) in explained else lesser(c, why, root))
        for c in _first_per_entry(live)
        if c.idx != root.idx
    ]
    conf = 0.45 if weak else 0.3
    by = "exit_code" if root.hit.synthetic == "scheduler" or reported(cat, root) else "log"
    reason = (
        "only weak evidence (a kill signal or exit code; no line names the cause)"
        if weak
        else "only a report of a failure whose cause this log does not show"
    )
    return Ranked(by, root, conf, also=also, why=reason)


def _explained_why(d: Cand) -> Why:
    return Why("explained", f"explained by {d.entry.id} ({pos(d)})", by=d)


def _uncaught(ctx: Context, demoted: list[Cand]) -> bool:
    """Does the log stop inside, or end with, a traceback that the job did not survive? One
    whose exception line an entry names and the job survived (a demoted candidate) is not."""
    tb = ctx.last_traceback
    survived = (
        tb is not None
        and ctx.progress_from_end is not None
        and (tb[0] - ctx.progress_from_end >= SURVIVE_LINES)
    ) or any(c.hit.from_end == ctx.last_exception for c in demoted)
    return ctx.ends_in_traceback or (tb is not None and not tb[1] and not survived)


def _logged_cause(
    cands: list[Cand], demoted: dict[int, Why], successes: list[Cand], ctx: Context
) -> Ranked | None:
    """The failure logged at WARNING/INFO level right above an uncaught traceback that no
    entry names (rule 6), or None."""
    tb = ctx.last_traceback
    gone = [c for c in cands if id(c) in demoted]
    if tb is None or not _uncaught(ctx, gone) or any(s.hit.from_end < tb[0] for s in successes):
        return None
    near = [
        c
        for c in cands
        if (w := demoted.get(id(c))) is not None
        and w.reason == "logged"
        and c.entry.role == "fatal"
        and 0 < c.hit.from_end - tb[0] <= LOGGED_CAUSE_LINES
    ]
    if not near:
        return None
    root = min(near, key=lambda c: (c.hit.from_end, -c.entry.specificity))
    why = (
        f"logged at WARNING/INFO level just before an uncaught traceback that no entry names "
        f"({pos(root)}): it names that traceback's cause"
    )
    return Ranked("log", root, 0.6, why=why)


def _quiet(
    successes: list[Cand],
    sched: JobState | None,
    complete: bool,
    ctx: Context,
    demoted: list[Cand],
) -> Ranked:
    """No live failure line: success, unknown (a traceback it did not survive, the scheduler's
    failed verdict, a log that stops inside a traceback) or healthy."""
    if sched is not None and sched.failed:
        why = f"the scheduler says the job failed ({sched.describe()}) and the log does not say why"
        by = "exit_code" if any(sched.codes) else "scheduler"
        return Ranked(by, None, 0.2, unknown=True, why=why)
    if successes:
        s = min(successes, key=lambda c: c.hit.from_end)
        return Ranked("log", None, 0.9, why=f"the log ends with a success report ({pos(s)})")
    if _uncaught(ctx, demoted):
        return Ranked("log", None, 0.2, unknown=True, why="an uncaught traceback no entry names")
    return Ranked("none", None, 0.9 if complete else 0.75, why="nothing in the log failed")
