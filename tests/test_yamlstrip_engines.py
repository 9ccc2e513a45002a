"""libyaml against PyYAML's pure parser: the same comments, or the pure parser decides.

Every hand-written case (stripped, refused or an error), every real sample in
tests/fixtures/yamlstrip and every generated text is read by both. Either libyaml finds
exactly the comments the pure parser finds (same offsets, lines, key paths, same stripped
bytes and verdict), or libyaml cannot vouch for the text and the result is the pure
parser's, saying so in `scanner_note`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from helpers.yaml_docs import yaml_texts
from helpers.yamlstrip_cases import INPUT_ERRORS, REFUSED, STRIPPED, TAB_BEFORE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.yamlstrip import analyze
from labctl.yamlstrip.engine import LIBYAML_ENGINE, PURE_ENGINE, Engine
from labctl.yamlstrip.keypath import KeyPaths
from labctl.yamlstrip.model import BINARY, NOT_UTF8
from labctl.yamlstrip.scan import Span, Unsure, Walker
from labctl.yamlstrip.spans import TooDeep

pytestmark = pytest.mark.skipif(LIBYAML_ENGINE is None, reason="PyYAML built without libyaml")
SAMPLES = Path(__file__).parent / "fixtures" / "yamlstrip" / "samples"
N = int(os.environ.get("YAMLSTRIP_EXAMPLES", "300"))

# Inputs where libyaml and the pure parser are known to part ways, and why.
DISAGREEMENTS = [
    (b"key: |#c\n  x\n", "'#' right after a token"),  # libyaml reads `#c` as a comment
    (b'a: "v"#c\n', "'#' right after a token"),
    (b"a: b\t# c\n", "'#' right after a token"),  # libyaml takes the tab as a blank
    (b"[a,\t# c\n b]\n", "'#' right after a token"),
    (b"[a,\t\n b]\n", "a tab outside scalars"),
    (b"%FOO a#b # c\n---\nx\n", "libyaml rejected the text"),  # reserved directive
    (b"# c\n\xef\xbb\xbfa: 1\n", "a BOM after the start"),  # libyaml skips it, pure keeps it
]


def _spans(engine: Engine, data: bytes) -> tuple[list[Span], dict[int, str | None]]:
    text = data.decode("utf-8")
    paths = KeyPaths(has_bom=text.startswith("\ufeff"))
    with engine.parser(engine.source(text, data)) as get_event:
        careful = engine is LIBYAML_ENGINE
        spans = Walker(text, engine.shift(text), paths, careful=careful).run(get_event)
    return spans, paths.paths


def _same_reading(data: bytes) -> None:
    """The differential check for one input."""
    result = analyze(data)
    reference = analyze(data, scanner="pure")
    if result.reason in (BINARY, NOT_UTF8):  # refused before any parser reads it
        assert result == reference
        return
    try:
        pure = _spans(PURE_ENGINE, data)
    except (yaml.YAMLError, RecursionError, TooDeep):
        pure = None
    try:
        fast = _spans(LIBYAML_ENGINE, data)  # type: ignore[arg-type]
    except (yaml.YAMLError, Unsure, TooDeep):
        fast = None
    if fast is None or pure is None:  # libyaml cannot vouch: the pure parser decides
        assert result.scanner in (None, "pure") and result.scanner_note
    else:
        assert fast == pure
    for field in ("reason", "verified", "new_data", "comments", "verified_with", "message"):
        if field == "verified_with" and result.scanner == "libyaml":
            continue  # libyaml saw identical events; the pure parser may have compared data
        assert getattr(result, field) == getattr(reference, field), field


@pytest.mark.parametrize("data", [case[1] for case in STRIPPED], ids=[c[0] for c in STRIPPED])
def test_hand_written_cases_read_alike(data: bytes) -> None:
    _same_reading(data)


_NOT_STRIPPED = (
    [(i, d) for i, d in TAB_BEFORE]
    + [(i, d) for i, d, _ in REFUSED]
    + [(i, d) for i, d, _ in INPUT_ERRORS]
)


@pytest.mark.parametrize("data", [d for _, d in _NOT_STRIPPED], ids=[i for i, _ in _NOT_STRIPPED])
def test_refusals_and_errors_read_alike(data: bytes) -> None:
    """A refusal or an error is the same (reason, message, line, comments) whichever
    parser read the text first."""
    _same_reading(data)


def test_real_samples_read_alike() -> None:
    samples = sorted(SAMPLES.rglob("*.y*ml"))
    assert len(samples) >= 10
    for path in samples:
        _same_reading(path.read_bytes())


@pytest.mark.parametrize(("data", "why"), DISAGREEMENTS)
def test_where_they_disagree_the_pure_parser_decides(data: bytes, why: str) -> None:
    result = analyze(data)
    assert result.scanner_note is not None and why in result.scanner_note
    reference = analyze(data, scanner="pure")
    assert (result.reason, result.new_data, result.comments) == (
        reference.reason,
        reference.new_data,
        reference.comments,
    )


_NOISE = [
    "#", " #", " # x", "\t", "\t#", "\ufeff", "\r", "\r\n", "\x85", "\u2028", ":", ": ",
    "- ", "? ", "&a ", "*a", "!t ", "!!str ", "|", ">-", "'", '"', "[", "]", "{", "}", ",",
    "---", "...", "%YAML 1.1\n", "%FOO a#b\n", "\n", "  ", "a#b", "é", "!", "&", "*", "!a!",
    "!<x>", "%TAG !a! tag:x,2000:\n", "\\", "@", "`", "=", "<<", "~", "\x00", "\x7f",
]  # fmt: skip


@settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_texts(), st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(_NOISE))))
def test_generated_and_mangled_texts_read_alike(text: str, noise: list[tuple[int, str]]) -> None:
    """Valid texts, and texts broken in the ways that split the parsers (tabs, BOMs,
    glued `#`, reserved directives, odd line breaks)."""
    for at, piece in noise[:4]:
        at %= len(text) + 1
        text = text[:at] + piece + text[at:]
    _same_reading(text.encode("utf-8"))


def test_marks_agree_once_the_bom_is_counted() -> None:
    """libyaml counts code points like the pure parser, but not a leading BOM (the
    stream's start aside: libyaml puts it after the BOM, the pure parser before)."""
    text = "\ufeffa: é\U0001f600 # c\r\nb: 2\x85c: 3\u2028d: [4,\u2029 5]\n"
    data = text.encode()
    marks = []
    for engine in (PURE_ENGINE, LIBYAML_ENGINE):
        assert engine is not None
        shift = engine.shift(text)
        with engine.parser(engine.source(text, data)) as get_event:
            marks.append(
                [
                    (e.start_mark.index + shift, e.start_mark.line, e.start_mark.column)
                    for e in iter(get_event, None)
                ][1:]
            )
    assert marks[0] == marks[1]
    assert LIBYAML_ENGINE is not None and LIBYAML_ENGINE.shift(text) == 1


def test_real_samples_strip_as_the_previous_implementation_did() -> None:
    """No wrong byte: the stripped samples equal what the pure-scanner implementation
    (before libyaml) produced, kept in fixtures/yamlstrip/expected."""
    for path in sorted(SAMPLES.iterdir()):
        result = analyze(path.read_bytes(), source=path.name)
        assert result.verified and result.scanner == "libyaml", path.name
        assert result.new_data == (SAMPLES.parent / "expected" / path.name).read_bytes()
