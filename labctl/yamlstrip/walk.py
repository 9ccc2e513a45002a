"""Which files a run reads: named files always, directories searched as ripgrep and fd do.

- A path named on the command line is read whatever its name: hidden, ignored or not
  `*.yaml`. A named directory (or a symlink to one) is searched even if it is hidden or
  ignored itself.
- Inside a directory: `*.yaml`/`*.yml` (any case), sorted by name, a directory's files
  before its subdirectories; symlinked files are read, symlinked directories are not
  entered (no loops); a file reached twice (a symlink and its target) is read once.
- Hidden entries (a name starting with `.`) are skipped unless `hidden`, or unless an
  ignore file re-includes them with a `!pattern`.
- With `ignore` (the default): `.gitignore` files (nested, each for its own subtree, read
  from the repository's top down to a named directory too), `.git/info/exclude`, and
  `.ignore` files (ripgrep's and fd's own, which also apply outside git and win over
  `.gitignore`). `.gitignore` and `info/exclude` apply only inside a git work tree; a
  nested repository starts afresh. The `.git` directory itself is skipped, as fd does,
  even with `hidden`. Patterns are git's (gitignore(5)): negation, directory-only `dir/`,
  anchored `/x` and `a/b`, `**`, the last match wins, a deeper file wins over a higher one,
  and nothing inside an excluded directory can be re-included.
- Every entry skipped (a directory counts once, its contents are never read; only YAML
  files count among files) is counted by reason, `hidden` or `ignored`, in a `Skipped`.

Patterns are matched by `labctl.yamlstrip.gitignore`, path by path as git matches them.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from labctl.yamlstrip.gitignore import IgnoreFile

YAML_SUFFIXES = frozenset({".yaml", ".yml"})
HIDDEN = "hidden"
IGNORED = "ignored"
MAX_EXAMPLES = 5


@dataclass
class Skipped:
    """What a walk left out: entries per reason, and the first few of each."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, path: str) -> None:
        self.counts[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < MAX_EXAMPLES:
            shown.append(path)


@dataclass(frozen=True)
class _Layer:
    """The patterns of one ignore file, for the paths under `base`."""

    base: str  # the directory the file sits in (for info/exclude: the work tree's top)
    spec: IgnoreFile
    kind: int  # checked in this order: 0 .ignore, 1 .gitignore, 2 .git/info/exclude


def _read_spec(path: str) -> IgnoreFile | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            spec = IgnoreFile(fh.read().splitlines())
    except OSError:
        return None
    return spec if spec else None


def _is_repo(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, ".git"))


class _Rules:
    """The ignore layers that apply in one directory (deepest last within a kind)."""

    def __init__(self, layers: tuple[_Layer, ...] = (), in_repo: bool = False) -> None:
        self.layers = layers
        self.in_repo = in_repo

    def enter(self, directory: str) -> _Rules:
        """The rules inside `directory`: its own ignore files added."""
        layers = self.layers
        in_repo = self.in_repo
        if _is_repo(directory):  # a work tree's top: git's rules start afresh
            layers = tuple(layer for layer in layers if layer.kind == 0)
            in_repo = True
            spec = _read_spec(os.path.join(directory, ".git", "info", "exclude"))
            if spec is not None:
                layers += (_Layer(directory, spec, 2),)
        added: list[_Layer] = []
        for kind, name in ((0, ".ignore"), (1, ".gitignore")):
            if kind == 1 and not in_repo:
                continue
            spec = _read_spec(os.path.join(directory, name))
            if spec is not None:
                added.append(_Layer(directory, spec, kind))
        if not added and layers is self.layers and in_repo == self.in_repo:
            return self
        return _Rules(layers + tuple(added), in_repo)

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """Is `path` ignored (True), re-included (False) or neither (None)?"""
        for kind in (0, 1, 2):
            for layer in reversed(self.layers):
                if layer.kind != kind or not path.startswith(layer.base + os.sep):
                    continue
                rel = path[len(layer.base) + 1 :].replace(os.sep, "/")
                found = layer.spec.verdict(rel, is_dir)
                if found is not None:
                    return found
        return None


def _rules_above(top: str) -> _Rules:
    """The rules of the directories above `top`, up to its work tree's top (if any)."""
    chain: list[str] = []
    here = os.path.abspath(top)
    while True:
        parent = os.path.dirname(here)
        if parent == here:
            return _Rules()  # not in a git work tree: only `top`'s own files count
        chain.append(parent)
        if _is_repo(parent):
            break
        here = parent
    rules = _Rules()
    for directory in reversed(chain):
        rules = rules.enter(directory)
    return rules


@dataclass
class Walk:
    hidden: bool = False
    ignore: bool = True
    skipped: Skipped = field(default_factory=Skipped)

    def files(self, top: str) -> Iterator[tuple[str, str]]:
        """(path as shown, real path) of the YAML files under the directory `top`, in order."""
        real = os.path.abspath(top)
        rules = _rules_above(top) if self.ignore else _Rules()
        if rules.verdict(real, True):  # named, so read: the rules that exclude it do not apply
            rules = _Rules((), rules.in_repo)
        yield from self._walk(real, top, os.path.realpath(real), rules)

    def _walk(
        self, real: str, shown: str, resolved: str, rules: _Rules
    ) -> Iterator[tuple[str, str]]:
        """`resolved` is `real` with every symlink resolved: below it, a directory entered is
        never a symlink, so only a symlinked file needs resolving on its own."""
        if self.ignore:
            rules = rules.enter(real)
        try:
            with os.scandir(real) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        subdirs: list[tuple[str, str, str]] = []
        join = os.path.join
        for entry in entries:
            name = entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and os.path.splitext(name)[1].lower() not in YAML_SUFFIXES:
                continue
            if not is_dir and not entry.is_file():
                continue  # a dangling symlink, a socket ...
            shown_path = join(shown, name)
            reason = self._reason(name, join(real, name), is_dir, rules)
            if reason is not None:
                self.skipped.add(reason, shown_path)
            elif is_dir:
                subdirs.append((join(real, name), shown_path, join(resolved, name)))
            elif entry.is_symlink():
                yield shown_path, os.path.realpath(join(real, name))
            else:
                yield shown_path, join(resolved, name)
        for sub_real, sub_shown, sub_resolved in subdirs:
            yield from self._walk(sub_real, sub_shown, sub_resolved, rules)

    def _reason(self, name: str, path: str, is_dir: bool, rules: _Rules) -> str | None:
        verdict = rules.verdict(path, is_dir) if self.ignore else None
        if name.startswith(".") and not self.hidden and verdict is not False:
            return HIDDEN
        if self.ignore and (verdict or (is_dir and name == ".git")):
            return IGNORED
        return None


def iter_yaml_files(
    paths: Iterable[str | os.PathLike[str]],
    *,
    hidden: bool = False,
    ignore: bool = True,
    skipped: Skipped | None = None,
) -> Iterator[Path]:
    """The files to read, in a deterministic order, each real file once (see the module
    docstring for the rules); what directories held but was left out goes in `skipped`."""
    return map(Path, iter_yaml_paths(paths, hidden=hidden, ignore=ignore, skipped=skipped))


def iter_yaml_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    hidden: bool = False,
    ignore: bool = True,
    skipped: Skipped | None = None,
) -> Iterator[str]:
    """`iter_yaml_files` as strings (what a run over many files passes on)."""
    walk = Walk(hidden, ignore, skipped if skipped is not None else Skipped())
    seen: set[str] = set()
    for given in paths:
        path = os.fspath(given)
        named = [(path, os.path.realpath(path))]
        found = walk.files(path) if os.path.isdir(path) else iter(named)
        for file, real in found:
            if real in seen:
                continue
            seen.add(real)
            yield file
