"""Each class of miss the fourth untouched set (corpus7) showed, as a principle that also catches
its siblings: a workflow manager's own report that a step failed for good (and that a run
completed), a keyboard interrupt above the tracebacks of the DataLoader threads it took down, a
TPU the runtime could not open, Ray's memory monitor killing workers (whatever the terminal's
width), and a sweep whose sub-runs abort while the job goes on to its end. The logs are written
for these tests, modelled on what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, chatter, reasons, why, wrapped

from labctl.diagnose import diagnose_text

# -- a workflow manager's own report of a failed step --------------------------------------

NF_STATUS = (
    "executor >  slurm ({n})\n"
    "[1a/2b3c4d] process > TRIM (4)     [100%] 4 of 4 \u2714\n"
    "[5e/6f7a8b] process > ALIGN (2)    [ 50%] {a} of {b}, failed: {f}, retries: {f}\n"
    "[-        ] process > CALL         -\n"
)
NF_RETRY = (
    "[9c/0d1e2f] NOTE: Process `ALIGN (2)` terminated with an error exit status (1) -- "
    "Execution is retried ({k})\n"
)
NF_FAILED = (
    "Error executing process > 'ALIGN (2)'\n\nCaused by:\n"
    "  Process `ALIGN (2)` terminated with an error exit status (1)\n\n"
    "Command executed:\n\n  bwa mem -t 8 ref.fa reads_2.fq > aln_2.sam\n\n"
    "Command exit status:\n  1\n\nCommand output:\n  (empty)\n\nCommand error:\n"
    "  [E::bwa_idx_load_from_disk] fail to locate the index files\n\n"
    "Work dir:\n  /scratch/u/work/3f/4a5b6c7d8e9f\n\n"
    "Tip: view the complete command output by changing to the process work dir and entering "
    "the command `cat .command.out`\n"
)


def test_nextflows_report_that_a_process_failed_after_its_retries_is_a_code_error() -> None:
    run = NF_STATUS.format(n=2, a=1, b=2, f=1) + NF_RETRY.format(k=1)
    run += NF_STATUS.format(n=3, a=2, b=3, f=2) + NF_RETRY.format(k=2)
    d = diagnose_text(run + NF_FAILED + NF_STATUS.format(n=3, a=3, b=3, f=3))
    assert (d["category"], d["catalog_id"]) == ("code_error", "workflow_step_failed"), d["why"]
    assert d["failed"] is True
    # the same pipeline while its retries still go on, or with the failure ignored: no failure
    assert diagnose_text(run + NF_STATUS.format(n=4, a=2, b=3, f=2))["category"] == "healthy"
    ignored = NF_RETRY.format(k=1).replace("Execution is retried (1)", "Error is ignored")
    assert diagnose_text(NF_STATUS.format(n=2, a=1, b=2, f=1) + ignored)["category"] == "healthy"
    nf_core = "-[nf-core/rnaseq] Pipeline completed with errors-\n"
    assert diagnose_text(run + nf_core)["catalog_id"] == "workflow_step_failed"


SMK_JOB = (
    "[Tue Mar  4 10:{m:02d}:00 2025]\nrule {rule}:\n    input: data/{s}.bam\n"
    "    output: calls/{s}.vcf\n    jobid: {j}\n    reason: Missing output files\n"
    "    resources: tmpdir=/tmp\n\n"
)
SMK_ERROR = (
    "[Tue Mar  4 10:20:00 2025]\nError in rule call:\n    jobid: 7\n"
    "    input: data/s7.bam\n    output: calls/s7.vcf\n    shell:\n"
    "        bcftools call -mv data/s7.bam > calls/s7.vcf\n"
    "        (one of the commands exited with non-zero exit code; note that snakemake uses bash "
    "strict mode!)\n\n"
)
SMK_END = (
    "Shutting down, this might take some time.\n"
    "Exiting because a job execution failed. Look above for error message\n"
    "Complete log: .snakemake/log/2025-03-04T100000.000000.snakemake.log\n"
)


def smk_jobs(n: int, start: int = 0) -> str:
    return "".join(
        SMK_JOB.format(m=i % 60, rule="call", s=f"s{i}", j=i)
        + f"Finished job {i}.\n{i + 1} of 12 steps ({100 * (i + 1) // 12}%) done\n"
        for i in range(start, start + n)
    )


def test_snakemakes_error_in_rule_is_a_code_error_and_a_completed_run_is_not() -> None:
    d = diagnose_text(smk_jobs(3) + SMK_ERROR + SMK_END)
    assert (d["category"], d["catalog_id"]) == ("code_error", "workflow_step_failed"), d["why"]
    assert d["evidence"][0]["text"] == "Error in rule call:"
    # a job restarted after its error, and the run completing every step: survived
    restarted = smk_jobs(3) + SMK_ERROR + "Trying to restart job 7.\n" + smk_jobs(9, start=3)
    ok = diagnose_text(restarted + "12 of 12 steps (100%) done\nComplete log: .snakemake/x.log\n")
    assert ok["category"] == "healthy" and ok["failed"] is False, ok["why"]
    assert reasons(ok, "workflow_step_failed") == ["later_success"]


def test_a_steps_own_error_printed_with_the_managers_report_is_the_cause() -> None:
    """The report is a wrapper: what the step itself printed, when the log has it, decides."""
    own = TB + "KeyError: 'sample_id'\n"
    d = diagnose_text(smk_jobs(2) + own + SMK_ERROR + SMK_END)
    assert d["category"] == "code_error" and d["exception_type"] == "KeyError", d["why"]
    assert why(d)["workflow_step_failed"].startswith("wrapper")
    oom = TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB.\n"
    assert diagnose_text(smk_jobs(2) + oom + SMK_ERROR + SMK_END)["category"] == "cuda_oom"


@pytest.mark.parametrize(
    ("end", "category"),
    [
        ("WARNING Final process status is permanentFail\n", "code_error"),
        ("INFO Final process status is success\n", "healthy"),
        ("This progress looks :( because there were failed tasks\n", "code_error"),
        ("This progress looks :) because there were no failed tasks or missing dependencies\n",
         "healthy"),
    ],
    ids=["cwltool-failed", "cwltool-ok", "luigi-failed", "luigi-ok"],
)  # fmt: skip
def test_other_workflow_managers_end_reports(end: str, category: str) -> None:
    """cwltool writes its verdict as a WARNING/INFO record: the level is no excuse."""
    step = "INFO [job align] /tmp/x$ bwa mem ref.fa r.fq\n"
    step += "INFO [job align] completed permanentFail\n"
    d = diagnose_text(step + end)
    assert d["category"] == category, d["why"]


# -- a keyboard interrupt and the DataLoader threads it took down ----------------------------

PIN_LOST = (
    "Exception in thread Thread-1 (_pin_memory_loop):\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/py/lib/python3.10/threading.py", line 1016, in _bootstrap_inner\n'
    "    self.run()\n"
    '  File "/opt/py/lib/python3.10/site-packages/torch/utils/data/_utils/pin_memory.py", line '
    "53, in _pin_memory_loop\n    do_one_step()\n"
    '  File "/opt/py/lib/python3.10/multiprocessing/connection.py", line 379, in _recv\n'
    "    chunk = read(handle, remaining)\n"
    "{exc}\n"
)
RESET = PIN_LOST.format(exc="ConnectionResetError: [Errno 104] Connection reset by peer")
EOF = PIN_LOST.format(exc="EOFError")


def test_a_keyboard_interruption_outranks_the_tracebacks_of_the_threads_it_ended() -> None:
    stop = "2025-02-11 18:20:07 - LOGS    - Keyboard interruption. Exiting from early training\n"
    d = diagnose_text(STEPS + RESET + EOF + RESET + stop + "Training took 00:09:17\n")
    assert (d["category"], d["catalog_id"]) == ("cancelled", "keyboard_interrupt"), d["why"]
    assert why(d)["dataloader_peer_lost"].startswith("explained by keyboard_interrupt")
    # Python's own KeyboardInterrupt first, the pin-memory thread's traceback after it
    raised = TB + "KeyboardInterrupt\n"
    assert diagnose_text(STEPS + raised + EOF)["category"] == "cancelled"
    # a launcher's report of SIGINT
    signal = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 7 got "
    signal += "signal: 2\n"
    assert diagnose_text(STEPS + RESET + signal)["category"] == "cancelled"


def test_the_dataloaders_lost_peer_alone_is_a_worker_death_not_a_code_error() -> None:
    d = diagnose_text(STEPS + RESET + EOF)
    assert (d["category"], d["catalog_id"]) == ("dataloader_worker_killed", "dataloader_peer_lost")
    assert d["failed"] is True, d["why"]
    # a connection reset in other code (an HTTP client) is no DataLoader aftermath: a network
    # call that lost its connection
    http = TB + '  File "/opt/py/lib/python3.10/site-packages/urllib3/connectionpool.py", line '
    http += "793, in urlopen\n    response = self._make_request(conn)\n"
    other = diagnose_text(STEPS + http + "ConnectionResetError: [Errno 104] Connection reset\n")
    assert (other["category"], other["catalog_id"]) == ("unknown", "network_timeout")
    # a named cause of the workers' death outranks their aftermath
    killed = "RuntimeError: DataLoader worker (pid 4117) is killed by signal: Killed.\n"
    d = diagnose_text(STEPS + RESET + TB + killed)
    assert d["catalog_id"] == "dataloader_worker_killed", d["why"]


# -- a TPU the runtime could not open ---------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Failed to initialize TPU system with error: FAILED_PRECONDITION: open(/dev/vfio/2): "
        "Device or resource busy: Device or resource busy; Couldn't open iommu group /dev/vfio/2",
        "jaxlib.xla_extension.XlaRuntimeError: UNKNOWN: TPU initialization failed: "
        "open(/dev/accel0): Device or resource busy",
        "RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by "
        "process with pid 811. Not attempting to load libtpu.so in this process.",
    ],
    ids=["vfio", "accel", "lock"],
)
def test_a_tpu_the_runtime_cannot_open_is_a_node_failure(line: str) -> None:
    raised = TB + "RuntimeError: No accelerator found. Please run on a TPU or GPU.\n"
    d = diagnose_text("I0301 08:00:00.000000  7001 main.py:40] starting\n" + line + "\n" + raised)
    assert (d["category"], d["catalog_id"]) == ("node_failure", "tpu_device_unavailable")
    assert why(d)["code_error"].startswith("explained by tpu_device_unavailable"), d["why"]


def test_a_hosts_missing_tpu_platform_is_no_device_failure() -> None:
    """JAX on a host without TPUs says so at INFO level and runs on what it has."""
    note = "INFO:jax._src.xla_bridge:Unable to initialize backend 'tpu': INVALID_ARGUMENT: "
    d = diagnose_text(note + "TpuPlatform is not available.\n" + STEPS)
    assert d["category"] == "healthy", d["why"]


# -- Ray's memory monitor, at any terminal width ------------------------------------------

RAYLET = (
    "(raylet) [2025-06-07 08:09:10,111 E 4040 4040] (raylet) node_manager.cc:3040: 2 Workers "
    "(tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other "
    "reasons at node (ID: 5c0ffee5c0ffee5c0ffee5c0ffee, IP: 10.4.5.6) over the last time "
    "period. To see more information about the Workers killed on this node, use `ray logs "
    "raylet.out -ip 10.4.5.6`"
)


CHATTER = ["rollout", "actor", "critic", "placement", "group", "batch", "of", "reward"]


def test_rays_memory_monitor_kill_is_a_host_oom_whatever_the_terminal_width() -> None:
    log = chatter(11, CHATTER) + RAYLET + "\n"
    d = diagnose_text(log)
    assert (d["category"], d["catalog_id"]) == ("host_oom", "ray_memory_monitor_kill"), d["why"]
    for width in range(40, 161):
        w = diagnose_text(wrapped(log, width))
        assert w["category"] == "host_oom", (width, w["catalog_id"], w["also_matched"])
    # the raylet also reports workers that crashed for other reasons: no memory kill then
    crashed = RAYLET.replace("2 Workers (", "0 Workers (").replace("0 Workers c", "3 Workers c")
    assert diagnose_text(chatter(11, CHATTER) + crashed + "\n")["category"] != "host_oom"


def test_a_task_killed_by_rays_memory_monitor_explains_the_actor_that_died() -> None:
    died = (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
        "The actor is dead because its worker process has died. Worker exit type: "
        "NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on "
        "memory.\n"
    )
    d = diagnose_text(STEPS + TB + died)
    assert (d["category"], d["catalog_id"]) == ("host_oom", "ray_memory_monitor_kill"), d["why"]


# -- a sweep whose sub-runs abort while the job goes on ------------------------------------

ABORT = (
    "terminate called after throwing an instance of 'sycl::_V1::exception'\n"
    "  what():  Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES)\n"
)


def rows(kernel: str, device: str, sizes: range, abort: bool = False) -> str:
    """One CSV row per size; with `abort`, each timing's run aborts mid-row and the next one
    goes on, as a benchmark driver that runs its binary once per repetition does."""
    out = []
    for n in sizes:
        times = [f"{0.01 * n + 0.001 * k:.3f}" for k in range(4)]
        cells = [ABORT + t if abort else t for t in times]
        out.append(f"{kernel},{device},{n} 3 3 512 512," + ",".join(cells) + "\n")
    return "".join(out)


HEADER = "#  Job ID: 4711.pbs-server\n" + "kernel,device,params,t1,t2,t3,t4\n"
FOOTER = "\n# End of output for job 4711.pbs-server\n"


def test_a_benchmark_whose_configurations_abort_while_it_goes_on_is_healthy() -> None:
    log = HEADER + rows("gemm", "cpu", range(8, 88, 8)) + rows("gemm", "gpu", range(8, 40, 8))
    log += rows("gemm", "gpu", range(40, 64, 8), abort=True) + rows("conv", "cpu", range(8, 88, 8))
    log += rows("conv", "gpu", range(8, 48, 8)) + rows("conv", "gpu", range(48, 72, 8), abort=True)
    d = diagnose_text(log + rows("blis", "cpu", range(8, 64, 8)) + FOOTER)
    assert d["category"] == "healthy" and d["failed"] is False, d["why"]
    assert reasons(d, "native_abort") == ["survived"]


def test_a_sweeps_abort_it_did_not_go_on_after_is_its_end() -> None:
    log = HEADER + rows("gemm", "cpu", range(8, 88, 8))
    log += rows("gemm", "gpu", range(8, 48, 8), abort=True) + rows("conv", "cpu", range(8, 88, 8))
    # the sweep stops at an abort: nothing after it
    d = diagnose_text(log + "conv,gpu,8 3 3 512 512," + ABORT)
    assert (d["category"], d["catalog_id"]) == ("segfault", "native_abort"), d["why"]
    # one abort the job went on past only for a few rows, never before: not a recurrence
    once = HEADER + rows("gemm", "cpu", range(8, 88, 8)) + "gemm,gpu,8 3 3 512 512," + ABORT
    assert diagnose_text(once + rows("gemm", "gpu", range(16, 48, 8)))["failed"] is True


def test_a_sweep_driver_that_prints_a_failed_trials_traceback_and_goes_on_is_healthy() -> None:
    trial = (
        "[I 2025-01-02 03:04:{s:02d},000] Trial {n} finished with value: 0.{v} and parameters: "
        "{{'lr': 0.00{n}}}. Best is trial 0 with value: 0.91.\n"
    )
    failed = TB + "ValueError: hidden_size must be divisible by num_heads\n"
    log = "".join(trial.format(s=i, n=i, v=90 - i) + "noise\n" * 5 for i in range(8))
    log += failed + "".join(trial.format(s=i, n=i, v=90 - i) for i in range(8, 40))
    log += failed + "".join(trial.format(s=i, n=i, v=90 - i) for i in range(40, 44))
    d = diagnose_text(log)
    assert d["category"] == "healthy", d["why"]


def test_a_nan_that_recurs_while_the_steps_go_on_is_still_a_nan() -> None:
    """A failure printed on the progress line itself is a state of the training: its
    repetition is no sub-run that the job outlived."""
    line = " iteration {i}/ 250000 | loss scale: 1.0 | grad norm: {g} | lr: 1.0E-04 |\n"
    log = "".join(line.format(i=i, g="0.82") for i in range(40))
    log += "".join(line.format(i=i, g="nan") for i in range(40, 120))
    assert diagnose_text(log)["category"] == "nan_loss"
