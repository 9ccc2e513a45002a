"""A failure that recurs while the job goes on (issue 15): a sub-run's, survived each time.

A benchmark or a sweep runs one configuration after another in one job: a configuration that
aborts (an uncaught C++ exception, a traceback its driver prints and moves past, a trial that
fails) ends its own process, and the job goes on to the next one and prints its results. The
same failure then appears again and again, each time followed by more of the job's output.

`recurrences(cat, cands, demoted, ctx)`: the candidates not demoted yet that are survived this
way, with the reason. A candidate is survived when an earlier occurrence of the same failure
(the same entry and normalised line: one fingerprint) was survived by forward progress --
SURVIVE_LINES or more lines of it -- and the job made progress after this one too: the last
configurations' failures are not taken for the job's end merely because fewer than
SURVIVE_LINES lines of results follow them. Not for end-of-job markers, a logged record or a
failure printed on a progress line (a metric at NaN repeats while the steps go on: a state of
the training, not a process that ended), nor for an entry whose evidence is repetition itself
(`min_hits` above 1). Ranks of one job that fail together print their failure within a few
lines of each other, never SURVIVE_LINES of progress apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.demote import Cand, Context, Why, pos
from labctl.diagnose.fingerprint import normalise


def same_failure(c: Cand) -> tuple[int, str]:
    return c.idx, normalise(c.hit.key or c.hit.text)


def _exempt(cat: Catalog, c: Cand) -> bool:
    e = c.entry
    if cat.terminal[c.idx] or e.logged or e.min_hits > 1 or c.hit.synthetic == "scheduler":
        return True
    rx = cat.progress_rx
    return rx is not None and rx.search(c.hit.text.encode("utf-8", "replace")) is not None


def recurrences(
    cat: Catalog, cands: Sequence[Cand], demoted: Mapping[int, Why], ctx: Context
) -> dict[int, Why]:
    """id(candidate) -> why, for each candidate not in `demoted` (id -> why) that recurs after
    an earlier occurrence the job went on past (demoted because forward progress followed)."""
    outlived = [
        d
        for d in cands
        if (w := demoted.get(id(d))) is not None and w.at is not None and w.at_role == "progress"
    ]
    if not outlived:
        return {}
    out = {}
    for c in cands:
        if id(c) not in demoted and (why := _recurred(cat, c, outlived, ctx)) is not None:
            out[id(c)] = why
    return out


def _recurred(cat: Catalog, c: Cand, survived: Sequence[Cand], ctx: Context) -> Why | None:
    """Why `c` was survived as a recurrence of a failure the job outlived, or None."""
    p = ctx.progress_from_end
    if p is None or c.hit.from_end <= p or _exempt(cat, c):
        return None
    key = same_failure(c)
    earlier = [d for d in survived if d.hit.from_end > c.hit.from_end and same_failure(d) == key]
    if not earlier:
        return None
    d = max(earlier, key=lambda d: d.hit.from_end)
    text = (
        f"survived: the same failure as at {pos(d)}, which the job went on past, and the job "
        f"made progress after this one too (the last progress at {ctx.where(p)}): a sub-run's "
        "failure, outlived each time"
    )
    return Why("survived", text, by=d)
