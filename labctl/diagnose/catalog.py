"""The compiled failure catalog: entries, the prefilter, per-line matching.

The catalog is data (labctl/data/catalog.toml documents every field; load.py reads and
validates it). A compiled `Catalog` keeps the entries in a stable order (indices are used
everywhere in scan/rank), one RE2 alternation of every pattern used as a cheap prefilter over
whole blocks of log, and one RE2 set that says which entries a candidate line matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.diagnose import regex
from labctl.diagnose.signs import errorish

MAX_NOTICE_PREFIX = 160
ROLES = ("fatal", "weak", "wrapper", "event", "meta", "success", "exit")
SEVERITIES = ("high", "medium", "low")
# Taxonomy (research §10): default severity per category.
CATEGORY_SEVERITY = {
    "nccl_timeout": "medium",
    "nccl_error": "medium",
    "slurm_time_limit": "medium",
    "preemption": "medium",
    "node_failure": "medium",
    "hf_hub_error": "medium",
    "hung_no_output": "medium",
    "cancelled": "low",
    "requeue": "low",
}
LIST_FIELDS = (
    "any",
    "all",
    "not_if",
    "near",
    "frames",
    "explains",
    "explains_later",
    "states",
    "exit_codes",
    "examples",
    "near_misses",
)
SCALAR_FIELDS = (
    "id",
    "title",
    "category",
    "severity",
    "role",
    "specificity",
    "retryable",
    "fix",
    "action",
    "near_lines",
    "min_hits",
    "fingerprint",
    "logged",
    "survivable",
    "last_only",
)
CONTROL_FIELDS = ("merge", "disabled")
KNOWN_FIELDS = frozenset(LIST_FIELDS + SCALAR_FIELDS + CONTROL_FIELDS)
PATTERN_FIELDS = ("any", "all", "not_if", "near", "frames")


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    category: str
    severity: str
    role: str
    specificity: int
    retryable: bool
    fix: str
    action: Mapping[str, Any]
    any: tuple[str, ...] = ()
    all: tuple[str, ...] = ()
    not_if: tuple[str, ...] = ()
    near: tuple[str, ...] = ()
    near_lines: int = 5
    frames: tuple[str, ...] = ()
    min_hits: int = 1
    fingerprint: str = "line"  # what identifies one failure: its line, or the "entry" alone
    logged: bool = False  # evidence is a logged record (a metrics line): its level is no excuse
    survivable: bool = False  # a message the job script carries on after (shell, conda)
    last_only: bool = False  # a job script's command: the cause only when the log ends with it
    explains: tuple[str, ...] = ()
    explains_later: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    exit_codes: tuple[int, ...] = ()
    examples: tuple[str, ...] = ()
    near_misses: tuple[str, ...] = ()
    source: str = ""

    def record(self) -> dict[str, Any]:
        """The `catalog_entry` record for `diagnose --catalog` / `--explain`."""
        return {
            "kind": "catalog_entry",
            "id": self.id,
            "title": self.title,
            "category": self.category,
            "severity": self.severity,
            "role": self.role,
            "specificity": self.specificity,
            "retryable": self.retryable,
            "fix": self.fix,
            "action": dict(self.action),
            "patterns": {
                "any": list(self.any),
                "all": list(self.all),
                "not_if": list(self.not_if),
                "near": list(self.near),
                "near_lines": self.near_lines,
                "frames": list(self.frames),
            },
            "min_hits": self.min_hits,
            "fingerprint": self.fingerprint,
            "logged": self.logged,
            "survivable": self.survivable,
            "last_only": self.last_only,
            "explains": list(self.explains),
            "explains_later": list(self.explains_later),
            "states": list(self.states),
            "exit_codes": list(self.exit_codes),
            "examples": list(self.examples),
            "near_misses": list(self.near_misses),
            "source": self.source,
        }


@dataclass
class Catalog:
    """A compiled catalog. Entry indices (0..n-1) are used everywhere in scan/rank."""

    entries: list[Entry]
    module_packages: dict[str, str] = field(default_factory=dict)
    # family name -> spellings of one command-line argument (supervise's scale_arg/add_arg)
    arg_families: dict[str, tuple[str, ...]] = field(default_factory=dict)
    use_re2: bool = regex.HAVE_RE2
    progress: tuple[str, ...] = ()
    notice_before: tuple[str, ...] = ()  # text before a match that makes it hypothetical
    notice_line: tuple[str, ...] = ()  # text anywhere on a line that makes it advice

    def __post_init__(self) -> None:
        self.by_id = {e.id: i for i, e in enumerate(self.entries)}
        self._compile()

    # -- compile ----------------------------------------------------------------------------
    def _compile(self) -> None:
        pats: list[str] = []
        index: dict[str, int] = {}

        def slot(p: str) -> int:
            if p not in index:
                index[p] = len(pats)
                pats.append(p)
            return index[p]

        self.any_idx: list[frozenset[int]] = []
        self.all_idx: list[frozenset[int]] = []
        self.not_idx: list[frozenset[int]] = []
        prefilter: list[str] = []
        for e in self.entries:
            self.any_idx.append(frozenset(slot(p) for p in e.any))
            self.all_idx.append(frozenset(slot(p) for p in e.all))
            self.not_idx.append(frozenset(slot(p) for p in e.not_if))
            prefilter.extend(e.any if e.any else e.all[:1])
        self.line_patterns = pats
        self.pattern_entries: list[list[int]] = [[] for _ in pats]
        for i in range(len(self.entries)):
            for k in self.any_idx[i] | self.all_idx[i]:
                self.pattern_entries[k].append(i)
        self.line_set = regex.LineSet(pats, use_re2=self.use_re2)
        self.prefilter_patterns = [*dict.fromkeys(prefilter), TRACEBACK_PATTERN]
        self.prefilter = regex.compile_alternation(self.prefilter_patterns, use_re2=self.use_re2)
        self.atom_index = None if self.use_re2 else regex.AtomIndex(self.prefilter_patterns)
        self.near_rx = [
            [regex.compile_one(p, use_re2=self.use_re2) for p in e.near] for e in self.entries
        ]
        self.entry_rx = [
            [regex.compile_one(p, use_re2=self.use_re2) for p in e.any + e.all]
            for e in self.entries
        ]
        self.capture_rx = [
            [regex.compile_one(p, use_re2=self.use_re2) for p in e.any + e.all if "(?P<" in p]
            for e in self.entries
        ]
        self.max_near = max([e.near_lines for e in self.entries if e.near] or [0])
        self.explains_any = [self._resolve(e.explains, e) for e in self.entries]
        self.explains_later = [self._resolve(e.explains_later, e) for e in self.entries]
        self.state_map: dict[str, int] = {}
        self.exit_map: dict[int, list[int]] = {}
        for i, e in enumerate(self.entries):
            for s in e.states:
                self.state_map.setdefault(s.upper(), i)
            for c in e.exit_codes:
                self.exit_map.setdefault(c, []).append(i)
        self._compile_context()

    def _compile_context(self) -> None:
        """Frames patterns (one set for every entry that names its traceback's frames) and the
        progress alternation (forward progress: steps, epochs, progress bars)."""
        frames: list[str] = list(dict.fromkeys(p for e in self.entries for p in e.frames))
        self.frames_set = regex.LineSet(frames, use_re2=self.use_re2) if frames else None
        index = {p: k for k, p in enumerate(frames)}
        self.frames_idx = [frozenset(index[p] for p in e.frames) for e in self.entries]
        self.progress_rx = self._alternation(self.progress)
        self.notice_before_rx = self._alternation(self.notice_before)
        self.notice_line_rx = self._alternation(self.notice_line)
        n = len(self.entries)
        # an end-of-job marker (time limit, preemption, cancel, node failure) explains everything
        # after it: progress printed after it does not mean the job survived it
        self.terminal = [self.explains_later[i] >= frozenset(range(n)) - {i} for i in range(n)]

    def _alternation(self, patterns: tuple[str, ...]) -> Any:
        return regex.compile_alternation(patterns, use_re2=self.use_re2) if patterns else None

    def is_notice(self, line: bytes, at: int) -> bool:
        """Is this line advice or a hypothetical (`[notice]`), given that the catalog match
        starts at `at`? Callers exclude lines that name an exception type."""
        prefix = line[:at]
        if errorish(prefix):
            return False
        before, anywhere = self.notice_before_rx, self.notice_line_rx
        return bool(
            (before is not None and before.search(prefix[-MAX_NOTICE_PREFIX:]))
            or (anywhere is not None and anywhere.search(line))
        )

    def frames_match(self, lines: Iterable[bytes]) -> frozenset[int]:
        """Indices of frames patterns that match any of `lines`."""
        if self.frames_set is None:
            return frozenset()
        return frozenset(k for ln in lines for k in self.frames_set.match(ln))

    def _resolve(self, targets: Sequence[str], owner: Entry) -> frozenset[int]:
        out: set[int] = set()
        for t in targets:
            if t == "*":
                out.update(range(len(self.entries)))
            elif t.startswith("category:"):
                cat = t.split(":", 1)[1]
                out.update(i for i, e in enumerate(self.entries) if e.category == cat)
            elif t in self.by_id:
                out.add(self.by_id[t])
        out.discard(self.by_id[owner.id])
        return frozenset(out)

    # -- matching ---------------------------------------------------------------------------
    def match_line(self, line: bytes) -> list[int]:
        """Entries whose any/all/not_if accept this line, most specific first (no `near`)."""
        hits = set(self.line_set.match(line))
        if not hits:
            return []
        out = []
        for i in sorted({e for h in hits for e in self.pattern_entries[h]}):
            a = self.any_idx[i]
            if a and not (a & hits):
                continue
            if not a and not self.all_idx[i]:
                continue
            if not self.all_idx[i] <= hits or (self.not_idx[i] & hits):
                continue
            out.append(i)
        out.sort(key=lambda i: (-self.entries[i].specificity, i))
        return out

    def near_ok(self, i: int, lines: Iterable[bytes]) -> bool:
        rxs = self.near_rx[i]
        if not rxs:
            return True
        return any(rx.search(ln) for ln in lines for rx in rxs)

    def match_start(self, i: int, line: bytes) -> int:
        """Where the earliest of entry i's patterns starts matching in `line` (0 if none)."""
        starts = [m.start() for rx in self.entry_rx[i] if (m := rx.search(line)) is not None]
        return min(starts, default=0)

    def groups(self, i: int, line: bytes) -> dict[str, str]:
        out: dict[str, str] = {}
        for rx in self.capture_rx[i]:
            m = rx.search(line)
            if m:
                for k, v in m.groupdict().items():
                    name = k.decode() if isinstance(k, bytes) else str(k)
                    if v is not None and name not in out:
                        out[name] = v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
        return out

    def entry(self, ident: str) -> Entry:
        return self.entries[self.by_id[ident]]

    def records(self) -> list[dict[str, Any]]:
        return [e.record() for e in self.entries]


TRACEBACK_PATTERN = r"raceback \(most recent call last\)"  # candidates._TB: T may be lost
