"""Principles the pool of untouched sets decided in advance for issue 15 (corpus36 to corpus47)
taught, each tested with its siblings on logs written for these tests: the crash handlers of
every runtime report a fault signal in their own words; a trainer's own NaN guard; device and
host allocators that are not torch's; Windows' words for a library that will not load; click's
and Hydra's ends of a program that never ran; a distributed call before the process group; a
TensorFlow session closed on an error; a trainer's success in the other word order; a Hub
error from the inference API; and a driver's hex dump that is not part of the failure."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

from labctl.diagnose import diagnose_text

FAULTS = [
    # UCX's handler, one line per rank
    "Caught signal 7 (Bus error: nonexistent physical address)\n" * 4,
    "Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)\n",
    "Caught signal 4 (Illegal instruction: illegal operand)\n",
    # Open MPI's handler, under Horovod's rank tags
    "[1,0]<stderr>:[node-3:00334] *** Process received signal ***\n"
    "[1,0]<stderr>:[node-3:00334] Signal: Bus error (7)\n"
    "[1,0]<stderr>:[node-3:00334] Signal code: Non-existant physical address (2)\n",
    "[node-3:00334] *** Process received signal ***\n[node-3:00334] Signal: Floating point "
    "exception (8)\n",
    # Abseil's (JAX, TensorFlow), torchrun's, subprocess's
    "*** SIGBUS received at time=1712345678 on cpu 3 ***\nPC: @ 0x7f2 (unknown) memcpy\n",
    "Signal 7 (SIGBUS) received by PID 4021\n",
    "    exitcode  : -7 (pid: 4021)\n",
    "subprocess.CalledProcessError: Command '['python', 'train.py']' died with "
    "<Signals.SIGILL: 4>.\n",
    # the shell's report in the node's language
    "段错误 (核心已转储)\n",
    "Validating:   0%|          | 0/4071 [00:00<?, ?it/s]段错误 (核心已转储)\n",
    "总线错误 (核心已转储)\n",
    "Speicherzugriffsfehler (Speicherabzug geschrieben)\n",
    "Erreur de segmentation (core dumped)\n",
    "Ошибка сегментирования (стек памяти сброшен на диск)\n",
]


@pytest.mark.parametrize("tail", FAULTS)
def test_every_crash_handler_reports_a_fault_signal(tail: str) -> None:
    assert verdict(STEPS + tail)[:2] == ("segfault", True)


def test_a_fault_in_a_dataloader_worker_stays_the_workers() -> None:
    log = STEPS + "ERROR: Unexpected bus error encountered in worker. This might be caused by "
    log += "insufficient shared memory (shm).\n"
    assert verdict(log)[0] == "dataloader_worker_killed"


@pytest.mark.parametrize(
    "tail",
    [
        "Loss exploded to nan at step 32\nExiting due to exception: Loss exploded\n",
        TB + "    raise ValueError(' [x] nan loss ')\nValueError:  [x] nan loss\n",
        TB + "RuntimeError: inf loss at step 12, stopping\n",
        "loss diverged, aborting the run\n",
    ],
)
def test_a_trainers_own_words_for_a_non_finite_loss(tail: str) -> None:
    assert verdict(STEPS + tail)[:2] == ("nan_loss", True)


def test_a_nan_loss_named_in_a_setting_is_not_one() -> None:
    assert verdict(STEPS + "config: skip_nan_loss=True, nan_to_num=0.0\n" + STEPS)[:2] == (
        "healthy",
        False,
    )


@pytest.mark.parametrize(
    "tail",
    [
        "[TM][ERROR] CUDA runtime error: out of memory "
        "/lmdeploy/src/turbomind/core/allocator.cc:49\n",
        "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of "
        "memory)\nCurrently allocated     : 16.08 GiB\n",
        "thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 "
        "would exceed allowed memory. (out of memory)\")', router/src/main.rs:216:18\n"
        "ERROR text_generation_launcher: Webserver Crashed\nError: WebserverFailed\n",
    ],
)
def test_device_allocators_that_are_not_torchs_run_out_of_memory(tail: str) -> None:
    assert verdict(STEPS + tail)[:2] == ("cuda_oom", True)


@pytest.mark.parametrize(
    "tail",
    [
        "❌ Training failed with exit code -9\nCheck the logs for detailed error information\n",
        "launcher: the worker exited with return code -9\n",
        "/root/torch/install/bin/lua: $ Torch: not enough memory: you tried to allocate 12GB. "
        "Buy new RAM! at /root/torch/pkg/torch/lib/TH/THGeneral.c:210\nstack traceback:\n"
        "    [C]: in function 'Tensor'\n",
    ],
)
def test_a_kill_or_a_host_allocation_in_other_words_is_host_memory(tail: str) -> None:
    assert verdict(STEPS + tail)[:2] == ("host_oom", True)


@pytest.mark.parametrize(
    "tail",
    [
        "OSError: [WinError 127] The specified procedure could not be found. Error loading "
        '"C:\\env\\lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its dependencies.\n',
        "ImportError: DLL load failed while importing _C: The specified module could not be "
        "found.\n",
        "FileNotFoundError: Could not find module 'C:\\env\\Library\\bin\\libomp.dll' (or one of "
        "its dependencies). Try using the full path with constructor syntax.\n",
    ],
)
def test_windows_words_for_a_library_that_will_not_load(tail: str) -> None:
    category, failed, entry = verdict(TB + "    import torch\n" + tail)
    assert (category, failed, entry) == ("module_not_found", True, "shared_library_missing")


@pytest.mark.parametrize(
    "log",
    [
        "Usage: train [OPTIONS] COMMAND [ARGS]...\nTry 'train --help' for help.\n\n"
        "Error: No such command 'fit'.\n",
        "Usage: slurm_script [OPTIONS] COMMAND [ARGS]...\nTry 'slurm_script --help' for help.\n"
        "╭─ Error ─────────────────────╮\n│ Missing command.            │\n"
        "╰─────────────────────────────╯\n",
        'Usage: serve.py [OPTIONS]\nTry "serve.py -h" for help.\n\nError: Invalid value.\n',
    ],
)
def test_click_and_typer_reject_a_command_line(log: str) -> None:
    assert verdict(log) == ("code_error", True, "cli_usage_error")


HYDRA_HINT = "\nSet the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n"


def test_hydra_that_cannot_find_its_config_never_ran_the_program() -> None:
    log = "nohup: ignoring input\nPrimary config directory not found.\nCheck that the config "
    log += "directory '/home/u/conf/' exists and readable\n" + HYDRA_HINT
    assert verdict(log) == ("code_error", True, "hydra_config_error")


def test_hydras_hint_after_an_error_leaves_the_cause_to_the_error() -> None:
    oom = "Error executing job with overrides: ['trainer.devices=8']\ntorch.OutOfMemoryError: "
    oom += "CUDA out of memory. Tried to allocate 2.00 GiB.\n" + HYDRA_HINT
    assert verdict(STEPS + oom)[:2] == ("cuda_oom", True)
    plain = "Error executing job with overrides: []\nKeyError: 'vocab_size'\n" + HYDRA_HINT
    assert verdict(STEPS + plain)[:2] == ("code_error", True)


@pytest.mark.parametrize(
    "line",
    [
        "DeepSpeed backend not set, please initialize it using init_process_group()",
        "RuntimeError: Default process group has not been initialized, please make sure to call "
        "init_process_group.",
    ],
)
def test_a_distributed_call_before_the_process_group(line: str) -> None:
    assert verdict(line + "\n") == ("code_error", True, "distributed_not_initialized")


TF_ERROR = (
    "ERROR:tensorflow:Error recorded from infeed: From /job:worker/replica:0/task:0:\n"
    "Key: segment_ids.  Can't parse serialized Example.\n"
    "\t [[{{node ParseSingleExample/ParseSingleExample}}]]\n"
    "ERROR:tensorflow:Closing session due to error From /job:worker/replica:0/task:0:\n"
    "Key: segment_ids.  Can't parse serialized Example.\n"
)


def test_a_tensorflow_session_closed_on_an_error_ended_the_job() -> None:
    assert verdict("Running training\nModel is built!\n" + TF_ERROR)[:2] == ("code_error", True)


def test_a_tensorflow_session_closed_on_an_oom_is_the_oom() -> None:
    oom = "ERROR:tensorflow:Error recorded from training_loop: OOM when allocating tensor with "
    oom += "shape[8192,8192] and type float on /job:worker/replica:0/task:0/device:TPU:0\n"
    oom += "ERROR:tensorflow:Closing session due to error OOM when allocating tensor\n"
    assert verdict("Running training\n" + oom)[:2] == ("cuda_oom", True)


WORKER_CRASH = (
    "train: 17, 600 / 1000] FPS: 252.8  ,  Loss/total: 1.08691\n"
    "ERROR: Unexpected segmentation fault encountered in worker.\nTraining crashed at epoch 17\n"
    + TB
    + "RuntimeError: DataLoader worker (pid 346942) is killed by signal: Segmentation fault.\n\n"
)


def test_a_trainer_that_restarts_after_a_crash_and_finishes_is_healthy() -> None:
    d = diagnose_text(
        WORKER_CRASH + "Restarting training from last epoch ...\nFinished training!\n"
    )
    assert (d["category"], d["failed"]) == ("healthy", False)


def test_finishing_an_epoch_is_not_finishing_training() -> None:
    d = diagnose_text("Finished training epoch 16\n" + WORKER_CRASH)
    assert (d["category"], d["failed"]) == ("dataloader_worker_killed", True)


def test_a_404_from_the_hubs_inference_api_is_the_hubs() -> None:
    line = "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
    hub = verdict(TB + line + "https://api-inference.huggingface.co/models/meta-llama/x\n")
    assert hub == ("hf_hub_error", True, "hf_hub_not_found")
    other = verdict(TB + line + "https://api.example.org/v1/models/x\n")
    assert other[0] != "hf_hub_error" and other[1]


def _xid(payload: str, xid: int = 62) -> str:
    line = f"Mar 27 17:40:36 kernel: NVRM: Xid (PCI:0000:01:00): {xid}, {payload}\n"
    return STEPS + line + "NVRM: GPU0 _kgspRpcGspEventPmuHalted: Received signal from GSP.\n"


def test_a_drivers_hex_dump_is_not_part_of_the_failure() -> None:
    one = diagnose_text(_xid("223b6a66 00002100 00000000 20662342 20662ba6 2065f7ca"))
    two = diagnose_text(_xid("323f0f30 0000c3d8 00000000 206dae68 206da022 206d85f6"))
    assert one["category"] == two["category"] == "node_failure"
    assert one["fingerprint"] == two["fingerprint"]
    other = diagnose_text(_xid("323f0f30 0000c3d8 00000000 206dae68 206da022 206d85f6", xid=79))
    assert other["fingerprint"] != one["fingerprint"]


def _rec(time: str, level: str, rows: list[str], where: str, width: int = 110) -> str:
    """One record as Rich's logging handler prints it: the time column (blank when it repeats),
    the level padded to 8, the message wrapped onto rows indented to its column, the source
    at the right of the first row, every row padded to the console's width."""
    lead = (f"[{time}]" if time else " " * 19) + " " + level.ljust(8) + " "
    first = (lead + rows[0]).ljust(width - len(where)) + where
    rest = [(" " * len(lead) + r).ljust(width) for r in rows[1:]]
    return "".join(r + "\n" for r in [first, *rest])


T = "06/24/25 19:03:08"
RICH_INFO = _rec(
    T, "INFO", ["⏳ Waiting for all the steps of the", "stage 0 to load..."], "local.py:1253"
)


def test_a_record_rich_wrapped_onto_indented_rows_is_read_whole() -> None:
    rows = [
        "['distilabel.pipeline'] ❌ Failed to load step",
        "'magpie_generator_0': Step load failed: 404 Client Error: Not",
        "Found for url:",
        "https://api-inference.huggingface.co/status/meta-llama/Meta-",
        "Llama-3.1-8B-Instruct",
    ]
    log = RICH_INFO + _rec(T, "ERROR", rows, "local.py:316")
    assert verdict(log)[:2] == ("hf_hub_error", True)


def test_rich_rows_of_a_healthy_run_join_into_nothing_fatal() -> None:
    rows = [
        "Step 'gen' sent a batch: no error,",
        "404 of 1000 rows done, for url:",
        "https://huggingface.co/datasets/u/out (pushed at the end)",
    ]
    log = RICH_INFO + _rec(T, "INFO", rows, "base.py:120")
    log += _rec("", "INFO", ["🏁 Finished running the pipeline."], "local.py:1400")
    assert verdict(log)[:2] == ("healthy", False)
