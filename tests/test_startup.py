"""Start-up is a feature: the CLI entry must not import backend libraries."""

from __future__ import annotations

from helpers.startup import HEAVY, modules_after


def test_import_cli_leaves_backends_out() -> None:
    loaded = modules_after("import labctl.cli")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_command_help_does_not_import_backends_or_pydantic() -> None:
    code = (
        "import contextlib, io\nfrom labctl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['table', '--help']); main(['config', '--help']); main(['--help'])\n"
        "    main(['prune-disk', '--help']); main(['health', '--help'])\n"
        "    main(['mcp', '--help']); main(['mcp', '--print-config'])"
    )
    loaded = modules_after(code)
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
