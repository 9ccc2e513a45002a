"""Each class of miss the sixth untouched set (corpus10, issue excerpts) showed, as a principle
that also catches its siblings: a traceback Python printed under "Exception ignored in" never
ends a process (even when the log stops inside it), glibc's heap-corruption aborts, Julia's
Ctrl-C, a submission the scheduler refused, NCCL's error trail out of communicator set-up, the
heartbeat monitor's last word, and a network timeout that interrupts a download bar. The logs are
written for these tests, modelled on what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, verdict

from labctl.diagnose import diagnose_text

DONE = "Training completed. Saved the final model to ./out/final\n"
FRAMES = (
    '  File "/opt/venv/lib/python3.12/site-packages/tracker/run.py", line 291, in finish\n'
    "    self._cleanup(error)\n"
    '  File "/opt/venv/lib/python3.12/site-packages/tracker/run.py", line 212, in _cleanup\n'
    "    self._operator.on_stop(error)\n"
)


# -- "Exception ignored in": Python reports it and carries on ---------------------------------


@pytest.mark.parametrize(
    "intro",
    [
        "Exception ignored in atexit callback: <bound method Cloud._clean of <Cloud object>>\n",
        "Exception ignored in: <function _Writer.__del__ at 0x7f1dc0492720>\n",
        "Exception in thread Thread-3 (most likely raised during interpreter shutdown):\n",
    ],
)
def test_a_log_that_stops_inside_an_ignored_traceback_is_healthy(intro: str) -> None:
    assert verdict(STEPS + DONE + intro + "Traceback (most recent call last):\n" + FRAMES) == (
        "healthy",
        False,
        None,
    )


def test_a_log_that_stops_inside_any_other_traceback_is_still_a_failure() -> None:
    category, failed, _ = verdict(STEPS + "Traceback (most recent call last):\n" + FRAMES)
    assert (category, failed) == ("unknown", True)


# -- glibc's heap checks abort the process: a native crash ------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "double free or corruption (out)",
        "free(): invalid pointer",
        "corrupted size vs. prev_size",
        "malloc(): unsorted double linked list corrupted",
        "*** Error in `python3': free(): invalid next size (fast): 0x0000557a3c2e1f20 ***",
    ],
)
def test_a_heap_corruption_abort_is_a_native_crash(line: str) -> None:
    log = STEPS + line + "\n/var/spool/slurmd/job4411/slurm_script: line 12: 3121 Aborted\n"
    assert verdict(log) == ("segfault", True, "heap_corruption")
    assert verdict(STEPS + line + "\nAborted (core dumped)\n")[2] == "heap_corruption"


def test_allocator_words_in_a_healthy_log_are_no_crash() -> None:
    log = STEPS + "mem: free(): 3 blocks released, malloc arena trimmed\n" + DONE
    assert verdict(log)[:2] == ("healthy", False)


# -- Julia: a Ctrl-C is an interrupt, its other errors are the program's ----------------------


def test_julias_interrupt_exception_is_a_cancel() -> None:
    bar = "Train Epoch 6:  81%|█████████████        | ETA: 0:00:00 ( 6.73 ms/it)\n"
    log = (
        STEPS
        + bar
        + "ERROR: InterruptException:\nStacktrace:\n"
        + " [1] poptask(W::Base.IntrusiveLinkedListSynchronized{Task})\n"
    )
    assert verdict(log)[:2] == ("cancelled", True)
    assert verdict(STEPS + "ERROR: LoadError: MethodError: no method matching f(::Int64)\n")[0] == (
        "code_error"
    )


# -- the scheduler refused the submission: nothing ran, the request is wrong ------------------


@pytest.mark.parametrize(
    "line",
    [
        "sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)",  # noqa: E501
        "Issued job 'align' failed with code 1: sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",  # noqa: E501
        "salloc: error: Job submit/allocate failed: Requested node configuration is not available",
    ],
)
def test_a_refused_submission_is_the_requests_error(line: str) -> None:
    d = diagnose_text("workflow: scheduling 3 jobs\n" + line + "\n")
    assert (d["category"], d["catalog_id"], d["retryable"]) == (
        "code_error",
        "submission_refused",
        False,
    )
    assert d["title"].startswith("The scheduler refused the submission: ")


def test_a_submitted_job_is_no_refusal() -> None:
    assert verdict("Submitted batch job 4242\n" + STEPS + DONE)[:2] == ("healthy", False)


# -- NCCL: an error returned out of communicator set-up ---------------------------------------

TRAIL = (
    "n1:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to "
    "10.0.0.2<45763> failed : Connection refused\n"
    "n1:39964:40075 [0] NCCL INFO misc/socket.cc:564 -> 2\n"
    "n1:39964:40075 [0] NCCL INFO transport/net_socket.cc:336 -> 2\n"
    "n1:39964:40044 [0] NCCL INFO transport.cc:148 -> 3\n"
    "n1:39964:40044 [0] NCCL INFO init.cc:1089 -> 3\n"
)


def test_nccls_error_trail_out_of_init_is_an_nccl_error() -> None:
    assert verdict("n1:39964:39964 [0] NCCL INFO Bootstrap : Using eth0\n" + TRAIL)[:2] == (
        "nccl_error",
        True,
    )


def test_a_probe_nccl_survived_is_no_error() -> None:
    probe = "n1:39964:40075 [0] NCCL INFO misc/ibvwrap.cc:98 -> 2\n"
    ok = "n1:39964:40075 [0] NCCL INFO comm 0x55 rank 0 nranks 8 - Init COMPLETE\n"
    assert verdict(probe + ok + STEPS + DONE)[:2] == ("healthy", False)


# -- the heartbeat monitor's last word, however the lines above it were cut -------------------


def test_the_heartbeat_monitors_termination_is_an_nccl_timeout() -> None:
    log = (
        STEPS
        + "[rank6]:[E429 13:55:49.384620373 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(de\n"
        + "fault_pg) Rank 6] ProcessGroupNCCL preparing to dump debug info. Include stack: 1\n"
        + "[rank6]:[F429 14:03:49.385461578 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID 0(def"
        + "ault_pg) Rank 6] Terminating the process after attempting to dump debug info, due to "
        + "ProcessGroupNCCL watchdog hang.\n"
    )
    assert verdict(log) == ("nccl_timeout", True, "nccl_timeout")


# -- context names the culprit: the bar a timeout interrupted ---------------------------------

NET_TB = (
    "Traceback (most recent call last):\n"
    '  File "/opt/py/lib/python3.9/ssl.py", line 1100, in read\n'
    "    return self._sslobj.read(len, buffer)\n"
)


@pytest.mark.parametrize("exc", ["socket.timeout: The read operation timed out", "TimeoutError"])
def test_a_timeout_that_interrupts_a_download_bar_is_a_hub_failure(exc: str) -> None:
    bar = "Downloading:  69%|██████▊   | 2.15G/3.12G [2:40:36<2:05:51, 130kB/s]"
    assert verdict(bar + NET_TB + exc + "\n")[0] == "hf_hub_error"


def test_a_timeout_that_interrupts_a_training_bar_is_not() -> None:
    bar = "Epoch 1:  69%|██████▊   | 690/1000 [02:40<01:12, 4.3it/s]"
    assert verdict(bar + NET_TB + "socket.timeout: The read operation timed out\n")[0] != (
        "hf_hub_error"
    )


# -- corpus9 (committed job outputs): the same classes of miss, and their siblings ------------

LAUNCH_TB = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.8/site-packages/torch/nn/modules/module.py", line 1518, in f\n'
    "    return self._call_impl(*args, **kwargs)\n"
)


@pytest.mark.parametrize(
    "record",
    [
        "[2024-01-07 17:09:13,336] torch.distributed.elastic.agent.server.api: [WARNING] "
        "Received Signals.SIGINT death signal, shutting down workers\n",
        "[rank1]: 2024-01-07 17:09:13,338 INFO torch.distributed.elastic: Sending process 5004 "
        "closing signal SIGINT\n",
    ],
)
def test_a_record_another_process_logs_amid_the_frames_is_no_exception(record: str) -> None:
    log = STEPS + LAUNCH_TB + record + '  File "m.py", line 9, in f\n    x = y.pow(2)\n'
    log += "KeyboardInterrupt\n"
    assert verdict(log)[:2] == ("cancelled", True)


def test_a_timestamped_opening_that_recurs_starts_a_new_run() -> None:
    def run(t: str) -> str:
        return (
            f"2025-05-06 20:{t},402 INFO Watch our forum for announcements and news\n"
            f"2025-05-06 20:{t},403 WARNING The API syntax has changed; see the request code\n"
        )

    first = run("14:27") + "downloading 2012-01 ...\n" + TB_KBD
    second = run("14:52") + "".join(f"downloaded 2012-{m:02d}\n" for m in range(1, 13))
    assert verdict(first + second + "all downloads finished\n")[:2] == ("healthy", False)
    # the same records inside one run (no second record after the first) start nothing
    once = run("14:27") + TB_KBD
    assert verdict(once)[:2] == ("cancelled", True)


TB_KBD = (
    "Traceback (most recent call last):\n"
    '  File "/data/tools/fetch.py", line 56, in <module>\n    time.sleep(sleep)\n'
    "KeyboardInterrupt\n"
)


@pytest.mark.parametrize(
    "line",
    [
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 16 got signal: 1",
        "Hangup",
    ],
)
def test_a_hang_up_is_a_stop_from_outside_not_the_codes_error(line: str) -> None:
    d = diagnose_text(STEPS + line + "\n")
    assert (d["category"], d["catalog_id"], d["retryable"]) == ("cancelled", "hangup", True)


def test_the_interpreter_refusing_its_own_options_is_a_usage_error() -> None:
    log = (
        "unknown option --master_port=25678\n"
        "usage: python [option] ... [-c cmd | -m mod | file | -] [arg] ...\n"
        "Try `python -h' for more information.\n"
    )
    assert verdict(log) == ("code_error", True, "cli_usage_error")


def test_any_c_tools_fail_to_open_report_is_its_missing_input() -> None:
    log = "[bwa_aln] 17bp reads: max_diff = 2\n"
    log += "[bwa_seq_open] fail to open file 'read200.fa' : No such file or directory\n"
    assert verdict(log) == ("code_error", True, "bio_tool_input_failed")
