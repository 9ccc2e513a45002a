"""THE emitter: the only code that writes records to stdout.

- jsonl: one compact JSON object per line, UTF-8, flushed per record (a long poll streams);
- json: one JSON array, still written as records arrive;
- table: rich box-drawing tables (┌─┬─┐), one per record kind, rendered at the end; colour
  only on a terminal and never with NO_COLOR. rich is imported only on this path.

Every record passes through the context's redactor first. NaN/Infinity (a NaN loss is
real data) are written as the strings "NaN", "Infinity", "-Infinity" so the output stays
valid JSON.
"""

from __future__ import annotations

import base64
import json
import math
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from labctl.errors import ExitCode, LabctlError, worst
from labctl.records import Encoded, Redacted, rfc3339
from labctl.redact import default_redactor
from labctl.severity import severity as default_severity

if TYPE_CHECKING:
    from labctl.context import Context, Severity


class PipeClosed(Exception):
    """stdout's reader closed the pipe (`labctl poll | head -1`); exit quietly."""


def _default(obj: Any) -> Any:
    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, datetime):
        return rfc3339(obj.timestamp())
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=str)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def dumps(rec: Any) -> str:
    try:
        return json.dumps(
            rec, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
        )
    except ValueError:
        return json.dumps(_finite(rec), ensure_ascii=False, separators=(",", ":"), default=_default)


class Emitter:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.fmt = ctx.fmt
        self.out = ctx.stdout
        self.counts: Counter[str] = Counter()
        self.buffer: list[dict[str, Any]] = []
        self.started = False
        self.closed = False

    def emit(self, rec: dict[str, Any]) -> dict[str, Any]:
        self.counts[str(rec.get("kind"))] += 1
        if self.fmt == "table":
            if type(rec) is Encoded:
                rec = rec.whole()
            rec = self.ctx.redactor.value(rec)
            self.buffer.append(rec)
            return rec
        rec, line = self._line(rec)
        if self.fmt == "json":
            line = ("[" if not self.started else ",\n") + line
        else:
            line += "\n"
        self.started = True
        self._write(line)
        return rec

    def _line(self, rec: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The redacted record and its JSON line, after one redaction check of the line.

        A record passed through untouched goes out as the bytes it came in as (`raw`):
        at once when the line can hold no secret and has no escape that could hide one;
        else when redacting its values changes nothing and no key is repeated (a
        shadowed duplicate is in the bytes, not in the values that were checked)."""
        redactor = self.ctx.redactor
        if type(rec) is Encoded:
            if redactor is default_redactor():
                return rec, rec.line  # redacted and encoded by its maker, with these secrets
            rec = rec.whole()
        if type(rec) is Redacted and redactor is default_redactor():
            return rec, dumps(rec)  # redacted by its maker, with this very redactor's secrets
        raw = getattr(rec, "raw", None)
        if raw is not None:
            if "\\" not in raw and not redactor.may_hold(raw):
                return rec, raw
            clean = redactor.value(rec)
            if clean is rec and not _repeats_a_key(raw):
                return rec, raw
            return clean, dumps(clean)
        line = dumps(rec)
        if redactor.may_hold(line):
            clean = redactor.value(rec)
            if clean is not rec:
                return clean, dumps(clean)
        return rec, line

    def _write(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            raise PipeClosed() from None

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.fmt == "json":
            self._write(("]" if self.started else "[]") + "\n")
        elif self.fmt == "table":
            from labctl.render.tables import render

            try:
                render(self.buffer, self.ctx)
            except BrokenPipeError:
                raise PipeClosed() from None


class _RepeatedKey(ValueError):
    pass


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _RepeatedKey
    return out


def _repeats_a_key(raw: str) -> bool:
    """Whether an object in the JSON line repeats a key (the parsed record keeps only the
    last value; the bytes keep both)."""
    try:
        json.loads(raw, object_pairs_hook=_no_repeats)
    except _RepeatedKey:
        return True
    except ValueError:  # NaN and such: parsed without raw bytes, never here
        return True
    return False


def encoded(
    rec: Redacted,
    severity: Severity | None = None,
    *,
    severity_only: bool = False,
    plain: bool = False,
) -> Encoded:
    """`rec` with its JSON line and the exit code `run_emitter` would give it (same
    `severity` and `severity_only`), for a worker process to hand over (records.Encoded).
    `plain`: the maker promises a record of str, int, bool, None, lists and dicts alone,
    so orjson may write its line (`plain_dumps`)."""
    fields = {k: v for k, v in rec.items() if not isinstance(v, list | tuple | dict)}
    line = plain_dumps(rec) if plain else dumps(rec)
    return Encoded(fields, line, int(_exit_code(rec, severity, severity_only)))


def plain_dumps(rec: Any) -> str:
    """`dumps(rec)` for a record without floats, tuples, sets or other objects, five times
    faster (orjson: the same bytes for such values, tested). A float is the exception:
    orjson spells some otherwise (1e-5 for 1e-05) and writes NaN as null. What orjson
    refuses (an int past 64 bits, a lone surrogate, a key that is not a str) goes to
    `dumps`."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; json is the fallback
        return dumps(rec)
    try:
        return orjson.dumps(rec).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError
        return dumps(rec)


def _exit_code(rec: dict[str, Any], severity: Severity | None, severity_only: bool) -> ExitCode:
    """The exit code one record calls for: the shared rules (labctl/severity.py) and the
    command's `severity`, or the command's alone with `severity_only`."""
    code = ExitCode.OK
    if not (severity_only and severity is not None):
        code = worst(code, default_severity(rec))
    if severity is not None:
        code = worst(code, severity(rec))
    return code


def run_emitter(
    ctx: Context,
    records: Iterable[dict[str, Any]],
    severity: Severity | None = None,
    *,
    severity_only: bool = False,
) -> int:
    """Emit every record; return the worst exit code they call for.

    `severity` adds a command's own rules to the shared ones (labctl/severity.py), or with
    `severity_only` replaces them. A `LabctlError` raised by the core mid-stream is emitted
    as an `error` record through this same emitter (so a JSON array stays valid) and
    re-raised for `main()` to map.
    """
    started = time.monotonic()
    emitter = Emitter(ctx)
    code = ExitCode.OK
    try:
        for rec in _write_faults_named(records):
            if type(rec) is Encoded:  # its maker applied these very rules (`encoded`)
                emitter.emit(rec)
                code = worst(code, ExitCode(rec.exit_code))
                continue
            rec = emitter.emit(rec)
            code = worst(code, _exit_code(rec, severity, severity_only))
    except LabctlError as exc:
        emitter.emit(exc.record())
        exc.emitted = True  # type: ignore[attr-defined]
        code = worst(code, exc.exit_code)
        if ctx.summary:
            emitter.emit(_summary(ctx, emitter, started, code))
        emitter.close()
        raise
    if ctx.summary:
        emitter.emit(_summary(ctx, emitter, started, code))
    emitter.close()
    return int(code)


def _write_faults_named(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A full disk, a read-only mount, a permission or a quota that a command did not
    expect ends its stream with a `not_written` error record (exit 3), not a traceback."""
    from labctl.faults import is_write_fault, write_fault_error

    try:
        yield from records
    except OSError as exc:
        if not is_write_fault(exc):
            raise
        raise write_fault_error(exc) from None


def _summary(ctx: Context, emitter: Emitter, started: float, code: ExitCode) -> dict[str, Any]:
    return {
        "kind": "summary",
        "command": ctx.command,
        "counts": dict(emitter.counts),
        "elapsed_s": round(time.monotonic() - started, 3),
        "exit_code": int(code),
    }


def write_raw(ctx: Context, data: bytes) -> None:
    """Write data bytes (not records) to stdout, e.g. a filter's output; the caller has
    checked it holds no secret."""
    try:
        ctx.stdout.flush()
        buffer = getattr(ctx.stdout, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:
            ctx.stdout.write(data.decode("utf-8"))
            ctx.stdout.flush()
    except BrokenPipeError:
        raise PipeClosed() from None


def emit_error_only(ctx: Context, rec: dict[str, Any]) -> None:
    """Emit a lone error record (errors raised before a command's records started)."""
    emitter = Emitter(ctx)
    emitter.emit(rec)
    emitter.close()
