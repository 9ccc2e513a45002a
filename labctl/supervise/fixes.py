"""From a diagnosis's machine `action` to what the next attempt runs (pure).

An attempt is a `Setup`: the argv, the environment changes relative to labctl's own
environment, and the packages supervise installed. `plan` turns a catalog action into a
`Fix` (the next Setup and the changes it makes) or a `NoFix` saying why nothing can be
changed. Whether a fix is actually used (budget, repeats, plain re-runs) is policy.py's call.

Once-only fixes: adding an argument, setting or clearing an environment variable and
reducing the run's scope are applied at most once per run (per argument or variable),
whatever the catalog entry says; any other action is once-only when its entry says
`once = true`. One exception: a `set_env` whose value is `{free_port}` (a port clash)
draws a new free port each time, so a second clash (the port taken again between the
pick and the bind) gets a fresh one; the retry budget bounds it like a halving batch size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from labctl.supervise.args import Change, add, find, norm, number, scale

Env = tuple[tuple[str, str | None], ...]  # sorted (name, value); None: unset


@dataclass(frozen=True)
class Setup:
    argv: tuple[str, ...]
    env: Env = ()
    installed: tuple[str, ...] = ()

    def key(self) -> tuple[Any, ...]:
        """Two attempts with the same key would run exactly the same thing."""
        return (self.argv, self.env, self.installed)

    def env_changes(self) -> dict[str, str | None]:
        return dict(self.env)

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        out = dict(base)
        for name, value in self.env:
            if value is None:
                out.pop(name, None)
            else:
                out[name] = value
        return out


@dataclass(frozen=True)
class Fix:
    setup: Setup
    changes: tuple[Change, ...] = ()
    once_key: str | None = None
    install: str | None = None  # pip package to install before the next attempt
    module: str | None = None
    backoff_s: float = 0.0
    resubmit: bool = False  # a plain re-run: nothing changes


@dataclass(frozen=True)
class NoFix:
    reason: str  # no_fix | fix_exhausted | arg_not_found | install_disabled
    message: str


@dataclass(frozen=True)
class FixContext:
    base_env: Mapping[str, str]
    families: Mapping[str, frozenset[str]]  # normalised spellings (args.spellings)
    allow_install: bool = False
    once_used: frozenset[str] = frozenset()
    free_port: Callable[[], int] = field(default=lambda: 0)


def family_of(arg: str, families: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The spellings of `arg`: the family that names it (or is named by it), else itself."""
    n = norm(arg)
    for name, names in families.items():
        if n == name or n in names:
            return names | {n}
    return frozenset({n})


ONCE_TYPES = frozenset({"add_arg", "set_env", "reduce_scope"})
FREE_PORT = "{free_port}"


def is_once(action: Mapping[str, Any]) -> bool:
    """Is this fix applied at most once per run? (see the module doc)"""
    if action.get("once"):
        return True
    if action.get("type") == "set_env" and FREE_PORT in str(action.get("value", "")):
        return False
    return action.get("type") in ONCE_TYPES


def once_key(action: Mapping[str, Any]) -> str:
    what = action.get("arg") or action.get("name") or action.get("module") or ""
    return f"{action.get('type')}:{what}"


def plan(action: Mapping[str, Any] | None, setup: Setup, ctx: FixContext) -> Fix | NoFix:
    kind = str((action or {}).get("type") or "none")
    act: Mapping[str, Any] = action or {}
    if is_once(act) and once_key(act) in ctx.once_used:
        return NoFix("fix_exhausted", f"{_what(act)} was already applied once in this run")
    handler = _HANDLERS.get(kind)
    if kind == "none":
        return NoFix("no_fix", "the catalog has no automatic fix for this failure")
    if handler is None:
        return NoFix(
            "no_fix",
            f"the catalog's fix ({kind}) is not one supervise can apply to a local command",
        )
    return handler(act, setup, ctx)


def _what(act: Mapping[str, Any]) -> str:
    detail = act.get("arg") or act.get("name") or act.get("module")
    return f"{act.get('type')} {detail}" if detail else str(act.get("type"))


def _once(act: Mapping[str, Any]) -> str | None:
    return once_key(act) if is_once(act) else None


def _scale(act: Mapping[str, Any], setup: Setup, ctx: FixContext) -> Fix | NoFix:
    arg = str(act["arg"])
    fam = family_of(arg, ctx.families)
    lo, hi = act.get("min"), act.get("max")
    argv, changes = scale(setup.argv, fam, float(act["factor"]), lo, hi)
    if changes:
        new = replace(setup, argv=tuple(argv))
        return Fix(new, tuple(changes), once_key=_once(act))
    found = [o for o in find(setup.argv, fam) if number(o.value) is not None]
    if not found:
        names = ", ".join(sorted(fam))
        return NoFix("arg_not_found", f"the command sets no {arg} argument (looked for: {names})")
    where = ", ".join(f"{o.name} {o.value}" for o in found)
    limit = f" (min {lo:g})" if lo is not None else ""
    return NoFix("fix_exhausted", f"{where} is already at its limit{limit}: nothing more to change")


def _add_arg(act: Mapping[str, Any], setup: Setup, ctx: FixContext) -> Fix | NoFix:
    arg = str(act["arg"])
    fam = family_of(arg, ctx.families)
    present = find(setup.argv, fam)
    if present:
        return NoFix("fix_exhausted", f"the command already sets {present[0].name}")
    argv = add(setup.argv, fam, arg, act.get("value"))
    added = argv[len(setup.argv) :]
    name, eq, value = added[0].partition("=")
    change = Change("arg", name, None, value if eq else (added[1] if len(added) > 1 else ""))
    return Fix(replace(setup, argv=tuple(argv)), (change,), once_key=_once(act))


def _set_env(act: Mapping[str, Any], setup: Setup, ctx: FixContext) -> Fix | NoFix:
    name = str(act["name"])
    value: str | None = None if act.get("unset") else str(act.get("value", ""))
    if value is not None and FREE_PORT in value:
        value = value.replace(FREE_PORT, str(ctx.free_port()))
    env = setup.environ(ctx.base_env)
    old = env.get(name)
    if old == value:
        return NoFix("fix_exhausted", f"{name} is already {'unset' if value is None else value!r}")
    changes = dict(setup.env)
    changes[name] = value
    new = replace(setup, env=tuple(sorted(changes.items())))
    return Fix(new, (Change("env", name, old, value),), once_key=_once(act))


def _install(act: Mapping[str, Any], setup: Setup, ctx: FixContext) -> Fix | NoFix:
    module, package = act.get("module"), act.get("package") or act.get("module")
    if not module or not package:
        return NoFix("no_fix", "the diagnosis does not name the missing module")
    if package in setup.installed:
        return NoFix("fix_exhausted", f"{package} was installed and {module} is still missing")
    if not ctx.allow_install:
        return NoFix(
            "install_disabled",
            f"module {module!r} is missing (pip package {package!r}); supervise installs "
            "only with [supervise] allow_install = true",
        )
    new = replace(setup, installed=(*setup.installed, str(package)))
    change = Change("install", str(package), None, str(module))
    return Fix(new, (change,), once_key=_once(act), install=str(package), module=str(module))


def _resubmit(act: Mapping[str, Any], setup: Setup, ctx: FixContext) -> Fix | NoFix:
    return Fix(setup, backoff_s=float(act.get("backoff_s") or 0.0), resubmit=True)


_HANDLERS: dict[str, Callable[[Mapping[str, Any], Setup, FixContext], Fix | NoFix]] = {
    "scale_arg": _scale,
    "reduce_scope": _scale,
    "add_arg": _add_arg,
    "set_env": _set_env,
    "install_module": _install,
    "resubmit": _resubmit,
}
