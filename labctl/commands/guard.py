"""`labctl guard` and `labctl guard admit`: the standing guardrails, checked.

`labctl poll | labctl guard` passes every record through and adds one `violation` record
per broken `[[guard.rules]]` rule: max_running (RUNNING jobs per cluster, by bucket or
name pattern), concluded (no pending or running job of a concluded series), max_count (a
resource listed by a command, against a hard cap) and forbid_setting (a key launch
configs must not set, read with the YAML/TOML/JSON parsers). Exit 1 on any violation.

`labctl guard admit --cluster C --name NAME` is the admission check a launch script runs
before submitting: exit 0 when starting that job breaks no rule, 1 (with the violations)
otherwise — from the jobs the last poll stored, or a fresh poll of the cluster with
--poll. For a max_running limit it counts the pending jobs in scope as well as the running
ones (each will take a slot when it starts), while `labctl guard` on records counts
RUNNING jobs (`include_pending` in the rule overrides both). A stale or missing poll
refuses admission rather than guess:

    labctl guard admit --cluster c1 --name rl-grpo-v4 --bucket rl && sbatch rl-grpo-v4.sh

guard never cancels, kills or edits anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.cli import EXIT_CODES_HELP, with_context
from labctl.context import Context
from labctl.schemas import COMMON, INT_OR_NULL, STR_OR_NULL, TIME, record

_JOB_REF = {
    "type": "object",
    "properties": {
        "cluster": STR_OR_NULL,
        "job_id": STR_OR_NULL,
        "name": STR_OR_NULL,
        "state": STR_OR_NULL,
        "verdict": STR_OR_NULL,
    },
}
SCHEMAS = {
    **COMMON,
    "violation": record(
        "violation",
        "One broken guard rule (per cluster for a per-cluster limit): how many against the "
        "limit, and the jobs, listed items or config files involved. A job rule's `count` "
        "is `running` + `pending` (+1 for the job guard admit was asked about).",
        {
            "rule": {"type": "string"},
            "rule_kind": {"enum": ["max_running", "concluded", "max_count", "forbid_setting"]},
            "cluster": STR_OR_NULL,
            "count": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 0},
            "running": {"type": "integer", "minimum": 0, "description": "job rules"},
            "pending": {
                "type": "integer",
                "minimum": 0,
                "description": "job rules: pending jobs counted (guard admit, include_pending)",
            },
            "jobs": {"type": "array", "items": _JOB_REF},
            "items": {"type": "array"},
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "key_path": {"type": "string"},
                        "value": {},
                        "line": INT_OR_NULL,
                    },
                    "required": ["path", "key_path", "value", "line"],
                },
            },
            "message": {"type": "string"},
        },
        ["rule", "rule_kind", "cluster", "count", "limit", "jobs", "message"],
    ),
    "admission": record(
        "admission",
        "guard admit's answer: may this job start? (admitted false: exit 1)",
        {
            "cluster": {"type": "string"},
            "name": {"type": "string"},
            "bucket": {"type": "string"},
            "source": {"enum": ["store", "poll"]},
            "as_of": TIME,
            "admitted": {"type": "boolean"},
            "violations": {"type": "integer", "minimum": 0},
            "reason": {"enum": [None, "violation", "stale_state", "check_failed"]},
            "message": {"type": "string"},
        },
        ["cluster", "name", "admitted", "violations", "source", "as_of", "message"],
    ),
    "*": {"description": "Records read on stdin pass through unchanged.", "type": "object"},
}
EXAMPLES = [
    "labctl poll | labctl guard | labctl table",
    "labctl guard admit --cluster c1 --name rl-grpo-v4 --bucket rl && sbatch rl-grpo-v4.sh",
    "labctl guard admit --cluster c1 --name eval-mmlu --poll   # fresh poll first",
    "labctl guard --input /dev/null     # only the config and resource rules",
]

app = typer.Typer(
    help="Check the standing guardrails ([[guard.rules]]) against records, or admit a job."
    "\n\n`labctl poll | labctl guard` passes records through and adds one `violation` per "
    "broken rule (exit 1 on any). `labctl guard admit --cluster C --name NAME [--bucket rl] "
    "[--poll] && sbatch ...` is the admission check before a launch. guard never cancels, "
    "kills or edits anything."
    "\n\nRules, one `[[guard.rules]]` table each (optional `name`, `message`): "
    "max_running (`limit`; `bucket` and/or `names` globs; `per` = cluster|all; `clusters`; "
    "`include_pending`: unset, guard counts RUNNING jobs and guard admit running + pending "
    "ones), concluded (`names` globs, `experiments`, `complete = true` for "
    "every folder under [experiments] root/complete), max_count (`command` printing JSON "
    "rows, `rows` path, `where` = {field = glob}, `label`, `limit`, `host`), "
    "forbid_setting (`files` globs, `key` dotted path or bare name, `value`, default "
    "true; read with the YAML/TOML/JSON parsers).",
    epilog=EXIT_CODES_HELP,
    add_completion=False,
    rich_markup_mode=None,
    invoke_without_command=True,
)


def inputs(lc: Context) -> Any:
    """The rules and everything they need from the config and the experiments root."""
    from labctl.experiments.survey import complete_names
    from labctl.guard.core import GuardInputs, concluded_patterns
    from labctl.guard.rules import parse_rules
    from labctl.render.buckets import rules_from_config

    cfg = lc.config
    rules = parse_rules(cfg.get("guard.rules"))
    templates = cfg.get("experiments.job_patterns")
    complete: list[str] = []
    if any(r.complete for r in rules):
        complete = complete_names(Path(cfg.get("experiments.root")).expanduser())
    return GuardInputs(
        rules=rules,
        buckets=rules_from_config(cfg.section("buckets")),
        patterns_of={
            r.name: concluded_patterns(r, templates, complete)
            for r in rules
            if r.kind == "concluded"
        },
        base=Path.cwd(),
    )


@app.callback()
def check(
    ctx: typer.Context,
    input: Annotated[
        Path | None, typer.Option("--input", "-i", help="Read records from FILE.")
    ] = None,
) -> int:
    """Pass records through; add one `violation` per broken rule (exit 1 on any)."""
    if ctx.invoked_subcommand:
        return 0
    return int(with_context("guard")(_check)(ctx, input=input))


def _check(lc: Context, input: Path | None) -> int:
    from labctl.guard.core import check as run_check
    from labctl.stream import read_records

    return lc.emit(run_check(inputs(lc), read_records(lc, input)))


def _jobs(lc: Context, cluster: str, fresh: bool) -> tuple[list[dict[str, Any]], Any, str]:
    """(job records, when the cluster was last polled, source) for an admission."""
    from labctl.cluster.config import configured_clusters
    from labctl.guard.stored import stored_jobs

    names = [c.name for c in configured_clusters(lc.config)]
    if cluster not in names:
        from labctl.errors import UsageError

        raise UsageError(f"--cluster {cluster!r}: no such cluster ({', '.join(names)})")
    if not fresh:
        stored = stored_jobs(lc.state_dir, names)
        return stored.records, stored.polled_at.get(cluster), "store"
    from labctl.commands.poll import run as poll_run
    from labctl.errors import BackendError

    polled = list(poll_run(lc, [cluster], None, False))
    errors = [r for r in polled if r.get("kind") == "error" and r.get("stage") != "state"]
    for fault in (r for r in polled if r.get("kind") == "error" and r.get("stage") == "state"):
        lc.note(str(fault.get("message")))  # poll's store, not the jobs: they are right
    if errors:
        raise BackendError(str(errors[0].get("message")), reason=str(errors[0].get("reason")))
    stored = stored_jobs(lc.state_dir, names)  # after the poll: it resets a broken store
    others = [r for r in stored.records if r.get("cluster") != cluster]
    return [*others, *(r for r in polled if r.get("kind") == "job")], lc.clock(), "poll"


@app.command("admit")
@with_context("guard admit")
def admit(
    lc: Context,
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="Where the job would run.")],
    name: Annotated[str, typer.Option("--name", "-n", help="The job's name.")],
    bucket: Annotated[
        str | None, typer.Option("--bucket", help="RL, SFT, Datagen, Eval (else by name).")
    ] = None,
    partition: Annotated[str | None, typer.Option("--partition", help="Its partition.")] = None,
    poll: Annotated[
        bool, typer.Option("--poll", help="Poll the cluster now instead of using the store.")
    ] = False,
) -> int:
    """May this job start? Queued jobs count too; exit 0 when it breaks no rule, else 1."""
    from labctl.guard.core import Candidate
    from labctl.guard.core import admit as run_admit
    from labctl.render.buckets import ALIASES

    if bucket is not None and bucket.lower() not in ALIASES:
        from labctl.errors import UsageError

        raise UsageError(f"--bucket {bucket!r}: use RL, SFT, Datagen, Eval or Other")
    guard_inputs = inputs(lc)
    jobs, polled_at, source = _jobs(lc, cluster, poll)

    def records() -> Iterator[dict[str, Any]]:
        yield from run_admit(
            guard_inputs,
            Candidate(cluster, name, ALIASES[bucket.lower()] if bucket else None, partition),
            jobs,
            source=source,
            polled_at=polled_at,
            now=lc.clock(),
            max_age_s=lc.config.get("guard.max_state_age_s"),
        )

    return lc.emit(records())
