"""The two YAML parsers a text can be read with: libyaml (C) and PyYAML's pure Python one.

Both come with PyYAML: `yaml.CSafeLoader` wraps libyaml's scanner and parser when the
wheel was built with it (`yaml.__with_libyaml__`), `yaml.SafeLoader` is the pure Python
reference. They produce the same events with the same marks, with one difference we
correct for: libyaml skips a leading BOM before it counts, so its `Mark.index` is one
less than the pure parser's (an offset into the decoded text, in code points) when the
text starts with U+FEFF. Line breaks (`\\r\\n`, `\\r`, NEL, LS, PS) are counted alike.
libyaml reads the UTF-8 bytes themselves (no copy); the pure parser reads the text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

LIBYAML = "libyaml"
PURE = "pure"


@dataclass(frozen=True, slots=True)
class Engine:
    name: str  # LIBYAML or PURE
    loader: Any  # a loader class: yaml.CSafeLoader or yaml.SafeLoader
    # what reads the events: libyaml's CParser alone (CSafeLoader's constructor and resolver
    # state are never touched by a walk), or the pure loader
    reader: Any

    def source(self, text: str, data: bytes | None) -> str | bytes:
        """What the parser reads: the UTF-8 bytes for libyaml, the text for pure Python."""
        if self.name == LIBYAML and data is not None:
            return data
        return text

    def shift(self, text: str) -> int:
        """What to add to this parser's `Mark.index` to get an offset into `text`."""
        return 1 if self.name == LIBYAML and text.startswith("\ufeff") else 0

    def parser(self, source: str | bytes) -> _Parsing:
        """A context whose value is the parser's `get_event`: the next event, None after
        the last (raises yaml.YAMLError on bad input)."""
        return _Parsing(self.reader(source))


class _Parsing:
    """`with engine.parser(text) as get_event`: a plain class, not a generator-based
    context manager (three of them per file were a tenth of a small file's time)."""

    __slots__ = ("loader",)

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def __enter__(self) -> Callable[[], Any]:
        return self.loader.get_event

    def __exit__(self, *exc: object) -> None:
        self.loader.dispose()


PURE_ENGINE = Engine(PURE, yaml.SafeLoader, yaml.SafeLoader)


def _libyaml() -> Engine | None:
    """libyaml's engine, when PyYAML was built with it: events come from its parser alone
    (CParser, without CSafeLoader's constructor and resolver state a walk never touches)."""
    if not getattr(yaml, "__with_libyaml__", False):
        return None
    from yaml._yaml import CParser

    return Engine(LIBYAML, yaml.CSafeLoader, CParser)


LIBYAML_ENGINE: Engine | None = _libyaml()


def engine_named(name: str | None) -> Engine:
    """`libyaml`, `pure`, or None for the fastest one this PyYAML has."""
    if name == PURE:
        return PURE_ENGINE
    if name == LIBYAML and LIBYAML_ENGINE is None:
        raise ValueError("this PyYAML was built without libyaml")
    return LIBYAML_ENGINE or PURE_ENGINE


def summary(exc: BaseException) -> str:
    """A one-line message from a PyYAML error, without the `<unicode string>` noise."""
    text = str(exc).replace('in "<unicode string>", ', "").replace('in "<byte string>", ', "")
    one_line = " ".join(text.split())
    if not isinstance(exc, yaml.YAMLError):
        one_line = f"{type(exc).__name__}: {one_line}"
    return one_line
