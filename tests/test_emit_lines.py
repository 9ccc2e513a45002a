"""The emitter's one redaction check per line (issue 21) writes exactly what redacting every
value and serialising again wrote: the reference is `dumps(reference_redactor.value(rec))`,
and a line passed through is kept as its bytes only when nothing in those bytes — a
shadowed duplicate key included — holds a secret."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any

from helpers import redact_reference as ref
from helpers.redact_fragments import ENV, FRAGMENTS
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl import redact as fast
from labctl.emit import Emitter, dumps
from labctl.stream import parse_lines

SECRET = "ghp_" + "A1b2" * 9
TEXT = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3).map(" ".join),
    st.text(max_size=12),
)
SCALAR = st.one_of(TEXT, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)
RECORD = st.dictionaries(TEXT, VALUE, max_size=6).map(lambda d: {"kind": "x", **d})


def _emitter(env: dict[str, str]) -> tuple[Emitter, io.StringIO]:
    out = io.StringIO()
    ctx = SimpleNamespace(fmt="jsonl", stdout=out, redactor=fast.Redactor.from_environ(env))
    return Emitter(ctx), out  # type: ignore[arg-type]


def _strings(raw: str) -> list[str]:
    """Every key and string value in a JSON line, repeated keys' shadowed values included."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        for k, v in items:
            found.append(k)
            if isinstance(v, str):
                found.append(v)
            elif isinstance(v, list):
                found.extend(x for x in v if isinstance(x, str))
        return dict(items)

    json.loads(raw, object_pairs_hook=pairs)
    return found


@settings(max_examples=400, deadline=None)
@given(RECORD, st.booleans())
def test_a_record_of_this_stage_is_written_as_the_reference_writes_it(
    rec: dict[str, Any], with_env: bool
) -> None:
    env = ENV if with_env else {}
    emitter, out = _emitter(env)
    emitter.emit(rec)
    assert out.getvalue() == dumps(ref.Redactor.from_environ(env).value(rec)) + "\n"


@settings(max_examples=400, deadline=None)
@given(RECORD, st.booleans(), st.booleans(), st.sampled_from(["", " ", "  "]))
def test_a_passed_through_line_keeps_its_bytes_only_when_they_hold_no_secret(
    rec: dict[str, Any], with_env: bool, ascii_escapes: bool, space: str
) -> None:
    env = ENV if with_env else {}
    reference = ref.Redactor.from_environ(env)
    raw = json.dumps(rec, ensure_ascii=ascii_escapes, separators=("," + space, ":" + space))
    [parsed] = list(parse_lines([raw.encode() + b"\n"], "t"))
    emitter, out = _emitter(env)
    emitter.emit(parsed)
    line = out.getvalue().rstrip("\n")
    if line == raw:
        assert all(reference.text(s) == s for s in _strings(raw)), raw
    else:
        assert line == dumps(reference.value(json.loads(raw)))


def test_a_secret_in_a_shadowed_duplicate_key_never_goes_out() -> None:
    for raw in (
        '{"kind":"x","note":"SECRET","note":"ok"}'.replace("SECRET", SECRET),
        '{"kind":"x","n":{"a":"SECRET","a":"ok"}}'.replace("SECRET", SECRET),
        '{"kind":"x","note":"SECRET","note":"ok"}'.replace("SECRET", ENV["MY_TOKEN"]),
    ):
        [parsed] = list(parse_lines([raw.encode()], "t"))
        assert "ghp_" not in json.dumps(parsed) and "tok3n" not in json.dumps(parsed)
        emitter, out = _emitter(ENV)
        emitter.emit(parsed)
        assert SECRET not in out.getvalue() and ENV["MY_TOKEN"] not in out.getvalue(), raw
        assert json.loads(out.getvalue()) == json.loads(raw)  # the values that count stay


def test_an_escape_that_hides_a_trigger_is_not_trusted() -> None:
    hidden = "\\u0067hp_" + "A1b2" * 9  # `ghp_…` written with an escaped g
    escaped_slashes = '{"kind":"x","u":"postgres:\\/\\/u:pw@h"}'
    for raw in ('{"kind":"x","t":"HIDDEN"}'.replace("HIDDEN", hidden), escaped_slashes):
        [parsed] = list(parse_lines([raw.encode()], "t"))
        emitter, out = _emitter({})
        emitter.emit(parsed)
        assert out.getvalue() == dumps(ref.Redactor({}).value(json.loads(raw))) + "\n"
        assert "A1b2A1b2" not in out.getvalue() and ":pw@" not in out.getvalue()


PLAIN_SCALAR = st.one_of(
    st.text(),  # any code point: controls, U+2028, lone surrogates (orjson refuses those)
    st.integers(),  # past 64 bits too (orjson refuses those)
    st.booleans(),
    st.none(),
)
PLAIN = st.recursive(
    PLAIN_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(), inner)),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(st.text(), PLAIN, max_size=6))
def test_a_plain_record_is_written_as_json_writes_it(rec: dict[str, Any]) -> None:
    """The fast writer of float-free records (orjson, for strip-yaml-comments' workers)
    gives the bytes `dumps` gives, whatever the strings and ints hold."""
    from labctl.emit import plain_dumps

    assert plain_dumps(rec) == dumps(rec)
