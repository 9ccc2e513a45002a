"""`labctl diagnose` end to end: files, globs, gzip, stdin, job records (local and over SSH)."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from schema_check import assert_valid

OOM = (
    "step 10 loss 2.1\n" * 50 + "Traceback (most recent call last):\n"
    '  File "train.py", line 9, in <module>\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
    "total capacity of 79.15 GiB of which 1.25 MiB is free.\n"
)
HEALTHY = "step 1 loss 2.0\nFutureWarning: `foo` is deprecated and will raise an error\ndone\n"
SSH_CONFIG = Path("/run/labctl-sshd/ssh_config")


def test_files_globs_gzip_and_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "a.out").write_text(OOM)
    (tmp_path / "b.out").write_text(HEALTHY)
    with gzip.open(tmp_path / "c.log.gz", "wt") as fh:
        fh.write(OOM.replace("train.py", "other.py"))
    res = run_labctl("diagnose", str(tmp_path / "*.out"), str(tmp_path / "c.log.gz"))
    assert_valid("diagnose", res.records)
    cats = {Path(r["source"]).name: r["category"] for r in res.records}
    assert cats == {"a.out": "cuda_oom", "b.out": "healthy", "c.log.gz": "cuda_oom"}
    assert res.code == 1
    healthy = run_labctl("diagnose", str(tmp_path / "b.out"))
    assert healthy.code == 0 and healthy.records[0]["failed"] is False


def test_same_failure_in_two_runs_groups_as_one(tmp_path: Path) -> None:
    (tmp_path / "run1").mkdir()
    (tmp_path / "run2").mkdir()
    (tmp_path / "run1" / "stderr.log").write_text(OOM)
    (tmp_path / "run2" / "stderr.log").write_text(OOM.replace("20.00 MiB", "1.50 GiB"))
    res = run_labctl("diagnose", "--group", str(tmp_path))
    assert_valid("diagnose", res.records)
    groups = [r for r in res.records if r["kind"] == "diagnosis_group"]
    assert len(groups) == 1 and groups[0]["count"] == 2
    assert groups[0]["category"] == "cuda_oom"


def test_stdin_log_text() -> None:
    res = run_labctl("diagnose", "-", input=OOM)
    assert res.records[0]["category"] == "cuda_oom"


def test_unreadable_log_is_an_error_and_the_rest_is_still_diagnosed(tmp_path: Path) -> None:
    (tmp_path / "a.out").write_text(OOM)
    res = run_labctl("diagnose", str(tmp_path / "missing.out"), str(tmp_path / "a.out"))
    assert [r["kind"] for r in res.records] == ["error", "diagnosis"]
    assert res.records[0]["reason"] == "unreadable"
    assert res.code == 3


def _job(path: Path, verdict: str = "failed", **kw) -> dict:
    return {
        "kind": "job",
        "cluster": kw.pop("cluster", "local"),
        "job_id": "42",
        "name": "sft-x",
        "verdict": verdict,
        "state": "FAILED",
        "exit_code": 1,
        "stdout": str(path),
        "stderr": str(path),
        **kw,
    }


def test_job_records_get_a_diagnosis_and_others_pass_through(tmp_path: Path) -> None:
    log = tmp_path / "sft-42.out"
    log.write_text(OOM)
    other = {"kind": "job", "job_id": "7", "verdict": "running-progressing", "name": "rl"}
    note = {"kind": "note", "text": "untouched"}
    stdin = "\n".join(json.dumps(r) for r in (_job(log), other, note)) + "\n"
    res = run_labctl("diagnose", input=stdin)
    assert_valid("diagnose", res.records)
    first, second, third = res.records
    assert first["diagnosis"]["category"] == "cuda_oom"
    assert first["diagnosis"]["action"]["type"] == "scale_arg"
    assert second == other and third == note
    assert res.code == 1


def test_a_job_whose_log_is_gone_is_diagnosed_from_its_state_not_an_outage(
    tmp_path: Path,
) -> None:
    """Cleaned-up or node-local logs are common: the diagnosis says which are missing and
    rests on the scheduler; no `error` record, so cron does not hear "cluster unreachable"."""
    gone = tmp_path / "cleaned-up" / "slurm-42.out"
    cancelled = _job(gone, verdict="cancelled", state="CANCELLED", exit_code=0, signal=15)
    res = run_labctl("diagnose", input=json.dumps(cancelled) + "\n")
    assert_valid("diagnose", res.records)
    [rec] = res.records
    assert rec["diagnosis"]["logs_missing"] == [str(gone)]
    assert rec["diagnosis"]["decided_by"] == "scheduler" and res.code == 0
    timeout = _job(gone, verdict="timeout", state="TIMEOUT", exit_code=0, signal=15)
    res = run_labctl("diagnose", input=json.dumps(timeout) + "\n")
    assert [r["kind"] for r in res.records] == ["job"] and res.code == 1  # the verdict's 1
    assert res.records[0]["diagnosis"]["category"] == "slurm_time_limit"
    # the same on a cluster, read over ssh (scripts/test starts the sshd)
    assert SSH_CONFIG.exists(), "the test sshd is not running: run scripts/sshd-up"
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[[clusters]]\nname = "c2"\nhost = "labctl-test"\nssh_options = ["-F", "{SSH_CONFIG}"]\n'
    )
    for full in ((), ("--full",)):
        remote = run_labctl(
            "diagnose",
            *full,
            input=json.dumps(dict(cancelled, cluster="c2")) + "\n",
            env={"LABCTL_CONFIG": str(cfg)},
        )
        [rrec] = remote.records
        assert rrec["diagnosis"]["logs_missing"] == [str(gone)] and remote.code == 0
    # a file named on the command line that is not there is still an error (exit 3)
    named = run_labctl("diagnose", str(gone))
    assert [r["reason"] for r in named.records] == ["unreadable"] and named.code == 3


def test_scheduler_state_beats_log_text(tmp_path: Path) -> None:
    log = tmp_path / "t.out"
    log.write_text("step 5\n" * 10)
    job = _job(log, verdict="timeout", state="TIMEOUT", exit_code=0, signal=15)
    res = run_labctl("diagnose", input=json.dumps(job) + "\n")
    assert res.records[0]["diagnosis"]["category"] == "slurm_time_limit"
    assert res.records[0]["diagnosis"]["decided_by"] == "scheduler"


def test_job_logs_are_read_on_the_cluster_over_ssh(tmp_path: Path) -> None:
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    remote_log = tmp_path / "remote.out"  # same machine, but read through ssh
    remote_log.write_text(OOM)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[[clusters]]\nname = "c2"\nhost = "labctl-test"\nssh_options = ["-F", "{SSH_CONFIG}"]\n'
    )
    job = _job(remote_log, cluster="c2")
    res = run_labctl("diagnose", input=json.dumps(job) + "\n", env={"LABCTL_CONFIG": str(cfg)})
    assert res.records[0]["diagnosis"]["category"] == "cuda_oom"
    cfg.write_text(
        '[[clusters]]\nname = "c2"\nhost = "127.0.0.1"\n'
        'ssh_options = ["-p", "1", "-o", "ConnectTimeout=3"]\n'
    )
    down = run_labctl("diagnose", input=json.dumps(job) + "\n", env={"LABCTL_CONFIG": str(cfg)})
    kinds = [r["kind"] for r in down.records]
    assert kinds == ["error", "job"] and down.records[0]["reason"] == "unreachable"
    assert down.records[1]["diagnosis"]["decided_by"] in ("exit_code", "scheduler", "none")
    assert down.code == 3


def test_a_hung_log_read_on_a_cluster_gives_up_at_the_clusters_timeout(tmp_path: Path) -> None:
    """diagnose reaches a cluster as poll does: its `timeout_s` bounds a tail read (a log
    that never answers, here a FIFO nobody writes, is a `timeout` error, not a hang)."""
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    fifo = tmp_path / "stuck.err"
    os.mkfifo(fifo)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[[clusters]]\nname = "c2"\nhost = "labctl-test"\nssh_options = ["-F", "{SSH_CONFIG}"]\n'
        "timeout_s = 3\n"
    )
    job = _job(fifo, cluster="c2")
    start = time.monotonic()
    res = run_labctl(
        "diagnose", input=json.dumps(job) + "\n", env={"LABCTL_CONFIG": str(cfg)}, timeout=60
    )
    assert time.monotonic() - start < 30
    assert [r["kind"] for r in res.records] == ["error", "job"]
    assert res.records[0]["reason"] == "timeout" and res.code == 3


def test_full_reads_the_whole_remote_log_streamed_and_gz_is_decompressed(tmp_path: Path) -> None:
    """The root cause is at the top of a 70 MiB log: past the 64 MiB a tail could hold."""
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[[clusters]]\nname = "c2"\nhost = "labctl-test"\nssh_options = ["-F", "{SSH_CONFIG}"]\n'
    )
    env = {"LABCTL_CONFIG": str(cfg)}
    noise = b"iter 7 waiting for the eval server to come back\n"
    big = tmp_path / "big.out"
    with big.open("wb") as f:
        f.write(OOM.encode())
        for _ in range(70):
            f.write(noise * ((1 << 20) // len(noise)))
    job = json.dumps(_job(big, cluster="c2")) + "\n"
    tail = run_labctl("diagnose", input=job, env=env).records[0]["diagnosis"]
    assert tail["category"] != "cuda_oom" and tail["window"]["complete"] is False
    full = run_labctl("diagnose", "--full", input=job, env=env, timeout=300)
    d = full.records[0]["diagnosis"]
    assert d["category"] == "cuda_oom" and d["window"]["complete"] is True, d["window"]
    assert d["window"]["bytes_read"] == big.stat().st_size
    assert d["evidence"][0]["line"] == OOM.count("\n")  # counted from the top: a full read
    gz = tmp_path / "small.out.gz"
    gz.write_bytes(gzip.compress(OOM.encode()))
    for args in ((), ("--full",)):
        res = run_labctl("diagnose", *args, input=json.dumps(_job(gz, cluster="c2")), env=env)
        assert res.records[0]["diagnosis"]["category"] == "cuda_oom", args


def test_catalog_and_explain() -> None:
    cat = run_labctl("diagnose", "--catalog")
    assert_valid("diagnose", cat.records)
    ids = {r["id"] for r in cat.records}
    assert {"cuda_oom", "host_oom_kill", "nccl_timeout", "disk_full"} <= ids
    one = run_labctl("diagnose", "--explain", "cuda_oom")
    assert one.records[0]["id"] == "cuda_oom" and one.records[0]["retryable"] is False
    bad = run_labctl("diagnose", "--explain", "cuda_om")
    assert bad.code == 2 and "did you mean" in bad.records[0]["message"]


def test_user_catalog_from_config_adds_an_entry(tmp_path: Path) -> None:
    extra = tmp_path / "lab.toml"
    extra.write_text(
        '[[entry]]\nid = "lab_quota"\ntitle = "Lab GPU quota exceeded"\ncategory = "code_error"\n'
        'any = ["LABQUOTA-EXCEEDED"]\nretryable = false\n'
        'fix = "ask for more quota"\nexamples = ["error LABQUOTA-EXCEEDED for user x"]\n'
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[catalog]\nfiles = ["{extra}"]\n')
    log = tmp_path / "x.out"
    log.write_text("start\nerror LABQUOTA-EXCEEDED for user bob\n")
    res = run_labctl("diagnose", str(log), env={"LABCTL_CONFIG": str(cfg)})
    assert res.records[0]["catalog_id"] == "lab_quota", res.stdout + res.stderr


def test_a_bad_user_catalog_is_a_config_error(tmp_path: Path) -> None:
    extra = tmp_path / "lab.toml"
    extra.write_text(
        '[[entry]]\nid = "x"\ntitle = "t"\ncategory = "code_error"\nany = ["(unclosed"]\n'
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[catalog]\nfiles = ["{extra}"]\n')
    res = run_labctl("diagnose", "--catalog", env={"LABCTL_CONFIG": str(cfg)})
    assert res.code == 2 and "lab.toml" in res.records[0]["message"]


def test_a_failed_verdict_with_a_quiet_log_is_unknown_never_healthy(tmp_path: Path) -> None:
    """poll's verdict without a state or exit code (issue 15): the log's silence does not
    overrule the scheduler."""
    log = tmp_path / "quiet.out"
    log.write_text("step 1 loss 2.0\nstep 2 loss 1.9\n")
    job = _job(log, verdict="failed")
    del job["state"], job["exit_code"]
    res = run_labctl("diagnose", input=json.dumps(job) + "\n")
    assert_valid("diagnose", res.records)
    d = res.records[0]["diagnosis"]
    assert d["category"] == "unknown" and d["failed"] is True and res.code == 1
    assert d["evidence"][0] == {
        "origin": "scheduler",
        "line": None,
        "line_from_end": None,
        "text": "scheduler: verdict failed",
        "before": [],
        "after": [],
    }
    assert d["scheduler"]["verdict"] == "failed" and "scheduler says the job failed" in d["why"]
