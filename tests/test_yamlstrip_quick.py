"""The quick second walk (`labctl.yamlstrip.quick`) decides exactly what the full `Walker`
would: on every hand-written case, every refusal and input error, the real samples and
generated documents with comments in the places the full walk must look at (a property
region, a block scalar's header), the result with the quick walk equals the result with the
full walk forced; and it hands those places to the full walk rather than passing them.
The two stores of the first walk's events (`Events`, compact, for big texts; `EventList`,
the objects compared in C, for small ones) decide alike on the same inputs and on pairs of
documents one edit apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.yaml_docs import yaml_texts
from helpers.yamlstrip_cases import INPUT_ERRORS, REFUSED, STRIPPED, TAB_BEFORE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labctl.yamlstrip.core as core
from labctl.yamlstrip import analyze
from labctl.yamlstrip.engine import engine_named
from labctl.yamlstrip.events import EventList, Events, Mismatch, same_events
from labctl.yamlstrip.quick import quick_verify
from labctl.yamlstrip.scan import Walker

SAMPLES = sorted((Path(__file__).parent / "fixtures" / "yamlstrip" / "samples").iterdir())
INPUTS = (
    [data for _, data, _, _ in STRIPPED]
    + [data for _, data in TAB_BEFORE]
    + [data for _, data, _ in REFUSED + INPUT_ERRORS]
    + [p.read_bytes() for p in SAMPLES if p.is_file()]
    + [  # '#' where only the full walk can tell content from comment
        b"a: &x # on the anchor's line\n  b: 1\n",
        b"k: !!str # a comment between the tag and its value\n  v\n",
        b"run: |  # on the header line\n  echo 1 # content\n",
        b"run: >-\n  # content of a folded block\nz: 2\n",
        b"url: 'http://h/#frag'  # trailing\nu2: http://h/#x\n",
        b"%YAML 1.2 # on a directive\n---\na: 1\n",
    ]
)


def _fields(data: bytes) -> tuple[Any, ...]:
    r = analyze(data, source="x.yaml")
    return (r.new_data, r.verified, r.verified_with, r.reason, r.comments, r.scanner)


def _full(monkeypatch: pytest.MonkeyPatch, data: bytes) -> tuple[Any, ...]:
    with monkeypatch.context() as m:
        m.setattr(core, "quick_verify", lambda *a, **k: False)
        return _fields(data)


@pytest.mark.parametrize("data", INPUTS, ids=range(len(INPUTS)))
def test_the_quick_walk_decides_as_the_full_one(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _fields(data) == _full(monkeypatch, data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_texts(), st.sampled_from(["  # c", " #", "\t# t"]), st.integers(0, 400))
def test_generated_documents_with_a_comment_decide_alike(text: str, mark: str, at: int) -> None:
    lines = text.splitlines(keepends=True)
    k = at % max(len(lines), 1)
    if lines:  # a comment at the end of one line (or a '#' that is content there)
        body = lines[k].rstrip("\r\n")
        lines[k] = body + mark + lines[k][len(body) :]
    data = "".join(lines).encode()
    with pytest.MonkeyPatch.context() as m:
        full = _full(m, data)
    assert _fields(data) == full


@pytest.mark.parametrize(
    ("text", "quick"),
    [
        ("a: 1\nurl: http://h/#x\nq: 'a # b'\n", True),  # content of plain and quoted scalars
        ("run: |\n  echo 1 # content\nz: 2\n", True),  # a block scalar's content
        ("run: |  # c\n  x\n", False),  # its header line
        ("k: !!str # c\n  v\n", False),  # between a tag and its value
        ("a: &x # c\n  b: 1\n", False),  # after an anchor
        ("a: 1 # c\n", False),  # a gap
    ],
)
@pytest.mark.parametrize("store", [Events, EventList])
def test_the_places_only_the_full_walk_reads_are_handed_to_it(
    text: str, quick: bool, store: type[Events] | type[EventList]
) -> None:
    """Walked unstripped, a text whose '#' is content passes quickly; one whose '#' may
    start a comment is handed to the full walk (False), never passed."""
    engine = engine_named(None)
    events = store()
    with engine.parser(engine.source(text, text.encode())) as get_event:
        Walker(text, engine.shift(text)).run(get_event, events)
    events.freeze()
    with engine.parser(engine.source(text, text.encode())) as get_event:
        assert quick_verify(text, engine.shift(text), get_event, events) is quick


def _stored_as(monkeypatch: pytest.MonkeyPatch, store: type, data: bytes) -> tuple[Any, ...]:
    with monkeypatch.context() as m:
        m.setattr(core, "kept_events", lambda chars: store())
        return _fields(data)


@pytest.mark.parametrize("data", INPUTS, ids=range(len(INPUTS)))
def test_both_stores_of_events_decide_alike(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _stored_as(monkeypatch, Events, data) == _stored_as(monkeypatch, EventList, data)


def _events(text: str) -> list[Any] | None:
    engine = engine_named(None)
    try:
        with engine.parser(engine.source(text, text.encode())) as get_event:
            return list(iter(get_event, None))
    except Exception:
        return None


def _compact_says_same(a: list[Any], b: list[Any]) -> bool:
    events = Events()
    for event in a:
        events.keep(event)
    events.freeze()
    try:
        for event in b:
            events.check(event)
        events.check_done()
    except Mismatch:
        return False
    return True


EDITS = ["'", '"', "x", "!!str ", "&a ", "[", "{", "- ", ": ", "\n", " ", "|\n  ", "0"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_texts(), st.sampled_from(EDITS), st.integers(0, 2000), st.booleans())
def test_same_events_agrees_with_the_compact_check(
    text: str, edit: str, at: int, delete: bool
) -> None:
    """A document and the same one an edit apart (a quote, a tag, an anchor, a flow
    bracket, a character more or less): the list comparison says "same" exactly when the
    compact one does, and it says so of every document and itself."""
    k = at % (len(text) + 1)
    other = text[:k] + text[k + 1 :] if delete else text[:k] + edit + text[k:]
    a, b = _events(text), _events(other)
    if a is not None:
        assert same_events(a, a)
    if a is None or b is None:
        return
    assert same_events(a, b) == _compact_says_same(a, b)
