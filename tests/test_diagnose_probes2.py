"""Each class of miss the twenty-second and twenty-third untouched sets (corpus22, corpus23)
showed, as a principle that also catches its siblings: a program that says what it skipped
because of an error handled that error; transformers' words for a weight file torch could not
read; c10d's start-up barrier that timed out; torch's shared-memory files that could not be
written; pinned host memory that ran out; and the Ascend NPU's device errors, which name the
failing operator but not why. The logs are written for these tests, modelled on what the tools
print."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

from labctl.diagnose import diagnose_chunks, diagnose_path

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


# -- a log in UTF-16 (Windows PowerShell's `python train.py > log.txt`) ------------------------

PS_LOG = (
    "python.exe : You passed `num_labels=3` which is incompatible to the `id2label` map\r\n"
    "+ CategoryInfo          : NotSpecified: (You passed...:String) [], RemoteException\r\n"
    "+ FullyQualifiedErrorId : NativeCommandError\r\n"
    "device: cuda \u2014 \ubaa8\ub378 \ucd08\uae30\ud654 \uc911...\r\n"
    + TB.replace("\n", "\r\n")
    + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\r\n"
)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_a_log_powershell_wrote_in_utf16_is_read_as_text(tmp_path: Path, codec: str) -> None:
    bom = b"\xfe\xff" if codec == "utf-16-be" else b""
    data = bom + PS_LOG.encode(codec)  # "utf-16" writes its own (little-endian) mark
    log = tmp_path / "log.txt"
    log.write_bytes(data)
    d = diagnose_path(log)
    assert (d["category"], d["failed"]) == ("cuda_oom", True)
    assert d["window"]["complete"] and d["window"]["mode"] == "stream"
    assert "CUDA out of memory" in d["evidence"][0]["text"]
    # gzipped, and on stdin, in chunks that split its characters
    (tmp_path / "log.txt.gz").write_bytes(gzip.compress(data))
    assert diagnose_path(tmp_path / "log.txt.gz")["category"] == "cuda_oom"
    chunks = [data[i : i + 7] for i in range(0, len(data), 7)]
    assert diagnose_chunks(chunks)["category"] == "cuda_oom"


def test_a_log_without_a_utf16_mark_is_read_as_it_is(tmp_path: Path) -> None:
    # UTF-32's mark starts as UTF-16's does: not taken for it
    log = tmp_path / "log.txt"
    log.write_bytes(b"\xff\xfe\x00\x00" + b"step 1 | loss 0.5\n")
    assert diagnose_path(log)["failed"] is False
    log.write_bytes(b"\xef\xbb\xbf" + PS_LOG.encode("utf-8"))  # UTF-8 with a BOM
    assert diagnose_path(log)["category"] == "cuda_oom"


# -- a training script's own NaN check ----------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "ValueError:Network outputs is NAN! Stop Training",
        "RuntimeError: model output contains NaN",
        "AssertionError: logits are nan",
    ],
)
def test_a_script_that_stops_on_nan_outputs_died_of_a_nan(line: str) -> None:
    assert verdict(STEPS + TB + line + "\n")[:2] == ("nan_loss", True)


# -- PyTorch 0.3's words for a checkpoint that does not fit --------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "KeyError: 'unexpected key \"sub_mean.weight\" in state_dict'",
        "KeyError: 'missing keys in state_dict: \"{'fc.bias', 'fc.weight'}\"'",
    ],
)
def test_old_torchs_key_error_on_load_state_dict_is_a_checkpoint_that_does_not_fit(
    line: str,
) -> None:
    frame = '  File "/opt/torch/nn/modules/module.py", line 522, in load_state_dict\n'
    assert verdict(TB + frame + "    .format(name))\n" + line + "\n") == (
        "checkpoint_load_error",
        True,
        "checkpoint_mismatch",
    )


# -- c10d's last word when the store cannot be reached ------------------------------------------

SOCKET_W = (
    "[{r}]:[W socket.cpp:558] [c10d] The client socket has failed to connect to "
    "0.0.0.5:40323 (errno: 110 - Connection timed out).\n"
)
SOCKET_E = (
    "[{r}]:[E socket.cpp:610] [c10d] The client socket has failed to connect to any network "
    "address of (05, 40323).\n"
)


def test_ranks_that_reach_no_address_of_the_store_never_started() -> None:
    log = "".join(SOCKET_W.format(r=r) for r in (0, 1)) + "".join(
        SOCKET_E.format(r=r) for r in (0, 1)
    )
    assert verdict(log) == ("nccl_error", True, "dist_init_error")


def test_a_connect_the_client_retried_past_is_not_the_end() -> None:
    log = SOCKET_W.format(r=0) * 3 + STEPS + "Training complete.\n"
    assert verdict(log)[:2] == ("healthy", False)
