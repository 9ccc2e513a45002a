"""Property tests for strip-yaml-comments (hypothesis).

Documents are generated as Python data and dumped by PyYAML with varied styles (block,
flow, quoted, literal and folded scalars for keys and values, canonical form, explicit
`---`/`...`, 2-9 space indents, narrow widths that wrap flow collections, CRLF and CR line
breaks, a BOM, a missing final newline, several documents, shared nodes -> anchors and
aliases: tests/helpers/yaml_docs.py). Comments are then inserted at every kind of legal
place, found from the token marks of PyYAML's scanner: own lines (any indent, any line
break) wherever a line starts outside every token, after the last token of a line (after
values, keys, `-`, `?`, `:`, `,`, `[`, `{`, anchors, tags, `---`, `...`, directives) and
after block-scalar headers.

The contract: stripping the commented text gives back the comment-free text byte for byte
(so every non-comment line is identical and the data is equal), with exactly the
inserted comments reported; stripping a comment-free text is the identity.
"""

from __future__ import annotations

import os
import re
from typing import Any

import yaml
from helpers.yaml_docs import loads_equal, yaml_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.yamlstrip import analyze

BREAK_UNIT = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# YAMLSTRIP_EXAMPLES=5000 for a long run; the default keeps the suite at a few seconds
N = int(os.environ.get("YAMLSTRIP_EXAMPLES", "400"))
EXAMPLES = settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- legal comment places --------------------------------------------------------------

COMMENT_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.sampled_from(["\t", "#", "é", "☕", "\u00a0", "\U0001f600", "\ufeff"]),
    ),
    max_size=15,
).map(lambda s: "#" + s)


def _places(text: str) -> tuple[list[int], list[int], list[int], set[int]]:
    """(line starts, line ends, block-scalar header ends) where a comment is legal, and
    the ends of block scalars (a comment line there must be less indented than them)."""
    tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    inside: set[int] = set()  # offsets strictly inside a token
    headers: list[int] = []
    block_ends: set[int] = set()
    for t in tokens:
        s, e = t.start_mark.index, t.end_mark.index
        inside.update(range(s + 1, e))
        if isinstance(t, yaml.ScalarToken) and t.style in ("|", ">"):
            i = s + 1
            while text[i] in "+-0123456789":
                i += 1
            headers.append(i)
            block_ends.add(e)
    bom = 1 if text.startswith("\ufeff") else 0
    starts = [bom] + [m.end() for m in BREAK_UNIT.finditer(text)]
    ends = [m.start() for m in BREAK_UNIT.finditer(text)] + [len(text)]
    line_starts = sorted({p for p in starts if p not in inside})
    line_ends = [
        p
        for p in ends
        if p not in inside
        and p not in block_ends  # " #" right after a block scalar's last line is content
        and p > 0
        and text[p - 1] not in " \t\r\n\x85\u2028\u2029\ufeff"
    ]
    return line_starts, line_ends, headers, block_ends


@st.composite
def commented(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """(clean text, commented text, the inserted comments in order)."""
    clean = draw(yaml_texts())
    starts, ends, headers, block_ends = _places(clean)
    inserts: list[tuple[int, int, str, str]] = []  # (pos, order, inserted text, comment)
    for pos in draw(st.lists(st.sampled_from(starts), unique=True, max_size=6)) if starts else []:
        for n in range(draw(st.integers(1, 2))):
            comment = draw(COMMENT_TEXT)
            brk = draw(st.sampled_from(["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"]))
            if pos == len(clean) and n == 0 and draw(st.booleans()):
                brk = ""  # a comment on a last line with no break
            if brk == "\r" and clean.startswith("\n", pos):
                brk = "\n"  # "\r" + "\n" would be one break
            indent = "" if pos in block_ends else " " * draw(st.integers(0, 8))
            inserts.append((pos, n, indent + comment + brk, comment))
            if not brk:
                break
    for pos in draw(st.lists(st.sampled_from(ends + headers), unique=True, max_size=6)):
        comment = draw(COMMENT_TEXT)
        blanks = " " * draw(st.integers(1, 4))
        inserts.append((pos, -1, blanks + comment, comment))
    # an inline comment goes before the break at `pos`, whole lines after any earlier text
    inserts.sort(key=lambda x: (x[0], x[1]))
    out: list[str] = []
    last = 0
    for pos, _, piece, _ in inserts:
        out.append(clean[last:pos])
        out.append(piece)
        last = pos
    out.append(clean[last:])
    return clean, "".join(out), [c for _, _, _, c in inserts]


# --- properties -----------------------------------------------------------------------


@EXAMPLES
@given(commented())
def test_strip_restores_the_comment_free_text(case: tuple[str, str, list[str]]) -> None:
    clean, text, inserted = case
    result = analyze(text.encode("utf-8"), source="p.yaml")
    assert result.reason is None, result.message
    assert result.verified
    assert [c.text for c in result.comments] == inserted
    assert result.new_data == clean.encode("utf-8")
    assert result.changed == bool(inserted)


@EXAMPLES
@given(yaml_texts())
def test_strip_of_comment_free_text_is_identity(text: str) -> None:
    data = text.encode("utf-8")
    result = analyze(data)
    assert result.reason is None, result.message
    assert result.verified and not result.comments and not result.changed
    assert result.new_data == data


@EXAMPLES
@given(yaml_texts(), st.data())
def test_random_hashes_never_crash_and_keep_the_contract(text: str, data: st.DataObject) -> None:
    """Drop `#`, ` #` or `\t#` anywhere: analyze never raises; a verified result keeps
    the contract (no comment left, same data, each line kept or cut after its prefix)."""
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text)))
        text = (
            text[:pos] + data.draw(st.sampled_from(["#", " #", " # x", "\t#", "#\n"])) + text[pos:]
        )
    raw = text.encode("utf-8")
    result = analyze(raw)
    if not result.verified:
        assert result.new_data == raw and result.reason
        return
    after = result.new_data.decode("utf-8")
    assert not analyze(result.new_data).comments
    if result.verified_with == "safe_load_all":
        assert loads_equal(text, after)
    assert after == _expected(text, result.comments)


def _expected(text: str, comments: Any) -> str:
    """The byte contract, restated: drop whole-line comment lines, cut inline ones."""
    pieces = re.split("(\r\n|[\r\n\x85\u2028\u2029])", text)
    lines = [
        (pieces[i], pieces[i + 1] if i + 1 < len(pieces) else "") for i in range(0, len(pieces), 2)
    ]
    by_line = {c.line: c for c in comments}
    out = []
    for number, (content, brk) in enumerate(lines, start=1):
        c = by_line.get(number)
        if c is None:
            out.append(content + brk)
            continue
        bom = "\ufeff" if number == 1 and content.startswith("\ufeff") else ""
        body = content[len(bom) :]
        assert body[c.column - 1 :] == c.text
        kept = body[: c.column - 1].rstrip(" \t")
        out.append(bom + kept + (brk if kept else ""))
    return "".join(out)
