"""Each class of miss the verification set (corpus3) showed, as a principle that also catches
its siblings: device memory of any framework, notices that are advice, the scheduler's cancel
banners, shell noise after a traceback, launcher reports, accelerator halts, terminal-wrapped
lines. The logs are written for these tests, modelled on what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import TB, chatter, why, wrapped

from labctl.diagnose import diagnose_text, wrap

STEPS = "".join(f"step {i} | loss {2 - i / 100:.4f} | lr 2e-05\n" for i in range(40))


# -- device memory, whatever the framework ---------------------------------------------------

DEVICE_OOM = [
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: {{function_node "
    "__wrapped__Conv2D_device_/job:localhost/replica:0/task:0/device:GPU:0}} OOM when "
    "allocating tensor with shape[64,256,128,128] and type float [Op:Conv2D]",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.",
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
    "allocate 8589934592 bytes.",
    "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 6.00GiB "
    "(6442450944B) on device ordinal 3",
    "XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
    "memory space hbm. Used 19.75G of 15.48G hbm. Exceeded hbm capacity by 4.27G.",
    "RuntimeError: Resource exhausted: Out of memory while trying to allocate 3.12G.",
    "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 512.00 MiB.",
    "RuntimeError: MPS backend out of memory (MPS allocated: 9.02 GB, other allocations: 40.00 "
    "MB, max allowed: 9.07 GB). Tried to allocate 256.00 MB on private pool.",
    "RuntimeError: HIP out of memory. Tried to allocate 1.95 GiB (GPU 0; 63.98 GiB total)",
    "RuntimeError: hipErrorOutOfMemory when allocating a workspace",
]


@pytest.mark.parametrize("exc", DEVICE_OOM, ids=[e.split(":")[0][-24:] for e in DEVICE_OOM])
def test_device_memory_exhaustion_of_any_framework_is_a_device_oom(exc: str) -> None:
    d = diagnose_text(STEPS + TB + exc + "\n")
    assert d["category"] == "cuda_oom", (d["catalog_id"], d["why"])


def test_memory_words_in_other_resource_errors_are_not_an_oom() -> None:
    quota = "google.api_core.exceptions.TooManyRequests: 429 RESOURCE_EXHAUSTED: Quota exceeded"
    assert diagnose_text(TB + quota + " for requests per minute\n")["category"] == "code_error"
    grpc = "grpc.RpcError: RESOURCE_EXHAUSTED: Received message larger than max (9 vs. 4)\n"
    assert diagnose_text(TB + grpc)["category"] == "code_error"


def test_an_allocator_warning_the_job_survives_is_not_an_oom() -> None:
    warn = (
        "2024-06-11 09:30:12.004417: W tensorflow/core/framework/op_kernel.cc:1828] "
        "OP_REQUIRES failed at conv_ops.cc:1012 : RESOURCE_EXHAUSTED: OOM when allocating "
        "tensor with shape[32,64,224,224]\n"
    )
    d = diagnose_text(warn + STEPS)
    assert d["category"] == "healthy" and d["failed"] is False


# -- notices are advice, not failures -------------------------------------------------------

NOTICES = [
    "You are sending unauthenticated requests to the HF Hub. Please set a HF_TOKEN to enable "
    "higher rate limits and faster downloads.",
    "Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.1GiB. The caller indicates "
    "that this is not a failure, but this may mean that performance could improve.",
    "If you run out of CUDA memory, reduce per_device_train_batch_size or enable checkpointing.",
    "Writing a checkpoint every 500 steps in case the job is preempted by the scheduler.",
    "Tip: to avoid NCCL timeouts on slow file systems, raise the timeout of init_process_group.",
    "NOTE: the Permission denied messages from the probe of /sys can be safely ignored",
]


@pytest.mark.parametrize("notice", NOTICES, ids=[n[:30] for n in NOTICES])
def test_a_notice_at_the_end_of_a_healthy_job_is_not_a_failure(notice: str) -> None:
    d = diagnose_text(STEPS + notice + "\n")
    assert d["category"] == "healthy" and d["failed"] is False, d["also_matched"]


def test_a_notice_never_hides_an_error_on_its_line() -> None:
    """An exception type or an error level makes the line a report, advice or not."""
    raised = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB. If reserved but "
    raised += "unallocated memory is large, please set PYTORCH_CUDA_ALLOC_CONF\n"
    assert diagnose_text(STEPS + TB + raised)["category"] == "cuda_oom"
    err = "srun: error: gpu-a03: task 0: Out Of Memory (please consider increasing --mem)\n"
    assert diagnose_text(STEPS + err)["category"] == "host_oom"
    halt = (
        "E0612 03:04:05.678901   7781 program_runner.cc:1120] 0x0x0_TC0: *** Halt is "
        "unexpected, all pending programs will fail. Please consider filing a bug.\n"
    )
    assert diagnose_text(STEPS + halt)["catalog_id"] == "accelerator_halt"


# -- the scheduler's cancel banners ---------------------------------------------------------


@pytest.mark.parametrize(
    ("banner", "category"),
    [
        ("slurmstepd: error: *** JOB 77 ON c3 CANCELLED AT 2025-02-01T10:00:00 ***", "cancelled"),
        ("[2025-02-01T10:00:00.123] error: *** JOB 77 ON c3 CANCELLED AT 2025-02-01T10:00:00 "
         "DUE TO SIGNAL Terminated ***", "cancelled"),
        ("slurmstepd: error: *** STEP 77.2 ON c3 CANCELLED AT 2025-02-01T10:00:00 DUE to "
         "signal Killed ***", "cancelled"),
        ("slurmstepd: error: *** JOB 77 ON c3 CANCELLED AT 2025-02-01T10:00:00 DUE TO TIME "
         "LIMIT ***", "slurm_time_limit"),
        ("slurmstepd: error: *** JOB 77 ON c3 CANCELLED AT 2025-02-01T10:00:00 DUE TO "
         "PREEMPTION ***", "preemption"),
        ("slurmstepd: error: *** JOB 77 ON c3 CANCELLED AT 2025-02-01T10:00:00 DUE TO NODE "
         "FAILURE ***", "node_failure"),
        ("TERM_OWNER: job killed by owner.", "cancelled"),
        ("009 (4711.000.000) 2025-02-01 10:00:00 Job was aborted.", "cancelled"),
    ],
)  # fmt: skip
def test_every_cancel_banner_names_its_reason(banner: str, category: str) -> None:
    # the ranks' SIGTERM handlers and the last steps after the banner do not change it
    after = "Received SIGTERM, saving a last checkpoint\n" + STEPS[:120]
    d = diagnose_text(STEPS + banner + "\n" + after)
    assert d["category"] == category, (d["catalog_id"], d["why"])


def test_a_stopped_job_is_a_cancel() -> None:
    d = diagnose_text(STEPS, sched={"state": "STOPPED"})
    assert d["category"] == "cancelled" and d["decided_by"] == "scheduler"


# -- shell noise after the program's failure ------------------------------------------------

SHELL = [
    "/var/spool/slurmd/job9/slurm_script: line 41: deactivate: command not found",
    "bash: line 1: nvidia-smi: command not found",
    'Lmod has detected the following error: The following module(s) are unknown: "cuda/12.9"',
    "\nCommandNotFoundError: Your shell has not been properly configured to use "
    "'conda deactivate'.",
]
FAILURES = [
    ("ValueError: expected 3 channels, got 4", "code_error"),
    ("ModuleNotFoundError: No module named 'flash_attn'", "module_not_found"),
    ("OSError: [Errno 28] No space left on device", "disk_full"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB", "cuda_oom"),
]


@pytest.mark.parametrize("shell", SHELL, ids=["bash-func", "bash-cmd", "lmod", "conda"])
@pytest.mark.parametrize(("exc", "category"), FAILURES, ids=[c for _, c in FAILURES])
def test_shell_noise_after_a_traceback_never_outranks_it(
    shell: str, exc: str, category: str
) -> None:
    d = diagnose_text(STEPS + TB + exc + "\n" + shell + "\n")
    assert d["category"] == category, (d["catalog_id"], d["why"])
    assert any(w.startswith("after the program failed") for w in why(d).values()), why(d)
    # alone, the same shell line is still a cause
    assert diagnose_text(STEPS + shell + "\n")["failed"] is True


# -- what launchers report ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("report", "category", "entry"),
    [
        ("srun: error: gpu-a03: task 0: Exited with exit code 1", "unknown", "job_exit_report"),
        ("srun: error: gpu-a03: tasks 0-7: Killed", "host_oom", "host_oom_weak"),
        ("srun: error: gpu-a03: task 2: Segmentation fault (core dumped)", "segfault", "segfault"),
        ("srun: error: gpu-a03: task 1: Terminated", "unknown", "sigterm_cascade"),
        ("srun: error: gpu-a03: task 5: Aborted", "segfault", "native_abort"),
        ("mpirun noticed that process rank 3 with PID 0 on node c7 exited on signal 9 (Killed).",
         "host_oom", "host_oom_weak"),
        ("[launch.py:319:sigkill_handler] Killing subprocess 811 ... exits with return code = "
         "-9", "host_oom", "host_oom_weak"),
        ("/var/spool/slurmd/job9/slurm_script: line 30: 20211 Killed   python train.py",
         "host_oom", "host_oom_weak"),
    ],
)  # fmt: skip
def test_a_launchers_report_goes_through_the_exit_code_map(
    report: str, category: str, entry: str
) -> None:
    d = diagnose_text(STEPS + report + "\n")
    assert (d["category"], d["catalog_id"]) == (category, entry), d["why"]
    assert d["failed"] is True


@pytest.mark.parametrize(
    "line",
    [
        "srun: error: Unable to create step for job 5512: Invalid generic resource (gres) "
        "specification",
        "srun: error: Task launch for StepId=5512.0 failed on node c7: Invalid job credential",
        "mpirun was unable to launch the specified application as it could not access or "
        "execute an executable:",
        "There are not enough slots available in the system to satisfy the 16",
        "slurmstepd: error: pyxis: failed to import docker image",
    ],
)
def test_a_launcher_that_could_not_start_the_tasks(line: str) -> None:
    after = "srun: error: c7: task 0: Exited with exit code 1\n"
    d = diagnose_text("loading environment\n" + line + "\n" + after)
    assert d["catalog_id"] == "step_launch_failed" and d["failed"] is True


# -- accelerator halts ----------------------------------------------------------------------


def test_an_accelerator_halt_is_named_and_explains_the_runtime_error() -> None:
    halt = (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Core halted unexpectedly: INTERNAL: "
        "Accelerator device halted prematurely, perhaps due to an on-device check-failure. "
        "Node 0 halted unexpectedly at tag:pc TensorCoreSequencer:12:0x3f\n"
    )
    d = diagnose_text(STEPS + TB + halt)
    assert d["catalog_id"] == "accelerator_halt" and d["failed"] is True
    assert d["exception_type"] == "jaxlib.xla_extension.XlaRuntimeError"
    alone = "E0612 03:04:05.678901  7781 runner.cc:99] 0x0x0_TC1: *** Halt is unexpected\n"
    assert diagnose_text(alone)["catalog_id"] == "accelerator_halt"


# -- lines a terminal wrapped ---------------------------------------------------------------


CHATTER = ["loading", "shard", "tokenizer", "warmup", "scheduler", "gradient", "dataset", "of"]


@pytest.mark.parametrize(
    ("exc", "category"),
    [
        ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
         "capacity; 75.01 GiB already allocated)", "cuda_oom"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
         "to allocate 17179869184 bytes.", "cuda_oom"),
        ("OSError: [Errno 28] No space left on device: '/scratch/run7/ckpt/model-00003.bin'",
         "disk_full"),
        ("ModuleNotFoundError: No module named 'deepspeed'", "module_not_found"),
    ],
)  # fmt: skip
def test_the_category_survives_any_terminal_width(exc: str, category: str) -> None:
    frames = '  File "/home/someone/projects/a/long/path/to/the/training/code/train.py", line 412'
    log = chatter(7, CHATTER) + TB + frames + ", in main\n    main()\n" + exc + "\n"
    assert diagnose_text(log)["category"] == category
    for width in range(40, 161):
        d = diagnose_text(wrapped(log, width))
        assert d["category"] == category, (width, d["catalog_id"], d["also_matched"])


def test_formatted_records_and_repeated_lines_are_not_taken_for_a_wrap() -> None:
    records = "".join(
        f"{30 + i % 9}s - loss: {29.4 / (i + 1):.4f} - acc: {i / 400:.4f}\nEpoch {i + 2}/200\n"
        for i in range(200)
    )
    assert wrap.width(records.encode()) is None
    twice = "[rank0]: RuntimeError: a long error line that two ranks print alike, verbatim\nok\n"
    assert wrap.width((twice * 2 + "short\n" * 10).encode()) is None
    assert wrap.width(wrapped(chatter(3, CHATTER), 64).encode()) == 64


# -- learnt from the untouched set's misses (corpus4), as families ---------------------------


@pytest.mark.parametrize(
    "conda",
    [
        "CondaError: Run 'conda init' before 'conda activate'",
        "EnvironmentNameNotFound: Could not find conda environment: rl-env",
    ],
)
def test_a_conda_activation_error_is_survivable_shell_noise(conda: str) -> None:
    later = TB + "ModuleNotFoundError: No module named 'torch'\n"
    d = diagnose_text("/.apptainer.d/runscript: 3: source: not found\n" + conda + "\n" + later)
    assert d["catalog_id"] == "module_not_found", d["why"]
    assert diagnose_text(conda + "\n" + STEPS)["category"] == "healthy"
    assert diagnose_text(conda + "\n")["catalog_id"] == "conda_env_failed"


@pytest.mark.parametrize(
    "banner",
    [
        "MOAB_INFO:  job exceeded wallclock limit",
        "job 88.1 exceeded hard wallclock limit",
        "Job 12 failed: wall clock limit exceeded",
    ],
)
def test_any_schedulers_wall_clock_wording_is_a_time_limit(banner: str) -> None:
    assert diagnose_text(STEPS + banner + "\n")["category"] == "slurm_time_limit"


def test_a_job_control_message_glued_to_a_progress_line_still_counts() -> None:
    bar = "features:  20% (117/558) [#      ] eta 28:34:54 "
    assert diagnose_text(STEPS + bar + "\\Terminated\n")["catalog_id"] == "sigterm_cascade"
    tqdm = " 40%|████      | 80/200 [01:12<01:48,  1.10it/s]"
    assert diagnose_text(STEPS + tqdm + "Killed\n")["category"] == "host_oom"
    describe = "State:          Terminated\n  Reason:       Completed\n  Exit Code:    0\n"
    assert diagnose_text(STEPS + describe)["category"] == "healthy"


def test_a_container_without_the_executable_is_a_missing_command() -> None:
    log = 'FATAL:   "trainer": executable file not found in $PATH\n' * 4
    log += "srun: error: cn-03: tasks 0-3: Exited with exit code 255\n"
    d = diagnose_text(log)
    assert d["catalog_id"] == "command_not_found" and d["category"] == "module_not_found"
