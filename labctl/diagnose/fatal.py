"""Ranking the fatal candidates that survive demotion (research §11): `explains` edges, the
final failure cluster, the earliest unexplained hit of it as the root cause."""

from __future__ import annotations

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.demote import Cand, Ranked, Why, pos

CLUSTER_GAP = 2000
MESSAGE_LINES = 3


def reported(cat: Catalog, c: Cand) -> bool:
    return c.entry.role == "exit" or cat.entries[c.hit.entry].role == "exit"


def lesser(c: Cand, default: str, root: Cand) -> Why:
    """Why a wrapper, weak or end-report candidate lost to `root`."""
    if c.entry.role == "wrapper":
        text = "wrapper: a report of another process's failure"
        return Why("wrapper", f"{text} (the root cause: {root.entry.id}, {pos(root)})", by=root)
    if c.entry.role == "weak":
        text = "weak evidence (a kill signal is not proof of its cause)"
        return Why("weak", f"{text}; the root cause: {root.entry.id} ({pos(root)})", by=root)
    return Why("outranked", f"{default} ({root.entry.id}, {pos(root)})", by=root)


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


def rank_fatal(
    cat: Catalog, fatal: list[Cand], cands: list[Cand], complete: bool, gap: int
) -> Ranked:
    explained = explained_by(cat, fatal, cands, gap)
    free = [c for c in fatal if id(c) not in explained] or list(fatal)
    free.sort(key=lambda c: (c.hit.from_end, -c.entry.specificity))
    cluster = [free[0]]
    for c in free[1:]:
        if c.hit.from_end - cluster[-1].hit.from_end > gap:
            break
        cluster.append(c)
    root, exc = _root(cluster, cands)
    also: dict[int, tuple[Cand, Why]] = {}
    for c in sorted(cands, key=lambda c: -c.hit.from_end):
        if c.idx != root.idx and c.idx not in also:
            also[c.idx] = (c, _why_lower(c, root, cluster, explained))
    others = {c.entry.category for c in cluster if c.entry.category != root.entry.category}
    conf = 0.75 if root.entry.category == "code_error" else 0.9
    conf -= 0.1 * min(3, len(others)) + (0.0 if complete else 0.05)
    by = "exit_code" if root.hit.synthetic == "scheduler" or reported(cat, root) else "log"
    why = "the earliest failure of the final failure cluster that nothing explains"
    if len(cluster) == 1:
        why = "the only failure the job did not survive"
    out = Ranked(by, root, round(max(conf, 0.3), 2), also=list(also.values()), why=why)
    out.root_exc = exc
    return out


def explained_by(
    cat: Catalog, fatal: list[Cand], cands: list[Cand], gap: int
) -> dict[int, tuple[Cand, Cand]]:
    """id(candidate) -> (candidate, the hit of `fatal` explaining it). When every hit of
    `fatal` is explained (a cycle), those stay free. rank.py passes the wrappers as `fatal`
    when no fatal hit is left: a shutdown report explains the aftermath it caused."""
    by_entry: dict[int, list[Cand]] = {}
    for c in fatal:
        by_entry.setdefault(c.idx, []).append(c)
    explained: dict[int, tuple[Cand, Cand]] = {}
    for c in cands:
        d = _explainer(cat, c, by_entry, gap)
        if d is not None:
            explained[id(c)] = (c, d)
    if all(id(c) in explained for c in fatal):
        fatal_ids = {id(c) for c in fatal}
        explained = {k: v for k, v in explained.items() if k not in fatal_ids}
    return explained


def _root(cluster: list[Cand], cands: list[Cand]) -> tuple[Cand, str | None]:
    """The root cause of the final cluster (its earliest hit) and, when its line names no
    exception type, the type printed with it."""
    root = max(cluster, key=lambda c: (c.hit.from_end, c.entry.specificity, -c.idx))
    # A multi-line exception message: a more specific line right after the root describes
    # the same event better ("RuntimeError: Failed to import ..." + "...so: undefined symbol").
    same = [
        c
        for c in cluster
        if 0 < root.hit.from_end - c.hit.from_end <= MESSAGE_LINES
        and c.entry.specificity > root.entry.specificity
        and c.hit.synthetic is None
        and not c.entry.survivable  # a shell's message never continues a program's
    ]
    exc = None
    if same:
        exc = root.hit.exc
        root = max(same, key=lambda c: (c.entry.specificity, c.hit.from_end))
    if root.hit.exc is not None or exc is not None:
        return root, exc
    # the exception line whose message continues on the root line, else a later hit of the
    # same entry that prints one
    above = [
        c for c in cands if 0 < c.hit.from_end - root.hit.from_end <= MESSAGE_LINES and c.hit.exc
    ]
    later = [c for c in cluster if c.idx == root.idx and c.hit.exc]
    pick = min(above, key=lambda c: c.hit.from_end) if above else None
    pick = pick or (max(later, key=lambda c: c.hit.from_end) if later else None)
    return root, pick.hit.exc if pick else None


def _why_lower(
    c: Cand, root: Cand, cluster: list[Cand], explained: dict[int, tuple[Cand, Cand]]
) -> Why:
    if id(c) in explained:
        d = explained[id(c)][1]
        return Why("explained", f"explained by {d.entry.id} ({pos(d)})", by=d)
    if c.entry.role != "fatal":
        return lesser(c, "outranked by the root cause", root)
    if any(c is x for x in cluster):
        return Why("later", f"later than the root cause ({pos(c)} vs {pos(root)})", by=root)
    text = "earlier event; the job kept running long after it (not fatal)"
    return Why("earlier_event", f"{text}; it ended with {root.entry.id} ({pos(root)})", by=root)
