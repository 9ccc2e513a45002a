"""Find comments with PyYAML's pure-Python scanner while loading the same text.

PyYAML drops comments, but every token carries `start_mark`/`end_mark` (character offsets
into the decoded text), so a comment is exactly a `#` in a gap no token covers: the scanner
only skips blanks, line breaks, a leading BOM and comments there. The one comment inside a
token is a block-scalar header comment (`key: | # c`), found after the `|`/`>` indicators.

One pass does everything: `_RecordingLoader` is a `SafeLoader` that watches the tokens its
parser consumes, so the text is scanned once to get the comment spans, the document nodes
(for key paths and the data) and the document boundaries (`---`, `...`, directives).
We use the pure-Python scanner on purpose: libyaml rejects some files `safe_load` accepts,
and the verifier is `safe_load_all`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import Node
from yaml.tokens import (
    DirectiveToken,
    DocumentEndToken,
    DocumentStartToken,
    ScalarToken,
    Token,
)

# PyYAML (YAML 1.1) breaks lines at these; a comment runs up to the first of them.
LINE_BREAK_CHARS = "\r\n\x85\u2028\u2029"
_BREAK = re.compile("[\r\n\x85\u2028\u2029]")
_BREAK_UNIT = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_BLOCK_STYLES = frozenset("|>")
_BOUNDARY_KINDS = {
    DirectiveToken: "directive",
    DocumentStartToken: "start",
    DocumentEndToken: "end",
}


@dataclass(frozen=True, slots=True)
class Span:
    """A comment found by the scanner (0-based line, character offsets)."""

    start: int
    end: int
    line: int
    line_start: int  # offset of the first character of the line (0 on line 1, even with a BOM)

    def column(self, has_bom: bool) -> int:
        """0-based column in characters, not counting a BOM (as PyYAML counts)."""
        bom = 1 if has_bom and self.line_start == 0 else 0
        return self.start - self.line_start - bom


@dataclass(frozen=True, slots=True, order=True)
class Boundary:
    """A `%` directive (`kind` "directive"), `---` ("start") or `...` ("end") token."""

    index: int
    line: int
    kind: str


@dataclass(slots=True)
class Scanned:
    """Everything one pass over a text yields."""

    spans: list[Span] = field(default_factory=list)
    roots: list[Node] = field(default_factory=list)
    boundaries: list[Boundary] = field(default_factory=list)


class _RecordingLoader(yaml.SafeLoader):
    """A SafeLoader that records comment spans from the gaps between the tokens it reads."""

    def __init__(self, text: str, out: Scanned) -> None:
        super().__init__(text)
        self._text = text
        self._has_bom = text.startswith("\ufeff")
        self._out = out
        self._cov = 0  # everything before this offset is covered or already searched
        self._cov_line = 0
        self._cov_line_start = 0

    def get_token(self) -> Any:
        token: Token = super().get_token()
        start = token.start_mark.index
        if start > self._cov and self._text.find("#", self._cov, start) >= 0:
            self._gap(start)
        end_mark = token.end_mark
        if end_mark.index > self._cov:
            self._cov = end_mark.index
            self._cov_line = end_mark.line
            bom = 1 if self._has_bom and end_mark.line == 0 else 0
            self._cov_line_start = end_mark.index - end_mark.column - bom
        cls = type(token)
        if cls is ScalarToken:
            if token.style in _BLOCK_STYLES:  # type: ignore[attr-defined]
                self._block_header(token)
        elif cls in _BOUNDARY_KINDS:
            kind = _BOUNDARY_KINDS[cls]
            self._out.boundaries.append(Boundary(start, token.start_mark.line, kind))
        return token

    def _gap(self, stop: int) -> None:
        """Record the comments in text[cov:stop], which holds only blanks, breaks, comments."""
        text = self._text
        pos, line, line_start = self._cov, self._cov_line, self._cov_line_start
        hash_at = text.find("#", pos, stop)
        while hash_at >= 0:
            for m in _BREAK_UNIT.finditer(text, pos, hash_at):
                line += 1
                line_start = m.end()
            brk = _BREAK.search(text, hash_at)
            end = brk.start() if brk is not None else len(text)
            self._out.spans.append(Span(hash_at, end, line, line_start))
            pos = end
            hash_at = text.find("#", end, stop)

    def _block_header(self, token: Token) -> None:
        """A comment after `|`/`>` and its indicators lives inside the scalar token."""
        text = self._text
        mark = token.start_mark
        i = mark.index + 1
        n = len(text)
        while i < n and text[i] in "+-0123456789":
            i += 1
        while i < n and text[i] == " ":
            i += 1
        if i < n and text[i] == "#":
            brk = _BREAK.search(text, i)
            end = brk.start() if brk is not None else n
            bom = 1 if self._has_bom and mark.line == 0 else 0
            self._out.spans.append(Span(i, end, mark.line, mark.index - mark.column - bom))


def scan(text: str) -> Scanned:
    """Scan and compose `text` (all documents). Raises yaml.YAMLError or RecursionError.

    The nodes are composed, not constructed; `construct(roots)` builds the data.
    """
    out = Scanned()
    loader = _RecordingLoader(text, out)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                out.roots.append(node)
    finally:
        loader.dispose()
    out.spans.sort(key=lambda s: s.start)  # header comments are found after later gaps
    return out


def construct(roots: list[Node]) -> list[Any]:
    """The data `yaml.safe_load_all` returns for these document nodes."""
    loader = yaml.SafeLoader("")
    try:
        return [loader.construct_document(root) for root in roots]
    finally:
        loader.dispose()


def comment_spans(text: str) -> list[Span]:
    """Just the comment spans of `text` (raises like `scan`)."""
    return scan(text).spans
