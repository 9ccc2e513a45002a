"""Rooms stay small (issue 18): no labctl module over MAX_MODULE_LINES lines, no function
whose body is over MAX_BODY_LINES lines.

A function's body runs from its first statement (its docstring included) to its last
line, so a typer `cli(...)` signature with a dozen annotated options does not count, and
a nested function counts towards the function it is in. The limits leave a little room
over the ~300 / ~50 the house aims for; when one is hit, split the module or the function
by what its parts are for. A deliberate exception goes in EXCEPTIONS, with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.cli import ROOT

PACKAGE = ROOT / "labctl"
MAX_MODULE_LINES = 320
MAX_BODY_LINES = 60
# "labctl/<path>.py" or "labctl/<path>.py:<function>" -> why it may be larger
EXCEPTIONS: dict[str, str] = {}


def _modules() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 100
    return files


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement of the body to the function's last line."""
    assert node.end_lineno is not None
    return node.end_lineno - node.body[0].lineno + 1


def test_no_module_is_over_the_limit() -> None:
    big = {
        _name(f): n
        for f in _modules()
        if (n := len(f.read_text().splitlines())) > MAX_MODULE_LINES and _name(f) not in EXCEPTIONS
    }
    assert big == {}, f"split these modules (limit {MAX_MODULE_LINES} lines)"


def test_no_function_body_is_over_the_limit() -> None:
    long = {}
    for f in _modules():
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                where = f"{_name(f)}:{node.name}"
                if body_lines(node) > MAX_BODY_LINES and where not in EXCEPTIONS:
                    long[f"{where} (line {node.lineno})"] = body_lines(node)
    assert long == {}, f"split these functions (limit {MAX_BODY_LINES} body lines)"


def test_every_exception_is_still_needed() -> None:
    """An exception that no longer applies is removed, so the limits tighten again."""
    sizes: dict[str, int] = {}
    for f in _modules():
        sizes[_name(f)] = len(f.read_text().splitlines())
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                where = f"{_name(f)}:{node.name}"
                sizes[where] = max(sizes.get(where, 0), body_lines(node))
    stale = [
        key
        for key in EXCEPTIONS
        if sizes.get(key, 0) <= (MAX_BODY_LINES if ":" in key else MAX_MODULE_LINES)
    ]
    assert stale == []
