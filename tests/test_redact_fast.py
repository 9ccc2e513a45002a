"""The fast redactor (one trigger scan, skipped passes, a cache) behaves exactly as the
reference one-pass-per-shape redactor it replaced (tests/helpers/redact_reference.py)."""

from __future__ import annotations

import random
import string

from helpers import redact_reference as ref
from helpers.redact_fragments import ENV, FRAGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl import redact as fast


def _pair(env: dict[str, str]) -> tuple[ref.Redactor, fast.Redactor]:
    return ref.Redactor.from_environ(env), fast.Redactor.from_environ(env)


def test_a_large_generated_set_redacts_identically() -> None:
    rng = random.Random(21)
    alphabet = string.ascii_letters + string.digits + " _-:=./@'\"\n"
    for env in ({}, ENV):
        old, new = _pair(env)
        for _ in range(20000):
            parts = rng.choices(FRAGMENTS, k=rng.randint(1, 5))
            parts += ["".join(rng.choices(alphabet, k=rng.randint(0, 12)))]
            rng.shuffle(parts)
            text = "".join(p + rng.choice(["", " ", "\n", "=", ":"]) for p in parts)
            assert new.text(text) == old.text(text), text


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=6).map("".join),
    st.booleans(),
)
def test_any_text_redacts_identically(text: str, with_env: bool) -> None:
    old, new = _pair(ENV if with_env else {})
    assert new.text(text) == old.text(text)
    assert new.text(text) == old.text(text)  # and again, from the cache


def test_records_redact_identically_and_untouched_values_are_the_same_object() -> None:
    old, new = _pair(ENV)
    clean = {"kind": "job", "n": 3, "ok": True, "x": None, "tags": ["a", "b"], "p": {"s": 1.5}}
    assert new.value(clean) is clean
    dirty = {"kind": "job", "note": "push with ghp_" + "A" * 36, "list": [1, "tok3n-XYZ"]}
    before = repr(dirty)
    out = new.value(dirty)
    assert out == old.value(dirty)
    assert out is not dirty and repr(dirty) == before  # the input is never changed
    assert new.value({"tok3n-XYZ": 1}) == old.value({"tok3n-XYZ": 1})
    assert new.value((1, "a")) == [1, "a"]  # tuples become lists, as before


def test_short_configured_secrets_are_still_found() -> None:
    new = fast.Redactor({"PIN": "a1"})
    assert new.text("pin a1 here") == ref.Redactor({"PIN": "a1"}).text("pin a1 here")
    assert "a1" not in new.text("pin a1 here").replace("[REDACTED:PIN]", "")


_KEYS = st.sampled_from(["text", "path", "key_path", "url", "note", "token", "x"])
_STRINGS = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12), st.sampled_from(["://", '"'])),
    max_size=5,
).map("".join)


@settings(max_examples=800, deadline=None)
@given(
    st.dictionaries(
        _KEYS,
        st.one_of(_STRINGS, st.integers(), st.lists(st.dictionaries(_KEYS, _STRINGS), max_size=3)),
        max_size=5,
    ),
    st.booleans(),
)
def test_a_line_the_check_calls_clean_holds_nothing_the_walk_would_remove(
    rec: dict, with_env: bool
) -> None:
    """The emitter writes a record's line as it is when `may_hold` says no (issue 21): that
    must never let out a string `value` would have changed, whatever the line holds."""
    import json

    red = fast.Redactor.from_environ(ENV if with_env else {})
    line = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    if not red.may_hold(line):
        assert red.value(rec) is rec, line  # unchanged, and recognised as unchanged
