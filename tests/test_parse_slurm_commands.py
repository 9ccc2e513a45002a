"""argv builders, log path expansion, verdict mapping and kill fingerprints (the verdicts
of parsed records through `labctl.poll.verdict`, the one place that decides them)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers.verdicts import slurm_verdict, with_verdicts

from labctl.parse.slurm import (
    FIELD_DELIMITER,
    SACCT_FIELDS,
    SQUEUE_FIELDS,
    LogJob,
    env_prefix,
    expand_log_path,
    parse_delimited,
    resolve_log_paths,
    sacct_argv,
    sacct_argv_chunks,
    sacct_jobs,
    scontrol_show_job_argv,
    squeue_argv,
    squeue_format_arg,
    squeue_jobs,
    submit_line_log_patterns,
)
from labctl.parse.slurm.table import SlurmParseError
from labctl.verdicts import SCHEDULER_VERDICTS as VERDICTS
from labctl.verdicts import kill_markers

FIX = Path(__file__).parent / "fixtures" / "slurm"

# ------------------------------------------------------------------------- argv


def test_sacct_window_argv() -> None:
    argv = sacct_argv(since=1796063079, users=["alice", "bob"])
    assert argv[:3] == ["sacct", "--noheader", "--parsable2"]
    assert f"--delimiter={FIELD_DELIMITER}" in argv
    fmt = next(a for a in argv if a.startswith("--format="))
    assert fmt.split("=", 1)[1].split(",")[-1] == "JobName"  # name LAST
    assert "--starttime=2026-11-30T18:24:39" in argv and "--endtime=now" in argv
    assert "--user=alice,bob" in argv
    assert "--allocations" not in argv  # steps are needed for the real exit code
    assert not any(a.startswith("--jobs") for a in argv)


def test_sacct_never_runs_with_the_default_window() -> None:
    with pytest.raises(ValueError, match="window"):
        sacct_argv()


def test_sacct_job_id_argv_has_no_window_and_chunks_at_200() -> None:
    argv = sacct_argv(job_ids=["6", "20", "7_2"])
    assert "--jobs=6,20,7_2" in argv
    assert not any(a.startswith("--starttime") for a in argv)
    ids = [str(i) for i in range(1, 451)] + ["5", "5"]
    chunks = sacct_argv_chunks(ids, accounts=["ml"])
    assert len(chunks) == 3
    lists = [next(a for a in c if a.startswith("--jobs=")).split("=")[1].split(",") for c in chunks]
    assert [len(x) for x in lists] == [200, 200, 50]
    assert [i for chunk in lists for i in chunk] == [str(i) for i in range(1, 451)]  # dedup
    assert all("--accounts=ml" in c and "--allusers" in c for c in chunks)
    with pytest.raises(ValueError):
        sacct_argv(job_ids=[str(i) for i in range(201)])


def test_argv_rejects_commas_inside_list_items() -> None:
    with pytest.raises(ValueError):
        squeue_argv(users=["a,b"])


def test_squeue_argv_and_format() -> None:
    argv = squeue_argv(users=["alice"], accounts=["ml"])
    assert argv[:3] == ["squeue", "--noheader", "--states=all"]
    assert "--users=alice" in argv and "--accounts=ml" in argv and "--array" not in argv
    fmt = argv[-1].split("=", 1)[1]
    tokens = fmt.split(",")
    assert tokens[-1] == "Name:"  # width 0, no suffix: unpadded, name last
    assert all(t.endswith(":" + FIELD_DELIMITER) for t in tokens[:-1])
    assert [t.split(":")[0] for t in tokens] == list(SQUEUE_FIELDS)
    assert "STDOUT" in SQUEUE_FIELDS and "WorkDir" in SQUEUE_FIELDS
    with pytest.raises(ValueError):
        squeue_format_arg(delimiter=",")
    with pytest.raises(ValueError):
        squeue_format_arg(delimiter="5")
    assert "--array" in squeue_argv(expand_arrays=True)


def test_env_and_scontrol_argv() -> None:
    assert env_prefix() == ["env", "SLURM_TIME_FORMAT=%s", "TZ=UTC", "SLURM_BITSTR_LEN=0"]
    assert scontrol_show_job_argv("16") == ["scontrol", "--oneliner", "show", "job", "16"]


def test_default_formats_parse_what_they_ask_for() -> None:
    """A row shaped like our sacct/squeue commands' output parses into a full record."""
    sacct_cells = {f: "" for f in SACCT_FIELDS} | {
        "JobIDRaw": "20",
        "JobID": "6_2",
        "State": "FAILED",
        "ExitCode": "1:0",
        "Submit": "1796063078",
        "Start": "1796063079",
        "End": "1796063082",
        "ElapsedRaw": "3",
        "Timelimit": "UNLIMITED",
        "NodeList": "vm",
        "User": "root",
        "UID": "0",
        "JobName": "sweep|array",
    }
    line = FIELD_DELIMITER.join(sacct_cells[f] for f in SACCT_FIELDS)
    (job,) = with_verdicts(sacct_jobs(line))
    assert (job["job_id"], job["job_id_raw"], job["name"], job["verdict"]) == (
        "6_2",
        20,
        "sweep|array",
        "failed",
    )
    assert (job["exit_code"], job["uid"], job["elapsed_s"]) == (1, 0, 3)
    squeue_cells = {f: "" for f in SQUEUE_FIELDS} | {
        "JobArrayID": "7_[2-3%1]",
        "JobID": "7",
        "ArrayJobID": "7",
        "ArrayTaskID": "2-3%1",
        "State": "PENDING",
        "Reason": "JobArrayTaskLimit",
        "UserName": "root",
        "TimeUsed": "0:00",
        "TimeLimit": "UNLIMITED",
        "SubmitTime": "1796063078",
        "StartTime": "N/A",
        "EndTime": "N/A",
        "exit_code": "0",
        "RestartCnt": "0",
        "STDOUT": "/logs/%x-%A_%a.out",
        "Name": "sweep",
    }
    line = FIELD_DELIMITER.join(squeue_cells[f] for f in SQUEUE_FIELDS)
    (sq,) = with_verdicts(squeue_jobs(line))
    assert (sq["job_id"], sq["array_tasks"], sq["array_throttle"]) == ("7_[2-3%1]", "2-3%1", 1)
    assert (sq["verdict"], sq["cause"], sq["exit_code"]) == ("pending", "array_throttle", None)


def test_real_22_05_output_of_our_own_commands() -> None:
    """Shape check against output the recommended commands produced on slurm-wlm 22.05.8
    (captured while writing this module; see the test's lines)."""
    sq_line = (
        "3\x1f3\x1f3\x1fN/A\x1fCOMPLETED\x1fNone\x1froot\x1froot\x1fdebug\x1f0:00\x1f"
        "UNLIMITED\x1f1796070532\x1f1796070532\x1f1796070533\x1f1796070533\x1fvm\x1f1\x1f0"
        "\x1f0\x1f/tmp/slurm-3.out\x1f/tmp/slurm-3.out\x1f/tmp\x1fwrap\n"
    )
    (sq,) = with_verdicts(squeue_jobs(sq_line))
    assert (sq["job_id"], sq["verdict"], sq["restarts"], sq["exit_code"]) == (
        "3",
        "completed",
        0,
        0,
    )
    assert sq["stdout_pattern"] == "/tmp/slurm-3.out"  # no -o: squeue prints the default
    sa = (
        "2\x1f2\x1fCANCELLED\x1f0:15\x1f0:0\x1fNone\x1f1796070484\x1f1796070484\x1f"
        "1796070494\x1f1796070505\x1f11\x1fUNLIMITED\x1fUNLIMITED\x1f00:00:00\x1fvm\x1f1\x1f"
        "debug\x1froot\x1f0\x1froot\x1f/work/main\x1fsbatch --wrap sleep 200\x1fwrap\n"
        "2.batch\x1f2.batch\x1fCANCELLED\x1f0:15\x1f\x1f\x1f1796070485\x1f1796070485\x1f"
        "1796070485\x1f1796070505\x1f20\x1f\x1f\x1f00:00:00\x1fvm\x1f1\x1f\x1f\x1f\x1froot"
        "\x1f\x1f\x1fbatch\n"
    )
    (job,) = with_verdicts(sacct_jobs(sa))
    assert (job["verdict"], job["exit_code"], job["signal"], job["time_limit_s"]) == (
        "cancelled",
        0,
        15,
        None,
    )
    assert job["submit_line"] == "sbatch --wrap sleep 200"


def test_short_rows_are_bad_output() -> None:
    with pytest.raises(SlurmParseError, match="line 2"):
        parse_delimited("1|a|b\n1|a\n", ("A", "B", "C"), "|", free_text="A")
    with pytest.raises(SlurmParseError):
        sacct_jobs("1\x1fCOMPLETED\n")


def test_parse_20000_sacct_rows_quickly() -> None:
    line = (FIX / "sacct-parsable2-delimiter-0x1f.txt").read_text()
    fields = ["JobID", "JobName", "State", "ExitCode", "Elapsed", "Start", "End"]
    fields += ["NodeList", "Partition", "User"]
    rows = line.splitlines()
    text = "\n".join((rows * (20000 // len(rows) + 1))[:20000])
    t0 = time.perf_counter()
    jobs = sacct_jobs(text, fields, FIELD_DELIMITER)
    took = time.perf_counter() - t0
    assert len(jobs) > 5000
    assert took < 5.0, f"{took:.2f}s for 20,000 rows"


# ------------------------------------------------------------------------- log paths

TASK = LogJob(
    job_id=20,
    array_job_id=6,
    array_task_id=2,
    name="sweep-array",
    user="root",
    node="vm",
    work_dir="/work",
)
PLAIN = LogJob(job_id=16, name="lr=3e-4|bs=64 run", user="alice", node="gpu012", work_dir="/w")


@pytest.mark.parametrize(
    ("pattern", "job", "path"),
    [
        ("%x-%A_%a.out", TASK, "/work/sweep-array-6_2.out"),
        ("/logs/%j.out", TASK, "/logs/20.out"),  # %j of a task is its own raw id
        ("/logs/%4a-%10A.log", TASK, "/logs/0002-0000000006.log"),
        ("/logs/%15j", TASK, "/logs/0000000020"),  # width capped at 10
        ("/l/%u@%N-%n-%t-%s", PLAIN, "/l/alice@gpu012-0-0-4294967291"),
        ("/l/%J", PLAIN, "/l/16.4294967291"),
        ("/l/100%%-%x", PLAIN, "/l/100%-lr=3e-4|bs=64 run"),
        ("/l/%A_%a", PLAIN, "/l/16_4294967294"),  # not an array: %a is NO_VAL, like SLURM
        ("/l/%q-%5q-%", PLAIN, "/l/%q-5q-%"),  # unknown letters stay (SLURM's quirk)
        ("/l/a\\%j\\\\b", PLAIN, "/l/a%j\\b"),  # a backslash turns expansion off
        (None, PLAIN, "/w/slurm-16.out"),
        ("", TASK, "/work/slurm-6_2.out"),
        ("out/%x.log", PLAIN, "/w/out/lr=3e-4|bs=64 run.log"),
    ],
)
def test_expand_log_path(pattern: str | None, job: LogJob, path: str) -> None:
    assert expand_log_path(pattern, job) == path


def test_expand_log_path_unknowns_give_none() -> None:
    pending_group = LogJob(job_id=7, array_job_id=7, work_dir="/w")
    assert expand_log_path("%x-%A_%a.out", pending_group) is None  # no task yet
    assert expand_log_path("%A.out", pending_group) == "/w/7.out"
    assert expand_log_path("/l/%N.out", LogJob(job_id=1)) is None  # not started: no node
    assert expand_log_path("rel.out", LogJob(job_id=1)) is None  # no WorkDir
    assert resolve_log_paths("/o/%j", None, LogJob(job_id=3)) == ("/o/3", "/o/3")
    assert resolve_log_paths("/o/%j", "/e/%j", LogJob(job_id=3)) == ("/o/3", "/e/3")


@pytest.mark.parametrize(
    ("line", "out", "err"),
    [
        ("sbatch --parsable -J train-ok -o /l/%x-%j.out ok.sh", "/l/%x-%j.out", None),
        ("sbatch -J x --output=/l/o --error /l/e run.sh -o not-this", "/l/o", "/l/e"),
        ("sbatch -o/l/o -e/l/e --hold ./job", "/l/o", "/l/e"),
        ("sbatch --wrap 'python -o x'", None, None),
        ("sbatch job.sh", None, None),
        ("srun -o /x hostname", None, None),
        ("", None, None),
        ("sbatch -J lr=3e-4|bs=64 run -o /l/pipe-%j.out ok.sh", "/l/pipe-%j.out", None),
    ],
)
def test_submit_line_log_patterns(line: str, out: str | None, err: str | None) -> None:
    assert submit_line_log_patterns(line) == (out, err)


# ------------------------------------------------------------------------- verdicts


@pytest.mark.parametrize(
    ("state", "kw", "want"),
    [
        ("PENDING", {"reason": "Resources"}, ("pending", "queued")),
        ("PENDING", {"reason": "JobHeldAdmin"}, ("pending", "held")),
        ("PENDING", {"reason": "Dependency"}, ("pending", "dependency")),
        ("PENDING", {"reason": "InvalidQOS"}, ("pending", "cannot_run")),
        ("CONFIGURING", {}, ("pending", "configuring")),
        ("REQUEUED", {}, ("pending", "requeued")),
        ("REQUEUE_HOLD", {}, ("pending", "held")),
        ("SUSPENDED", {}, ("pending", "suspended")),
        ("STOPPED", {}, ("pending", "stopped")),
        ("RUNNING", {}, ("running", None)),
        ("COMPLETING", {}, ("running", "completing")),
        ("COMPLETED", {}, ("completed", None)),
        ("FAILED", {"exit_code": 3, "signal": 0}, ("failed", "exit_code")),
        ("FAILED", {"exit_code": 0, "signal": 11}, ("failed", "signal")),
        ("FAILED", {"signal": 9, "batch_state": "CANCELLED"}, ("out_of_memory", "memory_limit")),
        ("FAILED", {"signal": 9, "batch_state": "FAILED"}, ("failed", "signal")),
        ("FAILED", {"markers": {"oom"}}, ("out_of_memory", "oom")),
        ("OUT_OF_MEMORY", {}, ("out_of_memory", "oom")),
        ("TIMEOUT", {}, ("timeout", "time_limit")),
        ("DEADLINE", {}, ("timeout", "deadline")),
        ("CANCELLED", {}, ("cancelled", "cancelled")),
        ("CANCELLED", {"cancelled_by": 1000, "owner_uid": 1000}, ("cancelled", "user_cancel")),
        ("CANCELLED", {"cancelled_by": 0, "owner_uid": 65534}, ("cancelled", "admin_cancel")),
        ("CANCELLED", {"markers": {"time_limit"}}, ("timeout", "time_limit")),
        ("CANCELLED", {"markers": {"preemption"}}, ("preempted", "preemption")),
        ("CANCELLED", {"markers": {"node_failure"}}, ("node_fail", "node_fail")),
        ("PREEMPTED", {}, ("preempted", "preemption")),
        ("NODE_FAIL", {}, ("node_fail", "node_fail")),
        ("BOOT_FAIL", {}, ("node_fail", "boot_fail")),
        ("SPECIAL_EXIT", {}, ("failed", "special_exit")),
        ("REVOKED", {}, ("unknown", "revoked")),
        ("WHATEVER_NEW", {}, ("unknown", "unknown_state")),
        (None, {}, ("unknown", None)),
    ],
)
def test_classify(state: str | None, kw: dict[str, object], want: tuple[str, str | None]) -> None:
    got = slurm_verdict(state, **kw)  # type: ignore[arg-type]
    assert got == want
    assert got[0] in VERDICTS


def test_kill_markers_from_real_job_logs() -> None:
    logs = FIX / "job-logs"
    assert kill_markers((logs / "train-timeout-3.out").read_text()) == {"time_limit"}
    assert kill_markers((logs / "train-nodefail-24.out").read_text()) == {"node_failure"}
    assert kill_markers((logs / "train-requeue-hold-15.out").read_text()) == {"requeue"}
    assert kill_markers((logs / "train-cancel-5.out").read_text()) == {"cancelled"}
    assert "oom" in kill_markers((logs / "train-oom-12.out").read_text())
    assert "oom" in kill_markers((logs / "train-oom-cgroup-27.out").read_text())
    assert kill_markers((logs / "train-ok-1.out").read_text()) == frozenset()
    # a timed-out job's log turns an ambiguous CANCELLED into a timeout
    marks = kill_markers((logs / "train-timeout-3.out").read_text())
    assert slurm_verdict("CANCELLED", markers=marks) == ("timeout", "time_limit")


def test_heterogeneous_job_components_group_with_their_steps() -> None:
    fields = ("JobID", "JobIDRaw", "State", "ExitCode", "NodeList", "JobName")
    text = "\n".join(
        "|".join(row)
        for row in [
            ("12+0", "12", "FAILED", "2:0", "n1", "het"),
            ("12+0.batch", "12.batch", "FAILED", "2:0", "n1", "batch"),
            ("12+1", "13", "CANCELLED by 1000", "0:0", "n2", "het"),
            ("12+1.0", "13.0", "CANCELLED", "0:15", "n2", "python"),
        ]
    )
    jobs = {j["job_id"]: j for j in with_verdicts(sacct_jobs(text, fields, "|"))}
    assert set(jobs) == {"12+0", "12+1"}
    a, b = jobs["12+0"], jobs["12+1"]
    assert (a["het_job_id"], a["het_offset"], a["job_id_raw"]) == (12, 0, 12)
    assert (b["het_job_id"], b["het_offset"], b["job_id_raw"]) == (12, 1, 13)
    assert [s["step"] for s in a["steps"]] == ["batch"] and [s["step"] for s in b["steps"]] == ["0"]
    assert (a["verdict"], a["exit_code"]) == ("failed", 2)
    assert (b["verdict"], b["cancelled_by"]) == ("cancelled", 1000)


def test_step_rows_without_their_allocation_say_unknown() -> None:
    fields = ("JobID", "State", "ExitCode", "JobName")
    (job,) = with_verdicts(sacct_jobs("12.batch|FAILED|1:0|batch\n", fields, "|"))
    assert (job["job_id"], job["verdict"], job["steps"]) == ("12", "unknown", [])


def test_latest_attempts_keeps_array_group_apart_from_task_with_same_raw_id() -> None:
    fields = ("JobID", "JobIDRaw", "State", "Submit", "JobName")
    text = "7_[3%1]|7|PENDING|1796063078|s\n7_3|7|COMPLETED|1796063078|s\n"
    from labctl.parse.slurm import latest_attempts

    got = {j["job_id"]: j["attempts"] for j in latest_attempts(sacct_jobs(text, fields, "|"))}
    assert got == {"7_[3%1]": 1, "7_3": 1}
