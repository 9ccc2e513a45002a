"""Principles issue 15's second pool of untouched sets (corpus50 to corpus63) taught, each tested
with its siblings on logs written for these tests: the body of torch's out-of-memory report
quoted without its header; a notebook runtime killed for its RAM; the shell's "Killed" written
over a carriage-returned progress line; bash's "command not found" in the node's language; Open
MPI losing a node's daemon; the driver's Xid for a program's own GPU fault; the Hub's own words
for a missing repo or an empty offline cache; an abort through MPI, slurmd's kill of a step and
SageMaker's failed-script report as wrappers of the error above them; argparse rejecting any
argument's value; docker asking for a terminal in a batch job; the accelerator's graph compiler
failing; and an evaluation's or an inference's success, which ends an appended log's last run."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

from labctl.diagnose import diagnose_text

# -- device memory: the report's figures are torch's allocator's, with or without its header ---


@pytest.mark.parametrize(
    "line",
    [
        "error:GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. Process 4242 "
        "has 22.02 GiB memory in use. Of the allocated memory 20.13 GiB is allocated by PyTorch",
        "GPU 3 has a total capacity of 79.15 GiB of which 512.00 KiB is free. Including "
        "non-PyTorch memory, this process has 79.14 GiB memory in use.",
    ],
)
def test_the_body_of_torchs_oom_report_is_a_cuda_oom(line: str) -> None:
    assert verdict(STEPS + line + "\n")[:2] == ("cuda_oom", True)


def test_a_gpus_capacity_in_a_banner_is_no_oom() -> None:
    banner = "GPU 0: NVIDIA A100-SXM4-80GB, total capacity 79.15 GiB, 79.1 GiB free\n"
    assert verdict(banner + STEPS)[:2] == ("healthy", False)


# -- host memory: a notebook's runtime, and the shell's word over a progress line -------------


def test_a_notebook_runtime_out_of_ram_is_a_host_oom() -> None:
    line = "Your session crashed after using all available RAM. If you are interested in access "
    line += "to high-RAM runtimes, you may want to check out Colab Pro.\n"
    assert verdict("Loading checkpoint shards: 50%\n" + line)[:2] == ("host_oom", True)


@pytest.mark.parametrize(
    "rest",
    ["g in train batch: 127687 / 263115", "ng epoch 3: 1200/5000 batches"],
)
def test_killed_written_over_a_carriage_returned_line_is_the_sigkill(rest: str) -> None:
    log = "Loading dataset...\nTotal number of batches 263115\n" + "Killed" + rest + "\n"
    assert verdict(log) == ("host_oom", True, "host_oom_weak")


def test_a_line_that_starts_with_the_word_killed_is_no_sigkill() -> None:
    log = STEPS + "Killed 3 zombie processes left by the previous run\n" + STEPS
    assert verdict(log)[:2] == ("healthy", False)


# -- bash in the node's language ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "cmd"),
    [
        ("bmtrain_mgpu.sh: 行 84: torchrun：未找到命令", "torchrun"),
        ("./train.sh: Zeile 3: deepspeed: Kommando nicht gefunden.", "deepspeed"),
        ("./run.sh: ligne 7: accelerate : commande introuvable", "accelerate"),
        ("./run.sh: строка 5: srun: команда не найдена", "srun"),
    ],
)
def test_command_not_found_in_another_language_names_the_command(line: str, cmd: str) -> None:
    d = diagnose_text("[INFO] launching 8 ranks\n" + line + "\n")
    assert (d["category"], d["catalog_id"]) == ("module_not_found", "command_not_found")
    assert d["title"] == f"Command not found: {cmd}"


def test_a_command_the_job_carries_on_after_is_survived_in_any_language() -> None:
    line = "./run.sh: 行 3: module：未找到命令\n"
    assert verdict(line + STEPS + "Training completed.\n")[:2] == ("healthy", False)


# -- a node gone: Open MPI's runtime lost its daemon ------------------------------------------

ORTE = (
    "ORTE has lost communication with a remote daemon.\n\n"
    "  HNP daemon   : [[4301,0],0] on node job-launcher-x7\n"
    "  Remote daemon: [[4301,0],20] on node job-worker-19\n\n"
    "This is usually due to either a failure of the TCP network\n"
    "connection to the node, or possibly an internal failure of\n"
    "the daemon itself. We cannot recover from this failure, and\n"
    "therefore will terminate the job.\n"
)


@pytest.mark.parametrize("runtime", ["ORTE", "PRTE"])
def test_open_mpi_losing_a_nodes_daemon_is_a_node_failure(runtime: str) -> None:
    assert verdict(STEPS + ORTE.replace("ORTE", runtime))[:2] == ("node_failure", True)


# -- the driver's Xid: the program's own fault, or the GPU's ----------------------------------


@pytest.mark.parametrize("xid", ["13", "31", "43"])
def test_an_xid_of_the_programs_own_gpu_fault_is_a_crash_not_the_node(xid: str) -> None:
    line = f"NVRM: Xid (PCI:0000:c1:00): {xid}, pid=2646, name=python, channel 0x1a, MMU Fault\n"
    assert verdict(STEPS + line)[:2] == ("segfault", True)


def test_an_xid_of_the_gpu_itself_stays_a_node_failure() -> None:
    line = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    assert verdict(STEPS + line)[:2] == ("node_failure", True)


# -- the Hub's own words, without the exception's name ----------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Repository Not Found for url: https://huggingface.co/org/data-not-a-model/resolve/main/"
        "config.json.",
        "Revision Not Found for url: https://hf-mirror.com/api/models/gpt2/revision/v9.",
        "err[msg]=Cannot find an appropriate cached snapshot folder for the specified revision "
        "on the local disk and outgoing traffic has been disabled. To enable repo look-ups and "
        "downloads online, pass 'local_files_only=False' as input.",
    ],
)
def test_the_hubs_words_for_a_missing_repo_or_an_empty_offline_cache(line: str) -> None:
    assert verdict("loading model ...\n" + line + "\n")[:2] == ("hf_hub_error", True)


# -- wrappers: the rank's own error above them is the cause -----------------------------------

MPI_ABORT = [
    "PMGR_COLLECTIVE ERROR: rank 7 on n107: Called pmgr_abort() Code: 1, Msg: application "
    "called MPI_Abort(MPI_COMM_WORLD, 1) - process 7\n",
    "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n",
    "slurmd[n60]: *** STEP 1730409.0 KILLED AT 2017-08-21T16:30:25 WITH SIGNAL 9 ***\n",
    "UnexpectedStatusException: Error for Training job pt-2020-10-27: Failed. Reason: "
    "AlgorithmError: ExecuteUserScriptError:\n",
]


@pytest.mark.parametrize("wrapper", MPI_ABORT)
def test_an_abort_report_alone_is_a_failure_of_unknown_cause(wrapper: str) -> None:
    d = diagnose_text("rank 7: reading shard 12\n" + wrapper)
    assert (d["category"], d["failed"], d["catalog_id"]) == ("unknown", True, "child_failed")


@pytest.mark.parametrize("wrapper", MPI_ABORT)
def test_an_abort_report_leaves_the_cause_to_the_error_above_it(wrapper: str) -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    assert verdict(STEPS + TB + oom + wrapper)[:2] == ("cuda_oom", True)


# -- a command line refused: argparse's any message about a value, docker's TTY ---------------


@pytest.mark.parametrize(
    "line",
    [
        "train_bash.py: error: argument --fp16: Truthy value expected: got s but expected one of "
        "yes/no, true/false, t/f, y/n, 1/0 (case insensitive).",
        "finetune.py: error: argument --lora_rank: must be a power of two",
    ],
)
def test_argparse_rejecting_an_arguments_value_is_a_usage_error(line: str) -> None:
    usage = "usage: train.py [-h] [--fp16 [FP16]]\n                [--lora_rank LORA_RANK]\n"
    assert verdict(usage + line + "\n") == ("code_error", True, "cli_usage_error")


def test_docker_asking_for_a_terminal_in_a_batch_job_is_a_usage_error() -> None:
    log = "+ docker run --rm --detach --gpus all --name=seg img\nd1e68fc44e3d\n"
    log += "+ docker exec -it seg true\nthe input device is not a TTY\n"
    assert verdict(log) == ("code_error", True, "cli_usage_error")
    assert verdict(log + STEPS + "Training completed.\n")[:2] == ("healthy", False)


# -- the accelerator's graph compiler ---------------------------------------------------------


def test_the_neuron_compiler_failing_is_the_programs_error() -> None:
    log = "2024-04-30 21:07:46.000985:  136004  INFO ||NEURON_CACHE||: Compile cache path: /c\n"
    log += (
        "2024-04-30 21:07:46.000986:  136004  ERROR ||NEURON_CC_WRAPPER||: Got a cached failed "
        "neff at /c/model.neff. Will skip compilation, please set --retry_failed_compilation\n"
    )
    log += " Failed compilation with ['neuronx-cc', 'compile', '--target=trn1']: [TEN404]\n"
    assert verdict(log) == ("code_error", True, "accelerator_compile_failed")


# -- success: an evaluation's and an inference's last word ------------------------------------


def _run(at: str, model: str, fails: bool) -> str:
    log = f"2025-09-20 {at},001 - __main__ - INFO - Loading model from: models/{model}.pkl\n"
    log += f"2025-09-20 {at},002 - __main__ - INFO - Starting model evaluation...\n"
    if fails:
        log += f"2025-09-20 {at},003 - __main__ - ERROR - Evaluation failed: bad input\n"
        log += 'Traceback (most recent call last):\n  File "eval.py", line 9, in <module>\n'
        log += "ValueError: X has 84 features, but the model is expecting 53 features\n"
    return log


def test_an_appended_log_whose_last_run_completed_its_evaluation_is_healthy() -> None:
    log = _run("00:47:59", "latest", True) + _run("00:53:08", "optimized", False)
    done = "2025-09-20 00:53:12,091 - __main__ - INFO - Evaluation completed in 3.72 seconds\n"
    assert verdict(log + done)[:2] == ("healthy", False)
    assert verdict(log)[:2] == ("code_error", True)


@pytest.mark.parametrize(
    "line",
    ["Inference finished in 42.1 s", "Generation completed successfully.", "Evaluation done"],
)
def test_other_jobs_last_word_is_a_success(line: str) -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    assert verdict(TB + oom + "retrying with batch size 8\n" + line + "\n")[:2] == (
        "healthy",
        False,
    )
    # a failure after it is not one it can have survived
    assert verdict(STEPS + line + "\n" + TB + oom)[:2] == ("cuda_oom", True)
