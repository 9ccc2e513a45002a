"""What every command shares: output, paths, the tool server, secrets and the
backends' addresses and credentials."""

from __future__ import annotations

from labctl.settings.setting import Setting
from labctl.settings.setting import setting as _s

# output
OUTPUT: tuple[Setting, ...] = (
    _s(
        "output.format",
        "auto",
        "auto: a table on a terminal, JSON Lines otherwise; or jsonl, json, table",
        env=("LABCTL_FORMAT",),
        choices=("auto", "jsonl", "json", "table"),
    ),
    _s("output.summary", False, "end every command's output with a `summary` record"),
    _s("output.table_width", 0, "width of piped tables in columns (0: $COLUMNS, else 120)"),
)


# paths
PATHS: tuple[Setting, ...] = (
    _s(
        "paths.state_dir",
        "",
        "state between runs (empty: $XDG_STATE_HOME/labctl)",
        env=("LABCTL_STATE_DIR",),
    ),
    _s(
        "paths.log_dir",
        "",
        "where `labctl log` writes dated entries (empty: <state_dir>/log)",
        env=("LABCTL_LOG_DIR",),
    ),
)


# mcp (`labctl mcp`: every command as a tool for agents)
MCP: tuple[Setting, ...] = (
    _s(
        "mcp.allow_writes",
        False,
        "serve the options and commands that change things (--apply, --register, log, …)",
    ),
    _s(
        "mcp.roots",
        [],
        "the only directories tools may read or write (empty: the state dir, the log dir "
        "and each local cluster's log_roots)",
        kind=list,
    ),
    _s(
        "mcp.token",
        "",
        "bearer token an HTTP client must send (`labctl mcp --http` refuses to start without)",
        env=("LABCTL_MCP_TOKEN",),
        secret=True,
    ),
    _s("mcp.timeout_s", 900.0, "seconds one tool call may run before it is stopped"),
    _s("mcp.max_records", 1000, "most records one tool result carries (the rest are counted)"),
)


# secrets
SECRETS: tuple[Setting, ...] = (
    _s(
        "secrets.env",
        [],
        "more environment variables whose values are secrets (redacted everywhere)",
        kind=list,
    ),
)


# backends
BACKENDS: tuple[Setting, ...] = (
    _s("github.token", "", "GitHub token", env=("GITHUB_TOKEN", "GH_TOKEN"), secret=True),
    _s("github.api_url", "https://api.github.com", "GitHub API URL", env=("GITHUB_API_URL",)),
    _s("hf.token", "", "Hugging Face token", env=("HF_TOKEN",), secret=True),
    _s("hf.endpoint", "https://huggingface.co", "Hugging Face Hub URL", env=("HF_ENDPOINT",)),
    _s("wandb.api_key", "", "W&B API key", env=("WANDB_API_KEY",), secret=True),
    _s("wandb.base_url", "https://api.wandb.ai", "W&B server URL", env=("WANDB_BASE_URL",)),
    _s("supabase.url", "", "Supabase project URL", env=("SUPABASE_URL",)),
    _s("supabase.key", "", "Supabase key", env=("SUPABASE_KEY",), secret=True),
)


# the database gate reads and registers into
DATABASE: tuple[Setting, ...] = (
    _s(
        "database.url",
        "",
        "PostgreSQL URL (libpq PG* variables also work)",
        env=("DATABASE_URL",),
        secret=True,
    ),
)
