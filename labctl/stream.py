"""Reading records: JSON Lines from stdin or `--input FILE`, and passing records through.

A malformed line becomes an `error` record naming its line number (reason
`malformed_input`) and the rest of the stream is still read. A command passes through,
unchanged, every record it does not act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from labctl.errors import UsageError
from labctl.records import error_record

if TYPE_CHECKING:
    from labctl.context import Context

Record = dict[str, Any]


class RawRecord(dict[str, Any]):
    """A record read from JSON Lines that remembers the line it came in as (`raw`).

    The emitter writes a passed-through record as those exact bytes (after the redaction
    check) instead of serialising it again. A stage that changes a record builds a new
    dict (`dict(rec) | {...}`, as every stage does); changing one in place drops `raw`.
    """

    __slots__ = ("raw",)

    def __init__(self, value: dict[str, Any], raw: str | None) -> None:
        super().__init__(value)
        self.raw = raw

    def __setitem__(self, key: str, value: Any) -> None:
        self.raw = None
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.raw = None
        super().__delitem__(key)

    def __ior__(self, other: Any) -> RawRecord:  # type: ignore[override,misc]
        self.raw = None
        return super().__ior__(other)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.raw = None
        super().update(*args, **kwargs)

    def pop(self, *args: Any) -> Any:
        self.raw = None
        return super().pop(*args)

    def popitem(self) -> tuple[str, Any]:
        self.raw = None
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.raw = None
        return super().setdefault(key, default)

    def clear(self) -> None:
        self.raw = None
        super().clear()


class _NotFinite(ValueError):
    """NaN/Infinity in an input line: valid for Python's json, not JSON (no raw bytes)."""


def _reject_constant(name: str) -> Any:
    raise _NotFinite(name)


def parse_lines(lines: Iterable[bytes], source: str) -> Iterator[Record]:
    """JSON Lines -> records; bad lines -> `error` records; blank lines are skipped."""
    for number, data in enumerate(lines, start=1):
        if not data.strip():
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield error_record(
                "malformed_input",
                f"{source} line {number}: not UTF-8 ({exc.reason} at byte {exc.start})",
                source=source,
                line=number,
            )
            continue
        raw: str | None = text.rstrip("\r\n")
        try:
            try:
                value = json.loads(text, parse_constant=_reject_constant)
            except _NotFinite:  # kept as data, written back as "NaN" strings by the emitter
                value, raw = json.loads(text), None
        except json.JSONDecodeError as exc:
            yield error_record(
                "malformed_input",
                f"{source} line {number}: not JSON ({exc.msg} at column {exc.colno})",
                source=source,
                line=number,
            )
            continue
        if not isinstance(value, dict):
            yield error_record(
                "malformed_input",
                f"{source} line {number}: a record must be a JSON object, "
                f"not {type(value).__name__}",
                source=source,
                line=number,
            )
            continue
        yield RawRecord(value, raw)


def read_records(ctx: Context, input_path: Path | None = None) -> Iterator[Record]:
    """Records from `--input FILE` (or `-`), else stdin (which must not be a terminal)."""
    if input_path is not None and str(input_path) != "-":
        try:
            fh: IO[bytes] = open(input_path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UsageError(f"cannot read --input {input_path}: {exc.strerror}") from None
        with fh:
            yield from parse_lines(fh, str(input_path))
        return
    if ctx.stdin_isatty:
        raise UsageError(
            f"labctl {ctx.command} reads records on stdin: pipe records in "
            f"(e.g. `labctl poll | labctl {ctx.command}`) or give --input FILE"
        )
    yield from parse_lines(ctx.stdin, "<stdin>")


def passthrough(
    records: Iterable[Record],
    acts_on: Callable[[Record], bool],
    act: Callable[[Record], Iterable[Record]],
) -> Iterator[Record]:
    """Apply `act` to records `acts_on` selects; yield every other record unchanged."""
    for rec in records:
        if rec.get("kind") != "error" and acts_on(rec):
            yield from act(rec)
        else:
            yield rec
