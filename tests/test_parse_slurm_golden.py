"""Golden tests: every scenario of tests/fixtures/slurm/README.md (real SLURM 22.05 output),
parsed with the fields of the exact command in MANIFEST.tsv that produced the file (and
given the verdict poll decides from the parsed facts)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from helpers.verdicts import with_verdicts

from labctl.parse.slurm import (
    RECORD_KEYS,
    fields_from_format,
    latest_attempts,
    log_job,
    parse_sacct,
    parse_scontrol_show_job_o,
    resolve_log_paths,
    sacct_jobs,
    scontrol_jobs,
    squeue_jobs,
    submit_line_log_patterns,
)
from labctl.records import rfc3339

FIX = Path(__file__).parent / "fixtures" / "slurm"


def _manifest() -> dict[str, str]:
    out = {}
    for line in (FIX / "MANIFEST.tsv").read_text().splitlines()[1:]:
        name, _rc, _when, command = line.split("\t", 3)
        out[name] = command
    return out


MANIFEST = _manifest()


def text(name: str) -> str:
    return (FIX / name).read_text()


def sacct_fields(name: str) -> list[str]:
    m = re.search(r"--format=(\S+)", MANIFEST[name])
    assert m, MANIFEST[name]
    return m.group(1).split(",")


def sacct_delim(name: str) -> str:
    return "\x1f" if "--delimiter=$'\\x1f'" in MANIFEST[name] else "|"


def squeue_fields(name: str) -> tuple[tuple[str, ...], str]:
    cmd = MANIFEST[name]
    m = re.search(r"--format='([^']+)'", cmd)
    if m:
        return fields_from_format(m.group(1))
    m = re.search(r"-O '([^']+)'", cmd)
    assert m, cmd
    fields = tuple(tok.split(":", 1)[0] for tok in m.group(1).split(","))
    return fields, "|"


def sacct(name: str, **kw: Any) -> list[dict[str, Any]]:
    return with_verdicts(sacct_jobs(text(name), sacct_fields(name), sacct_delim(name), **kw))


def squeue(name: str) -> list[dict[str, Any]]:
    fields, delim = squeue_fields(name)
    return with_verdicts(squeue_jobs(text(name), fields, delim))


def by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        assert r["job_id"] not in out, f"duplicate {r['job_id']}"
        out[r["job_id"]] = r
    return out


# The final state of every scenario, from sacct by job id with steps (rich fields, -D).
RICH = "sacct-parsable2-rich-fields.txt"
# job_id: (state, verdict, cause, exit_code, signal, cancelled_by)
FINAL = {
    "1": ("COMPLETED", "completed", None, 0, 0, None),
    "2": ("FAILED", "failed", "exit_code", 3, 0, None),
    "3": ("TIMEOUT", "timeout", "time_limit", 0, 15, None),
    "4": ("TIMEOUT", "timeout", "time_limit", 0, 15, None),
    "5": ("CANCELLED", "cancelled", "cancelled", 0, 15, 0),
    "6_0": ("COMPLETED", "completed", None, 0, 0, None),
    "6_1": ("COMPLETED", "completed", None, 0, 0, None),
    "6_2": ("FAILED", "failed", "exit_code", 1, 0, None),
    "6_3": ("COMPLETED", "completed", None, 0, 0, None),
    "7_2": ("FAILED", "failed", "exit_code", 1, 0, None),
    "8": ("PENDING", "pending", "dependency_never_satisfied", None, None, None),
    "9": ("COMPLETED", "completed", None, 0, 0, None),
    "10": ("PENDING", "pending", "held", None, None, None),
    "11": ("CANCELLED", "cancelled", "cancelled", None, None, 0),
    "12": ("FAILED", "out_of_memory", "memory_limit", 0, 9, None),
    "13": ("PENDING", "pending", "cannot_run", None, None, None),
    "14": ("COMPLETED", "completed", None, 0, 0, None),
    "15": ("PENDING", "pending", "held", None, None, None),
    "16": ("COMPLETED", "completed", None, 0, 0, None),
    "17": ("CANCELLED", "cancelled", "cancelled", 0, 15, 0),
    "24": ("NODE_FAIL", "node_fail", "node_fail", None, None, None),
    "25": ("PENDING", "pending", "begin_time", None, None, None),
}


@pytest.mark.parametrize("job_id", sorted(FINAL))
def test_sacct_final_state_exit_and_verdict_per_scenario(job_id: str) -> None:
    jobs = {j["job_id"]: j for j in latest_attempts(sacct(RICH))}
    state, verdict, cause, code, sig, by = FINAL[job_id]
    j = jobs[job_id]
    assert (j["state"], j["verdict"], j["cause"]) == (state, verdict, cause)
    assert (j["exit_code"], j["signal"], j["cancelled_by"]) == (code, sig, by)
    assert set(RECORD_KEYS) <= set(j)


def test_sacct_rich_fields_values_a_user_reads() -> None:
    jobs = {j["job_id"]: j for j in latest_attempts(sacct(RICH))}
    ok = jobs["1"]
    assert ok["name"] == "train-ok" and ok["user"] == "root" and ok["account"] == "root"
    assert rfc3339(ok["submit_epoch"]) == "2026-11-30T18:24:38Z"
    assert rfc3339(ok["start_epoch"]) == "2026-11-30T18:24:39Z"
    assert rfc3339(ok["end_epoch"]) == "2026-11-30T18:24:42Z"
    assert ok["elapsed_s"] == 3 and ok["time_limit_s"] is None  # UNLIMITED
    assert ok["node_list"] == "vm" and ok["partition"] == "debug"
    assert ok["work_dir"] == "/tmp/labctl-slurm-fixtures"
    assert [s["step"] for s in ok["steps"]] == ["batch", "extern", "0"]
    # timeout: limit 1 min, ran 80 s; the exit comes from the CANCELLED batch step
    to = jobs["3"]
    assert (to["time_limit_s"], to["elapsed_s"], to["exit_source"]) == (60, 80, "batch")
    assert to["steps"][0] == {
        "step": "batch",
        "state": "CANCELLED",
        "cancelled_by": None,
        "exit_code": 0,
        "signal": 15,
    }
    assert jobs["4"]["elapsed_s"] == 20 and jobs["4"]["time_limit_s"] == 60
    # suspended 9 s, completed
    assert jobs["14"]["suspended_s"] == 9
    # OOM without cgroups: FAILED 0:9 on the job, batch step CANCELLED by 0
    oom = jobs["12"]
    assert oom["exit_source"] == "job"
    assert oom["steps"][0]["state"] == "CANCELLED" and oom["steps"][0]["cancelled_by"] == 0
    # the failing task of the array and its raw id
    assert (jobs["6_2"]["array_job_id"], jobs["6_2"]["array_task_id"]) == (6, 2)
    assert jobs["6_2"]["job_id_raw"] == 20 and jobs["6_2"]["failed_steps"] == ["batch"]
    assert jobs["6_3"]["job_id_raw"] == 6  # the master id is reused by the last task
    # cancelled while pending: never started, no node, no steps, no limit of its own
    cp = jobs["11"]
    assert cp["start_epoch"] is None and cp["node_list"] is None and cp["steps"] == []
    assert cp["time_limit_s"] is None and rfc3339(cp["end_epoch"]) == "2026-11-30T18:24:52Z"
    # pending: no start, no end, no exit code although sacct prints 0:0
    dep = jobs["8"]
    assert dep["start_epoch"] is None and dep["end_epoch"] is None and dep["exit_code"] is None
    assert dep["reason"] == "DependencyNeverSatisfied"
    # node failure: steps CANCELLED with an EMPTY ExitCode -> no exit code at all
    nf = jobs["24"]
    assert [s["exit_code"] for s in nf["steps"]] == [None, None]
    assert nf["exit_code"] is None and nf["exit_source"] is None
    # user nobody, run from /tmp, sacct has no account for it
    nb = jobs["17"]
    assert (nb["user"], nb["work_dir"], nb["account"]) == ("nobody", "/tmp", None)
    # the name with a pipe and a space sits in the MIDDLE of this format and still parses
    assert jobs["16"]["name"] == "lr=3e-4|bs=64 run"
    assert jobs["16"]["partition"] == "debug"


def test_sacct_duplicates_requeued_attempts_collapse_to_latest() -> None:
    all_records = sacct(RICH)
    fifteen = [j for j in all_records if j["job_id"] == "15"]
    assert [(j["state"], j["verdict"], j["cause"]) for j in fifteen] == [
        ("REQUEUED", "pending", "requeued"),
        ("PENDING", "pending", "held"),
    ]
    # the earlier attempt keeps its run times, and its own steps
    assert rfc3339(fifteen[0]["start_epoch"]) == "2026-11-30T18:24:44Z"
    assert [s["step"] for s in fifteen[0]["steps"]] == ["batch", "extern"]
    assert fifteen[1]["steps"] == []
    twentyfive = [j for j in all_records if j["job_id"] == "25"]
    assert [j["state"] for j in twentyfive] == ["NODE_FAIL", "PENDING"]
    latest = {j["job_id"]: j for j in latest_attempts(all_records)}
    assert latest["15"]["attempts"] == 2 and latest["15"]["state"] == "PENDING"
    assert latest["25"]["attempts"] == 2 and latest["25"]["cause"] == "begin_time"
    assert latest["1"]["attempts"] == 1


def test_sacct_pipe_delimited_name_second_field() -> None:
    jobs = by_id(sacct("sacct-parsable2-mixed-states-by-jobid.txt"))
    assert jobs["16"]["name"] == "lr=3e-4|bs=64 run"
    assert jobs["16"]["state"] == "COMPLETED" and jobs["16"]["user"] == "root"
    assert jobs["16"]["node_list"] == "vm"


def test_sacct_delimiter_0x1f_gives_the_same_records_as_pipe() -> None:
    pipe = sacct("sacct-parsable2-mixed-states-by-jobid.txt")
    unit = sacct("sacct-parsable2-delimiter-0x1f.txt")
    assert unit == pipe
    assert by_id(unit)["16"]["name"] == "lr=3e-4|bs=64 run"


def test_sacct_without_job_ids_misses_held_dependency_and_cancelled_pending() -> None:
    window = by_id(sacct("sacct-parsable2-mixed-states.txt"))
    by_jobid = by_id(sacct("sacct-parsable2-mixed-states-by-jobid.txt"))
    assert {"8", "10", "11"} <= set(by_jobid)
    assert not {"8", "10", "11"} & set(window)


def test_sacct_allocations_only_has_no_steps_and_batch_exit_is_unknown() -> None:
    jobs = by_id(sacct("sacct-parsable2-allocations-only.txt"))
    assert all(j["steps"] == [] for j in jobs.values())
    # without the batch row a TIMEOUT's job row reads 0:0, but the signal is not 0: unknown
    assert (jobs["3"]["exit_code"], jobs["3"]["signal"], jobs["3"]["verdict"]) == (
        None,
        None,
        "timeout",
    )
    # a job that ended on its own keeps the job row's code: FAILED 3:0 needs no batch row
    failed = [j for j in jobs.values() if j["state"] == "FAILED" and j["exit_code"]]
    assert failed and all(j["exit_source"] == "job" for j in failed)


def _times(records: list[dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
    return {r["job_id"]: (r["start_epoch"], r["end_epoch"]) for r in records}


def test_sacct_times_agree_across_epoch_utc_new_york_and_truncated_offset() -> None:
    iso = _times(sacct("sacct-parsable2-mixed-states-by-jobid.txt"))
    epoch = _times(sacct("sacct-parsable2-epoch.txt"))
    assert iso == epoch
    ny = _times(
        sacct("sacct-parsable2-tz-new-york.txt", tz=ZoneInfo("America/New_York")),
    )
    assert ny == {k: v for k, v in iso.items() if k in ny}
    assert len(ny) == 25
    # SLURM_TIME_FORMAT=%FT%T%z: sacct cuts the offset; the text is UTC here
    name = "sacct-parsable2-time-format-with-offset-truncated.txt"
    rows = parse_sacct(text(name), sacct_fields(name), "|")
    assert rows[0] == {"JobID": "1", "Start": "2026-11-30T18:24:39", "End": "2026-11-30T18:24:42"}
    cut = _times(sacct(name))
    assert cut == {k: v for k, v in iso.items() if k in cut}


def test_sacct_cgroup_oom_and_deadline() -> None:
    oom = by_id(sacct("sacct-parsable2-out-of-memory-cgroup.txt"))["27"]
    assert (oom["state"], oom["exit_code"], oom["signal"]) == ("OUT_OF_MEMORY", 0, 125)
    assert (oom["verdict"], oom["cause"]) == ("out_of_memory", "oom")
    mem = by_id(sacct("sacct-parsable2-out-of-memory-cgroup-mem-fields.txt"))["27"]
    # sacct keeps Reason "None" for it; squeue/scontrol say OutOfMemory
    assert mem["reason"] is None and mem["verdict"] == "out_of_memory"
    dl = by_id(sacct("sacct-parsable2-deadline.txt"))["31"]
    # sacct prints ExitCode 1:0 for a job that never reached a node: no exit, no start
    assert (dl["state"], dl["verdict"], dl["cause"]) == ("DEADLINE", "timeout", "deadline")
    assert dl["exit_code"] is None and dl["start_epoch"] is None and dl["node_list"] is None


def test_sacct_running_snapshot() -> None:
    jobs = by_id(sacct("sacct-parsable2-running.txt"))
    run = jobs["3"]
    assert (run["state"], run["verdict"], run["end_epoch"]) == ("RUNNING", "running", None)
    assert run["exit_code"] is None  # sacct prints 0:0 while it runs
    assert jobs["7_1"]["verdict"] == "running"
    assert jobs["12"]["verdict"] == "out_of_memory"


def test_sacct_empty_output_for_unknown_id_is_no_rows() -> None:
    assert sacct("sacct-parsable2-unknown-id.txt") == []


def test_jobcomp_sacct_user_with_uid_and_raw_array_ids() -> None:
    jobs = by_id(sacct("jobcomp-sacct-c-parsable2.txt"))
    assert (jobs["13"]["user"], jobs["13"]["uid"]) == ("root", 0)
    assert jobs["13"]["array_task_id"] is None  # jobcomp loses the array identity
    assert jobs["9"]["verdict"] == "failed"  # no step rows: 0:9 alone stays failed/signal
    assert jobs["9"]["cause"] == "signal"


# ------------------------------------------------------------------------- squeue

SQ_RUN = "squeue-format-pipe-running.txt"
SQ_FINAL = "squeue-format-pipe-all-states-final.txt"


def test_squeue_running_snapshot_states_and_verdicts() -> None:
    jobs = by_id(squeue(SQ_RUN))
    expect = {
        "3": ("RUNNING", "running", None),
        "9": ("RUNNING", "running", None),
        "14": ("SUSPENDED", "pending", "suspended"),
        "7_1": ("RUNNING", "running", None),
        "7_[2-3%1]": ("PENDING", "pending", "array_throttle"),
        "8": ("PENDING", "pending", "dependency_never_satisfied"),
        "10": ("PENDING", "pending", "held"),
        "13": ("PENDING", "pending", "cannot_run"),
        "15": ("PENDING", "pending", "held"),
        "5": ("CANCELLED", "cancelled", "cancelled"),
        "11": ("CANCELLED", "cancelled", "cancelled"),
        "12": ("FAILED", "failed", "exit_code"),
        "16": ("COMPLETED", "completed", None),
    }
    for job_id, want in expect.items():
        j = jobs[job_id]
        assert (j["state"], j["verdict"], j["cause"]) == want, job_id
    grp = jobs["7_[2-3%1]"]
    assert (grp["array_job_id"], grp["array_task_id"]) == (7, None)
    assert (grp["array_tasks"], grp["array_throttle"], grp["job_id_raw"]) == ("2-3%1", 1, 7)
    assert jobs["7_1"]["job_id_raw"] == 22 and jobs["7_1"]["array_task_id"] == 1
    assert jobs["16"]["name"] == "lr=3e-4|bs=64 run"
    assert jobs["15"]["reason"] == "job requeued in held state"
    run = jobs["3"]
    # squeue TimeLimit "1:00" is M:SS; EndTime of a running job is a forecast, not an end
    assert (run["time_limit_s"], run["elapsed_s"], run["end_epoch"]) == (60, 16, None)
    assert rfc3339(run["start_epoch"]) == "2026-11-30T18:24:39Z"
    # pending: squeue's StartTime is an estimate (15's is its begin time): dropped
    assert jobs["15"]["start_epoch"] is None and jobs["15"]["node_list"] is None
    # cancelled while pending: squeue prints the cancel time as StartTime
    assert jobs["11"]["start_epoch"] is None
    assert jobs["9"]["partition"] == "gpu"


def test_squeue_final_snapshot_terminal_states() -> None:
    jobs = by_id(squeue(SQ_FINAL))
    assert (jobs["3"]["state"], jobs["3"]["verdict"], jobs["3"]["reason"]) == (
        "TIMEOUT",
        "timeout",
        "TimeLimit",
    )
    assert jobs["3"]["elapsed_s"] == 80
    assert (jobs["24"]["verdict"], jobs["24"]["reason"]) == ("node_fail", "NodeDown")
    assert (jobs["25"]["verdict"], jobs["25"]["cause"]) == ("pending", "begin_time")
    assert jobs["14"]["verdict"] == "completed"
    assert jobs["7_2"]["verdict"] == "failed" and jobs["7_2"]["job_id_raw"] == 23


def test_squeue_array_expanded_one_row_per_pending_task() -> None:
    jobs = by_id(squeue("squeue-format-pipe-array-expanded-running.txt"))
    assert "7_[2-3%1]" not in jobs
    assert jobs["7_2"]["array_task_id"] == 2 and jobs["7_3"]["array_task_id"] == 3
    assert jobs["7_2"]["job_id_raw"] == 7  # pending tasks have no raw id of their own yet


def test_squeue_epoch_and_iso_agree() -> None:
    iso = _times(squeue(SQ_RUN))
    epoch = _times(squeue("squeue-format-epoch-running.txt"))
    assert iso == epoch


def test_squeue_user_nobody_deadline_and_cgroup_oom() -> None:
    (nobody,) = squeue("squeue-user-nobody-running.txt")
    assert (nobody["user"], nobody["work_dir"], nobody["verdict"]) == (
        "nobody",
        "/tmp",
        "cancelled",
    )
    (dl,) = squeue("squeue-format-pipe-deadline.txt")
    assert (dl["verdict"], dl["cause"], dl["reason"]) == ("timeout", "deadline", "DeadLine")
    assert dl["start_epoch"] is None
    (oom,) = squeue("squeue-format-pipe-out-of-memory-cgroup.txt")
    assert (oom["verdict"], oom["reason"]) == ("out_of_memory", "OutOfMemory")


def test_squeue_unknown_id_output_is_empty() -> None:
    assert squeue_jobs(text("squeue-unknown-id.txt")) == []


# ------------------------------------------------------------------------- scontrol


def test_scontrol_all_final_scenarios() -> None:
    jobs = by_id(with_verdicts(scontrol_jobs(text("scontrol-show-job-o-all-final.txt"))))
    assert jobs["16"]["name"] == "lr=3e-4|bs=64 run"
    assert jobs["16"]["stdout"] == "/tmp/labctl-slurm-fixtures/logs/pipe-name-16.out"
    assert (jobs["3"]["verdict"], jobs["3"]["exit_code"], jobs["3"]["signal"]) == ("timeout", 0, 15)
    assert (jobs["12"]["verdict"], jobs["12"]["signal"]) == ("failed", 9)  # no steps here
    assert jobs["12"]["reason"] == "JobLaunchFailure"
    assert jobs["17"]["user"] == "nobody" and jobs["17"]["uid"] == 65534
    assert jobs["6_2"]["job_id_raw"] == 20 and jobs["6_2"]["verdict"] == "failed"
    assert jobs["15"]["reason"] == "job_requeued_in_held_state"
    assert (jobs["15"]["cause"], jobs["15"]["restarts"], jobs["15"]["start_epoch"]) == (
        "held",
        1,
        None,
    )
    assert jobs["24"]["verdict"] == "node_fail"


@pytest.mark.parametrize(
    ("name", "job_id", "state", "verdict", "cause"),
    [
        ("scontrol-show-job-o-completed.txt", "1", "COMPLETED", "completed", None),
        ("scontrol-show-job-o-failed.txt", "2", "FAILED", "failed", "exit_code"),
        ("scontrol-show-job-o-timeout.txt", "3", "TIMEOUT", "timeout", "time_limit"),
        ("scontrol-show-job-o-cancelled.txt", "5", "CANCELLED", "cancelled", "cancelled"),
        ("scontrol-show-job-o-oom-killed.txt", "12", "FAILED", "failed", "signal"),
        ("scontrol-show-job-o-node-fail.txt", "24", "NODE_FAIL", "node_fail", "node_fail"),
        ("scontrol-show-job-o-suspended.txt", "14", "SUSPENDED", "pending", "suspended"),
        ("scontrol-show-job-o-running-live-log.txt", "9", "RUNNING", "running", None),
        ("scontrol-show-job-o-pending-held.txt", "10", "PENDING", "pending", "held"),
        (
            "scontrol-show-job-o-pending-dependency-never-satisfied.txt",
            "8",
            "PENDING",
            "pending",
            "dependency_never_satisfied",
        ),
        ("scontrol-show-job-o-pending-requeue-hold.txt", "15", "PENDING", "pending", "held"),
        (
            "scontrol-show-job-o-pending-partitionconfig.txt",
            "13",
            "PENDING",
            "pending",
            "cannot_run",
        ),
        ("scontrol-show-job-o-pipe-and-space-in-name.txt", "16", "COMPLETED", "completed", None),
        (
            "scontrol-show-job-o-out-of-memory-cgroup.txt",
            "27",
            "OUT_OF_MEMORY",
            "out_of_memory",
            "oom",
        ),
        ("scontrol-show-job-o-deadline.txt", "31", "DEADLINE", "timeout", "deadline"),
    ],
)
def test_scontrol_single_job_files(
    name: str, job_id: str, state: str, verdict: str, cause: str | None
) -> None:
    jobs = by_id(with_verdicts(scontrol_jobs(text(name))))
    j = jobs[job_id]
    assert (j["state"], j["verdict"], j["cause"]) == (state, verdict, cause)


def test_scontrol_deadline_exit_code_disagreement_is_dropped() -> None:
    (raw,) = parse_scontrol_show_job_o(text("scontrol-show-job-o-deadline.txt"))
    assert raw["ExitCode"] == "0:1"  # sacct says 1:0 for the same job
    (dl,) = with_verdicts(scontrol_jobs(text("scontrol-show-job-o-deadline.txt")))
    assert dl["exit_code"] is None and dl["signal"] is None


def test_scontrol_array_files() -> None:
    thr = by_id(with_verdicts(scontrol_jobs(text("scontrol-show-job-o-array-throttled.txt"))))
    grp = thr["7_[2-3%1]"]
    assert (grp["array_tasks"], grp["array_throttle"], grp["verdict"]) == ("2-3%1", 1, "pending")
    # scontrol expands %a of the pending group to NO_VAL: 7_4294967294.out is no real file
    (raw_grp,) = [
        d
        for d in parse_scontrol_show_job_o(text("scontrol-show-job-o-array-throttled.txt"))
        if d["JobId"] == "7"
    ]
    assert raw_grp["StdOut"].endswith("sweep-throttled-7_4294967294.out")
    assert grp["stdout"] is None
    assert thr["7_1"]["stdout"] == "/tmp/labctl-slurm-fixtures/logs/sweep-throttled-7_1.out"
    arr = by_id(with_verdicts(scontrol_jobs(text("scontrol-show-job-o-array.txt"))))
    assert {k: v["job_id_raw"] for k, v in arr.items()} == {
        "6_3": 6,
        "6_2": 20,
        "6_1": 19,
        "6_0": 18,
    }
    assert arr["6_2"]["verdict"] == "failed" and arr["6_2"]["exit_code"] == 1


def test_scontrol_unknown_id_is_empty() -> None:
    assert with_verdicts(scontrol_jobs(text("scontrol-show-job-o-unknown-id.txt"))) == []


def test_scontrol_command_with_argument_and_all_running() -> None:
    raw = {
        d["JobId"]: d
        for d in parse_scontrol_show_job_o(text("scontrol-show-job-o-all-running.txt"))
    }
    assert raw["7"]["Command"] == "/tmp/labctl-slurm-fixtures/array.sh 8"
    assert raw["16"]["JobName"] == "lr=3e-4|bs=64 run"
    assert raw["16"]["UserId"] == "root(0)"
    assert raw["9"]["StdErr"] == "/tmp/labctl-slurm-fixtures/logs/train-live-log-9.err"
    assert raw["9"]["Power"] == ""


# ------------------------------------------------------------------------- log paths


def test_squeue_patterns_expand_to_the_paths_scontrol_shows() -> None:
    """squeue -O STDOUT gives `%x-%j.out`; scontrol gives the expanded file: they agree for
    every job both know (the pending array group excepted: no task id yet)."""
    sq = by_id(squeue("squeue-O-stdout-running.txt"))
    sc = by_id(with_verdicts(scontrol_jobs(text("scontrol-show-job-o-all-running.txt"))))
    checked = 0
    for job_id, s in sq.items():
        out, err = resolve_log_paths(s["stdout_pattern"], s["stderr_pattern"], log_job(s))
        if s["array_tasks"] is not None:
            assert (out, err) == (None, None)
            continue
        assert (out, err) == (sc[job_id]["stdout"], sc[job_id]["stderr"]), job_id
        checked += 1
    assert checked >= 20
    assert sq["9"]["stderr_pattern"] == "/tmp/labctl-slurm-fixtures/logs/%x-%j.err"


def test_fixture_logs_exist_under_the_expanded_names() -> None:
    """The job-logs/ captured from the cluster are named exactly as we expand them."""
    sq = squeue("squeue-O-stdout-running.txt")
    logs = {p.name for p in (FIX / "job-logs").iterdir()}
    names = set()
    for s in sq:
        out, _ = resolve_log_paths(s["stdout_pattern"], s["stderr_pattern"], log_job(s))
        if out:
            names.add(Path(out).name)
    assert {"train-timeout-3.out", "sweep-array-6_2.out", "pipe-name-16.out"} <= names & logs


def test_submit_line_patterns_match_scontrol() -> None:
    name = "sacct-parsable2-submitline.txt"
    rows = parse_sacct(text(name), sacct_fields(name), "|")
    sc = by_id(with_verdicts(scontrol_jobs(text("scontrol-show-job-o-all-final.txt"))))
    sa = {j["job_id"]: j for j in latest_attempts(sacct(RICH))}
    checked = 0
    for row in rows:
        job_id = row["JobID"]
        out_pat, err_pat = submit_line_log_patterns(row["SubmitLine"])
        assert out_pat is not None, row
        if job_id not in sc:
            continue
        out, err = resolve_log_paths(out_pat, err_pat, log_job(sa[job_id]))
        assert (out, err) == (sc[job_id]["stdout"], sc[job_id]["stderr"]), job_id
        checked += 1
    assert checked >= 20
    sixteen = next(r for r in rows if r["JobID"] == "16")
    assert sixteen["SubmitLine"].startswith("sbatch --parsable -J lr=3e-4|bs=64 run -o ")
    assert sixteen["WorkDir"] == "/tmp/labctl-slurm-fixtures"
