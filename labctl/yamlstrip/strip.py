"""The byte-exact rewrite: delete comment spans from the decoded text, nothing else.

- A whole-line comment (only blanks, and on line 1 a BOM, before it) is removed together
  with its line: the blanks, the comment and the line break (`\\r\\n` counts as one). The
  BOM stays. A whole-line comment on a last line with no break leaves no trace.
- An inline comment is removed with the blanks (spaces, tabs) right before it; the line
  break after it stays as it was (`\\n`, `\\r\\n`, `\\r`, `\\x85`, `\\u2028`, `\\u2029`, or none).

Everything else is copied unchanged. Working on the strictly decoded text and encoding
back is lossless for UTF-8, so the untouched bytes are the original bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

from labctl.yamlstrip.spans import Span

_BLANKS = " \t"


def _break_length(text: str, at: int) -> int:
    if at >= len(text):
        return 0
    if text.startswith("\r\n", at):
        return 2
    return 1


def cut_range(text: str, span: Span) -> tuple[int, int]:
    """The [start, end) character range removing `span` deletes."""
    if not span.inline:
        start = span.line_start
        if start == 0 and text.startswith("\ufeff"):
            start = 1
        return start, span.end + _break_length(text, span.end)
    start = span.start
    while start > span.line_start and text[start - 1] in _BLANKS:
        start -= 1
    return start, span.end


def strip_text(text: str, spans: Iterable[Span]) -> str:
    """`text` without the given comments (spans sorted by start, one per line at most)."""
    parts: list[str] = []
    pos = 0
    for span in spans:
        start, end = cut_range(text, span)
        start = max(start, pos)  # spans are on distinct lines; never let cuts overlap
        parts.append(text[pos:start])
        pos = max(pos, end)
    parts.append(text[pos:])
    return "".join(parts)
