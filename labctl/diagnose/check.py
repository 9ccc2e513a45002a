"""Self-check of a catalog: every example must produce its entry, no near-miss may.

"Produce" uses the real scanner (prefilter, per-line set, near, min_hits), so a pattern
mangled by the combined alternation would be caught too. An entry counts as matched when
it won a line or matched a line another, more specific entry won.
"""

from __future__ import annotations

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.load import default_catalog
from labctl.diagnose.reader import scan_chunks


def matched_counts(cat: Catalog, text: str) -> dict[str, int]:
    """Entry id -> lines it matched in `text` (won or shadowed)."""
    res = scan_chunks(cat, [text.encode("utf-8")], threads=1)
    out: dict[str, int] = {}
    for i, eh in res.hits.items():
        out[cat.entries[i].id] = eh.count
    for i, n in res.shadow_counts.items():
        ident = cat.entries[i].id
        out[ident] = out.get(ident, 0) + n
    return out


def entry_matches(cat: Catalog, ident: str, text: str) -> bool:
    e = cat.entry(ident)
    return matched_counts(cat, text).get(ident, 0) >= e.min_hits


def self_check(catalog: Catalog | None = None) -> list[str]:
    cat = catalog or default_catalog()
    problems = []
    for e in cat.entries:
        for ex in e.examples:
            if not entry_matches(cat, e.id, ex):
                problems.append(f"{e.id}: example does not match: {ex!r}")
        for nm in e.near_misses:
            if entry_matches(cat, e.id, nm):
                problems.append(f"{e.id}: near-miss matches: {nm!r}")
    return problems
