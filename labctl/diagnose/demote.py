"""Which failure-looking lines the job survived, and what its end reports say (issue 15).

A candidate (a catalog hit) is demoted -- listed in `also_matched` with the reason, never the
root cause -- when:

- it belongs to an earlier run of a log that holds several (`earlier run`): the log's first line
  recurs where the last run starts (an appended submission, the script's next run; restarts.py);
  or the last run printed it among the opening lines every run starts with, and an earlier run
  went on past it to another failure or a success (`survived`);
- it was written at WARNING/INFO/DEBUG level (`logged`): reported, not raised;
- it is an informational notice (`[notice]` in the catalog): advice ("this is not a failure",
  "to enable higher rate limits") or a hypothetical ("if you run out of memory", "in case the
  job is preempted") on a line that names no exception type and carries no error level;
- a success report comes after it (`later success`): LSF "Successfully completed.", PBS
  "Exit Status: 0", a trainer's "training completed" -- the attempt the log ends with worked;
  this holds for end-of-job markers too: a job that timed out or was cancelled reports no
  success after it, so a later one is a later job's (an appended output file);
- it is `last_only` (a job script's command: `cp` of a missing file) and the log shows more
  output after it: the script went on (`survived`);
- it is `survivable` (a shell or conda message the script carries on after, a launch that
  failed before it ran anything, a DataLoader worker's own crash report) and a fatal
  failure of another entry that it does not explain comes later (`a later independent
  failure`), or the program's own failure came just before it (`after the program failed`:
  shell noise after a traceback never outranks it);
- the job made forward progress at least SURVIVE_LINES lines after it -- any progress at all
  after a `survivable` message -- (`survived`): steps,
  epochs, progress bars moved on -- unless it is an end-of-job marker (time limit, preemption,
  cancel, node failure: progress printed after those is the job's last gasp). Ranks wait for
  each other at every step, so one rank's OOM is followed by a step or two of the others'
  output, never SURVIVE_LINES lines of it, before their watchdog timeouts.

End reports (`exit` entries: LSF "Exited with exit code N.", PBS "Exit Status: N", a pod's
"exitCode: N") count like the scheduler's exit code: the LAST report in a log decides; 0 is a
success report; otherwise the catalog's `exit_codes` map it (139 -> segfault, 137 -> weak host
OOM, 143 -> SIGTERM) and an unmapped code leaves the report itself as the evidence of a failure
whose cause the log does not name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from labctl.diagnose.catalog import Catalog, Entry
from labctl.diagnose.hits import RAY_WORKER, CatalogHit

SURVIVE_LINES = 30
QUIET = "logged at WARNING/INFO level: reported, not raised"
# strsignal(3) descriptions (Linux), as shells and LSF print them for a killed job
SIGNAL_NAMES = {
    "hangup": 1,
    "interrupt": 2,
    "quit": 3,
    "illegal instruction": 4,
    "trace/breakpoint trap": 5,
    "aborted": 6,
    "bus error": 7,
    "floating point exception": 8,
    "killed": 9,
    "user defined signal 1": 10,
    "segmentation fault": 11,
    "user defined signal 2": 12,
    "broken pipe": 13,
    "alarm clock": 14,
    "terminated": 15,
    "cpu time limit exceeded": 24,
    "file size limit exceeded": 25,
}


@dataclass
class Cand:
    """A candidate for the root cause: one hit of one catalog entry."""

    hit: CatalogHit
    idx: int
    entry: Entry
    count: int


@dataclass(frozen=True)
class Why:
    """Why a candidate lost or was demoted: a snake_case `reason`, the sentence people read, and
    what decided it -- `by`, a hit (the failure that explains it, the success report, the root
    cause), or `at`, the from_end of a line that is no hit, of the kind `at_role` names (the
    last forward-progress line, the first line of the log's last run, its last output)."""

    reason: str
    text: str
    by: Cand | None = None
    at: int | None = None
    at_role: str = "progress"  # progress | run_start | output


@dataclass
class Context:
    """What a log says besides its failure-looking lines."""

    progress_from_end: int | None = None  # the last forward-progress line
    # ... was a Ray worker's line, relayed by the driver (hits.RAY_WORKER): after the driver's
    # own failure, its workers' last output is flushed as it shuts down, not a job going on
    progress_by_worker: bool = False
    ends_in_traceback: bool = False  # the log stops inside a traceback (no exception line)
    last_traceback: tuple[int, bool] | None = None  # (from_end, written at WARNING/INFO level)
    last_exception: int | None = None  # from_end of the last traceback's exception line
    lines: int | None = None  # lines in the log, when the scan covered it from its first byte
    # the last run of a log holding several (restarts.py): from_end of its first line, and how
    # many of its opening lines the first run printed before going on
    restart: tuple[int, int] | None = None
    last_output: int | None = None  # from_end of the log's last non-blank line

    def where(self, from_end: int) -> str:
        if self.lines is None:
            return f"line -{from_end} from end"
        return f"line {self.lines - from_end + 1}"


@dataclass
class Ranked:
    decided_by: str  # scheduler | hung | log | exit_code | none
    root: Cand | None
    confidence: float
    unknown: bool = False
    also: list[tuple[Cand, Why]] = field(default_factory=list)
    events: list[Cand] = field(default_factory=list)
    root_exc: str | None = None  # exception type from the same event when the root line has none
    why: str = ""  # why the root won (or why the log counts as healthy / unknown)


def pos(c: Cand) -> str:
    h = c.hit
    if h.synthetic == "scheduler":
        return "scheduler"
    return f"line {h.line}" if h.line is not None else f"line -{h.from_end} from end"


def end_reports(cat: Catalog, cands: Sequence[Cand]) -> tuple[list[Cand], list[Cand]]:
    """(success markers, failure candidates) made from the log's LAST exit report."""
    exits = [c for c in cands if c.entry.role == "exit"]
    if not exits:
        return [], []
    last = min(exits, key=lambda c: c.hit.from_end)
    groups = last.hit.groups
    code = _int(groups.get("code"))
    signal = _int(groups.get("signal"))
    name = groups.get("signame")
    if name is not None:  # LSF: "Exited with signal termination: User defined signal 2."
        signal = SIGNAL_NAMES.get(name.strip().lower(), 0)
    if signal is None and code is not None and code > 256:  # PBS: 256 + signal
        signal = code - 256
    if signal is None and not code:
        return [last], []
    codes = [x for x in (code, -signal if signal else None) if x is not None]
    if signal:
        codes.append(128 + signal)
    mapped = [
        Cand(replace(last.hit, entry=j), j, cat.entries[j], 1)
        for x in codes
        for j in cat.exit_map.get(x, [])
    ]
    return [], mapped or [last]


def independent_later(cat: Catalog, c: Cand, fatal: Sequence[Cand]) -> Why | None:
    """For a `survivable` candidate (a shell or conda message the job script carries on
    after): the later fatal failure of another entry that it does not explain."""
    later = [
        d
        for d in fatal
        if d.hit.from_end < c.hit.from_end
        and d.idx != c.idx
        and c.idx not in cat.explains_any[d.idx]  # d comes later: only order-free edges
        and d.idx not in cat.explains_later[c.idx] | cat.explains_any[c.idx]
    ]
    if not later:
        return None
    d = max(later, key=lambda d: d.hit.from_end)
    text = f"a later independent failure: {d.entry.id} ({pos(d)}); the script carried on"
    return Why("later_failure", text, by=d)


def after_failure(cat: Catalog, c: Cand, fatal: Sequence[Cand], gap: int) -> Why | None:
    """For a `survivable` candidate (a shell message): the program's failure printed before it
    (within `gap` lines). A shell line after a traceback is the job script carrying on -- a
    `deactivate`, a `cp` of results that do not exist -- never the cause of what came before."""
    earlier = [
        d
        for d in fatal
        if d.hit.from_end > c.hit.from_end
        and d.hit.from_end - c.hit.from_end <= gap
        and not d.entry.survivable
        and d.idx not in cat.explains_any[c.idx]
    ]
    if not earlier:
        return None
    d = min(earlier, key=lambda d: d.hit.from_end)
    text = f"after the program failed ({d.entry.id}, {pos(d)}): the script carried on"
    return Why("after_failure", text, by=d)


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.lstrip("-").isdigit() else None


def _later_success(successes: list[Cand], h: CatalogHit) -> Why | None:
    after = [s for s in successes if s.hit.from_end < h.from_end]
    if not after:
        return None
    s = min(after, key=lambda s: s.hit.from_end)
    return Why("later_success", f"later success: {s.hit.text.strip()[:80]!r} ({pos(s)})", by=s)


def earlier_run(c: Cand, ctx: Context) -> Why | None:
    """A candidate of an earlier run in the same log (restarts.py): a submission appended to
    the file, or the job script's earlier run; the log's first line recurs where the last
    one starts."""
    if ctx.restart is None or c.hit.from_end <= ctx.restart[0]:
        return None
    text = (
        f"an earlier run's: the log's first line recurs at {ctx.where(ctx.restart[0])}, where "
        "the last run (a submission appended to this file, the script's next run) starts; the "
        "last one decides"
    )
    return Why("earlier_run", text, at=ctx.restart[0], at_role="run_start")


def opening_survived(
    cat: Catalog, c: Cand, earlier: Sequence[Cand], successes: Sequence[Cand], ctx: Context
) -> Why | None:
    """A candidate among the opening lines the last run shares with the first (restarts.py)
    that an earlier run went on past: to a failure of another entry that it does not explain,
    or to a success. Every run printed it as it started."""
    if ctx.restart is None:
        return None
    start, shared = ctx.restart
    if not 0 <= start - c.hit.from_end < shared:
        return None
    past = [d for d in successes if d.hit.from_end > start] + [
        d
        for d in earlier
        if d.entry.role == "fatal" and d.idx != c.idx and d.idx not in cat.explains_any[c.idx]
    ]
    if not past:
        return None
    d = min(past, key=lambda d: d.hit.from_end)
    text = (
        f"printed by every run as it started (the last one starts at {ctx.where(start)}); an "
        f"earlier one went on to {d.entry.id} ({pos(d)})"
    )
    return Why("survived", text, by=d)


def why_not(cat: Catalog, c: Cand, successes: list[Cand], ctx: Context) -> Why | None:
    """Why candidate `c` cannot be the root cause, or None."""
    h = c.hit
    if h.synthetic == "scheduler":
        return None
    earlier = earlier_run(c, ctx)
    if earlier is not None:
        return earlier
    if h.notice and c.entry.role in ("fatal", "weak") and not c.entry.logged:
        text = "an informational notice (advice or a hypothetical), not a report of a failure"
        return Why("notice", text)
    if cat.terminal[c.idx]:
        # end-of-job markers hold whatever level they are logged at, and whatever progress is
        # printed after them; a success reported later is a later job's (an appended file)
        return _later_success(successes, h)
    if h.quiet and c.entry.role in ("fatal", "weak") and not c.entry.logged:
        return Why("logged", QUIET)
    later = _later_success(successes, h)
    if later is not None:
        return later
    out = ctx.last_output
    if c.entry.last_only and out is not None and h.from_end > out:
        text = f"the job script went on after it (the log's last output is at {ctx.where(out)})"
        return Why("survived", text, at=out, at_role="output")
    p = ctx.progress_from_end
    if ctx.progress_by_worker and RAY_WORKER.match(h.text.encode()) is None:
        p = None  # the driver failed: its workers' output after it is flushed, not progress
    if p is not None and h.from_end - p >= (1 if c.entry.survivable else SURVIVE_LINES):
        text = (
            f"survived: the job kept making progress {h.from_end - p} lines later "
            f"(the last progress at {ctx.where(p)})"
        )
        return Why("survived", text, at=p)
    return None
