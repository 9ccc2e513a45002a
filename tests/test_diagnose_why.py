"""Why each candidate won or was demoted (issue 15's `--explain`, spelt `--why`): a diagnosis
record lists its `candidates` -- every failure-looking line, in log order, with its fate, a
reason and what decided it -- and `labctl diagnose --why` renders them. Each fate is checked on
a short log built to isolate it; `--explain ID` keeps showing catalog entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_labctl
from helpers.diagnose_logs import STEPS
from helpers.diagnose_logs import TB_MAIN as TB
from hypothesis import given
from hypothesis import strategies as st
from schema_check import assert_valid

from labctl.commands.diagnose_schema import REASONS
from labctl.diagnose import diagnose_chunks, diagnose_text

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0\n"
CONDA = (
    "CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.\n"
)
WATCHDOG = (
    "[rank1]:[E ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
    "ran for 600041 milliseconds before timing out.\n"
)
CHILD = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
SHELL = "/var/spool/slurmd/job42/slurm_script: line 32: oqnd4apl: command not found\n"
DISK = "OSError: [Errno 28] No space left on device: '/ckpt/run1'\n"
HUNG = {"state": "RUNNING", "log_age": 7200, "hung_after": 3600}


def candidate(d: dict[str, Any], catalog_id: str) -> dict[str, Any]:
    [c] = [c for c in d["candidates"] if c["catalog_id"] == catalog_id]
    return c


def line_of(log: str, text: str) -> int:
    """The 1-based number of the one line containing `text`."""
    [found] = [i for i, ln in enumerate(log.splitlines(), 1) if text in ln]
    return found


# (fate, log, scheduler, candidate, reason, what decided it: (catalog_id or role, line text))
FATES: list[tuple[str, str, dict[str, Any] | None, str, str, tuple[str, str] | None]] = [
    ("survived", TB + OOM + STEPS, None, "cuda_oom", "survived", ("progress", "step 59 ")),
    ("logged", "WARNING:root:CUDA out of memory while probing; retrying with 8\n" + STEPS,
     None, "cuda_oom", "logged", None),
    ("notice", "If you see CUDA out of memory, reduce --batch-size.\n", None, "cuda_oom",
     "notice", None),
    ("later success", TB + "RuntimeError: Given groups=1, expected 4 channels\n" + STEPS
     + "Successfully completed.\n", None, "code_error", "later_success",
     ("job_succeeded", "Successfully completed.")),
    ("later failure", CONDA + TB + "ModuleNotFoundError: No module named 'h5py'\n", None,
     "command_not_found", "later_failure", ("module_not_found", "h5py")),
    ("after failure", TB + "AssertionError\n" + SHELL, None, "command_not_found",
     "after_failure", ("code_error", "AssertionError")),
    ("too few", STEPS + "{'loss': nan, 'grad_norm': nan, 'epoch': 0.5}\n" + STEPS, None,
     "nan_loss_logged", "too_few", None),
    ("explained", STEPS + TB + "[rank0]: " + OOM + WATCHDOG, None, "nccl_timeout",
     "explained", ("cuda_oom", "CUDA out of memory")),
    ("wrapper", STEPS + TB + "ModuleNotFoundError: No module named 'cv2'\n" + CHILD, None,
     "child_failed", "wrapper", ("module_not_found", "cv2")),
    ("weak", STEPS + TB + "KeyError: 'input_ids'\nsrun: error: gpu-a03: tasks 0-7: Killed\n",
     None, "host_oom_weak", "weak", ("code_error", "KeyError")),
    ("later", STEPS + TB + OOM + DISK, None, "cuda_oom", "later", ("disk_full", "Errno 28")),
    ("earlier event", DISK + "noise\n" * 2100 + TB + OOM, None, "disk_full", "earlier_event",
     ("cuda_oom", "CUDA out of memory")),
    ("outranked", STEPS + TB + "ValueError: x\n\nExited with exit code 1.\n", None,
     "job_exit_report", "outranked", ("code_error", "ValueError")),
    ("scheduler decides", STEPS + TB + "ValueError: bad batch\n", {"state": "TIMEOUT"},
     "code_error", "scheduler", ("slurm_time_limit", "")),
    ("completed", STEPS + TB + "ValueError: bad batch\n", {"state": "COMPLETED", "exit_code": 0},
     "code_error", "completed", None),
    ("hung", STEPS + TB + OOM, HUNG, "cuda_oom", "hung", ("hung_no_output", "")),
    ("earlier end report", "Exited with exit code 2.\n" + STEPS + "Exited with exit code 3.\n",
     None, "job_exit_report", "earlier_report", ("job_exit_report", "exit code 3")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("log", "sched", "entry", "reason", "by"), [f[1:] for f in FATES], ids=[f[0] for f in FATES]
)
def test_each_fate_on_a_log_that_isolates_it(
    log: str, sched: dict[str, Any] | None, entry: str, reason: str, by: tuple[str, str] | None
) -> None:
    d = diagnose_text(log, sched=sched)
    demoted = [c for c in d["candidates"] if c["catalog_id"] == entry and c["fate"] == "demoted"]
    assert [c["reason"] for c in demoted] == [reason], d["candidates"]
    c = demoted[0]
    if entry != d["catalog_id"]:  # also_matched says the same thing, one line per entry
        also = {a["catalog_id"]: a["why"] for a in d["also_matched"]}
        assert also[entry] == c["why"]
    assert c["line"] == line_of(log, c_text(d, entry))
    if by is None:
        assert c["by"] is None
        return
    who, text = by
    assert who in (c["by"]["catalog_id"], c["by"]["role"]), c["by"]
    if text:  # a line of the log (a scheduler's word has none)
        want = line_of(log, text)
        assert c["by"]["line"] == want, c["by"]
        assert f"line {want}" in c["why"], c["why"]
    else:
        assert c["by"]["line"] is None and c["by"]["line_from_end"] is None


def c_text(d: dict[str, Any], entry: str) -> str:
    """The text of the candidate's line, from also_matched (or the evidence for the root)."""
    for a in d["also_matched"]:
        if a["catalog_id"] == entry:
            return str(a["text"]).strip()
    return str(d["evidence"][0]["text"]).strip()


def test_the_root_cause_won_and_every_other_candidate_says_why_in_log_order() -> None:
    log = CONDA + TB + OOM + STEPS + TB + "ValueError: bad shape\n" + CHILD
    d = diagnose_text(log)
    cands = d["candidates"]
    assert [c["catalog_id"] for c in cands] == [
        "command_not_found", "cuda_oom", "code_error", "child_failed",
    ]  # fmt: skip
    assert [c["line"] for c in cands] == sorted(c["line"] for c in cands)
    won = [c for c in cands if c["fate"] == "won"]
    assert won == [candidate(d, "code_error")] and d["catalog_id"] == "code_error"
    assert won[0]["reason"] == "root_cause" and won[0]["why"] == d["why"]
    assert won[0]["line"] == d["evidence"][0]["line"]
    assert {c["catalog_id"]: c["reason"] for c in cands if c["fate"] == "demoted"} == {
        "command_not_found": "survived", "cuda_oom": "survived", "child_failed": "wrapper",
    }  # fmt: skip
    assert candidate(d, "child_failed")["by"]["catalog_id"] == "code_error"
    assert "the root cause: code_error" in candidate(d, "child_failed")["why"]


def test_a_log_no_candidate_won_lists_the_demoted_ones_only() -> None:
    healthy = diagnose_text(TB + OOM + STEPS)
    assert healthy["category"] == "healthy"
    assert [(c["catalog_id"], c["fate"]) for c in healthy["candidates"]] == [
        ("cuda_oom", "demoted")
    ]
    assert diagnose_text(STEPS)["candidates"] == []
    quiet = diagnose_text(STEPS, sched={"verdict": "failed"})  # unknown: nothing in the log won
    assert quiet["category"] == "unknown" and quiet["candidates"] == []


def test_a_tail_read_gives_positions_from_the_end() -> None:
    """A stream that starts mid-log has no absolute line numbers: fates count from the end."""
    log = (TB + OOM + STEPS).encode()
    d = diagnose_chunks([b"partial line\n" + log], tail=True)
    c = candidate(d, "cuda_oom")
    assert c["reason"] == "survived" and c["line"] is None
    assert c["line_from_end"] == 61 and c["by"] == {
        "catalog_id": None, "role": "progress", "line": None, "line_from_end": 1,
    }  # fmt: skip
    assert "line -1 from end" in c["why"]


PIECES = [
    STEPS,
    TB + OOM,
    CONDA,
    WATCHDOG,
    CHILD,
    SHELL,
    DISK,
    TB + "ValueError: x\n",
    "Successfully completed.\n",
    "Exited with exit code 1.\n",
    "Killed\n",
    "noise\n" * 40,
]
SCHEDS = [None, {"state": "TIMEOUT"}, {"state": "COMPLETED", "exit_code": 0}, HUNG,
          {"verdict": "failed"}, {"state": "FAILED", "exit_code": 137}]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=8), st.sampled_from(SCHEDS))
def test_every_log_accounts_for_each_candidate_once(pieces: list[str], sched: Any) -> None:
    """Whatever the log: one `won` (the root cause named) or none, every other candidate of
    also_matched demoted with the same sentence, in log order, each reason documented."""
    d = diagnose_text("".join(pieces), sched=sched)
    cands = d["candidates"]
    won = [c for c in cands if c["fate"] == "won"]
    assert len(won) == (1 if d["failed"] and d["catalog_id"] != "unknown" else 0), d["why"]
    if won:
        assert won[0]["catalog_id"] == d["catalog_id"] and won[0]["why"] == d["why"]
    demoted = [(c["catalog_id"], c["why"]) for c in cands if c["fate"] == "demoted"]
    assert sorted(demoted) == sorted((a["catalog_id"], a["why"]) for a in d["also_matched"])
    assert {c["reason"] for c in cands} <= set(REASONS)
    order = [c["line_from_end"] or 0 for c in cands]  # the scheduler's word (None) comes last
    assert order == sorted(order, reverse=True)


# -- the command ----------------------------------------------------------------------------


def test_why_renders_the_candidates_and_changes_no_record(tmp_path: Path) -> None:
    log = tmp_path / "slurm-42.out"
    log.write_text(CONDA + TB + OOM + STEPS + TB + "ValueError: bad shape\n" + CHILD)
    ok = tmp_path / "ok.out"
    ok.write_text(STEPS)
    plain = run_labctl("diagnose", str(log), str(ok))
    why = run_labctl("diagnose", "--why", str(log), str(ok))
    assert_valid("diagnose", why.records)
    assert why.records == plain.records and why.code == plain.code == 1
    env = {"COLUMNS": "220"}
    table = run_labctl("diagnose", "--why", "--format", "table", str(log), str(ok), env=env)
    out = table.stdout
    assert f"why: {log} → code_error (code_error)" in out
    rows = {ln.split("│")[2].strip(): ln for ln in out.splitlines() if ln.count("│") == 6}
    assert "✓ won" in rows["code_error"] and "the only failure" in rows["code_error"]
    assert "demoted" in rows["cuda_oom"] and "survived" in rows["cuda_oom"]
    assert "wrapper" in rows["child_failed"] and "code_error" in rows["child_failed"]
    assert rows["cuda_oom"].split("│")[1].strip() == str(line_of(log.read_text(), "CUDA out"))
    assert f"why: {ok} → healthy" in out and "nothing in the log failed" in out
    assert "why:" not in run_labctl("diagnose", "--format", "table", str(log), env=env).stdout


def test_why_on_job_records_follows_the_jobs_table(tmp_path: Path) -> None:
    log = tmp_path / "sft-42.out"
    log.write_text(STEPS + TB + "[rank0]: " + OOM + WATCHDOG)
    job = {"kind": "job", "cluster": "local", "job_id": "42", "name": "sft-x", "verdict": "failed",
           "state": "FAILED", "exit_code": 1, "stdout": str(log), "stderr": str(log)}  # fmt: skip
    res = run_labctl(
        "diagnose", "--why", "--format", "table", input=json.dumps(job) + "\n",
        env={"COLUMNS": "220"},
    )  # fmt: skip
    assert res.code == 1
    jobs, _, why = res.stdout.partition("why: local 42 → cuda_oom (cuda_oom)")
    assert "sft-x" in jobs and "explained by cuda_oom" in why and "✓ won" in why


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (("--explain", "logs/slurm-4812.out"), "use --why logs/slurm-4812.out"),
        (("--explain", "cuda_oom", "slurm.out"), "--explain shows the catalog and reads no log"),
        (("--catalog", "slurm.out"), "--catalog shows the catalog and reads no log"),
        (("--why", "--explain", "cuda_oom"), "--explain shows catalog entries"),
        (("--why", "--group", "slurm.out"), "use one or the other"),
    ],
)
def test_explain_id_and_why_log_never_mix(args: tuple[str, ...], hint: str) -> None:
    res = run_labctl("diagnose", *args)
    assert res.code == 2 and [r["kind"] for r in res.records] == ["error"]
    assert hint in res.records[0]["message"]


def test_explain_id_still_shows_a_catalog_entry() -> None:
    one = run_labctl("diagnose", "--explain", "nccl_timeout")
    assert one.code == 0 and one.records[0]["kind"] == "catalog_entry"
    assert one.records[0]["id"] == "nccl_timeout"
