"""Confinement: under `labctl mcp`, commands read and write only under configured roots.

On the command line the user's own permissions rule and nothing here acts. The tool
server starts every command with LABCTL_CONFINE=1; its Context then carries a
`Confinement`, and every path a command takes from its caller passes through here before
it is opened: a path argument, a `--input`/`--move-to` file (`cli.with_context` checks
every `Path` parameter), each file found in a directory or glob it was given, a log path
in a job record (`check`), and a log on an SSH cluster (`check_remote`, resolved on that
cluster). Real paths are compared, symlinks resolved, so a link inside a root that points
outside is outside, and `-` (stdin) is refused: a tool takes records as an argument.

Roots: `[mcp] roots` when set, else the state dir, the log dir and the `log_roots` of
every local cluster (for a `supervise` cluster reading another state dir's runs, its
`runs_dir`'s parent too: the runs' attempt logs lie beside it); a log on an SSH cluster
is confined to that cluster's `log_roots`. No cluster setting names its jobs' work dirs:
where a local SLURM job writes its logs (its WorkDir, `--output`) must be in its
`log_roots` (or `[mcp] roots`) for poll and diagnose to read them through the server.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.errors import ConfigError, UsageError

ENV = "LABCTL_CONFINE"


class OutsideRoots(UsageError):
    """A path the caller named lies outside the tool server's roots (nothing was read)."""

    reason = "outside_roots"


def parse_roots(value: Any, where: str) -> tuple[str, ...]:
    """A list of absolute directories (`~/…` allowed), or ConfigError naming `where`."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"config: {where} must be a list of directories", key=where)
    for v in value:
        if not (v.startswith("/") or v.startswith("~/")) or "\0" in v or "\n" in v:
            raise ConfigError(f"config: {where}: {v!r} is not an absolute path", key=where)
    return tuple(value)


def _supervised_logs(table: Mapping[str, Any]) -> tuple[str, ...]:
    """A `supervise` cluster's `runs_dir` is `<state dir>/supervise/runs`; the attempt logs
    its runs name are in `<state dir>/supervise/logs`: the parent holds both."""
    runs = table.get("runs_dir")
    if table.get("scheduler") != "supervise" or not isinstance(runs, str):
        return ()
    runs = os.path.expanduser(runs.strip())
    return (os.path.dirname(os.path.normpath(runs)),) if os.path.isabs(runs) else ()


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@dataclass(frozen=True)
class Confinement:
    roots: tuple[str, ...]  # local roots, as real paths
    cluster_roots: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # SSH clusters

    @classmethod
    def for_context(cls, lc: Any) -> Confinement:
        config = lc.config
        configured = parse_roots(config.get("mcp.roots"), "mcp.roots")
        local = list(configured) or [str(lc.state_dir), str(lc.log_dir)]
        remote: dict[str, tuple[str, ...]] = {}
        for i, table in enumerate(config.table_list("clusters")):
            roots = parse_roots(table.get("log_roots", []), f"clusters[{i}].log_roots")
            if table.get("host", "local") == "local":
                local.extend(() if configured else (*roots, *_supervised_logs(table)))
            else:
                remote[str(table.get("name"))] = tuple(os.path.normpath(r) for r in roots)
        real = tuple(os.path.realpath(os.path.expanduser(r)) for r in local)
        return cls(roots=tuple(dict.fromkeys(real)), cluster_roots=remote)

    def check(self, path: str | os.PathLike[str]) -> Path:
        """The real path of `path` if it lies under a root; else OutsideRoots."""
        text = os.fspath(path)
        if text == "-":
            raise OutsideRoots("`-` (stdin) is not available through the tool server")
        real = os.path.realpath(os.path.expanduser(text))
        if not _under(real, self.roots):
            raise OutsideRoots(
                f"{text} is outside the tool server's roots ({', '.join(self.roots)}); "
                "set [mcp] roots to allow it",
                path=text,
            )
        return Path(real)

    def check_remote(self, cluster: str, path: str, resolved: str | None) -> str:
        """`resolved` (the path's real path on the cluster, None when it does not exist)
        if it lies under the cluster's log_roots; else OutsideRoots."""
        roots = self.cluster_roots.get(cluster, ())
        target = resolved or os.path.normpath(path)
        if not roots or not path.startswith("/") or not _under(target, roots):
            where = ", ".join(roots) or "none: set log_roots in its [[clusters]] table"
            raise OutsideRoots(
                f"{cluster}:{path} is outside the cluster's log_roots ({where})", path=path
            )
        return target


def check(lc: Any, path: str | os.PathLike[str]) -> Path:
    """`path` as given on the command line; its checked real path under the tool server."""
    conf = getattr(lc, "confine", None)
    return Path(path) if conf is None else conf.check(path)


def checked(lc: Any, paths: Iterable[Any]) -> Iterator[Any]:
    """Each path as given, once it has passed `check`. A glob is checked by its fixed
    leading directories (so nothing outside the roots is even listed); check what it
    expands to as well, for the links it may find."""
    import glob

    for path in paths:
        text = os.fspath(path)
        if getattr(lc, "confine", None) is not None and glob.has_magic(text):
            parts = text.split("/")
            fixed = parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))]
            check(lc, "/".join(fixed) or ("/" if text.startswith("/") else "."))
        else:
            check(lc, path)
        yield path


def log_path(lc: Any, cluster: str | None, transport: Any, path: str, timeout: float) -> str:
    """A log path from a job record or an argument: as given on the command line; under
    the tool server checked here (no transport, or a local one) or on its SSH cluster."""
    if getattr(lc, "confine", None) is None:
        return path
    if transport is None or transport.is_local:
        return str(check(lc, path))
    return check_remote(lc, str(cluster), transport, path, timeout)


def check_remote(lc: Any, cluster: str, transport: Any, path: str, timeout: float) -> str:
    """A log path on an SSH cluster, resolved there (`realpath -e`) under the tool server."""
    conf = getattr(lc, "confine", None)
    if conf is None:
        return path
    conf.check_remote(cluster, path, None)  # lexically first: never ask about /etc/shadow
    res = transport.run(["realpath", "-e", "--", path], timeout=timeout)
    resolved = res.stdout.decode("utf-8", "surrogateescape").strip() if res.ok else None
    return conf.check_remote(cluster, path, resolved or None)
