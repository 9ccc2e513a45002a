"""Refill entries cut out of YAML/TOML/JSON: exact bytes on hand-made layouts, and a
property over generated files (every dump style): the result parses to the data minus
exactly the entry, and only the entry's bytes went."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomli_w
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.experiments.refill import plan

GOLDEN = [
    # (file name, before, after)
    ("a.yaml", "r: {exp0: 1, exp1: 2, exp10: 3}\n", "r: {exp0: 1, exp10: 3}\n"),
    ("a.yaml", "r:\n  exp1: 2\nz: 1\n", "r: {}\nz: 1\n"),
    ("a.yaml", "l:\n- exp0\n- exp1\n", "l:\n- exp0\n"),
    ("a.yaml", "l: [exp1]  # only one\n", "l: []  # only one\n"),
    ("a.yaml", "a: 1\r\nr:\r\n  exp1:\r\n    k: 1\r\n  exp2: 2\r\n", "a: 1\r\nr:\r\n  exp2: 2\r\n"),
    ("a.yaml", "r:\n  exp1: 1\n---\nr:\n  exp1: 2\n  x: 3\n", "r: {}\n---\nr:\n  x: 3\n"),
    ("a.yaml", "r:\n  exp1: |\n    line\n\n  x: 3\n", "r:\n\n  x: 3\n"),
    ("a.yaml", 'note: "exp1"  # exp1\nexp10: 1\n', 'note: "exp1"  # exp1\nexp10: 1\n'),
    ("a.json", '{"l": [\n  "exp0",\n  "exp1"\n]}', '{"l": [\n  "exp0"\n]}'),
    ("a.json", '{"exp1": 1, "b": 2}', '{"b": 2}'),
    ("a.json", '[{"experiment": "exp1"}, {"experiment": "exp10"}]', '[{"experiment": "exp10"}]'),
    ("a.toml", "k = { exp1 = 1, b = 2 }\n", "k = { b = 2 }\n"),
    ("a.toml", 'l = [\n  "a",  # keep\n  "exp1",  # drop\n]\n', 'l = [\n  "a",  # keep\n]\n'),
    ("a.toml", "[r]\nexp0 = 1\nexp1 = 2  # two\n\n[s]\nx = 1\n", "[r]\nexp0 = 1\n\n[s]\nx = 1\n"),
    ("a.toml", "[r.exp1]\nk = 1\n[r.exp1.sub]\nz = 2\n[r.b]\nk = 2\n", "[r.b]\nk = 2\n"),
    ("a.toml", "r.exp1 = 1\nr.b = 2\n", "r.b = 2\n"),
]


@pytest.mark.parametrize("name,before,after", GOLDEN)
def test_golden(name: str, before: str, after: str) -> None:
    p = plan(Path(name), before.encode(), "exp1")
    assert p.verified, p.error
    assert (p.new or before.encode()) == after.encode()


def test_what_cannot_be_cut_exactly_is_refused() -> None:
    anchored = b"base: &b {keep: 1}\nrefill:\n  exp1: *b\n  other: *b\n"
    p = plan(Path("x.yaml"), anchored, "base")  # the anchor's owner: the alias would dangle
    assert not p.verified and p.new is None
    p = plan(Path("x.yaml"), b"- exp1: 1\n  b: 2\n", "exp1")  # shares a line with '- '
    assert not p.verified
    assert not plan(Path("x.yaml"), b"a: [1, 2\n", "exp1").verified
    assert plan(Path("x.ini"), b"[a]\n", "exp1").error


NAMES = st.sampled_from(["exp0", "exp1", "exp10", "exp1b", "base", "exp1_x"])
VALUES = st.one_of(
    st.integers(0, 9),
    st.text("abc /-", max_size=6),
    st.fixed_dictionaries({"keep": st.integers(1, 8), "script": st.text("xyz/.", max_size=8)}),
)
DOCS = st.fixed_dictionaries(
    {
        "refill": st.dictionaries(NAMES, VALUES, max_size=5),
        "order": st.lists(NAMES, max_size=5),
        "queue": st.lists(
            st.fixed_dictionaries({"name": NAMES, "keep": st.integers(1, 5)}), max_size=4
        ),
        "other": st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
    }
)


def dump(doc: dict, fmt: str, style: int) -> str:
    if fmt == "json":
        return json.dumps(doc, indent=[None, 2, 4][style % 3])
    if fmt == "yaml":
        return yaml.safe_dump(doc, default_flow_style=[False, None, True][style % 3],
                              sort_keys=False)  # fmt: skip
    return tomli_w.dumps(doc, multiline_strings=False)


def _subsequence(small: bytes, big: bytes) -> bool:
    it = iter(big)
    return all(b in it for b in small)


@settings(max_examples=150)
@given(DOCS, st.sampled_from(["json", "yaml", "toml"]), st.integers(0, 2))
def test_removal_property(doc: dict, fmt: str, style: int) -> None:
    if fmt == "toml" and not doc["queue"]:
        doc = {k: v for k, v in doc.items() if k != "queue"}
    text = dump(doc, fmt, style).encode()
    p = plan(Path(f"f.{fmt}"), text, "exp1")
    mentions = "exp1" in (doc["refill"].keys() | set(doc["order"]) |
                          {q["name"] for q in doc.get("queue", [])})  # fmt: skip
    assert bool(p.entries) == mentions
    assert p.verified, p.error  # every layout a dumper writes can be cut exactly
    if p.new is not None:
        # every byte left was there, in order (only the `{}`/`[]` of an emptied collection
        # may be new)
        assert _subsequence(p.new.replace(b"{}", b"").replace(b"[]", b""), text)
        assert b"exp1" not in p.new.replace(b"exp10", b"").replace(b"exp1b", b"").replace(
            b"exp1_", b""
        )
