"""`analyze`: bytes in, a verified `StripResult` out. Pure: no I/O, never raises for input.

Two passes over the parser's events, each keeping only what the current position needs:

1. the input's events: the comment spans (`scan.Walker`) and their key paths
   (`keypath.KeyPaths`); the comments are cut out (`strip.strip_text`) and the result must
   match an independent line-by-line statement of the contract (`verify.contract_holds`);
2. the input's and the result's events side by side: they must be the same (every
   scalar, tag, anchor, style and document marker), and the result must hold no comment.

Identical event streams mean identical data for any loader (`verified_with: events`).
libyaml does the parsing when PyYAML has it; whenever libyaml cannot vouch for a result —
it rejects the text, meets a tab it reads as a blank where PyYAML's pure parser may not,
or the check in pass 2 fails — the pure parser, the reference, runs the whole analysis
again and its verdict stands (`scanner: pure`, `scanner_note` says why). Where the pure
parser sees the event streams differ, it compares the data `safe_load_all` builds (or
the node trees, for tags `safe_load` cannot build) and refuses the file if they differ.
"""

from __future__ import annotations

import gc
from dataclasses import replace

import yaml

from labctl.yamlstrip import model
from labctl.yamlstrip.compare import compare_data, invalid_after_strip
from labctl.yamlstrip.engine import LIBYAML, PURE_ENGINE, Engine, engine_named, summary
from labctl.yamlstrip.events import EventList, Events, Mismatch, kept_events
from labctl.yamlstrip.keypath import KeyPaths
from labctl.yamlstrip.model import Comment, StripResult
from labctl.yamlstrip.quick import quick_verify
from labctl.yamlstrip.scan import Walker
from labctl.yamlstrip.spans import Span, TooDeep, Unsure
from labctl.yamlstrip.strip import strip_text
from labctl.yamlstrip.verify import contract_holds

_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class _Defer(Exception):
    """libyaml cannot vouch for this result: the pure parser decides."""


def _refuse(
    source: str,
    data: bytes,
    reason: str,
    message: str,
    *,
    comments: tuple[Comment, ...] = (),
    problem_line: int | None = None,
    problem_column: int | None = None,
    scanner: str | None = None,
) -> StripResult:
    return StripResult(
        source=source,
        data=data,
        new_data=data,
        comments=comments,
        reason=reason,
        message=message,
        problem_line=problem_line,
        problem_column=problem_column,
        scanner=scanner,
    )


def _decode(source: str, data: bytes) -> str | StripResult:
    """Strict UTF-8 (a UTF-8 BOM stays in the text, as U+FEFF); NUL bytes mean binary."""
    if data.startswith(_UTF16_32_BOMS):
        return _refuse(
            source,
            data,
            model.NOT_UTF8,
            "starts with a UTF-16/UTF-32 BOM; only UTF-8 is supported",
            problem_line=1,
            problem_column=1,
        )
    if b"\x00" in data:
        return _refuse(source, data, model.BINARY, "binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return _refuse(
            source,
            data,
            model.NOT_UTF8,
            f"not valid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line})",
            problem_line=line,
            problem_column=column,
        )


def _tab_before_comment(text: str, index: int) -> bool:
    return index < len(text) and text[index] == "\t" and text[index:].lstrip(" \t")[:1] == "#"


def _yaml_error(source: str, data: bytes, text: str, exc: Exception) -> StripResult:
    if isinstance(exc, TooDeep | RecursionError):
        return _refuse(source, data, model.INVALID_YAML, "YAML nested too deeply to load")
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        return _refuse(
            source, data, model.INVALID_YAML, f"not a YAML text: {summary(exc)}", problem_line=line
        )
    if mark is not None and _tab_before_comment(text, mark.index):
        message = (
            f"a tab before '#' at line {line}, column {column}: PyYAML (the reference "
            "scanner) rejects it, so the file cannot be verified; replace the tab with spaces"
        )
        return _refuse(
            source,
            data,
            model.TAB_BEFORE_COMMENT,
            message,
            problem_line=line,
            problem_column=column,
        )
    return _refuse(
        source,
        data,
        model.INVALID_YAML,
        f"invalid YAML: {summary(exc)}",
        problem_line=line,
        problem_column=column,
    )


def _comments(text: str, spans: list[Span], paths: dict[int, str | None]) -> tuple[Comment, ...]:
    has_bom = text.startswith("\ufeff")
    new, get = tuple.__new__, paths.get  # tuple.__new__: Comment's own __new__ is a Python call
    return tuple(
        new(
            Comment,
            (
                span.start,
                span.end,
                span.line + 1,
                span.column(has_bom) + 1,
                text[span.start : span.end],
                span.inline,
                get(number),
            ),
        )
        for number, span in enumerate(spans)
    )


def analyze(data: bytes, *, source: str = "-", scanner: str | None = None) -> StripResult:
    """Find every comment in `data`, strip them byte-exactly and verify the result.

    Never raises for bad input: the result's `reason` says what was wrong. When
    `verified` is true, `new_data` is `data` without its comments and safe to write; when
    false, `new_data` is `data` itself. `scanner` forces `libyaml` or `pure`; by default
    libyaml runs when PyYAML has it, with the pure parser deciding what libyaml cannot.
    """
    decoded = _decode(source, data)
    if isinstance(decoded, StripResult):
        return decoded
    engine = engine_named(scanner)
    # the parsers allocate many small objects; generational GC passes over them cost time
    # and free nothing (a plain try/finally: a context manager per file costs more)
    was_enabled = gc.isenabled()
    gc.disable()
    # the decoded text goes to the walk in a box: once libyaml has walked it, nothing needs it
    # (libyaml reads the bytes), so it is freed before the second parse; the pure parser, when
    # it must decide, decodes again
    box, decoded = [decoded], ""
    try:
        return _analyze(engine, source, data, box)
    except _Defer as why:
        if scanner is not None:
            raise RuntimeError(f"libyaml cannot decide: {why}") from None
        result = _analyze(PURE_ENGINE, source, data, [data.decode("utf-8")])
        return replace(result, scanner_note=str(why))
    finally:
        if was_enabled:
            gc.enable()


def _analyze(engine: Engine, source: str, data: bytes, box: list[str]) -> StripResult:
    """The analysis by one engine; `box` holds the text (taken out: see `analyze`)."""
    text = box.pop()
    fast = engine.name == LIBYAML
    src = engine.source(text, data)
    # without a `#` there is no comment: the walk only reads the text (and refuses it
    # where the pure parser must), with no key paths to place and no events to keep
    has_hash = "#" in text
    paths = KeyPaths(has_bom=text.startswith("\ufeff")) if has_hash else None
    events = kept_events(len(text)) if has_hash else None
    spans = _walk(engine, source, data, text, src, paths, events)
    if isinstance(spans, StripResult):
        return spans
    if not spans or paths is None or events is None:
        return StripResult(
            source=source, data=data, new_data=data, verified=True, scanner=engine.name
        )
    new_text = strip_text(text, spans)
    faithful = contract_holds(text, spans, new_text)
    if not faithful and fast:
        raise _Defer("the cut did not match the contract")
    comments = _comments(text, spans, paths.paths)
    del spans, paths  # the comments hold what is still needed
    if fast:
        del text  # libyaml parses bytes: the second pass needs the stripped text alone
    verdict: tuple[str, str, int | None] | str = (
        model.BYTES_CHANGED,
        "internal check failed: a non-comment byte would change",
        None,
    )
    new_data = new_text.encode("utf-8")
    if faithful:
        events.freeze()
        verdict = _verify(engine, src, events, new_text, new_data)
    return _result(engine, source, data, new_data, comments, verdict)


def _walk(
    engine: Engine,
    source: str,
    data: bytes,
    text: str,
    src: str | bytes,
    paths: KeyPaths | None,
    events: Events | EventList | None,
) -> list[Span] | StripResult:
    """Pass 1: the comment spans of `text` (their key paths go to `paths`, the events to
    `events`, when given), or the refusal of a text the pure parser rejects."""
    fast = engine.name == LIBYAML
    try:
        with engine.parser(src) as get_event:
            return Walker(text, engine.shift(text), paths, careful=fast).run(get_event, events)
    except Unsure as why:
        raise _Defer(f"libyaml may read this differently: {why}") from None
    except Exception as exc:  # YAMLError, TooDeep; anything else is reported too
        if fast:
            raise _Defer(f"libyaml rejected the text: {summary(exc)}") from None
        return _yaml_error(source, data, text, exc)


def _result(
    engine: Engine,
    source: str,
    data: bytes,
    new_data: bytes,
    comments: tuple[Comment, ...],
    verdict: tuple[str, str, int | None] | str,
) -> StripResult:
    """The stripped text, verified (`verdict`: what verified it), or the refusal."""
    if isinstance(verdict, tuple):
        reason, message, line = verdict
        return _refuse(
            source,
            data,
            reason,
            message,
            comments=comments,
            problem_line=line,
            scanner=engine.name,
        )
    return StripResult(
        source=source,
        data=data,
        new_data=new_data,
        comments=comments,
        verified=True,
        verified_with=verdict,
        scanner=engine.name,
    )


def _verify(
    engine: Engine, src: str | bytes, events: Events | EventList, new_text: str, new_data: bytes
) -> tuple[str, str, int | None] | str:
    """What verified `new_text` (a `model.WITH_*`), else (reason, message, line)."""
    fast = engine.name == LIBYAML
    new_src = engine.source(new_text, new_data)
    shift = engine.shift(new_text)
    after: Walker | None = None
    try:
        with engine.parser(new_src) as get_event:
            quick = quick_verify(new_text, shift, get_event, events)
        if not quick:  # a `#` the quick check cannot place: the full walk decides
            events.rewind()
            after = Walker(new_text, shift, careful=fast)
            with engine.parser(new_src) as get_event:
                after.run(get_event, events)
    except Mismatch:
        if fast:
            raise _Defer("the event streams differ after stripping") from None
        return compare_data(engine, src, new_src)
    except Unsure as why:
        raise _Defer(f"libyaml may read the stripped text differently: {why}") from None
    except Exception as exc:
        if fast:
            raise _Defer(f"libyaml rejected the stripped text: {summary(exc)}") from None
        return invalid_after_strip(exc)
    if after is not None and after.spans:
        if fast:
            raise _Defer("comments remain after stripping")
        return model.COMMENTS_REMAIN, "internal check failed: comments remain after stripping", None
    return model.WITH_EVENTS
