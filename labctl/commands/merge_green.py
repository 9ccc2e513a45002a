"""`labctl merge-green [REPO ...]`: merge what is truly green, only where we own it.

For every open PR of the allowlisted repos (`[merge_green] allowlist`; REPO narrows it,
`owner/name#12` to one PR): green means every check run (all pages) and every commit
status on the head SHA finished and passed (skipped/neutral pass unless strict_skipped);
no CI reported yet is `waiting`. The merge pins the checked SHA; a head that moved is
`waiting`. Blocked with green checks: the review decision says why; labctl approves only
where `approve = true` and never the token's own PR. Stacked PRs: the parent merges
without deleting its branch, the child is retargeted to the parent's base and merges in a
later run, once its checks have run again on the new base (a PR whose base changed after a
check finished waits: `checks_predate_retarget`). A repo outside the allowlist, or whose
canonical name differs, is never read.

Default is a dry run (no write at all); `--apply` acts. One `pr` record per PR with its
decision: merged, would_merge, waiting, blocked, skipped, failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

import typer

from labctl.context import Context
from labctl.schemas import COMMON, INT_OR_NULL, STR_OR_NULL, record

DECISIONS = ["merged", "would_merge", "waiting", "blocked", "skipped", "failed"]
_CHECKS = {
    "type": ["object", "null"],
    "description": "check runs and commit statuses on the head SHA",
    "properties": {
        "check_runs": {"type": "integer", "minimum": 0},
        "statuses": {"type": "integer", "minimum": 0},
        "passed": {"type": "integer", "minimum": 0},
        "skipped": {"type": "integer", "minimum": 0},
        "neutral": {"type": "integer", "minimum": 0},
        "failed": {"type": "integer", "minimum": 0},
        "pending": {"type": "integer", "minimum": 0},
        "failing": {"type": "array", "items": {"type": "string"}},
        "waiting_on": {"type": "array", "items": {"type": "string"}},
    },
}
_REASON = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}
SCHEMAS = {
    **COMMON,
    "pr": record(
        "pr",
        "One open pull request and what merge-green decided (and, with --apply, did). "
        "decision: merged | would_merge (dry run) | waiting (a later run may merge) | "
        "blocked (a person must act; exit 1) | skipped (not ours to merge) | failed "
        "(labctl could not finish; exit 1). actions: the writes sent (dry run: that would "
        "be sent); applied: a write was carried out.",
        {
            "repo": {"type": "string"},
            "number": {"type": "integer", "minimum": 1},
            "title": {"type": "string"},
            "url": STR_OR_NULL,
            "author": STR_OR_NULL,
            "base": {"type": "string"},
            "head": {"type": "string"},
            "head_sha": STR_OR_NULL,
            "decision": {"enum": DECISIONS},
            "reason": _REASON,
            "message": {"type": "string"},
            "checks": _CHECKS,
            "mergeable_state": STR_OR_NULL,
            "review_decision": STR_OR_NULL,
            "stacked_on": INT_OR_NULL,
            "merge_method": {"enum": ["merge", "squash", "rebase", None]},
            "merge_commit_sha": STR_OR_NULL,
            "actions": {
                "type": "array",
                "items": {"enum": ["approve", "merge", "update_branch", "retarget"]},
            },
            "applied": {"type": "boolean"},
            "dry_run": {"type": "boolean"},
        },
        ["repo", "number", "decision", "reason", "message", "head_sha", "applied", "dry_run"],
    ),
    "repo": record(
        "repo",
        "A repo merge-green refused to touch (zero writes): not in the allowlist, renamed "
        "(GitHub's canonical name differs from the one asked for) or archived. Exit 1, "
        "except archived (GitHub takes no write there; drop it from the allowlist).",
        {
            "repo": {"type": "string"},
            "canonical": STR_OR_NULL,
            "decision": {"const": "skipped"},
            "reason": {"enum": ["not_allowlisted", "renamed", "archived"]},
            "message": {"type": "string"},
            "applied": {"const": False},
            "dry_run": {"type": "boolean"},
        },
        ["repo", "decision", "reason", "message", "applied", "dry_run"],
    ),
}
EXAMPLES = [
    "labctl merge-green                         # dry run over the allowlist",
    "labctl merge-green --apply                 # merge what is green (cron, scripts/sweep)",
    "labctl merge-green lab/trainer#42 --apply  # one PR",
    "labctl merge-green -f jsonl | jq 'select(.decision == \"blocked\")'",
]


def run(
    lc: Context,
    repos: list[str],
    *,
    apply: bool,
    merge_method: str | None = None,
    strict_skipped: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[dict[str, Any]]:
    from labctl.errors import ConfigError
    from labctl.merge import load, targets

    settings = load(lc.config, merge_method=merge_method, strict_skipped=strict_skipped)
    wanted = targets(repos, settings.allowlist)
    if not wanted:
        lc.note("merge-green: merge_green.allowlist is empty; nothing to do")
        return
    token = lc.config.get("github.token")
    if not token and any(t.repo in settings.allowlist for t in wanted):
        raise ConfigError("merge-green needs a GitHub token: set GITHUB_TOKEN or GH_TOKEN")
    yield from _run(lc, settings, wanted, token, apply=apply, sleep=sleep)


def _run(
    lc: Context,
    settings: Any,
    wanted: list[Any],
    token: str,
    *,
    apply: bool,
    sleep: Callable[[float], None],
) -> Iterator[dict[str, Any]]:
    from labctl.backends.github import ClientOptions, GitHub
    from labctl.merge import run as merge_run

    get = lc.config.get
    options = ClientOptions(
        token=token,
        api_url=get("github.api_url"),
        timeout_s=get("merge_green.timeout_s"),
        request_interval_s=get("merge_green.request_interval_s"),
        write_interval_s=get("merge_green.write_interval_s"),
    )
    gh = GitHub(options, lc.clock)
    try:
        if apply:  # two --apply runs at once would race each other's writes
            from labctl.fsops import state_lock

            with state_lock(lc.state_dir, "merge-green", wait_s=get("merge_green.lock_wait_s")):
                yield from merge_run(gh, settings, wanted, apply=apply, sleep=sleep)
        else:
            yield from merge_run(gh, settings, wanted, apply=apply, sleep=sleep)
    finally:
        gh.close()


def cli(
    lc: Context,
    repos: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[REPO]...",
            help="owner/name or owner/name#NUMBER (default: every repo of the allowlist).",
            show_default=False,
        ),
    ] = None,
    apply: Annotated[
        bool,
        typer.Option("--apply/--dry-run", help="Merge, approve, retarget (default: dry run)."),
    ] = False,
    merge_method: Annotated[
        Literal["merge", "squash", "rebase"] | None,
        typer.Option("--merge-method", help="Override merge_green.merge_method for this run."),
    ] = None,
    strict_skipped: Annotated[
        bool,
        typer.Option("--strict-skipped", help="Skipped and neutral checks are not a pass."),
    ] = False,
) -> int:
    """Merge open PRs whose CI is truly green, in allowlisted repos only (dry run by default)."""
    return lc.emit(
        run(
            lc,
            list(repos or []),
            apply=apply,
            merge_method=merge_method,
            strict_skipped=strict_skipped,
        )
    )
