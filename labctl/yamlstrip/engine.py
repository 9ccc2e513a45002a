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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml

LIBYAML = "libyaml"
PURE = "pure"


@dataclass(frozen=True, slots=True)
class Engine:
    name: str  # LIBYAML or PURE
    loader: Any  # a loader class: yaml.CSafeLoader or yaml.SafeLoader

    def source(self, text: str, data: bytes | None) -> str | bytes:
        """What the parser reads: the UTF-8 bytes for libyaml, the text for pure Python."""
        if self.name == LIBYAML and data is not None:
            return data
        return text

    def shift(self, text: str) -> int:
        """What to add to this parser's `Mark.index` to get an offset into `text`."""
        return 1 if self.name == LIBYAML and text.startswith("\ufeff") else 0

    @contextmanager
    def parser(self, source: str | bytes) -> Iterator[Callable[[], Any]]:
        """The parser's `get_event`: the next event, None after the last (raises
        yaml.YAMLError on bad input)."""
        loader = self.loader(source)
        try:
            yield loader.get_event
        finally:
            loader.dispose()


PURE_ENGINE = Engine(PURE, yaml.SafeLoader)
LIBYAML_ENGINE: Engine | None = (
    Engine(LIBYAML, yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else None
)


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
