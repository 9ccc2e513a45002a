"""The regex engine behind diagnose: RE2 (google-re2) when installed, Python `re` otherwise.

Everything is matched on BYTES. RE2 runs in Latin-1 mode (one byte = one character, so any
byte sequence is valid input and `.` matches any byte but newline); Python `re` on bytes
patterns behaves the same way. Patterns must use the common dialect of both: no look-around,
no backreferences, `(?i)` only at the very start (it becomes a scoped `(?i:...)` group when
patterns are combined into one alternation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

try:  # pragma: no cover - exercised implicitly; the fallback is tested by monkeypatching
    import re2 as _re2
except ImportError:  # pragma: no cover
    _re2 = None

HAVE_RE2 = _re2 is not None
_RE2_MAX_MEM = 256 << 20  # DFA budget for the big alternation (never allocated up front)


class Matcher(Protocol):
    def search(self, text: bytes, pos: int = ..., endpos: int = ...) -> Any: ...


class PatternError(ValueError):
    """A catalog pattern that one of the engines rejects."""


def split_flags(pattern: str) -> tuple[str, str]:
    """`(?i)abc` -> ("i", "abc"). Only a leading flag group is recognised."""
    m = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    if not m:
        return "", pattern
    return m.group(1), pattern[m.end() :]


_NAMED = re.compile(r"(?<!\\)((?:\\\\)*)\(\?P<\w+>")


def scoped(pattern: str) -> str:
    """A pattern safe to embed in an alternation: leading `(?i)` becomes `(?i:...)` and named
    groups become plain groups (names may repeat across patterns)."""
    flags, body = split_flags(pattern)
    body = _NAMED.sub(r"\1(?:", body)
    return f"(?{flags}:{body})" if flags else f"(?:{body})"


def _re2_options(use_re2: bool) -> Any:
    assert _re2 is not None and use_re2
    opts = _re2.Options()
    opts.encoding = _re2.Options.Encoding.LATIN1
    opts.max_mem = _RE2_MAX_MEM
    opts.log_errors = False
    return opts


def compile_one(pattern: str, *, use_re2: bool = HAVE_RE2, multiline: bool = False) -> Matcher:
    """Compile one pattern for bytes input; raises PatternError with the engine's reason."""
    try:
        re.compile(pattern.encode("utf-8"))
    except re.error as exc:
        raise PatternError(f"invalid regex: {exc}") from None
    body = split_flags(pattern)[1]
    if "(?" in body and re.search(r"\(\?[aiLmsux]+\)", body):
        raise PatternError("inline flags such as (?i) are only allowed at the start")
    text = ("(?m)" if multiline else "") + pattern
    if use_re2 and _re2 is not None:
        try:
            return _re2.compile(text.encode("utf-8"), _re2_options(use_re2))
        except _re2.error as exc:
            msg = f"not supported by RE2 ({exc}); avoid look-around/backreferences"
            raise PatternError(msg) from None
    return re.compile(text.encode("utf-8"))


def compile_alternation(patterns: Sequence[str], *, use_re2: bool = HAVE_RE2) -> Matcher:
    """One multi-line alternation of every pattern: the cheap prefilter over a whole block."""
    body = "|".join(scoped(p) for p in patterns) or "(?!)"
    if use_re2 and _re2 is not None:
        if not patterns:
            body = "[^\\x00-\\xff]"  # matches nothing (RE2 has no (?!))
        opts = _re2_options(use_re2)
        opts.never_capture = True  # only the match start is used
        return _re2.compile(("(?m)" + body).encode("utf-8"), opts)
    return re.compile(("(?m)" + body).encode("utf-8"))


class LineSet:
    """Which of N patterns match one line: RE2::Set when available, else an AtomIndex."""

    def __init__(self, patterns: Sequence[str], *, use_re2: bool = HAVE_RE2) -> None:
        self._set: Any = None
        self._atoms: AtomIndex | None = None
        if use_re2 and _re2 is not None and patterns:
            s = _re2.Set.SearchSet(_re2_options(use_re2))
            for p in patterns:
                s.Add(scoped(p).encode("utf-8"))
            s.Compile()
            self._set = s
        else:
            self._atoms = AtomIndex(patterns)

    def match(self, line: bytes) -> list[int]:
        if self._set is not None:
            return list(self._set.Match(line) or ())
        assert self._atoms is not None
        return self._atoms.match(line)


# -- the plain-`re` fallback: a literal prefilter (like RE2's FilteredRE2) ----------------------
MIN_ATOM = 3
# Words on most lines of a training log make poor prefilter atoms: prefer any other literal.
COMMON_WORDS = frozenset(
    {"loss", "grad", "norm", "error", "step", "epoch", "info", "warn", "warning", "rank", "time",
     "train", "model", "data", "file", "line", "the", "and", "for"}
)  # fmt: skip


def _rank(group: frozenset[str]) -> tuple[bool, int, int]:
    common = any(a.strip().lower() in COMMON_WORDS for a in group)
    return (not common, min(len(a) for a in group), -len(group))


def atom_groups(pattern: str) -> list[frozenset[bytes]]:
    """Literal requirements of `pattern`: every match contains one string of EACH group
    (lower-cased; strings shorter than MIN_ATOM are not used). Empty: nothing required.
    The first group is the most selective (longest, not a word on most log lines)."""
    import re._constants as c
    import re._parser as sre

    def seq(items: Any) -> list[frozenset[str]]:
        groups: list[frozenset[str]] = []
        run: list[str] = []

        def flush() -> None:
            if len(run) >= MIN_ATOM:
                groups.append(frozenset({"".join(run)}))
            run.clear()

        for op, av in items:
            if op is c.LITERAL:
                run.append(chr(av))
                continue
            flush()
            if op is c.SUBPATTERN:
                groups.extend(seq(av[-1]))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:
                groups.extend(seq(av[2]))
            elif op is c.BRANCH:
                alts = [seq(alt) for alt in av[1]]
                if all(alts):
                    groups.append(frozenset().union(*(max(g, key=_rank) for g in alts)))
        flush()
        return groups

    found = seq(sre.parse(pattern).data)
    found.sort(key=_rank, reverse=True)
    return [frozenset(a.lower().encode("utf-8") for a in g) for g in found]


class AtomIndex:
    """Find candidate lines with `bytes.find` on each pattern's most selective required
    literal, keep those that also hold its other required literals, verify with `re`."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.rx = [re.compile(scoped(p).encode("utf-8")) for p in patterns]
        self.by_atom: dict[bytes, list[int]] = {}
        self.rest: list[list[frozenset[bytes]]] = []
        bare_pats: list[str] = []
        self.bare: list[int] = []
        for i, p in enumerate(patterns):
            groups = atom_groups(p)
            self.rest.append(groups[1:])
            if not groups:
                self.bare.append(i)
                bare_pats.append(p)
            for a in groups[0] if groups else ():
                self.by_atom.setdefault(a, []).append(i)
        self.bare_rx = compile_alternation(bare_pats, use_re2=False) if bare_pats else None

    def _holds(self, i: int, low: bytes) -> bool:
        return all(any(a in low for a in g) for g in self.rest[i])

    def match(self, line: bytes) -> list[int]:
        low = line.lower()
        cand = set(self.bare)
        for a, idx in self.by_atom.items():
            if a in low:
                cand.update(i for i in idx if self._holds(i, low))
        return [i for i in sorted(cand) if self.rx[i].search(line)]

    def line_starts(self, data: bytes, lo: int, hi: int) -> list[int]:
        low = data[lo:hi].lower()
        starts: set[int] = set()
        for a, idx in self.by_atom.items():
            i = low.find(a)
            while i >= 0:
                ls = low.rfind(b"\n", 0, i) + 1
                end = low.find(b"\n", i)
                line = low[ls : len(low) if end < 0 else end]
                if any(self._holds(k, line) for k in idx):
                    starts.add(lo + ls)
                if end < 0:
                    break
                i = low.find(a, end)
        if self.bare_rx is not None:
            for m in self.bare_rx.finditer(data, lo, hi):  # type: ignore[attr-defined]
                starts.add(data.rfind(b"\n", lo, m.start()) + 1 or lo)
        return sorted(starts)
