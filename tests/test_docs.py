"""Man pages, completions and the README reference are generated from the CLI and must
not drift from it; every command is documented and completes in each shell."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers.cli import ROOT

from labctl.registry import COMMANDS


def test_generated_docs_match_the_code() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"run scripts/gen_docs.py:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda s: s.name)
def test_every_command_is_documented(spec) -> None:
    import importlib

    module = importlib.import_module(spec.module)
    assert getattr(module, "EXAMPLES", None), f"{spec.name}: add EXAMPLES"
    page = (ROOT / "man" / f"labctl-{spec.name}.1").read_text()
    assert ".SH EXIT STATUS" in page and ".SH RECORDS" in page
    assert f"labctl {spec.name}" in (ROOT / "README.md").read_text()


def _bash_complete(line: str) -> list[str]:
    words = line.split(" ")
    script = (
        f"source {ROOT / 'completions' / 'labctl.bash'}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        "_labctl; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_bash_completion_completes_commands_options_and_values() -> None:
    assert "table" in _bash_complete("labctl ta")
    assert set(_bash_complete("labctl --format ")) == {"auto", "jsonl", "json", "table"}
    assert "--input" in _bash_complete("labctl table --in")
    assert {"init", "show", "path"} <= set(_bash_complete("labctl config "))
    assert "--force" in _bash_complete("labctl config init --f")
    # the value after --format is not mistaken for the command
    assert "--input" in _bash_complete("labctl -f jsonl table --")


def test_fish_completion() -> None:
    if shutil.which("fish") is None:
        pytest.fail("fish is not installed (scripts/test installs it)")
    src = ROOT / "completions" / "labctl.fish"
    out = subprocess.run(
        ["fish", "-c", f"source {src}; complete -C 'labctl ta'; complete -C 'labctl table --'"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "table" in out and "--input" in out


def test_zsh_completion_parses() -> None:
    if shutil.which("zsh") is None:
        pytest.fail("zsh is not installed (scripts/test installs it)")
    subprocess.run(["zsh", "-n", str(ROOT / "completions" / "_labctl")], check=True)


def test_the_readme_says_what_to_do_about_each_fault_of_labctls_own_files() -> None:
    from labctl.errors import exit_code_for_reason

    readme = (ROOT / "README.md").read_text()
    table = readme.split("## When labctl's own files are broken", 1)[1].split("\n## ", 1)[0]
    faults = ("state_reset", "state_unwritable", "not_written", "state_unreadable", "locked")
    for reason in faults:
        assert f"| `{reason}` |" in table, reason
        assert exit_code_for_reason(reason) == 3, reason
    assert "| `internal_error` | a bug" in table
