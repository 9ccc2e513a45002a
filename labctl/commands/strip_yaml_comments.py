"""`labctl strip-yaml-comments PATH...`: remove comments, and only comments, from YAML.

Configs are for running, not for knowledge: RL and SFT configs get every comment deleted;
others get their comments moved to a notes file (`--move-to`). Only comment bytes change —
a whole-line comment goes with its line, an inline comment with the blanks before it —
and `yaml.safe_load_all` must give the same data before and after, or the file is left
byte-identical and reported `verified: false` (exit 1).

Default is a dry run (one `file` record per file: the comments it would remove, redacted).
`--apply` replaces the files atomically (mode and owner kept, symlinks written through);
a file the disk will not take (full, read-only, permission) stays as it was and gets an
`error` record (`not_written`, `applied: false`, `original_intact: true`; exit 3).
`--move-to NOTES.md` appends the removed comments (file, line, key path, text) to a
Markdown notes file BEFORE any YAML is rewritten. `--check` exits 1 while any file still
has comments (pre-commit, CI). `-` reads YAML on stdin and writes the stripped YAML on
stdout (the record then goes to stderr).

Directories are searched as ripgrep and fd search them: hidden entries and what
`.gitignore`, `.git/info/exclude` and `.ignore` files exclude are skipped, and one
`skipped` record counts them; `--hidden` and `--no-ignore` include them. Files named on
the command line are always read. libyaml parses when PyYAML has it (PyYAML's pure parser
decides wherever libyaml cannot vouch for a result); many files are processed on all
cores (`--jobs`), the records still come in the order of the walk.
"""

from __future__ import annotations

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
            "verified_with": {"enum": ["events", "safe_load_all", "compose_all", None]},
            "scanner": {"enum": ["libyaml", "pure", None]},
            "scanner_note": STR_OR_NULL,
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
SCHEMAS["skipped"] = record(
    "skipped",
    "Once per run, after the files: entries of the searched directories that were not read "
    "(a directory counts once), by reason: hidden (a name starting with '.'; --hidden) or "
    "ignored (.gitignore, .git/info/exclude, .ignore, the .git directory; --no-ignore).",
    {
        "entries": {"type": "integer", "minimum": 1},
        "counts": {
            "type": "object",
            "properties": {
                "hidden": {"type": "integer", "minimum": 1},
                "ignored": {"type": "integer", "minimum": 1},
            },
            "additionalProperties": {"type": "integer"},
        },
        "examples": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "message": {"type": "string"},
    },
    ["entries", "counts", "examples", "message"],
)
EXAMPLES = [
    "labctl strip-yaml-comments configs/            # dry run: what would go",
    "labctl strip-yaml-comments --apply configs/rl/ configs/sft/",
    "labctl strip-yaml-comments --apply --move-to ops-notes.md configs/eval/",
    "labctl strip-yaml-comments --check configs/    # pre-commit: exit 1 if any comment",
    "labctl strip-yaml-comments --check --hidden .  # the whole repository, .github/ too",
    "labctl strip-yaml-comments - < run.yaml > run.stripped.yaml",
]


def _check_severity(rec: dict[str, Any]) -> ExitCode:
    """--check: a file that still holds comments needs a person."""
    if rec.get("kind") == "file" and rec["comments"] and not rec["applied"]:
        return ExitCode.ATTENTION
    return ExitCode.OK


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
    hidden: Annotated[
        bool,
        typer.Option("--hidden", "-H", help="Search hidden files and directories too."),
    ] = False,
    no_ignore: Annotated[
        bool,
        typer.Option(
            "--no-ignore", "-I", help="Do not skip what .gitignore/.ignore files exclude."
        ),
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", metavar="N", help="Worker processes (default: one per CPU).", min=0
        ),
    ] = None,
) -> int:
    """Remove comments, and only comments, from YAML files (byte-exact, verified, atomic)."""
    from labctl.errors import UsageError

    if "-" in paths:
        if lc.confine is not None:
            lc.confine.check("-")
        if len(paths) > 1 or apply or move_to is not None:
            raise UsageError("`-` (stdin to stdout) takes no other paths, --apply or --move-to")
        return run_stdin(lc)
    from functools import partial

    from labctl.confine import checked
    from labctl.emit import encoded
    from labctl.records import now_rfc3339
    from labctl.yamlstrip.batch import strip_files

    severity = _check_severity if check else None

    records = strip_files(
        list(checked(lc, paths)),
        apply=apply,
        move_to=move_to,
        hidden=hidden or bool(lc.config.get("strip_yaml.hidden")),
        ignore=not (no_ignore or bool(lc.config.get("strip_yaml.no_ignore"))),
        jobs=jobs if jobs is not None else int(lc.config.get("strip_yaml.jobs")),
        redactor=lc.redactor,
        when=now_rfc3339(lc.clock),
        check=lc.confine.check if lc.confine is not None else None,
        # a file record holds strings, ints, booleans and nulls (no float): orjson writes it
        encode=partial(encoded, severity=severity, plain=True),
    )
    return lc.emit(records, severity=severity)
