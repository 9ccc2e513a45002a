"""Every configuration setting labctl knows: one declarative table.

`config init` writes this table as a complete TOML file, `config show` prints each
effective value with where it came from, and the loader type-checks the file against it.
A command that needs settings adds them here, under its own section.

Precedence (highest first): a command-line flag, an environment variable, the config
file, the default. Environment variables are the ones each ecosystem already uses
(GITHUB_TOKEN, HF_TOKEN, WANDB_API_KEY, SUPABASE_URL, DATABASE_URL …), so labctl works
where the user's other tools work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Setting:
    key: str  # "section.name"
    default: Any
    help: str
    env: tuple[str, ...] = ()
    secret: bool = False
    choices: tuple[str, ...] = ()
    kind: type = field(default=str)

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]


def _s(key: str, default: Any, help: str, **kw: Any) -> Setting:
    kind = kw.pop("kind", type(default))
    return Setting(key, default, help, kind=kind, **kw)


SETTINGS: tuple[Setting, ...] = (
    # -- output ------------------------------------------------------------------------
    _s(
        "output.format",
        "auto",
        "auto: a table on a terminal, JSON Lines otherwise; or jsonl, json, table",
        env=("LABCTL_FORMAT",),
        choices=("auto", "jsonl", "json", "table"),
    ),
    _s("output.summary", False, "end every command's output with a `summary` record"),
    _s("output.table_width", 0, "width of piped tables in columns (0: $COLUMNS, else 120)"),
    # -- paths -------------------------------------------------------------------------
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
    # -- poll --------------------------------------------------------------------------
    _s("poll.timeout_s", 60.0, "seconds one cluster may take (a [[clusters]] timeout_s wins)"),
    _s(
        "poll.lock_wait_s",
        10.0,
        "seconds to wait for a concurrent poll (or the store's lock) before `locked`",
    ),
    _s("poll.lookback_h", 24.0, "first poll of a cluster: hours of finished jobs sacct looks at"),
    _s(
        "poll.window_margin_s",
        600.0,
        "sacct window starts this long before the last good poll (at most lookback_h)",
    ),
    _s("poll.forget_after_h", 48.0, "stop asking the scheduler about a vanished job after this"),
    _s("poll.retention_days", 14.0, "finished jobs are kept in the state store this long"),
    # -- progress (poll: is a RUNNING job moving?) ---------------------------------------
    _s("progress.enabled", True, "read running jobs' progress (logs, result files, W&B)"),
    _s("progress.poll_interval_s", 1800.0, "how often poll runs (cron); allowance >= 2x this"),
    _s("progress.startup_grace_s", 2700.0, "no stall verdict this soon after a (re)start"),
    _s("progress.floor_s", 2700.0, "smallest allowance without a counter rise"),
    _s("progress.checkpoint_allowance_s", 1800.0, "extra allowance while a checkpoint saves"),
    _s("progress.eval_allowance_s", 1800.0, "extra allowance during an eval phase"),
    _s("progress.misses_to_stall", 2, "consecutive polls past the allowance before stalled"),
    _s("progress.max_read_bytes", 4194304, "most new log bytes read per job per poll"),
    _s("progress.first_tail_bytes", 262144, "bytes of log tail read the first time"),
    _s("progress.wandb_files", True, "look for W&B run files under each job's WorkDir"),
    # -- gate --------------------------------------------------------------------------
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
    # -- merge-green -------------------------------------------------------------------
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
    # -- strip-yaml-comments -------------------------------------------------------------
    _s("strip_yaml.hidden", False, "search hidden files and directories too (--hidden)"),
    _s("strip_yaml.no_ignore", False, "read what .gitignore/.ignore files exclude (--no-ignore)"),
    _s("strip_yaml.jobs", 0, "worker processes for many files (0: one per CPU; --jobs)"),
    # -- guard (standing guardrails) ----------------------------------------------------
    _s(
        "guard.rules",
        [],
        "[[guard.rules]] tables: max_running, concluded, max_count, forbid_setting",
        kind=list,
    ),
    _s(
        "guard.max_state_age_s",
        3900.0,
        "guard admit refuses when the cluster's last good poll is older (use --poll)",
    ),
    # -- experiments (migrate-experiment; guard's concluded rules) ---------------------
    _s("experiments.root", "experiments", "holds active/<name>/ and complete/<name>/"),
    _s(
        "experiments.job_patterns",
        ["{name}", "{name}-*", "{name}_*", "{name}.*"],
        "job name patterns of an experiment ({name} is replaced)",
        kind=list,
    ),
    _s("experiments.user_crontab", True, "look for an experiment's rules in the user's crontab"),
    _s("experiments.crontabs", [], "crontab files that may hold experiments' rules", kind=list),
    _s(
        "experiments.system_crontabs",
        False,
        "those crontab files have a user field (/etc/crontab, /etc/cron.d)",
    ),
    _s(
        "experiments.refill_files",
        [],
        "YAML/TOML/JSON files whose keep-N/refill entries name experiments",
        kind=list,
    ),
    _s("experiments.idle_days", 7.0, "--list flags an active experiment with no job this long"),
    # -- cron (labctl cron: the sweep in the crontab) ------------------------------------
    _s("cron.every", "30m", "how often `labctl cron install` schedules the sweep"),
    _s(
        "cron.command",
        "",
        "what cron runs (empty: this checkout's scripts/sweep, else the sweep pipeline)",
    ),
    _s("cron.user", "", "whose crontab (empty: the current user's; another user needs root)"),
    _s("cron.file", "", "a crontab file to edit instead of the user's crontab"),
    _s("cron.system_format", False, "cron.file has a user field (/etc/crontab, /etc/cron.d)"),
    _s("cron.program", "crontab", "the crontab command (`crontab -l` reads, `crontab -` writes)"),
    # -- supervise (run a command, fix known failures, escalate the rest) -----------------
    _s("supervise.max_retries", 3, "re-runs after the first attempt before escalating"),
    _s("supervise.stall_after_s", 1800.0, "no output for this long: the child is hung"),
    _s("supervise.kill_grace_s", 10.0, "seconds between SIGTERM and SIGKILL (at most 30)"),
    _s(
        "supervise.allow_install",
        False,
        "let an install_module fix pip-install a missing module into the child's interpreter",
    ),
    _s(
        "supervise.notify",
        "",
        "command run on an escalation, with the escalation's .md path as its last argument",
        secret=True,
    ),
    _s("supervise.escalate_to", "", "directory that gets a copy of every escalation file"),
    _s(
        "supervise.keep_days",
        14.0,
        "finished runs' registrations and attempt logs are deleted after this (not escalations)",
    ),
    _s(
        "supervise.batch_size_args",
        [],
        "more spellings of the batch-size argument (added to the catalog's batch_size family)",
        kind=list,
    ),
    _s("supervise.scope_args", [], "more spellings of a step/epoch limit (family scope)"),
    _s(
        "supervise.grad_clip_args",
        [],
        "more spellings of a gradient-clipping argument (family grad_clip)",
        kind=list,
    ),
    _s(
        "supervise.num_workers_args",
        [],
        "more spellings of a DataLoader workers argument (family num_workers)",
        kind=list,
    ),
    # -- rl-health (a KILL / NO-KILL / WATCH look at RL jobs in untested settings) -------
    _s(
        "rl_health.untested_names",
        ["*smoke*", "*debug*", "*untested*", "test-*", "*-test", "*-test-*"],
        "running RL jobs whose names match these patterns (fnmatch) are untested",
        kind=list,
    ),
    _s(
        "rl_health.untested_tags",
        ["untested", "smoke", "debug"],
        "... or that carry a tag",
        kind=list,
    ),
    _s("rl_health.untested_age_h", 24.0, "... or that poll first saw this recently (0: never)"),
    _s("rl_health.head_bytes", 1048576, "log bytes read from the start (the baseline)"),
    _s("rl_health.tail_bytes", 8388608, "log bytes read from the end (the current window)"),
    _s("rl_health.samples", 8, "evenly spaced regions read between head and tail"),
    _s("rl_health.sample_bytes", 262144, "bytes per sampled region"),
    _s("rl_health.max_read_bytes", 16777216, "most bytes read per log or run file"),
    _s("rl_health.wandb", True, "also read the job's W&B run file, and the API with a key"),
    _s("rl_health.wandb_samples", 500, "history rows asked of the W&B API per metric"),
    _s("rl_health.min_steps", 20, "fewer training points: WATCH, never KILL"),
    _s("rl_health.kill_families", 2, "independent signal families needed for KILL"),
    _s("rl_health.warmup_steps", 5, "points skipped before the baseline window"),
    _s("rl_health.baseline_steps", 15, "points in the baseline window"),
    _s("rl_health.window_steps", 10, "smallest current window (points)"),
    _s("rl_health.window_share", 0.05, "current window: at least this share of all points"),
    _s("rl_health.sustain", 0.6, "share of the current window that must agree with a rule"),
    _s("rl_health.entropy_floor", 0.05, "entropy collapse: median below this ..."),
    _s("rl_health.entropy_collapse_ratio", 0.2, "... and below this share of the baseline"),
    _s("rl_health.entropy_drop", 0.6, "sudden entropy drop: this share within one window"),
    _s("rl_health.entropy_blowup_ratio", 3.0, "entropy blow-up: this many times the baseline ..."),
    _s("rl_health.entropy_max", 2.0, "... and above this"),
    _s("rl_health.grad_norm_ratio", 10.0, "grad explosion: median this many times the baseline"),
    _s("rl_health.nan_streak", 3, "non-finite grad norm or loss this many points in a row"),
    _s("rl_health.mismatch_ratio", 10.0, "train/inference mismatch: rise over its baseline"),
    _s("rl_health.mismatch_floor", 0.001, "mismatch below this level is noise"),
    _s("rl_health.log_ratio_max", 0.5, "|importance-sampling log-ratio| above this: drift"),
    _s("rl_health.kl_max", 1.0, "KL to the reference above this: blow-up ..."),
    _s("rl_health.kl_ratio", 50.0, "... or this many times its baseline ..."),
    _s("rl_health.kl_min", 0.2, "... and above this"),
    _s("rl_health.zero_std_frac", 0.95, "groups with all-equal rewards above this share: dead"),
    _s("rl_health.dead_grad", 1e-08, "grad norm at or below this: no update"),
    _s("rl_health.reward_noise", 3.0, "a reward change must exceed this many baseline MADs ..."),
    _s("rl_health.reward_rel", 0.25, "... and this share of the baseline (or 0.05)"),
    _s("rl_health.reward_drop", 0.5, "reward drop: this share of the baseline"),
    _s("rl_health.length_collapse_ratio", 0.3, "response length collapse: below this share"),
    _s("rl_health.clip_ratio_max", 0.9, "truncation: share of responses cut at the max length"),
    _s("rl_health.pinned_ratio", 0.98, "truncation: mean length at this share of the longest"),
    _s("rl_health.throughput_ratio", 10.0, "step time up (tokens/s down) this many times"),
    _s("rl_health.stall_factor", 10.0, "frozen: no step for this many median step times ..."),
    _s("rl_health.stall_min_s", 1800.0, "... and at least this many seconds"),
    # -- mcp (`labctl mcp`: every command as a tool for agents) -------------------------
    _s(
        "mcp.allow_writes",
        False,
        "serve the options and commands that change things (--apply, --register, log, …)",
    ),
    _s(
        "mcp.roots",
        [],
        "the only directories tools may read or write (empty: the state dir, the log dir "
        "and each cluster's log_roots)",
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
    # -- secrets -----------------------------------------------------------------------
    _s(
        "secrets.env",
        [],
        "more environment variables whose values are secrets (redacted everywhere)",
        kind=list,
    ),
    # -- backends ----------------------------------------------------------------------
    _s("github.token", "", "GitHub token", env=("GITHUB_TOKEN", "GH_TOKEN"), secret=True),
    _s("github.api_url", "https://api.github.com", "GitHub API URL", env=("GITHUB_API_URL",)),
    _s("hf.token", "", "Hugging Face token", env=("HF_TOKEN",), secret=True),
    _s("hf.endpoint", "https://huggingface.co", "Hugging Face Hub URL", env=("HF_ENDPOINT",)),
    _s("wandb.api_key", "", "W&B API key", env=("WANDB_API_KEY",), secret=True),
    _s("wandb.base_url", "https://api.wandb.ai", "W&B server URL", env=("WANDB_BASE_URL",)),
    _s("supabase.url", "", "Supabase project URL", env=("SUPABASE_URL",)),
    _s("supabase.key", "", "Supabase key", env=("SUPABASE_KEY",), secret=True),
    # -- prune-disk ----------------------------------------------------------------------
    _s("prune.min_free_gb", 20.0, "free space (GB) below which the disk needs pruning"),
    _s("prune.margin_gb", 5.0, "--apply frees until min_free_gb + margin_gb is free"),
    _s("prune.path", "", "the volume to keep free: a path on it (empty: $HOME)"),
    _s("prune.min_age_days", 2.0, "rules' default: keep anything used more recently"),
    _s("prune.workers", 0, "processes sizing one big tree (0: one per CPU, at most 4)"),
    # -- health ------------------------------------------------------------------------
    _s("health.volumes", ["~", "/tmp"], "paths whose volumes need free space", kind=list),
    _s("health.disk_min_free_gb", 20.0, "a volume with less free space (GB) fails"),
    _s("health.mem_min_available_gb", 2.0, "less MemAvailable (GB) fails"),
    _s("health.psi_some_avg60_max", 20.0, "memory pressure: % of time some task stalled (60 s)"),
    _s("health.psi_full_avg60_max", 5.0, "memory pressure: % of time all tasks stalled (60 s)"),
    _s("health.swap_max_used_pct", 80.0, "more swap in use (% of swap) fails"),
    _s("health.load_max_per_cpu", 2.0, "5-minute load average per CPU above this fails"),
    _s("health.top_processes", 10, "processes listed by RSS when memory is low"),
    _s(
        "database.url",
        "",
        "PostgreSQL URL (libpq PG* variables also work)",
        env=("DATABASE_URL",),
        secret=True,
    ),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}

# Sections holding arrays of tables (validated by the command that uses them).
# A dotted name ("prune.rules") is an array of tables inside a section: [[prune.rules]].
LIST_SECTIONS: dict[str, str] = {
    "clusters": "clusters to poll: name, host (`local` or an SSH alias), scheduler, …",
    "gates": "gates: name, table, [[gates.require]] benchmark/metric/threshold; or a streak",
    "prune.rules": "what prune-disk may delete: kind (hf_cache, traces, cache_dir, glob), "
    "root, min_age_days, keep, …",
}

# Tables nested in a section whose keys the command names (validated by that command).
SUBTABLES: dict[str, str] = {
    "merge_green.repos": 'per-repo overrides: [merge_green.repos."owner/name"] takes '
    "merge_method, approve, blocking_labels, update_branch, strict_skipped, allow_forks",
    "mcp.tools": '[mcp.tools."name"] per tool: enabled = false hides it, allow_writes = '
    "true|false overrides [mcp] allow_writes for it",
}

DEFAULT_CLUSTERS: list[dict[str, Any]] = [
    {"name": "local", "host": "local", "scheduler": "slurm"},
]
DEFAULT_PRUNE_RULES: list[dict[str, Any]] = [
    {"kind": "hf_cache"},
    {"kind": "traces", "root": "~/experiments/traces"},
]
# The tables each array has when the config file has none.
LIST_DEFAULTS: dict[str, list[dict[str, Any]]] = {
    "clusters": DEFAULT_CLUSTERS,
    "prune.rules": DEFAULT_PRUNE_RULES,
}
