"""`labctl config init|show|path`: the config file, and which value won."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import typer

from labctl.cli import with_context
from labctl.context import Context
from labctl.schemas import COMMON, STR_OR_NULL, record

SCHEMAS = {
    **COMMON,
    "setting": record(
        "setting",
        "One effective setting: its value (secrets redacted), where it came from "
        "(flag, env:NAME, file, default) and the sources it shadowed.",
        {
            "key": {"type": "string"},
            "value": {},
            "source": {"type": "string"},
            "shadowed": {"type": "array", "items": {"type": "string"}},
            "secret": {"type": "boolean"},
            "env": {"type": "array", "items": {"type": "string"}},
            "help": {"type": "string"},
        },
        ["key", "value", "source", "secret"],
    ),
    "config_file": record(
        "config_file",
        "Where the config file is (config path) or what config init wrote.",
        {
            "path": {"type": "string"},
            "source": STR_OR_NULL,
            "exists": {"type": "boolean"},
            "applied": {"type": "boolean"},
            "mode": STR_OR_NULL,
        },
        ["path", "exists"],
    ),
}
EXAMPLES = [
    "labctl config init && $EDITOR $(labctl config path -f jsonl | jq -r .path)",
    "GITHUB_TOKEN=... labctl config show --format table",
]

app = typer.Typer(
    help="Show, create or locate the config file.",
    add_completion=False,
    rich_markup_mode=None,
    no_args_is_help=True,
)


def render_default_toml() -> str:
    """The complete default config, one commented line per setting (values via tomli-w)."""
    import tomli_w

    from labctl.settings import LIST_DEFAULTS, LIST_SECTIONS, SETTINGS, SUBTABLES

    lines = [
        "# labctl configuration. Every setting is shown with its default.",
        "# Precedence: command-line flag > environment variable > this file > default.",
        "# Keep secrets in the environment; if you put one here, chmod 600 this file.",
    ]
    section = None
    for s in SETTINGS:
        if s.section != section:
            section = s.section
            lines += ["", f"[{section}]"]
        env = f" (env: {', '.join(s.env)})" if s.env else ""
        lines.append(f"# {s.help}{env}")
        lines.append(tomli_w.dumps({s.name: s.default}).rstrip("\n"))
    for help_text in SUBTABLES.values():
        lines += ["", f"# {help_text}"]
    for name, help_text in LIST_SECTIONS.items():
        lines += ["", f"# {help_text}"]
        for table in LIST_DEFAULTS.get(name, []):
            lines.append(f"[[{name}]]")
            lines.append(tomli_w.dumps(table).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _settings(lc: Context) -> Iterator[dict[str, Any]]:
    from labctl.redact import mask
    from labctl.settings import LIST_DEFAULTS, LIST_SECTIONS, SETTINGS, SUBTABLES

    config = lc.config
    for s in SETTINGS:
        res = config.resolved[s.key]
        value = res.value
        if s.secret and value:
            value = mask(s.key)
        yield {
            "kind": "setting",
            "key": s.key,
            "value": value,
            "source": res.source,
            "shadowed": list(res.shadowed),
            "secret": s.secret,
            "env": list(s.env),
            "help": s.help,
        }
    for key, help_text in SUBTABLES.items():
        for name, table in config.subtable(key).items():
            yield _table_setting(f'{key}."{name}"', table, "file", help_text)
    for name, help_text in LIST_SECTIONS.items():
        tables = config.table_list(name)
        from_file = tables != LIST_DEFAULTS.get(name, []) or _in_file(config.data, name)
        for i, table in enumerate(tables):
            yield _table_setting(
                f"{name}[{i}]", table, "file" if from_file else "default", help_text
            )


def _table_setting(key: str, table: dict[str, Any], source: str, help_text: str) -> dict[str, Any]:
    return {"kind": "setting", "key": key, "value": table, "source": source, "shadowed": [],
            "secret": False, "env": [], "help": help_text}  # fmt: skip


def _in_file(data: dict[str, Any], name: str) -> bool:
    holder: Any = data
    for part in name.split("."):
        if not isinstance(holder, dict) or part not in holder:
            return False
        holder = holder[part]
    return True


@app.command("show")
@with_context("config show")
def show(lc: Context) -> int:
    """Print every effective setting, where it came from, and what it shadowed."""
    return lc.emit(_settings(lc))


@app.command("path")
@with_context("config path", read_config=False)
def path(lc: Context) -> int:
    """Print where the config file is (and whether it exists)."""
    cfg = lc.config
    return lc.emit(
        [
            {
                "kind": "config_file",
                "path": str(cfg.path),
                "source": cfg.path_source,
                "exists": cfg.path.is_file(),
            }
        ]
    )


@app.command("init")
@with_context("config init", read_config=False)
def init(
    lc: Context,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> int:
    """Write a complete default config file (mode 0600); refuses to overwrite without --force."""
    from labctl.confine import check
    from labctl.errors import UsageError
    from labctl.fsops import atomic_write_text

    target = lc.config.path
    check(lc, target)
    if target.exists() and not force:
        raise UsageError(
            f"{target} already exists; use --force to overwrite it",
            reason="exists",
            path=str(target),
        )
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    written = atomic_write_text(target, render_default_toml(), mode=0o600)
    written.chmod(0o600)
    return lc.emit(
        [
            {
                "kind": "config_file",
                "path": str(written),
                "source": lc.config.path_source,
                "exists": True,
                "applied": True,
                "mode": "0600",
            }
        ]
    )
