"""Hand-written nasty cases for strip-yaml-comments: one test per edge case, exact bytes.

The cases follow the project's research list of 13 edge cases that break comment
detection (block-scalar headers, flow collections, markers and directives, BOM, CRLF,
NEL/LS/PS breaks, refusals when deletion changes data …) and yaml-test-suite ids; the
stripping cases themselves are in tests/helpers/yamlstrip_cases.py (`STRIPPED`).
"""

from __future__ import annotations

import pytest
import yaml
from helpers.yamlstrip_cases import INPUT_ERRORS, REFUSED, STRIPPED, TAB_BEFORE

from labctl.yamlstrip import analyze
from labctl.yamlstrip.compare import compare_data
from labctl.yamlstrip.engine import PURE_ENGINE
from labctl.yamlstrip.model import (
    DATA_CHANGED,
    INVALID_YAML,
    TAB_BEFORE_COMMENT,
    WITH_EVENTS,
    WITH_NODES,
    WITH_SAFE_LOAD,
)
from labctl.yamlstrip.verify import first_difference


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
@pytest.mark.parametrize("data", [d for _, d in TAB_BEFORE], ids=[i for i, _ in TAB_BEFORE])
def test_tab_before_comment(data: bytes) -> None:
    result = analyze(data, source="t.yaml")
    assert result.reason == TAB_BEFORE_COMMENT
    assert result.is_error and not result.verified and not result.changed
    assert result.new_data == data
    assert result.problem_line is not None
    assert "tab" in (result.message or "")


# --- 12. deleting a comment can change the data: refuse -------------------------------
@pytest.mark.parametrize(("data", "fragment"), [pytest.param(d, f, id=i) for i, d, f in REFUSED])
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
@pytest.mark.parametrize(("data", "reason"), [pytest.param(d, r, id=i) for i, d, r in INPUT_ERRORS])
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


# --- a stripped text that no longer parses at all: refuse, never raise ------------------
@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"#\n\xef\xbb\xbf[#]\n", id="bom-then-flow-hash"),
        pytest.param(b"#\n\xef\xbb\xbf[null #]\n", id="bom-then-flow-inline"),
    ],
)
def test_a_stripped_text_that_does_not_parse_is_refused(data: bytes) -> None:
    """A BOM after the first line makes libyaml defer to the pure parser, whose events
    differ early; the stripped text then does not even parse (found by the hash property
    test: analyze raised yaml's ParserError)."""
    result = analyze(data, source="t.yaml")
    assert result.reason == "invalid_after_strip" and not result.verified
    assert result.new_data == data and not result.changed
