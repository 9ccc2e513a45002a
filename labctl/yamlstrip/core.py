"""`analyze`: bytes in, a verified `StripResult` out. Pure: no I/O, never raises for input."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from yaml.nodes import Node

from labctl.yamlstrip import model
from labctl.yamlstrip.keypath import KeyIndex
from labctl.yamlstrip.model import Comment, StripResult
from labctl.yamlstrip.scan import Scanned, construct, scan
from labctl.yamlstrip.strip import is_whole_line, strip_text
from labctl.yamlstrip.verify import expected_text, first_difference, first_node_difference

_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def _refuse(
    source: str,
    data: bytes,
    reason: str,
    message: str,
    *,
    comments: tuple[Comment, ...] = (),
    line: int | None = None,
    column: int | None = None,
) -> StripResult:
    return StripResult(
        source=source,
        data=data,
        new_data=data,
        comments=comments,
        verified=False,
        reason=reason,
        message=message,
        problem_line=line,
        problem_column=column,
    )


def _decode(source: str, data: bytes) -> str | StripResult:
    """Strict UTF-8 (a UTF-8 BOM stays in the text, as U+FEFF); NUL bytes mean binary."""
    if data.startswith(_UTF16_32_BOMS):
        return _refuse(
            source,
            data,
            model.NOT_UTF8,
            "starts with a UTF-16/UTF-32 BOM; only UTF-8 is supported",
            line=1,
            column=1,
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
            line=line,
            column=column,
        )


def _summary(exc: BaseException) -> str:
    """A one-line message from a PyYAML error, without the `<unicode string>` noise."""
    text = str(exc).replace('in "<unicode string>", ', "")
    summary = " ".join(text.split())
    if not isinstance(exc, yaml.YAMLError):
        summary = f"{type(exc).__name__}: {summary}"
    return summary


def _tab_before_comment(text: str, index: int) -> bool:
    if index >= len(text) or text[index] != "\t":
        return False
    rest = text[index:]
    stripped = rest.lstrip(" \t")
    return stripped.startswith("#")


def _yaml_error(source: str, data: bytes, text: str, exc: Exception) -> StripResult:
    if isinstance(exc, RecursionError):
        return _refuse(source, data, model.INVALID_YAML, "YAML nested too deeply to load")
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        return _refuse(
            source, data, model.INVALID_YAML, f"not a YAML text: {_summary(exc)}", line=line
        )
    if mark is not None and _tab_before_comment(text, mark.index):
        return _refuse(
            source,
            data,
            model.TAB_BEFORE_COMMENT,
            f"a tab before '#' at line {line}, column {column}: PyYAML (the reference "
            "scanner) rejects it, so the file cannot be verified; replace the tab with spaces",
            line=line,
            column=column,
        )
    summary = _summary(exc)
    return _refuse(
        source, data, model.INVALID_YAML, f"invalid YAML: {summary}", line=line, column=column
    )


def _load(roots: list[Node]) -> tuple[list[Any] | None, str | None]:
    """Construct like safe_load_all; (None, why) when safe_load cannot (unknown tag, ...)."""
    try:
        return construct(roots), None
    except Exception as exc:  # ConstructorError, and ValueError from e.g. `!!int x`
        return None, _summary(exc)


def _comments(text: str, scanned: Scanned) -> tuple[Comment, ...]:
    has_bom = text.startswith("\ufeff")
    index: KeyIndex | None = None
    out: list[Comment] = []
    for span in scanned.spans:
        if index is None:
            index = KeyIndex(scanned.roots, scanned.boundaries)
        column = span.column(has_bom)
        inline = not is_whole_line(text, span)
        out.append(
            Comment(
                start=span.start,
                end=span.end,
                line=span.line + 1,
                column=column + 1,
                text=text[span.start : span.end],
                inline=inline,
                key_path=index.path_for(span, column, inline),
            )
        )
    return tuple(out)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """PyYAML allocates millions of small objects that are all alive until the end;
    generational GC passes over them cost ~20% of the run and free nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def analyze(data: bytes, *, source: str = "-") -> StripResult:
    """Find every comment in `data`, strip them byte-exactly and verify the result.

    Never raises for bad input: the result's `reason` says what was wrong. When
    `verified` is true, `new_data` is `data` without its comments and safe to write; when
    false, `new_data` is `data` itself.
    """
    decoded = _decode(source, data)
    if isinstance(decoded, StripResult):
        return decoded
    with _gc_paused():
        return _analyze_text(source, data, decoded)


def _analyze_text(source: str, data: bytes, text: str) -> StripResult:
    try:
        before = scan(text)
    except Exception as exc:  # YAMLError, RecursionError; anything else is reported too
        return _yaml_error(source, data, text, exc)
    comments = _comments(text, before)
    if not comments:
        return StripResult(source=source, data=data, new_data=data, verified=True)
    new_text = strip_text(text, before.spans)
    problem = _verify(text, before, new_text)
    if isinstance(problem, tuple):
        reason, message, line = problem
        return _refuse(source, data, reason, message, comments=comments, line=line)
    return StripResult(
        source=source,
        data=data,
        new_data=new_text.encode("utf-8"),
        comments=comments,
        verified=True,
        verified_with=problem,
    )


def _verify(text: str, before: Scanned, new_text: str) -> tuple[str, str, int | None] | str:
    """What verified `new_text` (`model.WITH_SAFE_LOAD` or `model.WITH_NODES`), else
    (reason, message, line).

    Consumes `before`: its nodes are dropped once the data is built, so the two texts'
    node trees are not held at the same time.
    """
    if new_text != expected_text(text, before.spans):
        return model.BYTES_CHANGED, "internal check failed: a non-comment byte would change", None
    doc_lines = [root.start_mark.line + 1 for root in before.roots]
    data_before, _ = _load(before.roots)
    roots_before = before.roots if data_before is None else []
    before.roots = []
    try:
        after = scan(new_text)
    except Exception as exc:
        mark = getattr(exc, "problem_mark", None)
        summary = _summary(exc)
        return (
            model.INVALID_AFTER_STRIP,
            f"removing the comments would make the YAML invalid ({summary}); nothing was changed",
            None if mark is None else mark.line + 1,
        )
    if after.spans:
        return model.COMMENTS_REMAIN, "internal check failed: comments remain after stripping", None
    if len(after.roots) != len(doc_lines):
        return (
            model.DATA_CHANGED,
            f"removing the comments would turn {len(doc_lines)} documents"
            f" into {len(after.roots)}; nothing was changed",
            None,
        )
    if data_before is not None:
        data_after, why_after = _load(after.roots)
        after.roots = []
    for number, line in enumerate(doc_lines, start=1):
        if data_before is None:
            diff = first_node_difference(roots_before[number - 1], after.roots[number - 1])
        elif data_after is None:
            diff = f"it no longer loads with safe_load: {why_after}"
        else:
            diff = first_difference(data_before[number - 1], data_after[number - 1])
        if diff is not None:
            where = f"document {number}, " if len(doc_lines) > 1 else ""
            return (
                model.DATA_CHANGED,
                f"removing the comments would change the data ({where}{diff}); nothing was changed",
                line,
            )
    return model.WITH_SAFE_LOAD if data_before is not None else model.WITH_NODES
