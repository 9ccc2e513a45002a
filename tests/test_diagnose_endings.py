"""Each class of miss the fifth untouched set (corpus8) showed, as a principle that also catches
its siblings: the last of several jobs in one file decides (a requeued job that trains on after
its preemption, an appended file whose last job ended otherwise than its first, an HTCondor user
log whose resubmitted jobs returned 0), a warning's message is no failure, an exception being
handled when an interrupt came, a multi-host runtime's coordination service, wall-clock kills of
other batch systems, bioinformatics tools that cannot read their input, and a native extension
that cannot load under the import error that wraps it. The logs are written for these tests,
modelled on what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import TB, reasons

from labctl.diagnose import diagnose_text

STEPS = "".join(f"Step {i}: grad_norm=0.1{i % 10}, loss=0.0{i % 9 + 1}\n" for i in range(40))
SMI = (
    "+-------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 570.158.01    Driver Version: 570.158.01    CUDA Version: 12.8 |\n"
    "| GPU  Name        Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. |\n"
)
PREEMPTED = (
    "slurmstepd: error: *** JOB 8812 ON gpu-a07 CANCELLED AT 2026-01-19T15:20:31 "
    "DUE TO PREEMPTION ***\n"
)
SCANCEL = "slurmstepd: error: *** JOB 8790 ON gpu-b02 CANCELLED AT 2026-01-12T02:31:48 ***\n"


# -- a requeued job: the log's last run decides -----------------------------------------------


@pytest.mark.parametrize(
    "stamp", ["Tue Jan 20 08:00:01 2026", "Wed Jan 21 15:46:12 CET 2026", "2026-01-21 15:46:12"]
)
def test_a_requeued_job_that_trains_on_after_its_preemption_is_healthy(stamp: str) -> None:
    """A job script that prints the date first prints another one when SLURM requeues it: the
    date's shape and the line after it start a run, so the preemption is the first run's."""
    first = "Mon Jan 19 10:28:25 2026\n" + SMI + STEPS + PREEMPTED
    d = diagnose_text(first + stamp + "\n" + SMI + STEPS.replace("Step ", "Step 1"))
    assert d["category"] == "healthy", d["why"]
    assert reasons(d, "preemption") == ["earlier_run"]
    # preempted again in its last run: a preemption
    again = diagnose_text(first + stamp + "\n" + SMI + STEPS + PREEMPTED)
    assert (again["category"], again["failed"]) == ("preemption", True)
    # a date printed at the start and at the end of one run: no second run (no second line)
    run = "Mon Jan 19 10:28:25 2026\n" + SMI + STEPS + TB + "KeyError: 'labels'\n"
    d = diagnose_text(run + stamp + "\n")
    assert (d["category"], d["failed"]) == ("code_error", True)


# -- several jobs' ends in one file: the last end decides -------------------------------------


def test_the_last_jobs_end_decides_over_an_earlier_jobs_in_an_appended_file() -> None:
    """Another node prints another banner, so no opening recurs; the earlier job's cancel is
    still an earlier job's: the log moved on to a later job that ended another way."""
    earlier = "| NVIDIA-SMI 535.129.03  Driver Version: 535.129.03 |\nRender Well\n"
    earlier += TB + "RuntimeError: episode 3 failed\n" + SCANCEL
    later = "== pi0 fine-tune ==\n" + STEPS + PREEMPTED
    d = diagnose_text(earlier + later)
    assert (d["category"], d["catalog_id"]) == ("preemption", "preemption"), d["why"]
    assert reasons(d, "cancelled") == ["earlier_job"]
    # the other way round: cancelled last
    d = diagnose_text("== eval ==\n" + STEPS + PREEMPTED + later.replace(PREEMPTED, SCANCEL))
    assert d["category"] == "cancelled"
    # a job's and its steps' banners come together, with no progress between them: one end
    step = PREEMPTED.replace("JOB 8812", "STEP 8812.0")
    d = diagnose_text(STEPS + PREEMPTED + "srun: Job step aborted\n" + step)
    assert d["category"] == "preemption"
    assert "earlier_job" not in reasons(d, "preemption")


# -- HTCondor's user log: the last job's termination decides ----------------------------------

HELD = (
    "001 ({c}.000.000) 2024-03-02 10:09:15 Job executing on host: <10.0.3.7:9618>\n...\n"
    "012 ({c}.000.000) 2024-03-02 10:09:16 Job was held.\n"
    "\tError from slot1_2@wn-07.pool.example.org: Failed to execute '/home/u/run/extract.py' "
    "with arguments 17: (errno=13: 'Permission denied')\n\tCode 6 Subcode 13\n...\n"
    "009 ({c}.000.000) 2024-03-02 10:10:35 Job was aborted.\n\tvia condor_rm (by user u)\n...\n"
)
TERMINATED = (
    "000 ({c}.000.000) 2024-03-02 10:10:41 Job submitted from host: <10.0.3.1:9618>\n...\n"
    "006 ({c}.000.000) 2024-03-02 11:03:29 Image size of job updated: 319768\n"
    "\t232  -  MemoryUsage of job (MB)\n...\n"
    "005 ({c}.000.000) 2024-03-02 12:09:58 Job terminated.\n\t{status}\n"
    "\t\tUsr 0 01:55:46, Sys 0 00:00:56  -  Run Remote Usage\n"
    "\t0  -  Run Bytes Sent By Job\n"
    "\tJob terminated of its own accord at 2024-03-02T12:09:58Z.\n...\n"
)


def test_an_htcondor_log_whose_resubmitted_job_returned_0_is_healthy() -> None:
    ok = TERMINATED.format(c=5102, status="(1) Normal termination (return value 0)")
    d = diagnose_text(HELD.format(c=5101) + ok)
    assert (d["category"], d["failed"]) == ("healthy", False), d["why"]
    assert reasons(d, "permission_denied") == ["later_success"]
    # its last job failing is a failure; killed by a signal, that signal's
    bad = TERMINATED.format(c=5102, status="(1) Normal termination (return value 2)")
    assert diagnose_text(HELD.format(c=5101) + bad)["failed"] is True
    segv = TERMINATED.format(c=5102, status="(0) Abnormal termination (signal 11)")
    assert diagnose_text(segv)["category"] == "segfault"


# -- a warning's message is no failure ----------------------------------------------------------


@pytest.mark.parametrize("prefix", ["", "\x1b[36m(pid=458685)\x1b[0m "])
def test_an_exception_quoted_in_a_warnings_message_is_the_warning(prefix: str) -> None:
    """Python prints `file:line: Category: message`, the message's own lines, then the source
    line that warned (indented); an ImportError's text inside is what the warning reports."""
    warned = (
        f"{prefix}/opt/venv/lib/python3.10/site-packages/vllm/connections.py:8: RuntimeWarning: "
        "Failed to read commit hash:\n"
        f"{prefix}No module named 'vllm._version'\n"
        f"{prefix}  from vllm.version import __version__ as VLLM_VERSION\n"
    )
    d = diagnose_text(warned + "Loading checkpoint shards: 100%|##########| 2/2\n")
    assert d["category"] == "healthy", d["why"]
    # the message alone on its line is the reported import's entry, prefixed the bare one's
    assert reasons(d, "module_not_found") + reasons(d, "module_not_found_reported") == ["logged"]
    raised = TB + "ModuleNotFoundError: No module named 'vllm._version'\n"
    assert diagnose_text(warned + raised)["category"] == "module_not_found"


# -- an exception being handled when an interrupt came ------------------------------------------

WORKER = (
    "Process ForkPoolWorker-{n}:\nTraceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/multiprocessing/pool.py", line 114, in worker\n'
    "    task = get()\n"
    '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 95, in __enter__\n'
    "    return self._semlock.__enter__()\nKeyboardInterrupt\n"
)
MAIN = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/multiprocessing/pool.py", line 856, in next\n'
    "    item = self._items.popleft()\nIndexError: pop from an empty deque\n\n"
    "During handling of the above exception, another exception occurred:\n\n"
    'Traceback (most recent call last):\n  File "prep.py", line 49, in main\n'
    "    list(p.imap(job, queue))\n"
    '  File "/usr/lib/python3.10/threading.py", line 320, in wait\n'
    "    waiter.acquire()\n{last}\n"
)


def test_a_pool_interrupted_while_its_main_process_handled_an_exception_was_cancelled() -> None:
    workers = "".join(WORKER.format(n=n) for n in (12, 3, 7))
    d = diagnose_text(workers + MAIN.format(last="KeyboardInterrupt"))
    assert (d["category"], d["catalog_id"]) == ("cancelled", "keyboard_interrupt"), d["why"]
    assert reasons(d, "code_error") == ["handled"]
    # a handler that failed on its own is still the program's failure
    d = diagnose_text(MAIN.format(last="RuntimeError: result queue closed"))
    assert d["category"] == "code_error"


# -- a multi-host runtime's coordination service ------------------------------------------------


def test_a_coordination_service_that_fails_at_shutdown_is_the_runtimes_failure() -> None:
    agent = (
        "2024-06-02 06:08:24.084633: E external/xla/xla/tsl/distributed_runtime/coordination/"
        "coordination_service_agent.cc:481] Failed to disconnect from coordination service with "
        "status: DEADLINE_EXCEEDED: Deadline Exceeded. Proceeding with agent shutdown anyway.\n"
        "Error in atexit._run_exitfuncs:\nTraceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.10/site-packages/jax/_src/distributed.py", line 168, in '
        "shutdown\n    global_state.shutdown()\n"
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n"
    )
    d = diagnose_text(STEPS + agent)
    assert (d["category"], d["catalog_id"]) == ("unknown", "coordination_service_lost"), d["why"]
    assert d["failed"] is True
    # the atexit callback's traceback itself is no candidate: Python exits as it would have
    assert reasons(d, "code_error") == []


# -- wall-clock kills of other batch systems ----------------------------------------------------

QACCT = (
    "==============================================================\n"
    "qname        gpu.q\nhostname     node12\njobnumber    771203\n"
    "start_time   Wed Feb 16 09:37:33 2022\nend_time     Wed Feb 16 14:37:34 2022\n"
    "failed       {failed}\nexit_status  {status}\nru_wallclock 18001s\nru_maxrss    5.738KB\n"
)


def test_grid_engines_qmaster_limit_and_a_grid_jobs_wall_clock_kill_are_time_limits() -> None:
    d = diagnose_text(
        QACCT.format(
            failed="37  : qmaster enforced h_rt, h_cpu, or h_vmem limit",
            status="137                  (Killed)",
        )
    )
    assert (d["category"], d["catalog_id"]) == ("slurm_time_limit", "batch_wall_clock_kill")
    assert diagnose_text(QACCT.format(failed="0", status="0"))["category"] == "healthy"
    post = (
        "Mon, 27 Jul 2026 11:04:56 CEST(+0200):INFO:PostJob -----> RetryJob log start -----\n"
        "Mon, 27 Jul 2026 11:04:56 CEST(+0200):ERROR:RetryJob Not retrying job due to wall clock "
        "limit (job automatically killed on the worker node)\n"
        "Jobs lasted 131.0 seconds (0:02:11) vs. 120 (0:02:00) MAX\n"
    )
    d = diagnose_text(post)
    assert (d["category"], d["failed"]) == ("slurm_time_limit", True), d["why"]


# -- bioinformatics tools that cannot read their input ------------------------------------------


def test_an_aligner_that_cannot_open_its_input_is_the_failure_not_the_empty_pipe() -> None:
    log = (
        "* Done reading Index!!\n* Reading reference genome..\n"
        "* Done reading reference genome !!\n\n"
        "[E::main_mem] fail to open file `/data/run7/S12_R1.clean.fq'.\n"
        '[main_samview] fail to read the header from "-".\n'
        "[W::hts_set_opt] Cannot change block size for this format\n"
        'samtools sort: failed to read header from "-"\n'
    )
    d = diagnose_text(log)
    assert (d["category"], d["catalog_id"]) == ("code_error", "bio_tool_input_failed"), d["why"]
    assert "fail to open file" in d["evidence"][0]["text"]


# -- a native extension that cannot load, under the error that wraps it -------------------------


def test_an_extension_that_cannot_load_explains_the_import_error_around_it() -> None:
    log = (
        "(raylet) Traceback (most recent call last):\n"
        '  File "python/ray/_raylet.pyx", line 2276, in ray._raylet.task_execution_handler\n'
        "RuntimeError: The actor with name WorkerDict failed to import on the worker. This may be "
        "because needed library dependencies are not installed in the worker environment:\n\n"
        + TB
        + "ImportError: /opt/venv/lib/python3.9/site-packages/flash_attn_2_cuda.cpython-39-x86_64"
        "-linux-gnu.so: undefined symbol: _ZNK3c1011StorageImpl27throw_data_ptr_access_errorEv\n"
    )
    d = diagnose_text(log)
    assert (d["category"], d["catalog_id"]) == ("module_not_found", "shared_library_missing")
    assert reasons(d, "code_error") == ["explained"]
