"""The engine rules of issue 15: what came after a failure-looking line (progress, a later
success, a later independent failure), log levels, every scheduler's end markers and exit
reports, interleaved ranks, frame-based attribution, and the scheduler's word over a quiet
log. Each rule is checked on a short log built to isolate it."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.diagnose_logs import STEPS, why
from helpers.diagnose_logs import TB_MAIN as TB

from labctl.diagnose import diagnose_chunks, diagnose_text

CONDA = (
    "\nCommandNotFoundError: Your shell has not been properly configured to use "
    "'conda activate'.\nTo initialize your shell, run\n\n    $ conda init <SHELL_NAME>\n\n"
)
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0\n"


# -- 1. what came after a candidate -------------------------------------------------------


def test_progress_after_a_failure_means_the_job_survived_it() -> None:
    d = diagnose_text(TB + OOM + STEPS)
    assert d["category"] == "healthy" and d["failed"] is False
    assert why(d)["cuda_oom"].startswith("survived: the job kept making progress")
    # without the progress the same OOM is the root cause
    assert diagnose_text(STEPS + TB + OOM)["category"] == "cuda_oom"


@pytest.mark.parametrize(("gap", "category"), [(29, "cuda_oom"), (30, "healthy")])
def test_progress_is_placed_exactly_whatever_the_block_size(gap: int, category: str) -> None:
    """SURVIVE_LINES = 30: progress 29 lines after the OOM is the last steps of other ranks,
    30 lines after it the job moved on. Block boundaries never move the line."""
    log = (STEPS * 40 + TB + OOM + "teardown\n" * (gap - 1) + "step 999 | loss 0.1\n").encode()
    for block in (4096, 5000, 1 << 16):
        for cut in (1, 777, len(log) // 2):
            d = diagnose_chunks([log[:cut], log[cut:]], block=block)
            assert d["category"] == category, (block, cut)


def test_a_repeated_progress_line_is_not_progress() -> None:
    stuck = "iter 7 | loss 1.2500\n" * 60
    d = diagnose_text(TB + OOM + stuck)
    assert d["category"] == "cuda_oom"


def test_an_end_marker_is_not_undone_by_the_last_lines_printed_after_it() -> None:
    limit = "slurmstepd: error: *** JOB 4711 ON n1 CANCELLED AT 2024-05-01T12:00:00 DUE TO "
    d = diagnose_text(STEPS + limit + "TIME LIMIT ***\n" + STEPS.replace("step", "step 1"))
    assert d["category"] == "slurm_time_limit"


def test_one_ranks_oom_explains_the_others_watchdog_after_their_last_steps() -> None:
    watchdog = (
        "[rank1]:[E ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n"
    )
    d = diagnose_text(STEPS + TB + "[rank0]: " + OOM + STEPS[:200] + watchdog)
    assert d["category"] == "cuda_oom"
    assert why(d)["nccl_timeout"].startswith("explained by cuda_oom")


@pytest.mark.parametrize(
    "end",
    [
        "2025-04-07 09:12:55,101 - __main__ - INFO - Training completed successfully!\n",
        "`Trainer.fit` stopped: `max_epochs=3` reached.\n",
        "\n------------------------------------------------------------\n"
        "Sender: LSF System\n\nSuccessfully completed.\n\nResource usage summary:\n",
        "   Exit Status:        0\n",
    ],
)
def test_a_later_success_means_the_failure_before_it_was_survived(end: str) -> None:
    d = diagnose_text(TB + "RuntimeError: Given groups=1, expected 4 channels\n" + end)
    assert d["category"] == "healthy" and d["failed"] is False
    assert why(d)["code_error"].startswith("later success")


def test_a_shell_message_is_the_cause_only_if_nothing_fails_after_it() -> None:
    """Conda's activation error, printed by every job of a lab: six jobs that died of six
    different causes after it get six categories and six fingerprints, not one."""
    ends = {
        "slurm_time_limit": STEPS + "slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT "
        "2024-05-01T12:00:00 DUE TO TIME LIMIT ***\n",
        "cancelled": STEPS + "slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT "
        "2024-05-01T12:00:00 ***\n",
        "nan_loss": STEPS + "".join(f"step {i} | loss nan | lr 2e-05\n" for i in range(60, 70)),
        "code_error": '  File "train.py", line 10\n    x = = 1\n        ^\nSyntaxError: invalid '
        "syntax\n",
        "cuda_oom": TB + OOM,
        "healthy": STEPS + "Training completed successfully!\n",
    }
    fps = set()
    for category, end in ends.items():
        d = diagnose_text(CONDA + end)
        assert d["category"] == category, (category, d["also_matched"])
        fps.add(d["fingerprint"])
        if category != "healthy":
            assert "command_not_found" in why(d)
    assert len(fps) == len(ends)
    alone = diagnose_text(CONDA)
    assert alone["category"] == "module_not_found" and alone["catalog_id"] == "command_not_found"
    after = diagnose_text(CONDA + TB + "ModuleNotFoundError: No module named 'h5py'\n")
    assert after["catalog_id"] == "module_not_found" and "h5py" in after["evidence"][0]["text"]
    assert why(after)["command_not_found"].startswith("a later independent failure")
    # a shell line right after the program's traceback is not part of its message
    shell = "/var/spool/slurmd/job42/slurm_script: line 32: oqnd4apl: command not found\n"
    crash = diagnose_text(TB + "AssertionError\n" + shell)
    assert crash["category"] == "code_error" and crash["exception_type"] == "AssertionError"


# -- log levels -----------------------------------------------------------------------------


def test_a_traceback_inside_a_warning_record_is_a_logged_warning() -> None:
    dynamo = "".join(
        f"W0101 12:00:00.000 1234 torch/_dynamo/convert_frame.py:1000] {line}\n"
        for line in (
            "WON'T CONVERT forward",
            "Traceback (most recent call last):",
            '  File "model.py", line 3, in forward',
            "torch._dynamo.exc.Unsupported: call_function BuiltinVariable",
        )
    )
    d = diagnose_text(dynamo + "step 1 loss 2\n")
    assert d["category"] == "healthy" and d["failed"] is False
    logged = "WARNING:root:CUDA out of memory while probing the batch size; retrying with 8\n"
    d = diagnose_text(logged + "step 1 loss 2\n")
    assert d["category"] == "healthy"
    assert why(d)["cuda_oom"].startswith("logged at WARNING/INFO level")
    # ERROR is not a quiet level
    err = diagnose_text("ERROR:root:" + OOM)
    assert err["category"] == "cuda_oom"


def test_a_traceback_whose_every_line_carries_the_loggers_prefix_is_one_logged_record() -> None:
    """torch._dynamo's formatter prefixes every line of a record, frames included."""
    lead = "[2024-08-19 17:40:02,315] torch._dynamo.convert_frame: [WARNING] "
    record = "".join(
        lead + line + "\n"
        for line in (
            "WON'T CONVERT forward encoder.py line 87",
            "due to: ",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.10/concurrent/futures/_base.py", line 403, in __get_result',
            "    raise self._exception",
            "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
            "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'",
            "",
        )
    )
    d = diagnose_text(record * 3 + "validation done\n")  # no progress after it: still a warning
    assert d["category"] == "healthy" and d["last_traceback"] is not None
    end = (
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.\n"
    )
    assert diagnose_text(record * 3 + end)["category"] == "slurm_time_limit"


def test_any_progress_after_a_shell_message_means_the_script_carried_on() -> None:
    bar = "  0%|          | 0/1 [00:00<?, ?it/s]\r100%|##########| 1/1 [27:35<00:00, 1655.02s/it]\n"
    d = diagnose_text(CONDA + bar)
    assert d["category"] == "healthy"
    assert why(d)["command_not_found"].startswith("survived")


@pytest.mark.parametrize(
    "noise",
    [
        "n1:1:1 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object "
        "file: No such file or directory\n",
        "/x/numpy/core/fromnumeric.py:3432: RuntimeWarning: Mean of empty slice.\n",
        "ERROR: pip's dependency resolver does not currently take into account all the "
        "packages that are installed.\nvllm 0.4.0 requires torch==2.1.2, but you have torch "
        "2.2.0 which is incompatible.\n",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:10.0.0.1]:"
        "29500 (errno: 97 - Address family not supported by protocol).\n",
    ],
)
def test_healthy_noise_stays_healthy(noise: str) -> None:
    d = diagnose_text(noise + STEPS)
    assert d["category"] == "healthy" and d["failed"] is False, d["also_matched"]


def test_a_nan_loss_logged_at_info_level_still_counts() -> None:
    log = "".join(f"2024-01-01 00:00:00 - INFO - iter: {i} loss: nan\n" for i in range(5))
    assert diagnose_text(log)["category"] == "nan_loss"


# -- 2. the end of the job speaks first: every scheduler -----------------------------------

END_MARKERS = [
    ("SLURM time limit", "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-05-01T12:00:00 "
     "DUE TO TIME LIMIT ***", "slurm_time_limit"),
    ("SLURM cancel", "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-05-01T12:00:00 ***",
     "cancelled"),
    ("LSF run limit", "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n"
     "Exited with exit code 140.", "slurm_time_limit"),
    ("LSF owner", "TERM_OWNER: job killed by owner.\nExited with exit code 130.", "cancelled"),
    ("LSF warning signal", "Exited with signal termination: User defined signal 2.",
     "slurm_time_limit"),
    ("LSF exit 1", "Exited with exit code 1.\n\nResource usage summary:", "unknown"),
    ("LSF segfault", "Exited with exit code 139.", "segfault"),
    ("LSF preempted", "TERM_PREEMPT: job killed after preemption.", "preemption"),
    ("PBS walltime", "=>> PBS: job killed: walltime 86430 exceeded limit 86400",
     "slurm_time_limit"),
    ("PBS signal", "   Exit Status:        271 (Linux Signal 15 SIGTERM Termination)", "unknown"),
    ("k8s OOMKilled", "Last State: Terminated  Reason: OOMKilled  Exit Code: 137", "host_oom"),
    # an eviction without its reason: node pressure far more often than priority (corpus14)
    ("k8s evicted", "Status:  Failed\nReason:  Evicted", "unknown"),
    ("k8s evicted disk", "Reason:  Evicted\nMessage: The node was low on resource: "
     "ephemeral-storage.", "disk_full"),
    ("k8s deadline", "Warning  DeadlineExceeded  2m  job-controller  Job was active longer than "
     "specified deadline", "slurm_time_limit"),
    ("TPU maintenance", "start-worker 2024/12/17 16:03:58 GCP Metadata Service says termination "
     "is imminent", "preemption"),
    ("TPU lame workers", "INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager("
     "/job:worker/replica:0/task:0/device:CPU:0)", "preemption"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "end", "category"), END_MARKERS, ids=[m[0] for m in END_MARKERS])
def test_end_markers_of_every_scheduler(what: str, end: str, category: str) -> None:
    d = diagnose_text(CONDA + STEPS + end + "\n")
    assert d["category"] == category, (what, d["catalog_id"], d["why"])
    assert d["failed"] is True


def test_the_last_end_report_decides() -> None:
    """A log of two LSF attempts: the first failed, the one it ends with succeeded."""
    first = TB + "RuntimeError: boom\n\nExited with exit code 1.\n"
    d = diagnose_text(first + STEPS + "Successfully completed.\n")
    assert d["category"] == "healthy"
    again = diagnose_text("Successfully completed.\n" + STEPS + first)
    assert again["category"] == "code_error"


# A TPUEstimator that froze after a worker was lost (the shape of the log in
# github.com/megagonlabs/t5-japanese/issues/1): steps, the ShutdownHook's "lame workers found",
# its checkpoint save, then nothing until the job is killed.
TF_STEPS = "".join(
    f"I0902 03:{i // 60:02d}:{i % 60:02d}.516501 140070334211904 basic_session_run_hooks.py:260] "
    f"loss = {1.2 - i / 1000:.4f}, step = {488000 + 100 * i} (45.410 sec)\n"
    for i in range(60)
)
LAME = (
    "INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/"
    "task:0/device:CPU:0)\nI0902 03:34:21.925864 140070334211904 session_support.py:391] "
    "ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)"
    "\nINFO:tensorflow:ShutdownHook: saving checkpoint to gs://bucket/t5/model.ckpt\n"
)
KILLS = [
    ("SLURM time limit", "slurmstepd: error: *** JOB 9 ON tpu1 CANCELLED AT 2021-09-02T15:34:21 "
     "DUE TO TIME LIMIT ***", "slurm_time_limit"),
    ("SLURM scancel", "slurmstepd: error: *** JOB 9 ON tpu1 CANCELLED AT 2021-09-02T09:10:00 ***",
     "cancelled"),
    ("LSF run limit", "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n"
     "Exited with exit code 140.", "slurm_time_limit"),
    ("PBS walltime", "=>> PBS: job killed: walltime 86430 exceeded limit 86400",
     "slurm_time_limit"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "kill", "entry"), KILLS, ids=[k[0] for k in KILLS])
def test_an_estimator_that_froze_after_a_worker_disappeared(
    what: str, kill: str, entry: str
) -> None:
    d = diagnose_text(CONDA + TF_STEPS + LAME + kill + "\n")
    assert (d["category"], d["catalog_id"]) == ("hung_no_output", "tpu_worker_lost_hang"), what
    assert "lame workers found" in d["evidence"][0]["text"] and d["retryable"] is True
    fate = {c["catalog_id"]: c for c in d["candidates"]}
    assert fate[entry]["reason"] == "explained", fate[entry]
    assert fate[entry]["by"]["catalog_id"] == "tpu_worker_lost_hang"
    # the kill alone is what it always was
    assert diagnose_text(TF_STEPS + kill + "\n")["catalog_id"] == entry


def test_a_lost_worker_is_a_freeze_only_when_nothing_moved_until_the_kill() -> None:
    limit = KILLS[0][1] + "\n"
    # the log ends with the loss (a preempted TPU): preemption, as before
    alone = diagnose_text(TF_STEPS + LAME)
    assert alone["catalog_id"] == "preemption"
    # the trainer carried on for long after the loss: whatever the end, no freeze
    moved = diagnose_text(TF_STEPS + LAME + TF_STEPS.replace("step = 4", "step = 9") + limit)
    assert moved["catalog_id"] != "tpu_worker_lost_hang"
    # killed first, the workers lost as the job shut down: the time limit
    first = diagnose_text(TF_STEPS + limit + LAME)
    assert first["catalog_id"] == "slurm_time_limit"
    # a preemption banner names the preemption
    banner = KILLS[0][1].replace("TIME LIMIT", "PREEMPTION") + "\n"
    assert diagnose_text(TF_STEPS + LAME + banner)["category"] == "preemption"
    assert diagnose_text(TF_STEPS + limit)["category"] == "slurm_time_limit"


# -- 3. many ranks at once --------------------------------------------------------------------


def test_interleaved_ranks_keep_the_category() -> None:
    mangled = (
        "terminate called after throwing an instance of 'c10::DistBackendErrorterminate called "
        "after throwing an instance of 'c10::DistBackendError'\n  what():  [PG 0 Rank 3] Process "
        "group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600054 milliseconds before timing out.\n"
    )
    assert diagnose_text(STEPS + mangled)["category"] == "nccl_timeout"
    stuck = (
        "[rank0]:[E ProcessGroupNCCL.cpp:1418] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got "
        "stuck for 480 seconds without making progress in monitoring enqueued collectives.\n"
    )
    assert diagnose_text(STEPS + stuck)["category"] == "nccl_timeout"
    two = '[rank1]:[rank0]: Traceback (most recent call last):\n[rank1]:[rank0]:   File "t.py"'
    two += ", line 3, in <module>\n[rank1]:[rank0]: " + OOM
    assert diagnose_text(STEPS + two)["category"] == "cuda_oom"


# NCCL's heartbeat monitor (github.com/huggingface/transformers/issues/30399): it times out,
# dumps the stacks of every thread ("dumping debug info"), then kills its own process -- a
# glog FATAL, an abort, the launcher's report -- or the scheduler kills the job first.
TRAINING = "".join(
    f"{{'loss': {1.5 - i / 1000:.4f}, 'grad_norm': 0.8, 'epoch': {i / 100:.2f}}}\n"
    for i in range(50)
)
MONITOR = (
    "[3]:E0423 02:10:44.182842  8355 ProcessGroupNCCL.cpp:1329] [PG 0 (default_pg) Rank 3] "
    "Heartbeat monitor timed out! Process will be terminated after dumping debug info. "
    "workMetaList_.size()=0\n"
    "[3]:I0423 02:10:44.182893  8355 ThreadStackTrace.cpp:149] Successfully installed signal "
    "handler with 39 signo.\n[3]:I0423 02:10:44.182879  8355 ProcessGroupNCCL.cpp:1333] Dumping "
    "c++ stacktraces: Stack trace for 186 thread(s) [10924 pt_main_thread, 10925 pt_main_thread]\n"
    + "".join(f"[3]:    @     0x7f2382eac{i:03x}       1072  c10d::ProcessGroupNCCL::"
              "heartbeatMonitor()\n" for i in range(40))
)  # fmt: skip
ABORT = (
    "[3]:F0423 02:20:44.183112  8355 ProcessGroupNCCL.cpp:1185] [PG 0 (default_pg) Rank 3] "
    "[PG 0 (default_pg) Rank 3] ProcessGroupNCCL's watchdog got stuck for 600 seconds without "
    "making progress in monitoring enqueued collectives.\n[3]:*** Check failure stack trace: ***\n"
    "[3]:    @     0x7f2382eacb4c  google::LogMessage::Fail()\n"
    "[3]:*** SIGABRT received at time=1713838844 on cpu 3 ***\n[3]:Fatal Python error: Aborted\n"
)
LAUNCHER = (
    "E0423 02:20:50.000000 140 torch/distributed/elastic/multiprocessing/api.py:826] failed "
    "(exitcode: -6) local_rank: 3 (pid: 10924) of binary: /usr/bin/python\n"
    + TB
    + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n  exitcode  : -6 "
    "(pid: 10924)\n  traceback : Signal 6 (SIGABRT) received by PID 10924\n"
)
NCCL_KILLS = [
    ("its own abort", ABORT),
    ("abort and launcher", ABORT + LAUNCHER),
    ("srun's abort report", "srun: error: gpu-a1: task 3: Aborted (core dumped)"),
    ("a shell's abort report", "/var/spool/slurmd/job9/slurm_script: line 12: 10924 Aborted "
     "(core dumped) python train.py"),
    ("scancel of the step", "slurmstepd: error: *** STEP 4711.0 ON gpu-a1 CANCELLED AT "
     "2024-04-23T02:21:00 ***\nsrun: error: gpu-a1: task 0: Exited with exit code 1"),
    ("time limit", "slurmstepd: error: *** JOB 4711 ON gpu-a1 CANCELLED AT 2024-04-23T02:21:00 "
     "DUE TO TIME LIMIT ***"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "kill"), NCCL_KILLS, ids=[k[0] for k in NCCL_KILLS])
def test_nccl_dumping_debug_info_before_the_kill_is_still_an_nccl_timeout(
    what: str, kill: str
) -> None:
    d = diagnose_text(TRAINING + MONITOR + kill + "\n")
    assert d["category"] == "nccl_timeout", (what, d["catalog_id"], d["why"])
    assert "Heartbeat monitor timed out" in d["evidence"][0]["text"]
    assert d["evidence"][0]["line"] == TRAINING.count("\n") + 1


def test_an_abort_is_how_a_failure_ends_not_a_failure_of_its_own() -> None:
    """SIGABRT ends a process after its cause was printed; SIGSEGV is a fault of its own."""
    alone = diagnose_text(TRAINING + "Aborted (core dumped)\n")
    assert (alone["category"], alone["catalog_id"]) == ("segfault", "native_abort")
    assert alone["action"]["name"] == "PYTHONFAULTHANDLER"
    watchdog = MONITOR.splitlines()[0] + "\n"
    segv = diagnose_text(TRAINING + watchdog + "Segmentation fault (core dumped)\n")
    assert segv["category"] == "segfault"  # a crashed rank still explains the others' timeouts


def test_a_slurm_step_id_is_not_a_training_step() -> None:
    """ "*** STEP 4711.0 ON ... CANCELLED" names a job step: the job did not move on."""
    cancel = "slurmstepd: error: *** STEP 4711.0 ON gpu-a1 CANCELLED AT 2024-04-23T02:21:00 ***\n"
    d = diagnose_text(TRAINING + TB + OOM + "teardown\n" * 40 + cancel)
    assert d["category"] == "cuda_oom", d["candidates"]
    moved = "step 7 | loss 0.1\nstep 8 | loss 0.1\n"
    assert diagnose_text(TRAINING + TB + OOM + "teardown\n" * 40 + moved)["failed"] is False


# -- 4. context names the culprit ---------------------------------------------------------------

HUB_FRAME = (
    '  File "/opt/conda/lib/python3.10/site-packages/huggingface_hub/file_download.py", line '
    "1200, in hf_hub_download\n    r = _request_wrapper(\n"
)
SOCKET_FRAME = '  File "/usr/lib/python3.10/socket.py", line 705, in readinto\n'


def test_a_bare_timeout_through_hub_frames_is_a_hub_failure() -> None:
    hub = diagnose_text(TB + HUB_FRAME + SOCKET_FRAME + "TimeoutError: timed out\n")
    assert hub["category"] == "hf_hub_error" and hub["catalog_id"] == "hf_hub_timeout"
    # without them: a network timeout whose host nobody named -- not the Hub, not the code
    plain = diagnose_text(TB + SOCKET_FRAME + "TimeoutError: timed out\n")
    assert (plain["category"], plain["catalog_id"]) == ("unknown", "network_timeout")
    # hub frames in an EARLIER traceback do not name the culprit of a later one
    earlier = TB + HUB_FRAME + "ValueError: bad repo id\n" + "x\n" * 40
    later = diagnose_text(earlier + TB + SOCKET_FRAME + "TimeoutError: timed out\n")
    assert later["catalog_id"] != "hf_hub_timeout"


def test_a_batch_size_finder_that_gives_up_is_a_cuda_oom() -> None:
    d = diagnose_text(STEPS + TB + "RuntimeError: No executable batch size found, reached zero.\n")
    assert d["category"] == "cuda_oom"


def test_a_corrupt_checkpoint_inside_a_generic_runtime_error() -> None:
    d = diagnose_text(
        TB + "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding "
        "central directory\n"
    )
    assert d["category"] == "checkpoint_load_error"


# -- 6. the scheduler's word is not overruled by a quiet log ----------------------------------


@pytest.mark.parametrize(
    ("sched", "category"),
    [
        ({"verdict": "failed"}, "unknown"),
        ({"verdict": "failed", "exit_code": None, "state": None}, "unknown"),
        ({"state": "FAILED", "exit_code": 1}, "unknown"),
        ({"verdict": "timeout"}, "slurm_time_limit"),
        ({"verdict": "out_of_memory"}, "host_oom"),
        ({"verdict": "node_fail"}, "node_failure"),
    ],
)
def test_a_failed_job_with_a_quiet_log_is_never_healthy(
    sched: dict[str, Any], category: str
) -> None:
    d = diagnose_text(STEPS, sched=sched)
    assert d["failed"] is True and d["category"] == category
    assert d["evidence"][0]["origin"] == "scheduler"
    assert d["decided_by"] in ("scheduler", "exit_code")
    ok = diagnose_text(STEPS, sched={"verdict": "completed"})
    assert ok["category"] == "healthy" and ok["failed"] is False


def test_every_candidate_says_why_it_won_or_lost() -> None:
    d = diagnose_text(CONDA + TB + OOM + STEPS + TB + "ValueError: bad shape\n")
    assert d["category"] == "code_error" and d["why"]
    reasons = why(d)
    assert reasons["cuda_oom"].startswith("survived")
    assert reasons["command_not_found"].startswith(("survived", "a later independent"))
