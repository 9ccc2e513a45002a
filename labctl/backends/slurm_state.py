"""Read a SLURM cluster's job state in one round trip, through the Transport.

One bash script (see `labctl.backends.script`) prints the cluster's clock, the login user,
then runs, with SLURM_TIME_FORMAT=%s TZ=UTC SLURM_BITSTR_LEN=0:

  squeue --noheader --states=all [--users=U|--accounts=A] --Format=<fields, \\x1f suffix>
      every job slurmctld still holds: pending (held and dependency-blocked included),
      running, and jobs that ended less than MinJobAge ago;
  sacct --noheader --parsable2 --delimiter=\\x1f --format=<fields> --duplicates --jobs=<ids>
      (chunks of <= 200) the jobs the state store last saw alive: by id, because sacct's
      windowed query omits held, dependency-blocked and cancelled-while-pending jobs; with
      --duplicates, because `--jobs` alone returns only a job's newest record, and a
      requeued job's new PENDING record hides the attempt that was preempted;
  sacct ... --starttime=<window start> --endtime=now --state=<every state> [...]
      jobs never seen before (started and ended between two polls), bounded by a window
      from the last good poll: never sacct's default window, never a full-history scan.
      The explicit --state list makes it include jobs cancelled while pending.

sacct runs without -X: the `.batch` step rows carry the real exit code. The output is
parsed with `labctl.parse.slurm`; anything that fails (ssh, a command, the parse) raises a
BackendError whose reason goes into the cluster's `error` record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.backends.script import (
    LOGIN_USER,
    Script,
    Section,
    clock_of,
    run_script,
    shell_join,
)
from labctl.backends.transport import Transport
from labctl.errors import BackendError

_NO_ACCOUNTING = re.compile(
    r"accounting storage is disabled|slurmdbd.*(?:not|n't) (?:running|responding)|"
    r"Unable to find plugin: accounting_storage|not configured with slurmdbd",
    re.IGNORECASE,
)


# With an explicit state list the windowed sacct also returns jobs cancelled while pending
# (no eligible time: the plain window skips them). SE is not accounted ("fatal: job state
# SE is not supported"); still-pending held/dependency jobs come from squeue.
WINDOW_STATES = "PD,R,S,CD,F,CA,TO,NF,OOM,PR,DL,BF,RQ,RS,RV"


@dataclass(frozen=True)
class SlurmQuery:
    """What to ask. `users` empty and not `all_users`: the login user's jobs."""

    users: Sequence[str] = ()
    accounts: Sequence[str] = ()
    all_users: bool = False
    known_ids: Sequence[str] = ()  # raw ids the store last saw alive: sacct --jobs
    since: float | None = None  # sacct window start (epoch, cluster clock); None: no window
    accounting: bool = True


@dataclass
class SlurmState:
    now: float  # the cluster's clock when the script ran
    user: str | None  # the login user on the cluster
    squeue: list[dict[str, Any]]
    sacct: list[dict[str, Any]]  # one summarised record per job (latest attempt)
    commands: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0


def _user_args(query: SlurmQuery) -> tuple[list[str], list[str], bool]:
    if query.all_users:
        return [], list(query.accounts), True
    users = list(query.users) or ([] if query.accounts else [LOGIN_USER])
    return users, list(query.accounts), False


def state_commands(query: SlurmQuery) -> list[tuple[str, list[str]]]:
    """(section name, argv) of every scheduler call one poll makes, in order."""
    from labctl.parse.slurm import sacct_argv, sacct_argv_chunks, squeue_argv

    users, accounts, all_users = _user_args(query)
    calls: list[tuple[str, list[str]]] = [
        ("squeue", squeue_argv(users=users, accounts=accounts)),
    ]
    if not query.accounting:
        return calls
    for i, argv in enumerate(
        sacct_argv_chunks(
            query.known_ids, users=users, accounts=accounts, all_users=all_users, duplicates=True
        )
    ):
        calls.append((f"sacct.ids.{i}", argv))
    if query.since is not None:
        window = sacct_argv(since=query.since, users=users, accounts=accounts, all_users=all_users)
        calls.append(("sacct.window", [*window, f"--state={WINDOW_STATES}"]))
    return calls


def state_script(query: SlurmQuery, path_prepend: Sequence[str] = ()) -> tuple[Script, list[str]]:
    from labctl.parse.slurm import SLURM_ENV

    script = Script(env=SLURM_ENV, path_prepend=path_prepend)
    calls = state_commands(query)
    # squeue, the by-id sacct chunks and the windowed sacct in three concurrent lanes: at
    # most two sacct RPCs at a time, and the poll takes as long as the slowest lane
    by_lane: dict[str, list[tuple[str, list[str]]]] = {"squeue": [], "sacct.ids": [], "w": []}
    for name, argv in calls:
        lane = name if name == "squeue" else ("sacct.ids" if name.startswith("sacct.ids") else "w")
        by_lane[lane].append((name, argv))
    script.lanes(list(by_lane.values()))
    shown = [shell_join(argv).replace('"$LABCTL_USER"', "$USER") for _, argv in calls]
    return script, shown


def _check(sec: Section | None, name: str) -> Section:
    if sec is None or sec.rc is None:
        raise BackendError(f"{name}: no output section", reason="bad_output")
    cmd = name.split(".", maxsplit=1)[0]
    tail = sec.stderr_line() or sec.text.strip()[:300] or "no stderr"
    if cmd == "sacct" and (_NO_ACCOUNTING.search(tail) or _NO_ACCOUNTING.search(sec.text[:2000])):
        raise BackendError(
            f"sacct: no job accounting on this cluster ({tail}); set accounting = false "
            "for it to poll squeue alone",
            reason="no_accounting",
        )
    if sec.rc == 0:
        return sec
    if sec.rc == 127:
        raise BackendError(
            f"{cmd} not found on the cluster's PATH: {tail}", reason="command_failed"
        )
    raise BackendError(f"{cmd} exited {sec.rc}: {tail}", reason="command_failed")


def read_state(
    transport: Transport,
    query: SlurmQuery,
    *,
    timeout: float,
    path_prepend: Sequence[str] = (),
) -> SlurmState:
    """Run squeue (+ sacct) on the cluster in one script and parse everything."""
    from labctl.parse.slurm import SACCT_FIELDS, SlurmParseError, sacct_jobs, squeue_jobs
    from labctl.parse.slurm.table import lines_of

    script, shown = state_script(query, path_prepend)
    sections, elapsed = run_script(transport, script, timeout=timeout, what="squeue/sacct")
    now = clock_of(sections)
    user = sections.get("user", Section("user")).text.strip() or None
    squeue = _check(sections.get("squeue"), "squeue")
    sacct_secs = [_check(sections.get(n), n) for n, _ in state_commands(query)[1:]]
    try:
        live = squeue_jobs(squeue.text)
        done: list[dict[str, Any]] = []
        for sec in sacct_secs:
            text, sec.out = sec.text, b""  # the bytes are not needed twice
            done.extend(sacct_jobs(rejoin_lines(lines_of(text), len(SACCT_FIELDS))))
    except SlurmParseError as exc:
        raise BackendError(f"unexpected scheduler output: {exc}", reason="bad_output") from None
    return SlurmState(
        now=now,
        user=user,
        squeue=live,
        sacct=one_per_attempt(done),
        commands=shown,
        elapsed_s=elapsed,
    )


def one_per_attempt(jobs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per attempt (raw id, displayed id, submit time): the by-id and the
    windowed sacct overlap (the later answer wins). Attempts of a requeued job, and a job
    whose id was reused after a controller reset, stay apart: poll's merge tells them apart
    (`labctl.poll.merge.fold_attempts`)."""
    best: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    for rec in jobs:
        best[(rec["job_id_raw"], rec["job_id"], rec["submit_epoch"])] = rec
    return list(best.values())


def rejoin_rows(text: str, n_fields: int, delimiter: str = "\x1f") -> str:
    """Undo newlines inside a middle field (SubmitLine of `sbatch --wrap "a\nb"`): a line
    with some but too few delimiters is glued to the following lines, the newlines becoming
    spaces, until the row has all its cells. A line with no delimiter at all right after a
    complete row continues the last field (the job name) and is left for the parser."""
    return "\n".join(rejoin_lines(text.split("\n"), n_fields, delimiter))


def rejoin_lines(lines: Iterable[str], n_fields: int, delimiter: str = "\x1f") -> Iterator[str]:
    """`rejoin_rows`, line by line."""
    want = n_fields - 1
    pending: list[str] = []
    count = 0
    for line in lines:
        if not pending:
            n = line.count(delimiter)
            if n == 0 or n >= want:
                yield line
                continue
            pending, count = [line], n
            continue
        pending.append(line)
        count += line.count(delimiter)
        if count >= want:
            yield " ".join(pending)
            pending, count = [], 0
    yield from pending  # an incomplete row: the parser reports it
