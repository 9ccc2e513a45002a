"""The one table of commands: name, module, one-line help.

`labctl --help`, the man pages, the shell completions, `labctl schema` and the tests all
read this table. A command's module is imported only when that command runs (or when its
help or schema is asked for), so start-up never pays for a backend library.

Each command module provides:
- `cli(ctx: typer.Context, ...)`: the typer function (options only; hands records to
  `Context.emit`), or `app`: a typer.Typer for a command group such as `config`;
- `SCHEMAS`: {kind: JSON Schema} for every record kind it emits;
- optionally `EXAMPLES`: shell one-liners for the man page.

`labctl mcp` serves every command here as a tool, generated from this table. What makes a
command change anything (files, rows, PRs, the crontab) is declared once, in `writes`:
the tool server exposes those options and commands only where the config allows writes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Writes:
    """What makes a command change something (its own state store aside).

    options: flags that make it write (`--apply`); subcommands that write (`init`);
    always: it writes whenever it runs; destructive: False when it only ever adds (a new
    dated file, never an overwrite)."""

    options: tuple[str, ...] = ()
    subcommands: tuple[str, ...] = ()
    always: bool = False
    destructive: bool = True


READ_ONLY = Writes()


@dataclass(frozen=True)
class CommandSpec:
    name: str
    module: str
    help: str
    reads_records: bool = False  # reads records on stdin and passes through the rest
    writes: Writes = READ_ONLY
    tool: bool = True  # served by `labctl mcp` (every command but the server itself)


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "poll",
        "labctl.commands.poll",
        "Every job of every configured cluster: state, verdict, what changed (JSON Lines).",
    ),
    CommandSpec(
        "diagnose",
        "labctl.commands.diagnose",
        "Name the root cause of failed jobs from their logs, with a fix and a fingerprint.",
        reads_records=True,
    ),
    CommandSpec(
        "supervise",
        "labctl.commands.supervise",
        "Run an experiment; fix known failures from the catalog and re-run; escalate the rest.",
        writes=Writes(always=True),
    ),
    CommandSpec(
        "strip-yaml-comments",
        "labctl.commands.strip_yaml_comments",
        "Remove comments, and only comments, from YAML files (verified, atomic).",
        writes=Writes(options=("--apply",)),
    ),
    CommandSpec(
        "table",
        "labctl.commands.table",
        "Render records from stdin as box-drawing tables, one per kind.",
        reads_records=True,
    ),
    CommandSpec(
        "log",
        "labctl.commands.log",
        "Write a dated Markdown log entry from records or a message.",
        reads_records=True,
        writes=Writes(always=True, destructive=False),
    ),
    CommandSpec(
        "gate",
        "labctl.commands.gate",
        "Pass/fail per model from evaluation results (bounded memory), or a lifecycle streak.",
        reads_records=True,
        writes=Writes(options=("--register",)),
    ),
    CommandSpec(
        "merge-green",
        "labctl.commands.merge_green",
        "Merge open PRs whose CI is truly green, in allowlisted repos only (dry run by default).",
        writes=Writes(options=("--apply",)),
    ),
    CommandSpec(
        "guard",
        "labctl.commands.guard",
        "Check the standing guardrails against records (violations), or admit a job.",
        reads_records=True,
    ),
    CommandSpec(
        "migrate-experiment",
        "labctl.commands.migrate_experiment",
        "Close an experiment in one safe pass: retire its rules, move it, write CLOSED.md.",
        writes=Writes(options=("--apply",)),
    ),
    CommandSpec(
        "cron",
        "labctl.commands.cron",
        "Install, show or remove the periodic sweep in the crontab (exactly once).",
        writes=Writes(subcommands=("install", "remove", "mark-run")),
    ),
    CommandSpec(
        "prune-disk",
        "labctl.commands.prune_disk",
        "Free disk space: delete only what the rules name and only what is safe (dry run).",
        writes=Writes(options=("--apply",)),
    ),
    CommandSpec(
        "health",
        "labctl.commands.health",
        "Check free disk, memory, pressure, swap and load; name the memory hogs.",
    ),
    CommandSpec(
        "rl-health",
        "labctl.commands.rl_health",
        "KILL / NO-KILL / WATCH with evidence for RL jobs in untested settings (bounded reads).",
        reads_records=True,
    ),
    CommandSpec(
        "schema",
        "labctl.commands.schema",
        "Print the JSON Schema of a command's options and records.",
    ),
    CommandSpec(
        "config",
        "labctl.commands.config_cmd",
        "Show, create or locate the config file.",
        writes=Writes(subcommands=("init",)),
    ),
    CommandSpec(
        "mcp",
        "labctl.commands.mcp",
        "Serve every command as a tool to agents (Model Context Protocol: stdio or HTTP).",
        tool=False,
    ),
)

BY_NAME: dict[str, CommandSpec] = {c.name: c for c in COMMANDS}
