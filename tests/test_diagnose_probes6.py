"""Principles issue 15's third pool of untouched sets (corpus64 to corpus72) taught, each tested
with its siblings on logs written for these tests: Windows' NTSTATUS exit codes as an IDE or cmd
reports them; TensorRT's failed engine build; an appended log whose first run ended inside its
opening; a log that begins inside a traceback (its header cut off); IPython's traceback header,
which names the exception type; a crash a program reports to a file; a launcher whose scheduler
job ended without its result; a library's bare base class (`gym.error.Error`); a library that
logs an optional part's failure with its traceback and carries on; and one fingerprint for a
shell's job report however bash spaces its "(core dumped)"."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

from labctl.diagnose import diagnose_text

# -- Windows: the NTSTATUS an IDE prints after a native crash, a Ctrl-C or a kill -------------


@pytest.mark.parametrize(
    "line, category",
    [
        ("Process finished with exit code -1073741819 (0xC0000005)", "segfault"),
        ("Process finished with exit code -1073741571 (0xC00000FD)", "segfault"),
        ("Process finished with exit code 3221225477", "segfault"),
        (
            "Process finished with exit code -1073741510 (0xC000013A: interrupted by Ctrl+C)",
            "cancelled",
        ),
        ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", "host_oom"),
    ],
)
def test_an_ides_exit_code_names_the_native_crash(line: str, category: str) -> None:
    assert verdict(STEPS + line + "\n")[:2] == (category, True)


def test_an_ides_zero_exit_is_a_success() -> None:
    assert verdict(STEPS + "Process finished with exit code 0\n")[:2] == ("healthy", False)


# -- TensorRT: trtexec's closing status and its error records ---------------------------------

TRTEXEC = (
    "&&&& RUNNING TensorRT.trtexec [TensorRT v8001] # trtexec --onnx=model.onnx\n"
    "[11/09/2021-11:31:02] [I] [TRT] ------------------------------------------------\n"
    "[11/09/2021-11:31:02] [I] [TRT] Input filename:   model.onnx\n"
    "[11/09/2021-11:31:02] [W] [TRT] onnx2trt_utils.cpp:364: Your ONNX model has been generated "
    "with INT64 weights\n"
)


def test_a_failed_tensorrt_build_is_the_models_problem() -> None:
    failed = (
        "[11/09/2021-11:31:03] [E] [TRT] ModelImporter.cpp:726: ERROR: ModelImporter.cpp:179 In "
        "function parseGraph: [6] Invalid Node - Resize_62\n"
        "[11/09/2021-11:31:03] [E] Failed to parse onnx file\n"
        "[11/09/2021-11:31:03] [E] Engine creation failed\n"
        "&&&& FAILED TensorRT.trtexec [TensorRT v8001] # trtexec --onnx=model.onnx\n"
    )
    assert verdict(TRTEXEC + failed)[:2] == ("code_error", True)


def test_a_passed_tensorrt_build_is_healthy() -> None:
    passed = "&&&& PASSED TensorRT.trtexec [TensorRT v8001] # trtexec --onnx=model.onnx\n"
    assert verdict(TRTEXEC + passed)[:2] == ("healthy", False)


# -- an appended log whose first run ended inside its opening ---------------------------------


def _record(t: str, text: str) -> str:
    return f"2021-09-24 16:{t},000 __main__     INFO     {text}\n"


def _failed_run(t: str) -> str:
    return (
        _record(t, "START train.py")
        + _record(t, "Load train df")
        + f"2021-09-24 16:{t},100 __main__     ERROR    Traceback (most recent call last):\n"
        '  File "train.py", line 46, in <module>\n'
        "    y = df[TARGET]\n"
        "KeyError: 'price'\n\n"
    )


def _good_run(t: str) -> str:
    return (
        _record(t, "START train.py")
        + _record(t, "Load train df")
        + _record(t, "Fit model")
        + _record(t, "Save model")
        + _record(t, "END train.py")
    )


def test_a_run_that_ended_inside_its_opening_does_not_hide_the_next_runs_start() -> None:
    """The first run printed only its opening and was started again at once: the record that
    follows the opening is the next run's, and every run after starts the same way."""
    log = _record("40:22", "START train.py") + _failed_run("41:58") + _failed_run("44:41")
    healthy = log + _good_run("48:22")
    assert verdict(healthy)[:2] == ("healthy", False)
    # the last run failing is still the job's failure
    assert verdict(healthy + _failed_run("50:01"))[:2] == ("code_error", True)


# -- a log that begins inside a traceback ------------------------------------------------------

SPAWN_FRAMES = (
    '  File "C:\\Python311\\Lib\\multiprocessing\\spawn.py", line 122, in spawn_main\n'
    "    exitcode = _main(fd, parent_sentinel)\n"
    '  File "C:\\Python311\\Lib\\multiprocessing\\spawn.py", line 132, in _main\n'
    "    self = reduction.pickle.load(from_parent)\n"
    "_pickle.UnpicklingError: pickle data was truncated\n"
)


def test_a_traceback_whose_header_is_cut_off_keeps_its_frames() -> None:
    """Only the frames say the unpickling failed in spawn's bootstrap, not in a checkpoint."""
    d = diagnose_text(SPAWN_FRAMES)
    assert (d["category"], d["catalog_id"]) == ("unknown", "spawn_start_data_lost")
    with_header = diagnose_text("Traceback (most recent call last):\n" + SPAWN_FRAMES)
    assert with_header["catalog_id"] == "spawn_start_data_lost"


def test_a_pasted_traceback_indented_as_a_whole_ends_at_its_exception_line() -> None:
    pasted = (
        '      File "/opt/py/torch/nn/modules/linear.py", line 116, in forward\n'
        "        return F.linear(input, self.weight, self.bias)\n"
        "    torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.24 GiB.\n"
    )
    assert verdict(pasted)[:2] == ("cuda_oom", True)


def test_a_stack_printed_without_an_exception_is_no_uncaught_traceback() -> None:
    """TensorFlow 1's "Caused by op ..., defined at:" stack is frames alone; the job went on."""
    stack = (
        '  File "/opt/tf/python/framework/ops.py", line 3300, in create_op\n'
        "    op_def=op_def)\n\n"
        "CancelledError (see above for traceback): Enqueue operation was cancelled\n\n"
        "The network is now trained and ready to evaluate.\n"
    )
    assert verdict(stack + STEPS)[:2] == ("healthy", False)


# -- IPython's traceback header names the exception type --------------------------------------

IPY_FRAMES = (
    "<ipython-input-19-a66acf440358> in <module>\n"
    "      1 num_epochs = 10\n"
    "----> 2 train_ch3(net, train_iter, test_iter, cross_entropy, num_epochs, updater)\n"
)


def test_ipythons_header_names_the_exception_when_its_message_is_cut_off() -> None:
    head = "---------------------------------------------------------------------------\n"
    typed = head + "TypeError                                 Traceback (most recent call last)\n"
    assert verdict(typed + IPY_FRAMES)[:2] == ("code_error", True)
    dropped = head + "ConnectionResetError                      Traceback (most recent call last)\n"
    # a dropped connection is the network's, whatever the notebook was doing: not the code's
    assert verdict(dropped + IPY_FRAMES)[0] != "code_error"


# -- a crash the program reports to a file of its own -----------------------------------------


def test_a_crash_written_to_a_report_is_a_failure_of_unknown_cause() -> None:
    line = (
        "12/10/2020 12:59:11 CRITICAL An unexpected crash has occurred. Crash report written to "
        "'/home/u/faceswap/crash_report.2020.12.10.125910185970.log'. You MUST provide this file "
        "if seeking assistance.\n"
    )
    assert verdict(STEPS + line)[:2] == ("unknown", True)


# -- a launcher whose scheduler job ended without its result ----------------------------------


def test_a_launchers_lost_job_is_a_failure_whose_cause_is_in_the_jobs_own_log() -> None:
    swarm = (
        "running sbatch --parsable slurm/tgi_1706623583_tgi.slurm\n"
        "Slurm Job ID: ['1587489']\n"
        "❌ Failed! Job 1587489 is not running; checkout slurm/logs/llm-swarm_1587489.out\n"
        "running scancel 1587489\n"
        "inference instances terminated\n"
    )
    assert verdict(swarm)[:3] == ("unknown", True, "launched_job_lost")


@pytest.mark.parametrize(
    "state, category",
    [
        ("FAILED", "unknown"),
        ("TIMEOUT", "slurm_time_limit"),
        ("OUT_OF_MEMORY", "host_oom"),
        ("NODE_FAIL", "node_failure"),
        ("PREEMPTED", "preemption"),
        ("CANCELLED by 1000", "cancelled"),
    ],
)
def test_submitits_uncompleted_job_names_the_state_slurm_gave_it(state: str, category: str) -> None:
    report = (
        "submitit.core.utils.UncompletedJobError: Job 4711_0 (task: 0) with path "
        "/logs/4711_0_0_result.pkl\n"
        f"has not produced any output (state: {state})\n"
    )
    assert verdict(STEPS + TB + report)[:2] == (category, True)


# -- a library's base class, named bare under its module --------------------------------------


def test_a_librarys_bare_error_class_is_an_exception_line() -> None:
    line = (
        'gym.error.Error: We\'re Unable to find the game "Pong". Note: Gym no longer distributes '
        "ROMs.\n"
    )
    assert verdict(line)[:2] == ("code_error", True)
    assert verdict(STEPS + "Error: 3 retries left\n" + STEPS)[1] is False


# -- a library that logs an optional part's failure and carries on ----------------------------

BNB = (
    "Could not load bitsandbytes native library: 'NoneType' object has no attribute 'split'\n"
    "Traceback (most recent call last):\n"
    '  File "/env/lib/python3.12/site-packages/bitsandbytes/cuda_specs.py", line 24, in '
    "get_cuda_version_tuple\n"
    '    major, minor = map(int, torch.version.cuda.split("."))\n'
    "AttributeError: 'NoneType' object has no attribute 'split'\n\n"
    "CUDA Setup failed despite CUDA being available. Please run the following command to get "
    "more information:\n\npython -m bitsandbytes\n\n"
)


def test_bitsandbytes_failing_to_load_its_native_library_is_not_the_jobs_end() -> None:
    after = "Device set to use cuda:0\nSetting `pad_token_id` to `eos_token_id`:128001.\n"
    assert verdict(BNB + after)[1] is False
    # the same exception, raised by the program itself, ends it
    raised = BNB.split("\n", 1)[1]
    assert verdict(raised + after)[:2] == ("code_error", True)


# -- one fingerprint for a shell's report of a signal, however bash spaces it -----------------


def test_a_shell_job_report_and_the_bare_line_share_a_fingerprint() -> None:
    job = (
        "./train.sh: line 3:  1098 Floating point exception(core dumped) python train.py "
        "--dataset=dtu --batch_size=1\n"
    )
    bare = "epoch:0 epsilon:0.96\nFloating point exception (core dumped)\n"
    a, b = diagnose_text(STEPS + job), diagnose_text(STEPS + bare)
    assert a["category"] == b["category"] == "segfault"
    assert a["fingerprint"] == b["fingerprint"]
