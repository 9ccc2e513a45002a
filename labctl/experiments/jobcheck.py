"""Step 1: may the experiment close? Not while a job of it is pending or running, nor
while the job information may be missing one.

Jobs come from `--jobs` poll records or poll's state store (the command reads them), and
belong to the experiment by the job name patterns or the work dir. The information is
incomplete when the store is older than `[experiments] max_state_age_s` or a configured
cluster was never polled successfully (`stale_job_state`), or when the `--jobs` records
carry error records — a cluster poll could not read (`jobs_incomplete`). `--force
--reason` goes on past either, and the journal and CLOSED.md say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labctl.experiments.journal import Journal
from labctl.experiments.match import folder_forms, is_active_job, job_belongs, job_ref
from labctl.experiments.model import Record, Setup, Step, Stop


def _live_jobs(s: Setup) -> list[Record]:
    dirs = [*folder_forms(s.active), *folder_forms(s.complete)]
    return [j for j in s.jobs or [] if is_active_job(j) and job_belongs(j, s.job_patterns, dirs)]


def check_jobs(s: Setup, journal: Journal | None) -> Step:
    if not s.active.is_dir():
        return Step("jobs", "skipped", "the folder was already moved")
    if s.jobs is None:
        note = "no job information (run `labctl poll` first, or pipe its records: --jobs -)"
        if not s.force:
            raise Stop(Step("jobs", "refused", note), "no_job_state")
        return Step("jobs", "forced", f"{note}; going on because of --force: {s.reason}")
    live = _live_jobs(s)
    refs = [job_ref(j) for j in live]
    names = ", ".join(f"{r['cluster']}/{r['job_id']} {r['name']}" for r in refs[:5])
    if live and not s.force:
        raise Stop(
            Step(
                "jobs",
                "refused",
                f"{len(live)} job(s) still pending or running: {names}",
                {"jobs": refs},
            ),
            "jobs_active",
        )
    problem = s.jobs_problem
    if problem is not None and not s.force:
        note = f"{problem[1]}: a job of {s.name} may be pending or running unseen"
        raise Stop(Step("jobs", "refused", f"{note} (--force --reason overrides)"), problem[0])
    if not live and problem is None:
        return Step("jobs", "done", f"no pending or running job ({s.jobs_source})")
    if journal is not None:
        journal.data["forced"] = True
        journal.data["forced_jobs"] = refs
        journal.data["forced_unknown"] = problem[1] if problem else None
    past = [f"{len(live)} pending or running job(s) ({names})"] if live else []
    past += [f"incomplete job information ({problem[1]})"] if problem else []
    msg = f"--force: going on past {' and '.join(past)}: {s.reason}"
    return Step("jobs", "forced", msg, {"jobs": refs})


def stream_problem(records: Sequence[Record]) -> tuple[str, str] | None:
    """Error records in --jobs (a cluster poll could not read, a line that was not a
    record) mean jobs may be missing; poll's notes about its own store do not."""
    errors = [r for r in records if r.get("kind") == "error" and r.get("stage") != "state"]
    if not errors:
        return None
    first = errors[0]
    where = f"{first['cluster']}: " if first.get("cluster") else ""
    what = f"{where}{first.get('reason')}: {first.get('message')}"
    return "jobs_incomplete", f"the --jobs records carry {len(errors)} error record(s) ({what})"


def store_problem(
    polled_at: Mapping[str, float | None], now: float, max_age_s: float
) -> tuple[str, str] | None:
    """A cluster the store never had a good poll of, or not for too long: jobs may be
    missing (`polled_at`: cluster -> when its last good poll ended)."""
    never = sorted(c for c, t in polled_at.items() if t is None)
    if never:
        return "stale_job_state", (
            f"poll's store has never had a successful poll of {', '.join(never)} "
            "(run `labctl poll`, or pipe its records: --jobs -)"
        )
    ages_s = {c: now - t for c, t in polled_at.items() if t is not None}
    old = sorted((c, age) for c, age in ages_s.items() if age > max_age_s)
    if old:
        ages = ", ".join(f"{c} {age / 60:.0f} min ago" for c, age in old)
        return "stale_job_state", (
            f"poll's store is stale: last good poll of {ages} (older than "
            f"[experiments] max_state_age_s = {max_age_s:g} s; run `labctl poll` first)"
        )
    return None
