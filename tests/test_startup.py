"""Start-up is a feature: the CLI entry must not import backend libraries."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "github",
    "supabase",
    "postgrest",
    "wandb",
    "huggingface_hub",
    "plumbum",
    "psycopg",
    "ruamel",
    "rich",
    "pydantic",
    "yaml",
    "re2",
    "jsonschema",
)


def _modules_after(code: str) -> set[str]:
    out = (
        subprocess.run(
            [
                sys.executable,
                "-c",
                code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .splitlines()[-1]
    )
    return {m.split(".")[0] for m in json.loads(out)}


def test_import_cli_leaves_backends_out() -> None:
    loaded = _modules_after("import labctl.cli")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_command_help_does_not_import_backends_or_pydantic() -> None:
    code = (
        "import contextlib, io\nfrom labctl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['table', '--help']); main(['config', '--help']); main(['--help'])\n"
        "    main(['prune-disk', '--help']); main(['health', '--help'])"
    )
    loaded = _modules_after(code)
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
