"""Coverage that comes from the runtimes' own error tables, not from any corpus: every string
the CUDA runtime's cudaGetErrorString can return that a training job meets, and c10d's words
when ranks cannot meet, each mapped to the category a lab supervisor would give it. A miss of
one of these on an untouched set is a gap in the table, never a surprise. The logs are written
for these tests: the exception line after a traceback, as torch raises them."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB

from labctl.diagnose import diagnose_text

CUDA = [
    # the build, the driver and the GPU do not fit
    ("no kernel image is available for execution on the device", "cuda_driver_mismatch"),
    ("invalid device function", "cuda_driver_mismatch"),
    ("device kernel image is invalid", "cuda_driver_mismatch"),
    ("CUDA driver version is insufficient for CUDA runtime version", "cuda_driver_mismatch"),
    ("system has unsupported display driver / cuda driver combination", "cuda_driver_mismatch"),
    ("forward compatibility was attempted on non supported HW", "cuda_driver_mismatch"),
    ("PTX JIT compiler library not found", "cuda_driver_mismatch"),
    ("the provided PTX was compiled with an unsupported toolchain.", "cuda_driver_mismatch"),
    ("no CUDA-capable device is detected", "cuda_driver_mismatch"),
    # a GPU the node cannot give, or a broken one
    ("all CUDA-capable devices are busy or unavailable", "node_failure"),
    ("CUDA-capable device(s) is/are busy or unavailable", "node_failure"),
    ("system not yet initialized", "node_failure"),
    ("uncorrectable ECC error encountered", "node_failure"),
    # a kernel that crashed on the device
    ("an illegal memory access was encountered", "segfault"),
    ("misaligned address", "segfault"),
    ("an illegal instruction was encountered", "segfault"),
    ("hardware stack error", "segfault"),
    ("invalid program counter", "segfault"),
    ("unspecified launch failure", "segfault"),
    # the program's own doing
    ("device-side assert triggered", "code_error"),
    ("invalid device ordinal", "code_error"),
    # CUDA used in a forked DataLoader worker: the code's, not the driver's
    ("initialization error", "code_error"),
    ("out of memory", "cuda_oom"),
    ("unknown error", "unknown"),
]


@pytest.mark.parametrize(("message", "category"), CUDA)
def test_each_cuda_runtime_error_has_its_category(message: str, category: str) -> None:
    d = diagnose_text(STEPS + TB + f"RuntimeError: CUDA error: {message}\n")
    assert (d["category"], d["failed"]) == (category, True)


def test_the_gpu_index_past_the_allocation_says_what_to_fix() -> None:
    d = diagnose_text(TB + "RuntimeError: CUDA error: invalid device ordinal\n")
    assert d["catalog_id"] == "gpu_ordinal_out_of_range" and "LOCAL_RANK" in d["fix"]


def test_ddp_parameters_unused_in_the_loss_say_what_to_fix() -> None:
    line = (
        "RuntimeError: Expected to have finished reduction in the prior iteration before "
        "starting a new one. This error indicates that your module has parameters that were "
        "not used in producing loss.\n"
    )
    d = diagnose_text(STEPS + TB + line)
    assert d["catalog_id"] == "ddp_unused_parameters" and "find_unused_parameters" in d["fix"]


C10D = [
    "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
    "c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
    "RuntimeError: Socket Timeout",
    "RuntimeError: connect() timed out. Original timeout was 1800000 ms.",
    "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while "
    "trying to connect to (10.0.0.1, 29500).",
]


@pytest.mark.parametrize("line", C10D)
def test_ranks_that_cannot_reach_the_store_failed_to_start(line: str) -> None:
    d = diagnose_text(TB + line + "\n")
    assert (d["category"], d["catalog_id"]) == ("nccl_error", "dist_init_error")


def test_a_socket_timeout_in_prose_is_not_the_stores() -> None:
    log = STEPS + "INFO retrying after a socket timeout talking to the tracker\n" + STEPS
    assert diagnose_text(log)["failed"] is False


HUB = [
    (
        "huggingface_hub.errors.RevisionNotFoundError: 404 Client Error. Revision Not Found for "
        "url: https://huggingface.co/api/models/gpt2/revision/v9.",
        "hf_hub_not_found",
    ),
    (
        "huggingface_hub.errors.EntryNotFoundError: 404 Client Error. Entry Not Found for url: "
        "https://huggingface.co/gpt2/resolve/main/model.safetensors.",
        "hf_hub_not_found",
    ),
    (
        "datasets.exceptions.DatasetNotFoundError: Dataset 'foo/bar' doesn't exist on the Hub or "
        "cannot be accessed.",
        "hf_hub_not_found",
    ),
    (
        "FileNotFoundError: Couldn't find a dataset script at /work/squad/squad.py or any data "
        "file in the same directory. Couldn't find 'squad' on the Hugging Face Hub either",
        "hf_hub_not_found",
    ),
    (
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
        "'namespace/repo_name': '/data/models/llama'.",
        "hf_hub_not_found",
    ),
    (
        "OSError: Can't load tokenizer for 'bert-base-uncased'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same "
        "name.",
        "hf_hub_not_found",
    ),
    (
        "OSError: Consistency check failed: file should be of size 4976698672 but has size "
        "2087190528 (model-00001-of-00002.safetensors).",
        "hf_hub_download_incomplete",
    ),
    (
        "ConnectionError: Couldn't reach 'rajpurkar/squad' on the Hub (ReadTimeout)",
        "hf_hub_connection",
    ),
    (
        "huggingface_hub.errors.HfHubHTTPError: 500 Server Error: Internal Server Error for url: "
        "https://huggingface.co/api/datasets/foo",
        "hf_hub_connection",
    ),
]


@pytest.mark.parametrize(("line", "entry"), HUB)
def test_each_hub_failure_a_job_meets_is_a_hub_failure(line: str, entry: str) -> None:
    d = diagnose_text(TB + line + "\n")
    assert (d["category"], d["catalog_id"]) == ("hf_hub_error", entry)


def test_a_server_error_of_another_service_is_not_the_hubs() -> None:
    line = "requests.exceptions.HTTPError: 500 Server Error: Internal Server Error for url: "
    d = diagnose_text(TB + line + "https://api.example.org/v1/items\n")
    assert d["category"] == "code_error"


LIBRARIES = [
    (
        "ValueError: The checkpoint you are trying to load has model type `qwen2` but Transformers "
        "does not recognize this architecture.",
        "module_not_found",
        "transformers_too_old",
    ),
    (
        "ValueError: Tokenizer class LlamaTokenizer does not exist or is not currently imported.",
        "module_not_found",
        "transformers_too_old",
    ),
    (
        "RuntimeError: received 0 items of ancdata",
        "dataloader_worker_killed",
        "dataloader_fd_limit",
    ),
    (
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. "
        "Please increase the limit using `ulimit -n` in the shell",
        "dataloader_worker_killed",
        "dataloader_fd_limit",
    ),
    (
        "deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP "
        "world size of 8 but the current world size is 4.",
        "checkpoint_load_error",
        "checkpoint_mismatch",
    ),
    (
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
        "cuda_driver_mismatch",
        "cuda_driver_mismatch",
    ),
]


@pytest.mark.parametrize(("line", "category", "entry"), LIBRARIES)
def test_the_libraries_own_words_for_a_known_cause(line: str, category: str, entry: str) -> None:
    d = diagnose_text(STEPS + TB + line + "\n")
    assert (d["category"], d["catalog_id"], d["failed"]) == (category, entry, True)


MORE = [
    (
        "RuntimeError: DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 "
        "bytes.",
        "host_oom",
    ),
    (
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal "
        "SIGKILL",
        "host_oom",
    ),
    (
        "RuntimeError: NCCL error: unhandled cuda error, NCCL version 2.18.1\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
        "Cuda failure 'out of memory'",
        "cuda_oom",
    ),
    (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
        "Your Tesla V100-SXM2-32GB GPU has compute capability 7.0.",
        "cuda_driver_mismatch",
    ),
    (
        "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the "
        "following error: the package flash_attn seems to be not installed.",
        "module_not_found",
    ),
]


def test_the_missing_kernel_package_is_named_for_supervise() -> None:
    line = "ImportError: ... the package flash_attn seems to be not installed.\n"
    d = diagnose_text(TB + line)
    assert d["action"]["module"] == "flash_attn"


FRAMEWORKS = [
    (
        "RuntimeError: CUDA Setup failed despite GPU being available. Please run the following "
        "command to get more information: python -m bitsandbytes",
        "cuda_driver_mismatch",
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "cuda_driver_mismatch"),
    ("ValueError: Unknown CUDA arch (8.9) or GPU not supported", "cuda_driver_mismatch"),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
        "variable MASTER_ADDR expected, but not set",
        "nccl_error",
    ),
    (
        "RuntimeError: [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 1800000 ms",
        "nccl_timeout",
    ),
    (
        "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
        "a.shape=(32, 784), b.shape=(784, 10), m=32, n=10, k=784",
        "cudnn_error",
    ),
    (
        "tensorflow.python.framework.errors_impl.NotFoundError: /ckpt/model.ckpt-1000.index; No "
        "such file or directory",
        "checkpoint_load_error",
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints/epoch_10.pth'",
        "checkpoint_load_error",
    ),
    (
        "tensorflow.python.framework.errors_impl.DataLossError: Checksum does not match: stored "
        "123 vs. calculated on the restored bytes 456",
        "checkpoint_load_error",
    ),
    (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete.",
        "host_oom",
    ),
    (
        "RuntimeError: cuda runtime error (2) : out of memory at "
        "/pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
        "cuda_oom",
    ),
    (
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and "
        "torchvision versions are incompatible",
        "module_not_found",
    ),
    (
        "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0 as it may crash.",
        "module_not_found",
    ),
    ("AttributeError: module 'numpy' has no attribute 'float'.", "module_not_found"),
]


def test_a_missing_data_file_is_not_a_missing_checkpoint() -> None:
    line = "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n"
    assert diagnose_text(STEPS + TB + line)["category"] == "code_error"


def test_horovods_shutdown_is_the_report_of_another_ranks_failure() -> None:
    shutdown = (
        "RuntimeError: Horovod has been shut down. This was caused by an exception on one of "
        "the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the "
        "ranks finished execution.\n"
    )
    alone = diagnose_text(STEPS + TB + shutdown)
    assert (alone["category"], alone["catalog_id"]) == ("unknown", "horovod_shutdown")
    oom = TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert diagnose_text(STEPS + oom + TB + shutdown)["category"] == "cuda_oom"


# older releases' words for the same failures
OLDER = [
    (
        "ValueError: Connection error, and we cannot find the requested files in the cached "
        "path. Please try again or make sure your Internet connection is on.",
        "hf_hub_error",
    ),
    ("Model diverged with loss = NaN", "nan_loss"),
    (
        "tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError: NaN "
        "loss during training.",
        "nan_loss",
    ),
]


@pytest.mark.parametrize(("line", "category"), MORE + FRAMEWORKS + OLDER)
def test_a_librarys_words_on_the_exception_line_name_the_cause(line: str, category: str) -> None:
    d = diagnose_text(STEPS + TB + line + "\n")
    assert (d["category"], d["failed"]) == (category, True)


@pytest.mark.parametrize(
    ("log", "category", "entry"),
    [
        (
            "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, "
            "shutting down workers",
            "unknown",
            "sigterm_cascade",
        ),
        ("TERM_SWAP: job killed after reaching LSF swap usage limit.", "host_oom", "host_oom_kill"),
        (
            "Last State:     Terminated\n    Reason:       Error\n    Exit Code:    1",
            "unknown",
            "job_exit_report",
        ),
    ],
)
def test_launchers_and_schedulers_say_how_the_job_ended(
    log: str, category: str, entry: str
) -> None:
    d = diagnose_text(STEPS + log + "\n")
    assert (d["category"], d["catalog_id"], d["failed"]) == (category, entry, True)


def test_a_container_that_exited_zero_ended_well() -> None:
    log = STEPS + "Last State:     Terminated\n    Reason:       Completed\n    Exit Code:    0\n"
    assert diagnose_text(log)["failed"] is False


def test_an_ide_console_reports_the_programs_exit_status() -> None:
    epochs = "Epoch 9/50\n252/252 [==========] - 386s 2s/step - loss: 346.2141 - val_loss: nan\n"
    epochs += "Epoch 10/50\n251/252 [=========>.] - ETA: 1s - loss: 286.6874\n"
    failed = diagnose_text(epochs + "\nProcess finished with exit code -1\n")
    assert (failed["failed"], failed["catalog_id"]) == (True, "job_exit_report")
    assert diagnose_text(STEPS + "\nProcess finished with exit code 0\n")["failed"] is False


@pytest.mark.parametrize(
    ("line", "category"),
    [
        ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', "host_oom"),
        ("OSError: [Errno 107] Transport endpoint is not connected", "node_failure"),
        ("RuntimeError: CUDA driver error: out of memory", "cuda_oom"),
        ("ValueError: Cannot launch job with no GPUs", "cuda_driver_mismatch"),
        (
            "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
            "node_failure",
        ),
        (
            'docker: Error response from daemon: could not select device driver "" with '
            "capabilities: [[gpu]].",
            "node_failure",
        ),
        (
            "FATAL:   Unable to handle docker://pytorch/pytorch:latest uri: failed to get checksum",
            "unknown",
        ),
    ],
)
def test_runtimes_and_containers_say_what_the_node_could_not_give(line: str, category: str) -> None:
    d = diagnose_text(STEPS + line + "\n")
    assert (d["category"], d["failed"]) == (category, True)


def test_a_trainers_guard_that_gives_up_on_a_non_finite_loss_is_a_nan() -> None:
    head = "Epoch [0/5]; Iter [0/9450]; Loss 10.08; LR 1.00e-06; Mem 29072.79MB\n"
    skip = "Loss is not finite. Skip this training step.\n"
    ended = diagnose_text(head + skip * 4 + "Loss is not finite. Terminate training.\n")
    assert (ended["category"], ended["failed"]) == ("nan_loss", True)
    # steps it skipped, then trained on: survived
    assert diagnose_text(head + skip * 2 + STEPS + "Training complete.\n")["failed"] is False


def test_a_consoles_echo_of_ctrl_c_at_the_end_is_a_person_stopping_it() -> None:
    stopped = diagnose_text(
        STEPS + "tcmalloc: large alloc 44581601280 bytes == 0x7f6e @ 0x7f7a\n^C\n"
    )
    assert (stopped["category"], stopped["failed"]) == ("cancelled", True)
    # an interrupt the program went past (a debugger, a paused loop) is not the end
    assert diagnose_text(STEPS + "^C\n" + STEPS + "Training complete.\n")["failed"] is False
