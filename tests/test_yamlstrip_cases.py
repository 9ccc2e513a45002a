"""Hand-written nasty cases for strip-yaml-comments: one test per edge case, exact bytes.

The cases follow the project's research list of 13 edge cases that break comment
detection (block-scalar headers, flow collections, markers and directives, BOM, CRLF,
NEL/LS/PS breaks, refusals when deletion changes data …) and yaml-test-suite ids.
"""

from __future__ import annotations

import pytest
import yaml

from labctl.yamlstrip import analyze
from labctl.yamlstrip.compare import compare_data
from labctl.yamlstrip.engine import PURE_ENGINE
from labctl.yamlstrip.model import (
    BINARY,
    DATA_CHANGED,
    INVALID_YAML,
    NOT_UTF8,
    TAB_BEFORE_COMMENT,
    WITH_EVENTS,
    WITH_NODES,
    WITH_SAFE_LOAD,
)
from labctl.yamlstrip.verify import first_difference

# (id, input, expected output, number of comments)
STRIPPED: list[tuple[str, bytes, bytes, int]] = [
    # --- content `#` is never touched -------------------------------------------------
    (
        "hash-in-double-and-single-quotes",
        b'a: "x # not"  # yes\nb: \'y # no\'\nc: "multi\n  # line"\n',
        b'a: "x # not"\nb: \'y # no\'\nc: "multi\n  # line"\n',
        1,
    ),
    ("plain-a#b", b"k: a#b\nl: [c#d, e]\n", b"k: a#b\nl: [c#d, e]\n", 0),
    ("url-fragment", b"url: http://x/#frag  # c\n", b"url: http://x/#frag\n", 1),
    (
        "literal-block-hash-lines-are-content",
        b"a: |\n  # content\n  x # content\n    # deeper content\nb: 1 # c\n",
        b"a: |\n  # content\n  x # content\n    # deeper content\nb: 1\n",
        1,
    ),
    (
        "folded-block-hash-lines-are-content",
        b"a: >\n  one # two\n  # three\n\nb: 1\n",
        b"a: >\n  one # two\n  # three\n\nb: 1\n",
        0,
    ),
    (
        "keep-block-with-content-hash-and-comment-elsewhere",
        b"a: |+\n  x\n  # kept\n\nb: 1  # c\n",
        b"a: |+\n  x\n  # kept\n\nb: 1\n",
        1,
    ),
    # --- 1. block-scalar header comments ------------------------------------------------
    ("header-literal", b"key: | # note\n  body\n", b"key: |\n  body\n", 1),
    ("header-literal-two-spaces", b"key: |  # note\n  body # b\n", b"key: |\n  body # b\n", 1),
    (
        "header-folded-strip-indent",
        b"a: >-2 # header\n    text # t\nb: 2\n",
        b"a: >-2\n    text # t\nb: 2\n",
        1,
    ),
    ("header-keep-indent", b"a: |2+ # h\n   x\n\nb: 1\n", b"a: |2+\n   x\n\nb: 1\n", 1),
    ("header-in-sequence", b"- | # h\n  x\n- >- # i\n  y\n", b"- |\n  x\n- >-\n  y\n", 2),
    # --- 2. less-indented `#` ends a block scalar (h10, F8F9) --------------------------
    (
        "less-indented-comment-ends-scalar",
        b"a:\n  b: |\n    text\n  # real comment\n  c: 1\n",
        b"a:\n  b: |\n    text\n  c: 1\n",
        1,
    ),
    ("column0-comment-after-literal", b"a: |\n  x\n# c\nb: 1\n", b"a: |\n  x\nb: 1\n", 1),
    (
        "F8F9-chomping-with-comment-lines",
        b"# Strip\n  # Comments:\nstrip: |-\n  # text\n  \n # Clip\n  # comments:\n\n"
        b"clip: |\n  # text\n \n # Keep\n  # comments:\n\nkeep: |+\n  # text\n\n"
        b" # Trail\n  # comments.\n",
        b"strip: |-\n  # text\n  \n\nclip: |\n  # text\n \n\nkeep: |+\n  # text\n\n",
        8,
    ),
    (
        "keep-scalar-then-comment-then-key",
        b"a: |+\n  x\n\n# c\nb: 1\n",
        b"a: |+\n  x\n\nb: 1\n",
        1,
    ),
    # --- 3. flow collections (7TMG, h01; spec-invalid but accepted: 9JBA, SU5Z) --------
    (
        "flow-seq-after-comma",
        b"a: [1, # c\n  2, # d\n  3]\n",
        b"a: [1,\n  2,\n  3]\n",
        2,
    ),
    (
        "flow-map-own-line",
        b"a: {\n  # c\n  x: 1, # d\n  y: 2\n}\n",
        b"a: {\n  x: 1,\n  y: 2\n}\n",
        2,
    ),
    ("flow-after-close-no-space", b"a: [x]#c\nb: 1\n", b"a: [x]\nb: 1\n", 1),
    ("quoted-then-hash-no-space", b'a: "v"#c\n', b'a: "v"\n', 1),
    ("flow-open-then-comment", b"[a, # c\n b]\n", b"[a,\n b]\n", 1),
    # --- 4. tabs inside scalars are content (h06) --------------------------------------
    (
        "tab-hash-inside-quotes-and-block",
        b'a: "x\t# y"\nb: |\n  p\t# q\n',
        b'a: "x\t# y"\nb: |\n  p\t# q\n',
        0,
    ),
    # --- 5. markers and directives (2LFX) -----------------------------------------------
    ("doc-start-comment", b"--- # c\na: 1\n", b"---\na: 1\n", 1),
    ("doc-end-comment", b"a: 1\n... # c\n", b"a: 1\n...\n", 1),
    ("yaml-directive-comment", b"%YAML 1.1 # c\n---\nx\n", b"%YAML 1.1\n---\nx\n", 1),
    (
        "reserved-directive-then-comment-lines",
        b'%FOO bar baz # c\n# more\n---\n"foo"\n',
        b'%FOO bar baz\n---\n"foo"\n',
        2,
    ),
    (
        "tag-directive-comment",
        b"%TAG ! tag:x.com,2000: # c\n--- !a 1\n",
        b"%TAG ! tag:x.com,2000:\n--- !a 1\n",
        1,
    ),
    # --- 6. multi-document streams (JHB9, 6ZKB) -----------------------------------------
    (
        "multi-document",
        b"# before\na: 1 # c\n---\n# d\nb: 2\n...\n# e\n--- # f\nc: 3\n",
        b"a: 1\n---\nb: 2\n...\n---\nc: 3\n",
        5,
    ),
    # --- 7. comments in gaps after `key:`, bare `-`, `?` and `:` (X8DW, 5WE3, h11) ----
    ("key-then-nested-map", b"model: # c\n  lr: 1\n", b"model:\n  lr: 1\n", 1),
    ("bare-dash", b"- # c\n  x\n- y # d\n", b"-\n  x\n- y\n", 2),
    ("explicit-key-value", b"? a # c\n: b # d\n", b"? a\n: b\n", 2),
    ("explicit-key-own-line", b"?\n  # c\n  a\n:\n  # d\n  b\n", b"?\n  a\n:\n  b\n", 2),
    # --- 8. BOM (h07) ---------------------------------------------------------------------
    ("bom-whole-line-1", b"\xef\xbb\xbf# c\na: 1\n", b"\xef\xbb\xbfa: 1\n", 1),
    ("bom-indented-line-1", b"\xef\xbb\xbf  # c\na: 1\n", b"\xef\xbb\xbfa: 1\n", 1),
    ("bom-inline-line-1", b"\xef\xbb\xbfa: 1 # c\n", b"\xef\xbb\xbfa: 1\n", 1),
    ("bom-only-comment", b"\xef\xbb\xbf# c", b"\xef\xbb\xbf", 1),
    # --- 9. CRLF (h04) --------------------------------------------------------------------
    (
        "crlf",
        b"# head\r\na: 1 # c\r\n\r\n  # d\r\nb: [1, # e\r\n  2]\r\n",
        b"a: 1\r\n\r\nb: [1,\r\n  2]\r\n",
        4,
    ),
    ("cr-only", b"a: 1 # c\r# d\rb: 2\r", b"a: 1\rb: 2\r", 2),
    # --- 10. no final newline (h04, h05) ------------------------------------------------
    ("no-final-newline-inline", b"a: 1 # c", b"a: 1", 1),
    ("no-final-newline-whole-line", b"a: 1\n# c", b"a: 1\n", 1),
    ("no-final-newline-crlf", b"a: 1\r\n  # c", b"a: 1\r\n", 1),
    # --- 11. YAML 1.1 line breaks ---------------------------------------------------------
    (
        "nel-ls-ps-breaks",
        "a: 1 # c\x85# d\u2028b: 2 # e\u2029c: 3\n".encode(),
        "a: 1\x85b: 2\u2029c: 3\n".encode(),
        3,
    ),
    # --- comment-only and empty files -----------------------------------------------------
    ("comment-only", b"# one\n  # two\n#\n", b"", 3),
    ("comment-only-with-blank-lines", b"# one\n\n# two\n", b"\n", 2),
    ("empty", b"", b"", 0),
    ("only-blank-lines", b"\n\n", b"\n\n", 0),
    # --- the rest of the contract ---------------------------------------------------------
    (
        "blank-lines-and-indentation-kept",
        b"a:    1   # c\n\n\n    # d\nb:\n    - x     # e\n    -   y\n",
        b"a:    1\n\n\nb:\n    - x\n    -   y\n",
        3,
    ),
    ("comment-trailing-spaces", b"a: 1 # c   \n   # d  \t\n", b"a: 1\n", 2),
    ("tab-in-comment-text", b"a: 1 # c\td\n", b"a: 1\n", 1),
    ("hash-run-in-comment", b"a: 1 ## c # d #\n", b"a: 1\n", 1),
    ("empty-comment", b"a: 1 #\n#\n", b"a: 1\n", 2),
    ("non-ascii", "name: café # ☕ noté\n# 日本語\n".encode(), "name: café\n".encode(), 2),
    (
        "anchors-aliases-tags",
        b"a: &x 1 # c\nb: *x # d\nc: !!str 3 # e\nd: &m {k: v} # f\ne:\n  <<: *m # g\n",
        b"a: &x 1\nb: *x\nc: !!str 3\nd: &m {k: v}\ne:\n  <<: *m\n",
        5,
    ),
    ("nan-values", b"a: .nan # c\nb: [.NaN, .inf] # d\n", b"a: .nan\nb: [.NaN, .inf]\n", 2),
    (
        "bools-and-ints",
        b"a: yes # c\nb: 0x1F # d\nc: 1_000 # e\n",
        b"a: yes\nb: 0x1F\nc: 1_000\n",
        3,
    ),
    ("application-tag", b"a: !include base.yaml # c\n", b"a: !include base.yaml\n", 1),
    (
        "comment-between-plain-scalar-lines-is-not-possible-but-after-is",
        b"a: one\n  two # c\nb: 1\n",
        b"a: one\n  two\nb: 1\n",
        1,
    ),
    (
        "multi-line-plain-in-flow",
        b"[a\n b, # c\n d]\n",
        b"[a\n b,\n d]\n",
        1,
    ),
    ("S98Z-over-indented-blank-lines", b"a: >\n \n  \n   \n # c\n", b"a: >\n \n  \n   \n", 1),
]


@pytest.mark.parametrize(
    ("data", "expected", "count"),
    [pytest.param(d, e, n, id=i) for i, d, e, n in STRIPPED],
)
def test_strip_exact_bytes(data: bytes, expected: bytes, count: int) -> None:
    result = analyze(data, source="t.yaml")
    assert result.reason is None, result.message
    assert result.verified
    assert len(result.comments) == count
    assert result.new_data == expected
    assert result.changed == (count > 0)
    # the contract, independently: same data, and no comment left for PyYAML to skip
    try:
        loaded = list(yaml.safe_load_all(data))
    except yaml.YAMLError:  # e.g. an application tag safe_load cannot build
        loaded = None
    if loaded is not None:
        assert first_difference(list(yaml.safe_load_all(expected)), loaded) is None
    again = analyze(result.new_data)
    assert again.verified and not again.comments and not again.changed


def test_comment_positions_and_texts() -> None:
    data = "\ufeff# top\nname: café  # ☕ noté\nlist:\n  - 1 # one\nkey: | # header\n  x\n"
    result = analyze(data.encode())
    got = [(c.line, c.column, c.text, c.inline) for c in result.comments]
    assert got == [
        (1, 1, "# top", False),  # the BOM does not count as a column
        (2, 13, "# ☕ noté", True),  # columns count characters, not bytes
        (4, 7, "# one", True),
        (5, 8, "# header", True),
    ]


# --- 4. tab before `#`: a clear error, the file untouched --------------------------------
@pytest.mark.parametrize(
    "data",
    [b"a: b\t# c\n", b"a:\t# c\n  b: 1\n", b"\t# c\na: 1\n", b"a: [1,\t# c\n 2]\n"],
    ids=["after-value", "after-colon", "line-start", "in-flow"],
)
def test_tab_before_comment(data: bytes) -> None:
    result = analyze(data, source="t.yaml")
    assert result.reason == TAB_BEFORE_COMMENT
    assert result.is_error and not result.verified and not result.changed
    assert result.new_data == data
    assert result.problem_line is not None
    assert "tab" in (result.message or "")


# --- 12. deleting a comment can change the data: refuse -------------------------------
@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        pytest.param(b"---\nscalar1 # comment\n%YAML 1.2\n---\n", "'scalar1 %YAML 1.2'", id="EB22"),
        pytest.param(b"a: |+\n  text\n# c\n\nb: 1\n", "'text\\n\\n'", id="h12-keep-chomping"),
        pytest.param(b"a: |+\n  x\n # c\n\n\n", "'x\\n\\n\\n'", id="keep-chomping-at-end"),
    ],
)
def test_refuses_when_data_would_change(data: bytes, fragment: str) -> None:
    result = analyze(data, source="t.yaml")
    assert not result.verified
    assert result.reason == DATA_CHANGED
    assert not result.is_error
    assert result.new_data == data and not result.changed
    assert result.comments  # the comments are still reported
    assert result.comments_removed == 0
    assert fragment in (result.message or "")


# --- input errors -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "reason"),
    [
        pytest.param(b"a: \xff\xfe\n", NOT_UTF8, id="latin1"),
        pytest.param("a: é\n".encode("latin-1"), NOT_UTF8, id="latin1-e-acute"),
        pytest.param("a: 1\n".encode("utf-16"), NOT_UTF8, id="utf16-bom"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", BINARY, id="png"),
        pytest.param(b"a: 1\n\x00", BINARY, id="nul"),
        pytest.param(b"a: b\n c: d\n", INVALID_YAML, id="bad-indent"),
        pytest.param(b"a: [1, 2\n", INVALID_YAML, id="unclosed-flow"),
        pytest.param(b"key: |#c\n  x\n", INVALID_YAML, id="X4QW-header-hash-no-space"),
        pytest.param(b"a: \x1b[0m\n", INVALID_YAML, id="control-character"),
        pytest.param(b"[" * 3000 + b"]" * 3000, INVALID_YAML, id="too-deep"),
    ],
)
def test_input_errors(data: bytes, reason: str) -> None:
    result = analyze(data, source="t.yaml")
    assert result.reason == reason, result.message
    assert result.is_error and not result.verified
    assert result.new_data == data and not result.changed
    assert result.message


def test_invalid_yaml_reports_line() -> None:
    result = analyze(b"a: 1\nb: 2\n c: d\n")
    assert result.reason == INVALID_YAML
    assert result.problem_line == 3
    assert "<unicode string>" not in (result.message or "")


def test_verified_by_identical_events() -> None:
    result = analyze(b"a: !include base.yaml # c\nb: !!int x # d\n")
    assert result.verified and result.verified_with == WITH_EVENTS
    assert result.new_data == b"a: !include base.yaml\nb: !!int x\n"
    assert analyze(b"a: 1\n").verified_with is None  # nothing to verify


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        pytest.param(b"a: 1\n", b"a: !!int 1\n", WITH_SAFE_LOAD, id="events-differ-data-same"),
        pytest.param(b"a: !inc x\n", b"a: !inc 'x'\n", WITH_NODES, id="app-tag-nodes-same"),
        pytest.param(b"a: !inc x\n", b"a: !inc y\n", DATA_CHANGED, id="app-tag-nodes-differ"),
        pytest.param(b"a: 1\n", b"a: 1.0\n", DATA_CHANGED, id="int-became-float"),
        pytest.param(b"a: 1\n---\nb\n", b"a: 1\n", DATA_CHANGED, id="document-lost"),
    ],
)
def test_pure_parser_compares_data_where_events_differ(
    before: bytes, after: bytes, verdict: str
) -> None:
    """Where the pure parser sees the events change, the data (or node trees) decide."""
    found = compare_data(PURE_ENGINE, before.decode(), after.decode())
    assert (found if isinstance(found, str) else found[0]) == verdict


def test_ruamel_round_trip_does_not_keep_bytes_but_we_do() -> None:
    """Where a round-tripping emitter rewrites the file, stripping keeps every byte."""
    pytest.importorskip("ruamel.yaml")
    import io

    from ruamel.yaml import YAML

    data = b"%YAML 1.1\n---\nlr:    3.0e-4   # tuned\nsteps: [1,  2]\nitems:\n    - 'x'\n"
    rt = YAML()
    rt.preserve_quotes = True
    doc = rt.load(data.decode())
    for key in list(doc.ca.items):  # what a ruamel-based stripper does
        doc.ca.items.pop(key)
    out = io.StringIO()
    rt.dump(doc, out)
    expected = b"%YAML 1.1\n---\nlr:    3.0e-4\nsteps: [1,  2]\nitems:\n    - 'x'\n"
    assert out.getvalue().encode() != expected
    assert analyze(data).new_data == expected
