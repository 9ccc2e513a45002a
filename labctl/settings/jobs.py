"""Watching and running jobs: poll, progress, guard, experiments, cron, supervise."""

from __future__ import annotations

from labctl.settings.setting import Setting
from labctl.settings.setting import setting as _s

# poll
POLL: tuple[Setting, ...] = (
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
)


# progress (poll: is a RUNNING job moving?)
PROGRESS: tuple[Setting, ...] = (
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
)


# guard (standing guardrails)
GUARD: tuple[Setting, ...] = (
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
)


# experiments (migrate-experiment; guard's concluded rules)
EXPERIMENTS: tuple[Setting, ...] = (
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
    _s(
        "experiments.max_state_age_s",
        3900.0,
        "migrate-experiment refuses when poll's store is older (or pipe fresh records: --jobs -)",
    ),
)


# cron (labctl cron: the sweep in the crontab)
CRON: tuple[Setting, ...] = (
    _s("cron.every", "30m", "how often `labctl cron install` schedules the sweep"),
    _s(
        "cron.command",
        "",
        "what cron runs (empty: this checkout's scripts/sweep, else the sweep labctl ships)",
    ),
    _s("cron.user", "", "whose crontab (empty: the current user's; another user needs root)"),
    _s("cron.file", "", "a crontab file to edit instead of the user's crontab"),
    _s("cron.system_format", False, "cron.file has a user field (/etc/crontab, /etc/cron.d)"),
    _s("cron.program", "crontab", "the crontab command (`crontab -l` reads, `crontab -` writes)"),
)


# supervise (run a command, fix known failures, escalate the rest)
SUPERVISE: tuple[Setting, ...] = (
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
)
