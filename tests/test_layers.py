"""Imports flow down only (ARCHITECTURE.md): a lower layer never imports a higher one, and
the cores reach clusters through `labctl.cluster`, not through each other. Tests share
helpers through `tests/helpers/`, never by importing another test module or conftest."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.cli import ROOT

PACKAGE = ROOT / "labctl"
PACKAGES = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
# a core that needs no other core (disk, health): every other core and command is off limits
LEAF_CORE = {"poll", "diagnose", "render", "cluster", "commands", "gate", "guard", "cron"}
LEAF_CORE |= {"experiments", "supervise", "merge"}
# layer -> the labctl packages it must not import (at module level or inside a function)
FORBIDDEN = {
    "parse": {"backends", "cluster", "poll", "diagnose", "render", "commands", "progress"},
    "progress": {"backends", "cluster", "poll", "diagnose", "render", "commands"},
    "backends": {"cluster", "poll", "diagnose", "render", "commands", "merge"},
    "cluster": {"poll", "diagnose", "render", "commands"},
    "poll": {"diagnose", "render", "commands"},
    "diagnose": {"poll", "render", "commands"},
    "render": {"poll", "diagnose", "cluster", "commands"},
    "gate": {"poll", "diagnose", "render", "cluster", "commands"},
    "cron": {"poll", "diagnose", "render", "cluster", "commands", "guard", "experiments"},
    # guard counts jobs with the table's buckets (render.buckets), reads poll's store
    # (poll.store) and lists a resource through the job-table reader (cluster.jobtable)
    "guard": {"diagnose", "commands", "gate"},
    "experiments": {"poll", "diagnose", "render", "cluster", "commands", "guard", "gate"},
    "logbook.py": {"poll", "diagnose", "render", "cluster", "commands", "backends"},
    # supervise carries out diagnose's catalog actions, so it may use diagnose's engine
    "supervise": {"poll", "render", "commands", "gate", "guard", "experiments", "cron"},
    # merge-green reaches GitHub through backends/github.py only; no other core, no parser
    "merge": PACKAGES - {"merge", "backends"},
    "disk": LEAF_CORE | {"health"},
    "health": LEAF_CORE | {"disk"},
    "rlhealth": LEAF_CORE - {"cluster"} | {"disk", "health"},
    "toolserver": {
        "parse",
        "progress",
        "backends",
        "cluster",
        "poll",
        "diagnose",
        "render",
        "gate",
        "merge",
        "yamlstrip",
        "guard",
        "cron",
        "experiments",
        "supervise",
        "disk",
        "health",
        "rlhealth",
    },
    "confine.py": {"parse", "progress", "backends", "cluster", "poll", "commands", "toolserver"},
    "faults.py": {"poll", "diagnose", "render", "cluster", "commands", "backends", "parse"},
    "verdicts.py": {"parse", "progress", "backends", "cluster", "poll", "diagnose", "commands"},
}


def imported(path: Path) -> set[str]:
    """The labctl packages a module imports (`labctl.<package>...`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "labctl" and len(parts) > 1:
                out.add(parts[1])
    return out


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_flow_down(layer: str) -> None:
    target = PACKAGE / layer
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    assert files, layer
    wrong = {
        str(f.relative_to(ROOT)): sorted(imported(f) & FORBIDDEN[layer])
        for f in files
        if imported(f) & FORBIDDEN[layer]
    }
    assert wrong == {}


def _test_modules_imported(path: Path) -> set[str]:
    """The test modules and conftest a tests/ file imports (`test_x`, `tests.test_x`,
    `conftest`, `tests.conftest`, at module level or inside a function)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tests":
                parts = parts[1:]
            if parts and (parts[0].startswith("test_") or parts[0] == "conftest"):
                out.add(name)
    return out


def test_tests_share_helpers_not_test_modules() -> None:
    tests = ROOT / "tests"
    files = [f for f in sorted(tests.rglob("*.py")) if "fixtures" not in f.parts]
    assert len(files) > 50
    wrong = {
        str(f.relative_to(ROOT)): sorted(_test_modules_imported(f))
        for f in files
        if _test_modules_imported(f)
    }
    assert wrong == {}, "move what they share into tests/helpers/"
