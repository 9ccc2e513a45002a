"""What ended the job, when a log holds more than one ending (issue 15).

- Several jobs' ends in one file: an end-of-job marker (a time limit, a preemption, a cancel:
  the catalog's entries with `explains_later = ["*"]`) after which the log moves on (forward
  progress) and another end-of-job marker comes, SURVIVE_LINES or more lines later, ended an
  earlier job -- an output file appended by every submission, a requeued job -- so it and
  everything before it are an earlier job's (`earlier_job`): the last end decides, as an
  appended file's last job does. The banners of one job's end (its steps' and its own) come
  together, never a job's progress apart.
- An exception being handled when an interrupt came: Python's "During handling of the above
  exception, another exception occurred:" between a failure and the interrupt that ends its
  chain (a KeyboardInterrupt, any hit of a `cancelled` entry) says the program had caught the
  first one and was running its handler -- a pool's `next()` waiting for a result after the
  empty deque's IndexError, a cleanup -- when the interrupt stopped it (`handled`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.demote import SURVIVE_LINES, Cand, Context, Why, pos
from labctl.diagnose.tracebacks import TB_MAX_LINES

_HANDLING = "During handling of the above exception, another exception occurred"


def earlier_jobs(
    cat: Catalog, cands: Sequence[Cand], demoted: Mapping[int, Why], ctx: Context
) -> dict[int, Why]:
    """id(candidate) -> why, for the candidates not yet `demoted` that an earlier job printed."""
    end = earlier_end(cat, cands, ctx)
    if end is None:
        return {}
    last = _last_end(cat, cands)
    out = {}
    for c in cands:
        if id(c) not in demoted and (why := earlier_job(c, end, last)):
            out[id(c)] = why
    return out


def earlier_end(cat: Catalog, cands: Sequence[Cand], ctx: Context) -> Cand | None:
    """The last end-of-job marker that forward progress and a later job's end follow."""
    p = ctx.progress_from_end
    if p is None:
        return None
    ends = [c for c in cands if cat.terminal[c.idx] and c.hit.synthetic is None]
    done = [
        c
        for c in ends
        if p < c.hit.from_end
        and any(c.hit.from_end - d.hit.from_end >= SURVIVE_LINES for d in ends)
    ]
    return min(done, key=lambda c: c.hit.from_end) if done else None


def earlier_job(c: Cand, end: Cand, last: Cand) -> Why | None:
    """A candidate of a job that ended (`end`) before the one the log ends with (`last`)."""
    if c.hit.synthetic is not None or c.hit.from_end < end.hit.from_end:
        return None
    text = (
        f"an earlier job's: that job ended at {pos(end)} ({end.entry.id}) and the log went on to "
        f"a later job's end ({last.entry.id}, {pos(last)}); the last end decides"
    )
    return Why("earlier_job", text, by=end)


def _last_end(cat: Catalog, cands: Sequence[Cand]) -> Cand:
    ends = [c for c in cands if cat.terminal[c.idx] and c.hit.synthetic is None]
    return min(ends, key=lambda c: c.hit.from_end)


def handled(cat: Catalog, c: Cand, cands: Sequence[Cand]) -> Why | None:
    """A failure whose exception was being handled when an interrupt ended its chain."""
    if c.entry.role != "fatal" or not any(_HANDLING in a for a in c.hit.after):
        return None
    later = [
        d
        for d in cands
        if 0 < c.hit.from_end - d.hit.from_end <= TB_MAX_LINES and d.hit.synthetic is None
    ]
    if not later:
        return None
    d = max(later, key=lambda d: d.hit.from_end)
    if d.entry.category != "cancelled":
        return None
    text = (
        f"being handled when an interrupt came ({d.entry.id}, {pos(d)}): the program had caught "
        "it and was running its handler"
    )
    return Why("handled", text, by=d)
