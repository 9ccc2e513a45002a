"""`labctl prune-disk [PATH]`: keep the volume of PATH (default $HOME) above
`[prune] min_free_gb`, deleting only what `[[prune.rules]]` name and only what is safe.

Every rule yields `candidate` records: the Hugging Face cache through huggingface_hub's
own cache API (never a blob by hand, never the login token, never a download in flight),
experiment trace folders only once every local file is verified on the Hub repo
configured for the experiment, tool caches and glob matches with their own safety notes.
Dry run by default. `--apply` deletes oldest first until free space is back above the
threshold plus `[prune] margin_gb` (`--all`: every safe candidate), re-checking each one
(re-measured; traces re-verified by hash) just before deleting it. Nothing outside a
rule's root is ever deleted, whatever the symlinks say, and the Hub cache and the trace
folders (each hf_cache or traces rule's root, and the default locations even with no such
rule) are pruned by their own kind only: another rule's candidate holding or inside one is
kept (`hf_cache_managed`, `traces_managed`). A candidate holding anything another user
owns than labctl's effective uid (root too: no exception) is kept (`other_user`), checked
again just before deleting, and the deletion itself unlinks nothing of another uid. Exit 1
when free space is still under the threshold (or a deletion failed), 3 when the Hub could
not be reached.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import typer

from labctl.commands.prune_disk_schema import SCHEMAS
from labctl.context import Context

__all__ = ["EXAMPLES", "SCHEMAS", "cli"]

EXAMPLES = [
    "labctl prune-disk                    # dry run: free space, candidates, what would go",
    "labctl prune-disk --apply            # delete oldest first until above min_free + margin",
    "labctl prune-disk --apply --all --rule hf_cache:/data/hf/hub",
    "labctl prune-disk --verify hash /data   # dry run that also hashes traces against the Hub",
]
GB = 1_000_000_000


def _protected(lc: Context, rules: list[Any]) -> list[Any]:
    """What no candidate may hold: the login token, labctl's own files, and the roots only
    their own kind prunes (`rules`: every configured rule, not only those run)."""
    from labctl.disk.candidate import Guarded
    from labctl.disk.rules import MANAGED, hf_token_paths, managed_roots

    real = os.path.realpath
    out = [
        Guarded(real(p), "protected", "the Hugging Face login token")
        for p in hf_token_paths(lc.environ)
    ]
    out.append(Guarded(real(str(lc.config.path)), "protected", "labctl's config file"))
    out.append(Guarded(real(str(lc.state_dir)), "protected", "labctl's state"))
    for kind, root in managed_roots(rules, lc.environ):
        out.append(Guarded(root, f"{kind}_managed", MANAGED[kind], managed_by=kind))
    return out


def _workers(configured: int) -> int:
    if configured > 0:
        return configured
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):
        return max(1, min(4, os.cpu_count() or 1))


def run(
    lc: Context,
    path: str | None,
    *,
    apply: bool,
    everything: bool,
    verify: str,
    only: list[str],
    min_free_gb: float | None,
) -> Iterator[dict[str, Any]]:
    from labctl.backends import hf_hub
    from labctl.disk.plan import Target, default_target_path, prune
    from labctl.disk.rules import parse_rules
    from labctl.disk.scan import ScanEnv
    from labctl.errors import UsageError
    from labctl.progressbar import progress_bar

    cfg = lc.config
    rules = parse_rules(cfg.table_list("prune.rules"), lc.environ, cfg.get("prune.min_age_days"))
    protected = _protected(lc, rules)  # before --rule: a rule not run still guards its root
    if only:
        unknown = sorted(set(only) - {r.name for r in rules})
        if unknown:
            names = ", ".join(r.name for r in rules)
            raise UsageError(f"--rule {unknown[0]!r}: no such rule (rules: {names})")
        rules = [r for r in rules if r.name in only]
    target_path = path or cfg.get("prune.path") or default_target_path(lc.environ)
    min_free = cfg.get("prune.min_free_gb") if min_free_gb is None else min_free_gb
    target = Target(
        path=os.path.abspath(os.path.expanduser(target_path)),
        min_free=int(min_free * GB),
        margin=int(cfg.get("prune.margin_gb") * GB),
        apply=apply,
        everything=everything,
    )
    env = ScanEnv(
        now=lc.clock(),
        protected=protected,
        hub=hf_hub.HubTrees(cfg.get("hf.endpoint"), cfg.get("hf.token") or None),
        verify=verify,
        workers=_workers(cfg.get("prune.workers")),
        self_pid=os.getpid(),
        hf_cache_api=hf_hub,
    )
    with progress_bar(lc.stderr, quiet=lc.quiet, title="sizing") as bar:
        env.progress = bar
        yield from prune(rules, target, env)


def _locked(lc: Context, records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    from labctl.fsops import state_lock

    with state_lock(lc.state_dir, "prune-disk", wait_s=5.0):
        yield from records


def cli(
    lc: Context,
    path: Annotated[
        str | None,
        typer.Argument(help="A path on the volume to keep free (default: [prune] path, $HOME)."),
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Delete (default: dry run, nothing is touched).")
    ] = False,
    everything: Annotated[
        bool,
        typer.Option("--all", help="Delete every safe candidate, not only until the goal."),
    ] = False,
    verify: Annotated[
        Literal["size", "hash"],
        typer.Option(
            "--verify", help="Dry run: check traces on the Hub by size or hash (--apply: hash)."
        ),
    ] = "size",
    rule: Annotated[
        list[str] | None,
        typer.Option("--rule", metavar="NAME", help="Only this rule (repeatable)."),
    ] = None,
    min_free_gb: Annotated[
        float | None,
        typer.Option(
            "--min-free-gb", metavar="GB", help="Threshold (default [prune] min_free_gb)."
        ),
    ] = None,
) -> int:
    """Free disk space by deleting only what the rules name and only what is safe.

    Lists a `candidate` per item of each [[prune.rules]] (hf_cache, traces, cache_dir,
    glob) with its disk usage, what deleting it frees, its age, and why it is kept when
    it is: recent, in use, a download in flight, not verified on the Hub, outside the
    root, another file system inside, unreadable, the login token, inside the Hub cache
    or the trace folders (pruned by their own kind only), files of another user than
    labctl's effective uid (root included). Dry run by default;
    --apply deletes oldest first until [prune] min_free_gb + margin_gb is free (--all:
    every safe candidate), re-checking each just before deleting it. Exit 1 while free
    space is under the threshold or a deletion failed; 3 when the Hub is unreachable.
    """
    records = run(
        lc, path, apply=apply, everything=everything, verify=verify, only=rule or [],
        min_free_gb=min_free_gb,
    )  # fmt: skip
    return lc.emit(_locked(lc, records) if apply else records)
