"""Generated YAML texts for the strip-yaml-comments property tests (hypothesis).

`yaml_texts()` draws Python data and dumps it with PyYAML in varied styles (block, flow,
quoted, literal and folded scalars, canonical form, explicit `---`/`...`, 2-9 space
indents, narrow widths, CRLF and CR breaks, a BOM, a missing final newline, several
documents, anchors and aliases). Used by test_yamlstrip_props.py and
test_yamlstrip_engines.py.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml
from hypothesis import assume
from hypothesis import strategies as st

from labctl.yamlstrip.verify import first_difference

# --- documents ----------------------------------------------------------------------------

_FRAGMENTS = [*"#:-?[]{},&*!|>'\"%@` \t\n\\ab1.", "http://x/#f", " # ", "a#b", "key: v"]
_TEXT = st.lists(
    st.one_of(
        st.sampled_from(_FRAGMENTS),
        st.characters(min_codepoint=0xA0, max_codepoint=0x2FFF, blacklist_categories=("Cs",)),
    ),
    max_size=8,
).map("".join)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
    st.sampled_from(["yes", "no", "on", "0x1F", "1e3", ".nan", "~", "null", "2024-01-02"]),
)
_KEYS = st.one_of(_TEXT, st.integers(-100, 100), st.booleans(), st.none())


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(_KEYS, children, max_size=4),
        # the same object twice: PyYAML emits an anchor and an alias
        children.map(lambda c: [c, c] if isinstance(c, list | dict) else [c]),
    )


DATA = st.recursive(_SCALARS, _containers, max_leaves=25)


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    docs = draw(st.lists(DATA, min_size=1, max_size=3))
    line_break = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    text: str = yaml.safe_dump_all(
        docs,
        default_flow_style=draw(st.sampled_from([False, None, True])),
        default_style=draw(st.sampled_from([None, None, "'", '"', "|", ">"])),
        canonical=draw(st.integers(0, 5)) == 0,
        indent=draw(st.integers(2, 9)),
        width=draw(st.sampled_from([20, 40, 80, 1000])),
        allow_unicode=draw(st.booleans()),
        explicit_start=draw(st.booleans()),
        explicit_end=draw(st.booleans()),
        line_break=line_break,
        sort_keys=False,
    )
    if draw(st.booleans()) and text.endswith(line_break):
        text = text[: -len(line_break)]  # no final newline, when that keeps the data
        assume(loads_equal(text + line_break, text))
    if draw(st.integers(0, 9)) == 0:
        text = "\ufeff" + text
    return text


def loads_equal(a: str, b: str) -> bool:
    """Both texts load (PyYAML) to equal data."""
    try:
        return first_difference(list(yaml.safe_load_all(a)), list(yaml.safe_load_all(b))) is None
    except yaml.YAMLError:
        return False
