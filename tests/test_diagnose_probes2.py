"""Each class of miss the twenty-second and twenty-third untouched sets (corpus22, corpus23)
showed, as a principle that also catches its siblings: a program that says what it skipped
because of an error handled that error; transformers' words for a weight file torch could not
read; c10d's start-up barrier that timed out; torch's shared-memory files that could not be
written; pinned host memory that ran out; and the Ascend NPU's device errors, which name the
failing operator but not why. The logs are written for these tests, modelled on what the tools
print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB

from labctl.diagnose import diagnose_text


def verdict(log: str) -> tuple[str, bool, str | None]:
    d = diagnose_text(log)
    return d["category"], d["failed"], d["catalog_id"]


# -- an error the program handled, said as what it gave up ------------------------------------

HEAD = "Setting up training phases...\nInitializing logs...\n"
TRAINING = "Training for 25000 kimg...\n\ntick 0     kimg 0.0      time 1m 02s\n"
TRAINING += "Evaluating metrics...\n"


@pytest.mark.parametrize(
    "notice",
    [
        "Skipping tfevents export: No module named 'tensorboard'",
        "skipped wandb logging: No module named 'wandb'",
        "Ignoring optional flash attention (reason: No module named 'flash_attn')",
        "Falling back to the Python kernels because No module named 'apex'",
    ],
)
def test_an_error_the_program_says_it_skipped_something_for_was_handled(notice: str) -> None:
    assert verdict(HEAD + notice + "\n" + TRAINING) == ("healthy", False, None)


@pytest.mark.parametrize(
    "line",
    [
        "ModuleNotFoundError: No module named 'tensorboard'",
        "No module named 'tensorboard'",
        # the same words, but the program stopped there: an exception type is named
        "Skipping tfevents export: ModuleNotFoundError: No module named 'tensorboard'",
    ],
)
def test_a_missing_module_not_said_as_a_skip_is_still_the_failure(line: str) -> None:
    assert verdict(HEAD + TB + line + "\n")[:2] == ("module_not_found", True)


# -- transformers could not read a weight file ------------------------------------------------

SHARD = "./pretrained/pytorch_model-00002-of-00003.bin"
UNABLE = f"Unable to load weights from pytorch checkpoint file for '{SHARD}' at '{SHARD}'. "
UNABLE += "If you tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True."


def test_transformers_unable_to_load_weights_is_a_checkpoint_that_cannot_be_read() -> None:
    # the exception line of a traceback, and the same message pasted alone and wrapped
    assert verdict(TB + "OSError: " + UNABLE + "\n") == (
        "checkpoint_load_error",
        True,
        "checkpoint_corrupt",
    )
    pasted = UNABLE.replace(" at ", " at\n").replace("checkpoint, ", "checkpoint,\n")
    assert verdict(pasted + "\n")[:2] == ("checkpoint_load_error", True)


# -- c10d's start-up barrier ------------------------------------------------------------------


def test_a_store_based_barrier_that_timed_out_is_a_collective_timeout() -> None:
    line = (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 1, "
        "for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)\n"
    )
    assert verdict(TB + line) == ("nccl_timeout", True, "nccl_timeout")
    # the issue's own words: the line alone, in lower case
    alone = "timed out initializing process group in store based barrier on rank\n"
    assert verdict(alone)[:2] == ("nccl_timeout", True)


# -- torch's shared-memory files --------------------------------------------------------------

FEED = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 244, in _feed\n'
    "    obj = _ForkingPickler.dumps(obj)\n"
    '  File "/opt/venv/lib/python3.10/site-packages/torch/multiprocessing/reductions.py", '
    "line 568, in reduce_storage\n"
    "    fd, size = storage._share_fd_cpu_()\n"
)


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: unable to write to file </torch_74396_29835>: No space left on device (28)",
        "RuntimeError: unable to open shared memory object </torch_3052_12639> in read-write mode",
        "RuntimeError: unable to mmap 4096 bytes from file </torch_9_7>: Cannot allocate memory",
    ],
)
def test_a_batch_that_cannot_be_put_in_dev_shm_is_a_loader_out_of_shared_memory(line: str) -> None:
    assert verdict(FEED + line + "\n") == ("dataloader_worker_killed", True, "dataloader_shm")


def test_a_shared_memory_failure_the_loader_survived_is_not_the_end() -> None:
    line = "RuntimeError: unable to write to file </torch_74396_2983595444>\n"
    assert verdict(FEED + line + STEPS + "Training complete.\n")[:2] == ("healthy", False)


# -- pinned host memory -----------------------------------------------------------------------


def test_pinned_host_memory_that_ran_out_is_host_memory_not_the_gpus() -> None:
    md = "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.181 "
    log = "============== Starting Training ==============\n"
    log += md + "[minddata/dataset/util/arena.cc:250] Init] cudaHostAlloc failed, ret[2], "
    log += "out of memory\n"
    log += md + "[minddata/dataset/util/task.cc:67] operator()] Task is terminated with err msg: "
    log += "Out of memory. Memory malloc failed.\n"
    assert verdict(log) == ("host_oom", True, "host_memory_error")


# -- the Ascend NPU's device errors -----------------------------------------------------------

ASCEND = """Kernel error:
----------------------------------------------------
Launch kernel failed: Default/network/Conv2D-op41
----------------------------------------------------
- Ascend Error Message:
----------------------------------------------------
EZ9999: Inner Error!
EZ9999: 2025-03-02-10:11:12.123.456  The error from device(chipId:1, dieId:0), serial number is 7, \
an exception occurred during AICORE execution, stream_id:3, task_id:88, errcode:21008.
        TraceBack (most recent call last):
        Kernel task happen error, retCode=0x28, [aicore exception].[FUNC:PreCheckTaskErr]
"""


def test_an_npu_kernel_that_failed_on_the_device_is_a_failure_of_unknown_cause() -> None:
    assert verdict(ASCEND) == ("unknown", True, "npu_kernel_error")
    # a memory error the device reported too names the cause: it wins over the bare trace
    oom = ASCEND + "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    assert verdict(oom)[:2] == ("cuda_oom", True)
