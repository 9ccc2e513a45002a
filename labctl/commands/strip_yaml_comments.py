"""`labctl strip-yaml-comments PATH...`: remove comments, and only comments, from YAML.

Configs are for running, not for knowledge: RL and SFT configs get every comment deleted;
others get their comments moved to a notes file (`--move-to`). Only comment bytes change —
a whole-line comment goes with its line, an inline comment with the blanks before it —
and `yaml.safe_load_all` must give the same data before and after, or the file is left
byte-identical and reported `verified: false` (exit 1).

Default is a dry run (one `file` record per file: the comments it would remove, redacted).
`--apply` replaces the files atomically (mode and owner kept, symlinks written through).
`--move-to NOTES.md` appends the removed comments (file, line, key path, text) to a
Markdown notes file BEFORE any YAML is rewritten. `--check` exits 1 while any file still
has comments (pre-commit, CI). `-` reads YAML on stdin and writes the stripped YAML on
stdout (the record then goes to stderr).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.errors import ExitCode
from labctl.schemas import BYTES, COMMON, INT_OR_NULL, STR_OR_NULL, record

SCHEMAS = {
    **COMMON,
    "file": record(
        "file",
        "One YAML file: the comments found (removed with --apply), sizes before and after, "
        "and whether removing them was verified not to change the data.",
        {
            "path": {"type": "string"},
            "comments": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "line": {"type": "integer", "minimum": 1},
                        "column": {"type": "integer", "minimum": 1},
                        "text": {"type": "string"},
                        "key_path": STR_OR_NULL,
                        "inline": {"type": "boolean"},
                    },
                    "required": ["line", "column", "text", "key_path", "inline"],
                },
            },
            "comments_removed": {"type": "integer", "minimum": 0},
            "bytes_before": BYTES,
            "bytes_after": BYTES,
            "verified": {"type": "boolean"},
            "verified_with": {"enum": ["safe_load_all", "compose_all", None]},
            "applied": {"type": "boolean"},
            "changed": {"type": "boolean"},
            "reason": STR_OR_NULL,
            "message": STR_OR_NULL,
            "line": INT_OR_NULL,
            "notes": STR_OR_NULL,
        },
        [
            "path",
            "comments",
            "comments_removed",
            "bytes_before",
            "bytes_after",
            "verified",
            "applied",
            "changed",
        ],
    ),
}
EXAMPLES = [
    "labctl strip-yaml-comments configs/            # dry run: what would go",
    "labctl strip-yaml-comments --apply configs/rl/ configs/sft/",
    "labctl strip-yaml-comments --apply --move-to ops-notes.md configs/eval/",
    "labctl strip-yaml-comments --check configs/    # pre-commit: exit 1 if any comment",
    "labctl strip-yaml-comments - < run.yaml > run.stripped.yaml",
]


def _check_severity(rec: dict[str, Any]) -> ExitCode:
    """--check: a file that still holds comments needs a person."""
    if rec.get("kind") == "file" and rec["comments"] and not rec["applied"]:
        return ExitCode.ATTENTION
    return ExitCode.OK


def run(
    lc: Context, paths: list[str], *, apply: bool, move_to: Path | None
) -> Iterator[dict[str, Any]]:
    """One record per file; with `apply`, notes first, then atomic replacements."""
    from labctl.records import now_rfc3339
    from labctl.yamlstrip import (
        ChangedOnDiskError,
        analyze_path,
        append_notes,
        file_record,
        iter_yaml_files,
        notes_block,
    )
    from labctl.yamlstrip import apply as apply_result

    files = iter_yaml_files(paths)
    if not apply:
        for path in files:
            yield file_record(analyze_path(path), str(path))
        return
    results = [(path, analyze_path(path)) for path in files]
    notes_path = None
    if move_to is not None:
        when = now_rfc3339(lc.clock)
        blocks = [notes_block(res, str(path), when=when) for path, res in results]
        notes_path = append_notes(move_to, blocks)
    for path, res in results:
        try:
            applied = apply_result(path, res)
        except ChangedOnDiskError as exc:
            yield exc.record()
            continue
        except OSError as exc:
            yield {
                "kind": "error",
                "reason": "io_error",
                "path": str(path),
                "message": f"cannot write {path}: {exc.strerror or exc}",
            }
            continue
        rec = file_record(res, str(path), applied=applied)
        if notes_path is not None and rec.get("kind") == "file" and res.verified:
            rec["notes"] = str(notes_path)
        yield rec


def run_stdin(lc: Context) -> int:
    """`-`: stripped YAML to stdout; the record to stderr. Never prints a secret."""
    from dataclasses import replace

    from labctl.emit import write_raw
    from labctl.yamlstrip import analyze, file_record

    result = analyze(lc.stdin.read(), source="<stdin>")
    rec = file_record(result, "-")
    out = result.new_data if result.verified else result.data
    if not result.is_error:
        text = out.decode("utf-8")
        if lc.redactor.text(text) != text:
            rec = {
                "kind": "error",
                "reason": "secret_in_output",
                "path": "-",
                "message": "stdin holds what looks like a secret; refusing to print it "
                "(strip the file in place with --apply instead)",
            }
        else:
            write_raw(lc, out)
    diag = replace(lc, stdout=lc.stderr, fmt="jsonl", stdout_isatty=False)
    code = diag.emit([rec]) if not lc.quiet or rec["kind"] == "error" else diag.emit([])
    if rec.get("kind") == "file" and not rec["verified"]:
        return int(ExitCode.ATTENTION)
    return code


def cli(
    lc: Context,
    paths: Annotated[
        list[str],
        typer.Argument(help="YAML files, directories (searched for *.yaml, *.yml), or -."),
    ],
    apply: Annotated[
        bool, typer.Option("--apply", help="Rewrite the files (default: dry run).")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 while any file still has comments.")
    ] = False,
    move_to: Annotated[
        Path | None,
        typer.Option(
            "--move-to",
            metavar="NOTES.md",
            help="Append removed comments to this Markdown file before rewriting.",
        ),
    ] = None,
) -> int:
    """Remove comments, and only comments, from YAML files (byte-exact, verified, atomic)."""
    from labctl.errors import UsageError

    if "-" in paths:
        if len(paths) > 1 or apply or move_to is not None:
            raise UsageError("`-` (stdin to stdout) takes no other paths, --apply or --move-to")
        return run_stdin(lc)
    return lc.emit(
        run(lc, paths, apply=apply, move_to=move_to),
        severity=_check_severity if check else None,
    )
