"""One training argument in a command line, in every spelling users write.

    --batch-size 64   --batch_size=64   --per_device_train_batch_size 64
    data.train_batch_size=64   +trainer.max_steps=1000   ++model.bs=8   (Hydra overrides)

A family (the catalog's `[arg_families]`) lists the names of one argument. Names compare
with `-` and `_` alike, case-insensitively and without leading `-`/`+`; a dotted Hydra key
matches by its full key or by its last part. argv[0] (the program) is never touched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_KEY = re.compile(r"^\+{0,2}[A-Za-z_][\w.-]*$")
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def norm(name: str) -> str:
    return name.lstrip("-+").replace("-", "_").lower()


def spellings(names: Iterable[str]) -> frozenset[str]:
    """A family's names, normalised for `matches`."""
    return frozenset(norm(n) for n in names if norm(n))


def matches(name: str, family: frozenset[str]) -> bool:
    n = norm(name)
    return n in family or ("." in n and n.rsplit(".", 1)[1] in family)


@dataclass(frozen=True)
class Occurrence:
    name: str  # as written, with its dashes/pluses: "--batch-size", "data.train_batch_size"
    value: str | None  # None: a bare flag (`--fp16`)
    index: int  # the token holding the value (the name's token for a bare flag)
    style: str  # "space" (--name VALUE), "equals" (--name=VALUE), "key" (name=value), "flag"


def _is_option(token: str) -> bool:
    return token.startswith("-") and not _FLOAT.match(token)


def find(argv: Sequence[str], family: frozenset[str]) -> list[Occurrence]:
    """Every place the command line sets an argument of `family`."""
    out: list[Occurrence] = []
    i = 1
    while i < len(argv):
        tok = argv[i]
        if _is_option(tok) and len(tok) > 1:
            name, eq, value = tok.partition("=")
            if matches(name, family):
                if eq:
                    out.append(Occurrence(name, value, i, "equals"))
                elif i + 1 < len(argv) and not _is_option(argv[i + 1]):
                    out.append(Occurrence(name, argv[i + 1], i + 1, "space"))
                    i += 1
                else:
                    out.append(Occurrence(name, None, i, "flag"))
        elif "=" in tok:
            key, _, value = tok.partition("=")
            if _KEY.match(key) and matches(key, family):
                out.append(Occurrence(key, value, i, "key"))
        i += 1
    return out


def number(text: str | None) -> int | float | None:
    if text is None:
        return None
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        value = float(text)
        return value if math.isfinite(value) else None
    return None


def _fmt(value: int | float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def scaled(old: int | float, factor: float, lo: float | None, hi: float | None) -> int | float:
    """`old` times `factor`, kept within [lo, hi]; an int stays an int (rounded down when
    shrinking, up when growing)."""
    new: int | float = old * factor
    if isinstance(old, int):
        new = math.floor(new) if factor < 1 else math.ceil(new)
    if lo is not None:
        new = max(new, math.ceil(lo) if isinstance(old, int) else lo)
    if hi is not None:
        new = min(new, math.floor(hi) if isinstance(old, int) else hi)
    return new


@dataclass(frozen=True)
class Change:
    what: str  # "arg" or "env"
    name: str
    old: str | None
    new: str | None

    def record(self) -> dict[str, str | None]:
        return {"what": self.what, "name": self.name, "old": self.old, "new": self.new}


def scale(
    argv: Sequence[str],
    family: frozenset[str],
    factor: float,
    lo: float | None = None,
    hi: float | None = None,
) -> tuple[list[str], list[Change]]:
    """Scale every numeric occurrence of the family; no change past `lo`/`hi` or in the
    wrong direction (a value already below the minimum is left alone)."""
    new_argv = list(argv)
    changes: list[Change] = []
    for occ in find(argv, family):
        old = number(occ.value)
        if old is None:
            continue
        new = scaled(old, factor, lo, hi)
        if (factor < 1 and new >= old) or (factor > 1 and new <= old) or new == old:
            continue
        text = _fmt(new)
        new_argv[occ.index] = text if occ.style == "space" else f"{occ.name}={text}"
        changes.append(Change("arg", occ.name, occ.value, text))
    return new_argv, changes


def option_style(argv: Sequence[str]) -> tuple[str, str]:
    """How this command line writes options: ("dash"|"underscore"|"key", "space"|"equals")."""
    names: list[str] = []
    equals = spaced = keys = 0
    for i, tok in enumerate(argv[1:], 1):
        if tok.startswith("--") and len(tok) > 2:
            name, eq, _ = tok[2:].partition("=")
            names.append(name)
            if eq:
                equals += 1
            elif i + 1 < len(argv) and not _is_option(argv[i + 1]):
                spaced += 1  # (a bare flag says nothing about how values are written)
        elif "=" in tok and _KEY.match(tok.partition("=")[0]):
            keys += 1
    if not names and keys:
        return "key", "equals"
    dashed = sum("-" in n for n in names)
    underscored = sum("_" in n for n in names)
    return (
        "dash" if dashed > underscored else "underscore",
        "equals" if equals > spaced else "space",
    )


def add(argv: Sequence[str], family: frozenset[str], arg: str, value: object) -> list[str]:
    """`argv` with `arg` (= `value`) appended in the command's own style."""
    naming, joining = option_style(argv)
    text = None if value is None else ("true" if value is True else str(value))
    if naming == "key":
        return [*argv, f"{arg}={text if text is not None else 'true'}"]
    name = "--" + (arg.replace("_", "-") if naming == "dash" else arg.replace("-", "_"))
    if text is None:
        return [*argv, name]
    return [*argv, f"{name}={text}"] if joining == "equals" else [*argv, name, text]


_LAUNCHERS = re.compile(
    r"^(?:python[\d.]*|pypy[\d.]*|torchrun|accelerate|launch|deepspeed|srun|mpirun|uv|run|"
    r"poetry|conda|env|nohup|time|bash|sh|exec)$"
)
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def command_name(argv: Sequence[str]) -> str:
    """A short name for a command (escalation file names): the script or module it runs,
    past launchers and their options (`python -m pkg.train` -> pkg.train, `torchrun
    --nproc 8 train.py` -> train), else the program's name."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words):
            return _clean(words[i + 1])
        if word.startswith("-") or "=" in word:
            continue
        base = word.rsplit("/", 1)[-1]
        if i > 0 and words[i - 1].startswith("-") and not base.endswith((".py", ".sh")):
            continue  # an option's value (`--nproc_per_node 8`)
        if not _LAUNCHERS.match(base):
            return _clean(base.rsplit(".", 1)[0] if base.endswith((".py", ".sh")) else base)
    return _clean(words[0].rsplit("/", 1)[-1]) if words else "command"


def _clean(name: str) -> str:
    return _SAFE.sub("_", name).strip("._-")[:64] or "command"
