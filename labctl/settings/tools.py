"""The stand-alone tools: gate, merge-green, strip-yaml-comments, prune-disk, health."""

from __future__ import annotations

from labctl.settings.setting import Setting
from labctl.settings.setting import setting as _s

# gate
GATE: tuple[Setting, ...] = (
    _s(
        "gate.user",
        "",
        "owner of the rows a gate reads and --register writes (empty: $USER)",
        env=("LABCTL_GATE_USER",),
    ),
    _s(
        "gate.source",
        "postgres",
        "where a gate's rows come from unless the gate says: supabase, postgres or - (stdin)",
        choices=("supabase", "postgres", "-"),
    ),
    _s("gate.page_size", 1000, "rows per Supabase page (at most 1000, Supabase's max rows)"),
    _s("gate.timeout_s", 60.0, "seconds to connect, and for each query or page"),
)


# merge-green
MERGE_GREEN: tuple[Setting, ...] = (
    _s(
        "merge_green.allowlist",
        [],
        "repos (owner/name, as GitHub spells them) merge-green may write to; nothing else",
        kind=list,
    ),
    _s(
        "merge_green.merge_method",
        "squash",
        "how a green PR is merged: merge, squash or rebase",
        choices=("merge", "squash", "rebase"),
    ),
    _s("merge_green.approve", False, "approve a green PR that only lacks a review (never our own)"),
    _s(
        "merge_green.blocking_labels",
        ["do-not-merge", "wip"],
        "a PR with any of these labels is skipped",
        kind=list,
    ),
    _s("merge_green.update_branch", False, "update a branch that is behind its base, then wait"),
    _s("merge_green.strict_skipped", False, "skipped and neutral checks are not a pass"),
    _s("merge_green.allow_forks", False, "merge PRs whose head branch lives in a fork"),
    _s(
        "merge_green.max_wait_s",
        180.0,
        "most seconds one run waits out GitHub rate limits; a longer limit ends the run",
    ),
    _s("merge_green.mergeable_polls", 4, "re-reads of a PR while GitHub computes mergeability"),
    _s("merge_green.request_interval_s", 0.25, "pause between GitHub requests (seconds)"),
    _s("merge_green.write_interval_s", 1.0, "pause between GitHub writes (GitHub asks >= 1 s)"),
    _s("merge_green.timeout_s", 30.0, "seconds one GitHub request may take"),
    _s("merge_green.lock_wait_s", 10.0, "seconds --apply waits for a concurrent --apply run"),
)


# strip-yaml-comments
STRIP_YAML: tuple[Setting, ...] = (
    _s("strip_yaml.hidden", False, "search hidden files and directories too (--hidden)"),
    _s("strip_yaml.no_ignore", False, "read what .gitignore/.ignore files exclude (--no-ignore)"),
    _s("strip_yaml.jobs", 0, "worker processes for many files (0: one per CPU; --jobs)"),
)


# prune-disk
PRUNE: tuple[Setting, ...] = (
    _s("prune.min_free_gb", 20.0, "free space (GB) below which the disk needs pruning"),
    _s("prune.margin_gb", 5.0, "--apply frees until min_free_gb + margin_gb is free"),
    _s("prune.path", "", "the volume to keep free: a path on it (empty: $HOME)"),
    _s("prune.min_age_days", 2.0, "rules' default: keep anything used more recently"),
    _s("prune.workers", 0, "processes sizing one big tree (0: one per CPU, at most 4)"),
)


# health
HEALTH: tuple[Setting, ...] = (
    _s("health.volumes", ["~", "/tmp"], "paths whose volumes need free space", kind=list),
    _s("health.disk_min_free_gb", 20.0, "a volume with less free space (GB) fails"),
    _s("health.mem_min_available_gb", 2.0, "less MemAvailable (GB) fails"),
    _s("health.psi_some_avg60_max", 20.0, "memory pressure: % of time some task stalled (60 s)"),
    _s("health.psi_full_avg60_max", 5.0, "memory pressure: % of time all tasks stalled (60 s)"),
    _s("health.swap_max_used_pct", 80.0, "more swap in use (% of swap) fails"),
    _s("health.load_max_per_cpu", 2.0, "5-minute load average per CPU above this fails"),
    _s("health.top_processes", 10, "processes listed by RSS when memory is low"),
)
