"""The command-line layer: one typer app, the command table, and `main()`.

`main()` is the only place that turns errors into exit codes:
  0 nothing needs a person · 1 something needs a person · 2 usage or config error ·
  3 a backend was (partly) unreachable · 130 interrupted.
It emits an `error` record for a `LabctlError` or a usage error (`labctl.exits`), exits
quietly when the reader of stdout goes away, and never shows a traceback (LABCTL_DEBUG=1
shows one).
"""

from __future__ import annotations

import gc
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from typer.core import TyperGroup

from labctl import __version__
from labctl.errors import ExitCode, LabctlError
from labctl.exits import emit_error, silence_stdout, usage_message
from labctl.registry import BY_NAME, COMMANDS, CommandSpec

if TYPE_CHECKING:
    from labctl.context import Context

Handler = Callable[..., int]

EXIT_CODES_HELP = (
    "Exit codes: 0 nothing needs a person; 1 something needs a person (a failed or "
    "stalled job, a file that could not be verified, a malformed input line); 2 usage or "
    "configuration error, nothing was done; 3 a backend was partly or wholly unreachable "
    "(what could be done was done; see the error records); 130 interrupted."
)
META = "labctl.options"


def _store(ctx: Any, param: Any, value: Any) -> Any:
    if value is not None and value is not False:
        ctx.meta.setdefault(META, {})[param.name] = value
    return value


def _version(ctx: Any, param: Any, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        sys.stdout.write(f"labctl {__version__}\n")
        raise typer.Exit(0)


def _common_signature(
    format: Annotated[
        Literal["auto", "jsonl", "json", "table"] | None,
        typer.Option(
            "--format",
            "-f",
            help="Output: auto (table on a terminal, else jsonl), jsonl, json or table.",
            show_default=False,
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config", metavar="PATH", help="Config file (default: $LABCTL_CONFIG, else XDG)."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No diagnostics on stderr.")] = False,
    summary: Annotated[
        bool, typer.Option("--summary", help="End with a `summary` record.")
    ] = False,
) -> None:
    """Template whose options every command shares (built once, copied everywhere)."""


_COMMON: list[Any] | None = None


def common_params() -> list[Any]:
    global _COMMON
    if _COMMON is None:
        app = typer.Typer(add_completion=False, rich_markup_mode=None)
        app.command()(_common_signature)
        cmd = typer.main.get_command(app)
        for param in cmd.params:
            param.expose_value = False
            param.callback = _store
        _COMMON = list(cmd.params)
    return _COMMON


def _attach_common(cmd: Any) -> Any:
    names = {p.name for p in cmd.params}
    cmd.params.extend(p for p in common_params() if p.name not in names)
    for sub in getattr(cmd, "commands", {}).values():
        _attach_common(sub)
    return cmd


def load_command(spec: CommandSpec) -> Any:
    """Import the command's module and build its click command (with the shared options)."""
    module = importlib.import_module(spec.module)
    if hasattr(module, "app"):
        cmd = typer.main.get_command(module.app)
    else:
        app = typer.Typer(add_completion=False, rich_markup_mode=None)
        handler = with_context(spec.name)(module.cli)
        app.command(
            name=spec.name,
            help=module.cli.__doc__,
            epilog=EXIT_CODES_HELP,
            context_settings=getattr(module, "CONTEXT_SETTINGS", None),
        )(handler)
        cmd = typer.main.get_command(app)
    cmd.name = spec.name
    return _attach_common(cmd)


class LabctlGroup(TyperGroup):
    """Lists commands from the registry; imports a command only when it is used."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [c.name for c in COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        spec = BY_NAME.get(cmd_name)
        return load_command(spec) if spec is not None else None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(c.name, c.help) for c in COMMANDS])


def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_version
        ),
    ] = False,
) -> None:
    """labctl: small commands that keep an ML lab's jobs moving.

    Each command prints JSON Lines when piped (a table on a terminal), so commands
    compose: `labctl poll | labctl diagnose | labctl table`.
    """


def build_app() -> Any:
    app = typer.Typer(
        cls=LabctlGroup,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
        epilog=EXIT_CODES_HELP,
    )
    app.callback()(_root)
    group = typer.main.get_command(app)
    group.params.extend(common_params())
    return group


def with_context(name: str, *, read_config: bool = True) -> Callable[[Handler], Any]:
    """Let a command handler take the typed labctl `Context` as its first parameter.

    `def cli(lc: Context, <typer options>) -> int` is what a command module writes; typer
    sees `ctx: typer.Context` in its place, and the wrapper builds the `Context` once per
    invocation (`read_config=False`: locate the config file without reading it, for
    `config init`/`config path`, which must work when the file is broken).
    """

    def wrap(fn: Handler) -> Any:
        sig = inspect.signature(fn, eval_str=True)
        params = list(sig.parameters.values())[1:]
        ctx_param = inspect.Parameter(
            "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
        )
        path_params = [p.name for p in params if _is_path(p.annotation)]

        def typer_fn(ctx: typer.Context, **kwargs: Any) -> Any:
            lc = context_from(ctx, name, read_config=read_config)
            if lc.confine is not None:  # under `labctl mcp`: every Path parameter is checked
                for key in path_params:
                    values = kwargs[key] if isinstance(kwargs[key], list) else [kwargs[key]]
                    for value in values:
                        if value is not None:
                            lc.confine.check(value)
            return fn(lc, **kwargs)

        typer_fn.__name__ = fn.__name__
        typer_fn.__doc__ = fn.__doc__
        typer_fn.__signature__ = sig.replace(parameters=[ctx_param, *params])  # type: ignore[attr-defined]
        typer_fn.__annotations__ = {p.name: p.annotation for p in (ctx_param, *params)}
        return typer_fn

    return wrap


def _is_path(annotation: Any) -> bool:
    """Whether a parameter's annotation holds a pathlib.Path (Path, Path | None, list[Path])."""
    from pathlib import PurePath
    from typing import get_args

    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return True
    return any(_is_path(arg) for arg in get_args(annotation))


def context_from(ctx: Any, command: str, *, read_config: bool = True) -> Context:
    """The labctl Context for a running command (built once per invocation).

    `read_config=False` locates the config file without reading it (config init/path
    must work even when the file is broken).
    """
    from labctl.context import build_context

    meta = ctx.meta
    if "labctl.context" not in meta:
        opts = meta.get(META, {})
        meta["labctl.context"] = build_context(
            config_path=opts.get("config"),
            fmt=opts.get("format"),
            quiet=bool(opts.get("quiet")),
            summary=True if opts.get("summary") else None,
            command=command,
            read_config=read_config,
        )
    return meta["labctl.context"]


def _collect_rarely() -> None:
    """A stage holds its records (trees of dicts and lists) until it ends, and the cyclic
    collector's default thresholds re-scan every survivor again and again. Start-up's
    objects are frozen out of it, and the youngest generation is collected a third as
    often. Not rarer: a command that streams with a library making cyclic garbage per
    request (httpx under gate's Supabase pages) needs the collector to keep up with it
    (at 10,000 gate kept every page of a 90,000-row read: +14 MB)."""
    gc.freeze()  # what start-up imported is never garbage
    gc.set_threshold(2000, 10, 10)


def main(argv: Sequence[str] | None = None) -> int:
    """Run labctl; return the exit code (the console script exits with it)."""
    from labctl.emit import PipeClosed

    args = list(sys.argv[1:] if argv is None else argv)
    _collect_rarely()
    try:
        rv = build_app().main(args=args, prog_name="labctl", standalone_mode=False)
        return int(rv) if isinstance(rv, int) else 0
    except LabctlError as exc:
        if not getattr(exc, "emitted", False):
            emit_error(exc.record(), args)
        return int(exc.exit_code)
    except PipeClosed:
        silence_stdout()
        return 0
    except typer.Abort:
        return int(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # click usage errors and anything unexpected
        from labctl.faults import is_write_fault, write_fault_error

        if isinstance(exc, OSError) and is_write_fault(exc):  # a full disk: not a bug
            fault = write_fault_error(exc)
            emit_error(fault.record(), args)
            return int(fault.exit_code)
        usage = usage_message(exc)
        if usage is None and type(exc).__name__ == "NoArgsIsHelpError":
            return int(ExitCode.OK)
        if usage is not None:
            emit_error({"kind": "error", "reason": "usage", "message": usage}, args)
            return int(ExitCode.USAGE)
        if os.environ.get("LABCTL_DEBUG"):
            raise
        emit_error(
            {
                "kind": "error",
                "reason": "internal_error",
                "message": f"internal error: {type(exc).__name__}: {exc} "
                "(LABCTL_DEBUG=1 shows the traceback)",
            },
            args,
        )
        return int(ExitCode.ATTENTION)


if __name__ == "__main__":
    raise SystemExit(main())
