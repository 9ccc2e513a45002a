"""The CLI contract: formats, exit codes, error records, broken pipes, no tracebacks."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from helpers.cli import LABCTL, run_labctl


def test_version_and_help_list_every_registered_command() -> None:
    from labctl import __version__
    from labctl.registry import COMMANDS

    assert run_labctl("--version").stdout.strip() == f"labctl {__version__}"
    res = run_labctl("--help")
    assert res.code == 0
    for spec in COMMANDS:
        assert spec.name in res.stdout
    assert "Exit codes:" in res.stdout


def test_malformed_line_is_an_error_record_and_the_rest_passes_through() -> None:
    res = run_labctl("table", "--format", "jsonl", input='not json\n{"kind":"x","a":1}\n')
    assert res.code == 1
    first, second = res.records
    assert first["kind"] == "error" and first["reason"] == "malformed_input"
    assert first["line"] == 1
    assert second == {"kind": "x", "a": 1}
    assert "Traceback" not in res.stderr


def test_non_object_and_non_utf8_lines_name_their_line_numbers() -> None:
    res = run_labctl("table", "-f", "jsonl", input=b'[1,2]\n\xff\xfe\n{"kind":"ok"}\n')
    assert [r.get("line") for r in res.records] == [1, 2, None]
    assert res.records[-1] == {"kind": "ok"}
    assert res.code == 1


def test_clean_input_exits_zero_and_json_format_is_one_array() -> None:
    lines = "".join(json.dumps({"kind": "x", "i": i}) + "\n" for i in range(3))
    res = run_labctl("table", "--format", "json", input=lines)
    assert res.code == 0
    assert json.loads(res.stdout) == [{"kind": "x", "i": i} for i in range(3)]


def test_unknown_command_and_bad_option_are_usage_errors() -> None:
    res = run_labctl("frobnicate")
    assert res.code == 2
    assert res.records[0]["reason"] == "usage"
    res = run_labctl("table", "--format", "yaml")
    assert res.code == 2
    assert "yaml" in res.records[0]["message"]
    assert "Traceback" not in res.stderr + res.stdout


def test_table_is_plain_box_drawing_when_piped() -> None:
    res = run_labctl("table", input='{"kind":"job","name":"a\\u001b[31mred"}\n')
    assert res.code == 0
    assert "┌" in res.stdout and "┐" in res.stdout and "│" in res.stdout
    assert "\x1b" not in res.stdout  # no colour codes, and control characters escaped
    assert "\\x1b[31mred" in res.stdout
    assert "|---" not in res.stdout  # never Markdown


def test_terminal_gets_a_table_by_default() -> None:
    """Under a pseudo-terminal the auto format is a table; piped it is JSON Lines."""
    out = _run_in_pty(["schema", "table"])
    assert "┌" in out
    piped = run_labctl("schema", "table")
    assert piped.records[0]["kind"] == "schema"


def _run_in_pty(args: list[str]) -> str:
    env = dict(os.environ, COLUMNS="200")
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.execvpe(sys.executable, [*LABCTL, *args], env)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode(errors="replace")


def test_broken_pipe_exits_quietly() -> None:
    big = "".join(json.dumps({"kind": "x", "i": i, "pad": "y" * 200}) + "\n" for i in range(20000))
    proc = subprocess.run(
        f"{sys.executable} -m labctl table -f jsonl | head -n 1",
        shell=True,
        input=big.encode(),
        capture_output=True,
        check=False,
        executable="/bin/bash",
    )
    assert proc.stdout.decode().count("\n") == 1
    assert "Traceback" not in proc.stderr.decode()
    assert "BrokenPipe" not in proc.stderr.decode()


def test_summary_record_counts_and_carries_the_exit_code() -> None:
    res = run_labctl("table", "-f", "jsonl", "--summary", input='{"kind":"a"}\nbad\n')
    summary = res.records[-1]
    assert summary["kind"] == "summary"
    assert summary["counts"] == {"a": 1, "error": 1}
    assert summary["exit_code"] == res.code == 1
    assert summary["elapsed_s"] >= 0


def test_severity_of_passed_through_records_sets_the_exit_code() -> None:
    """The last stage of a pipeline exits the way the whole sweep should."""
    stalled = '{"kind":"job","verdict":"running-stalled"}\n'
    ok = '{"kind":"job","verdict":"running-progressing"}\n'
    unreachable = '{"kind":"error","reason":"unreachable","message":"c2 down"}\n'
    assert run_labctl("table", "-f", "jsonl", input=ok).code == 0
    assert run_labctl("table", "-f", "jsonl", input=ok + stalled).code == 1
    assert run_labctl("table", "-f", "jsonl", input=stalled + unreachable).code == 3
    held = '{"kind":"job","verdict":"pending","cause":"held"}\n'
    never = '{"kind":"job","verdict":"pending","cause":"dependency_never_satisfied"}\n'
    assert run_labctl("table", "-f", "jsonl", input=held).code == 0
    assert run_labctl("table", "-f", "jsonl", input=held + never).code == 1


def test_table_refuses_a_terminal_stdin_with_a_clear_error() -> None:
    out = _run_in_pty(["table", "-f", "jsonl"])
    assert '"reason":"usage"' in out
    assert "reads records on stdin" in out


def test_input_file_option(tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"kind":"a","v":1}\n')
    assert run_labctl("table", "-f", "jsonl", "--input", str(path)).records == [
        {"kind": "a", "v": 1}
    ]
    missing = run_labctl("table", "-f", "jsonl", "--input", str(tmp_path / "nope"))
    assert missing.code == 2
    assert "cannot read --input" in missing.records[0]["message"]


def test_nan_metrics_stay_valid_json() -> None:
    from labctl.emit import dumps

    line = dumps({"kind": "job", "loss": float("nan"), "g": float("inf")})
    assert json.loads(line) == {"kind": "job", "loss": "NaN", "g": "Infinity"}
