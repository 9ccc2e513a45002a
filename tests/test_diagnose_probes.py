"""Each class of miss the eighth untouched set (corpus13, issue excerpts) showed, as a principle
that also catches its siblings: a batch-size search's probes run out of memory on purpose, a
shell reports SIGKILL in its own language, a network call that timed out is not a bug in the
code (and is a Hub failure only when the Hub is named), NCCL's own name for an unhandled CUDA
failure, the watchdog's timeout read from its stack when its message is gone, the fp16 loss
scale driven to zero, CUDA's catch-all error, a traceback header that lost its first letter,
and torch's own words for a DataLoader worker out of /dev/shm; and from the seventh untouched
set (corpus12): a log that ends on the program's own ERROR record; from the ninth (corpus14):
Ray's wrappers, kubectl's table and TensorFlow's gRPC status; from the tenth (corpus15): torch's
old spawn wrapper and slurmstepd's polled memory limit; from the eleventh (corpus16): CUDA that
failed to initialise, said only as a warning; and from the later sets, detectron2's and Hydra's
log records, cuBLAS, Ray's workers and a loss named by its part. The logs are written for
these tests, modelled on what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

from labctl.diagnose import diagnose_text

# -- a batch-size search: OOM probes, then the size it keeps --------------------------------

PROBES = (
    "Searching for the largest batch size that fits...\n"
    "  batch size 64: ok (2.1 it/s)\n"
    "  batch size 128: Failed (CUDA out of memory. Tried to allocate 2.00 GiB)\n"
    "  batch size 96: ok (1.4 it/s)\n"
    "  batch size 112: Failed (CUDA out of memory. Tried to allocate 1.10 GiB)\n"
)


@pytest.mark.parametrize(
    "settled",
    [
        "* Chosen batch size: 96\n",
        "Finished batch size finder, will continue with full run using batch size 96\n",
        "Optimal batch size found: 96\n",
    ],
)
def test_a_batch_size_search_that_settles_survived_its_probes(settled: str) -> None:
    assert verdict(PROBES + settled) == ("healthy", False, None)


def test_a_search_that_gives_up_is_an_oom_and_so_is_one_after_the_search() -> None:
    gave_up = PROBES + TB + "RuntimeError: No executable batch size found, reached zero.\n"
    assert verdict(gave_up)[:2] == ("cuda_oom", True)
    later = PROBES + "* Chosen batch size: 96\n" + STEPS + TB
    later += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB\n"
    assert verdict(later)[:2] == ("cuda_oom", True)


# -- SIGKILL in the shell's language ------------------------------------------------------------


@pytest.mark.parametrize("word", ["已杀死", "Getötet", "Processus arrêté", "Убито", "強制終了"])
def test_a_bare_kill_in_another_language_is_the_same_weak_host_oom(word: str) -> None:
    assert verdict(STEPS + word + "\n") == ("host_oom", True, "host_oom_weak")
    bar = " 31%|███       | 310/1000 [02:01<04:30,  2.55it/s]"
    assert verdict(STEPS + bar + word + "\n")[2] == "host_oom_weak"


def test_the_word_inside_a_sentence_is_no_kill() -> None:
    assert (
        verdict(STEPS + "Processus arrêté par l'utilisateur: reprise au pas 60\n" + STEPS)[1]
        is False
    )


# -- a network call that timed out ----------------------------------------------------------------

NET = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/requests/adapters.py", line 486, in send\n'
    "    resp = conn.urlopen(\n"
    '  File "/opt/venv/lib/python3.11/site-packages/urllib3/connectionpool.py", line 799, '
    "in urlopen\n"
    "    retries = retries.increment(\n"
    '  File "/usr/lib/python3.11/socket.py", line 706, in readinto\n'
    "    return self._sock.recv_into(b)\n"
)


@pytest.mark.parametrize(
    "exc",
    [
        "TimeoutError: timed out",
        "socket.timeout: timed out",
        "ConnectionResetError: [Errno 104] Connection reset by peer",
        "urllib3.exceptions.ProtocolError: ('Connection aborted.', RemoteDisconnected('closed'))",
    ],
)
def test_a_network_timeout_with_no_host_named_is_not_a_code_error(exc: str) -> None:
    category, failed, entry = verdict(STEPS + NET + exc + "\n")
    assert (category, failed, entry) == ("unknown", True, "network_timeout")
    d = diagnose_text(STEPS + NET + exc + "\n")
    assert d["retryable"] is True


def test_the_hub_named_in_the_frames_makes_it_a_hub_failure() -> None:
    hub = NET.replace(
        "Traceback (most recent call last):\n",
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/huggingface_hub/file_download.py", '
        "line 1456, in hf_hub_download\n    r = _request_wrapper(\n",
    )
    assert verdict(hub + "TimeoutError: timed out\n")[:2] == ("hf_hub_error", True)


def test_a_timeout_the_code_raised_itself_is_still_the_code() -> None:
    own = TB + "TimeoutError: the evaluator did not answer within 60 s\n"
    assert verdict(STEPS + own)[:2] == ("code_error", True)


def test_a_traceback_header_that_lost_its_first_letter_is_still_read() -> None:
    cut = NET.replace("Traceback", "raceback", 1)
    assert verdict(STEPS + cut + "TimeoutError: The read operation timed out\n")[2] == (
        "network_timeout"
    )


# -- NCCL, CUDA and the fp16 scaler ----------------------------------------------------------------


def test_nccls_own_name_for_an_unhandled_cuda_failure_is_an_nccl_error() -> None:
    log = STEPS + (
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.21.5\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "UnhandledCudaError: Call to CUDA function failed.\n"
    )
    assert verdict(log)[:2] == ("nccl_error", True)


def test_the_watchdogs_timeout_is_read_from_its_stack_when_its_message_is_gone() -> None:
    stack = "".join(
        f"frame #{i}: {fn} + 0x{16 * i + 5:x} (0x7f00{i:04x} in /opt/torch/lib/libtorch_cuda.so)\n"
        for i, fn in enumerate(
            [
                "c10::Error::Error(c10::SourceLocation, std::string)",
                "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::"
                "duration<long, std::ratio<1l, 1000l> > >)",
                "c10d::ProcessGroupNCCL::watchdogHandler()",
                "c10d::ProcessGroupNCCL::ncclCommWatchdog()",
            ]
        )
    )
    assert verdict(STEPS + stack)[:2] == ("nccl_timeout", True)
    other = stack.replace("WorkNCCL::checkTimeout", "WorkNCCL::finishedGPUExecution")
    assert verdict(STEPS + other)[0] != "nccl_timeout"


@pytest.mark.parametrize("scale", ["0.0", "0", "5e-324", "1.3363823550460978e-51"])
def test_a_loss_scale_driven_to_zero_is_a_nan_loss(scale: str) -> None:
    line = f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scale}\n"
    assert verdict(STEPS + line * 3 + TB)[:2] == ("nan_loss", True)


def test_the_scaler_halving_now_and_then_is_normal() -> None:
    halving = "".join(
        f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {2.0**k}\n"
        for k in (16, 15, 14)
    )
    assert verdict(STEPS + halving + STEPS) == ("healthy", False, None)


@pytest.mark.parametrize(
    "line",
    [
        "luajit: cuda runtime error (30) : unknown error at /opt/cutorch/lib/THC/THCStorage.c:113",
        "RuntimeError: CUDA error: unknown error",
    ],
)
def test_cudas_catch_all_error_is_a_failure_with_a_node_to_check(line: str) -> None:
    d = diagnose_text(STEPS + line + "\n")
    assert (d["category"], d["failed"], d["catalog_id"]) == ("unknown", True, "cuda_unknown_error")
    assert "Xid" in d["fix"]


# -- a DataLoader worker out of /dev/shm, whoever reports it ------------------------------------


def test_torchs_words_for_a_worker_out_of_shared_memory_name_the_shm_whatever_the_wrap() -> None:
    one_line = (
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is "
        "possible that dataloader's workers are out of shared memory. Please try to raise "
        "your shared memory limit.\n"
    )
    wrapped = (
        "DataLoader worker (pid 4242) is killed by signal: \n"
        "Bus error. It is possible that dataloader's workers are out of shared memory. \n"
        "Please try to raise your shared memory limit. \n"
    )
    worker = "ERROR: Unexpected bus error encountered in worker. This might be caused by "
    worker += "insufficient shared memory (shm).\n"
    seen = [diagnose_text(STEPS + TB + one_line), diagnose_text(STEPS + wrapped)]
    seen.append(diagnose_text(STEPS + worker))
    assert {d["catalog_id"] for d in seen} == {"dataloader_shm"}
    assert len({d["fingerprint"] for d in seen}) == 1  # one failure, whoever reported it


# -- the program's own ERROR record, where the log ends ------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        "2025-02-11 09:14:03,221 - ERROR - Error during tokenisation: the batch held no input_ids",
        "ERROR:__main__:evaluation failed: no predictions were written",
        "2025-02-11 09:14:03.221 | ERROR    | pipeline:stage:41 - shard index is empty",
        "[2025-02-11 09:14:03][CRITICAL] could not open the dataset manifest",
    ],
)
def test_a_log_that_ends_on_its_own_error_record_failed(record: str) -> None:
    assert verdict(STEPS + record + "\n\n") == ("code_error", True, "logged_error_end")
    # one the job went on after was reported, not fatal
    assert verdict(STEPS + record + "\n" + STEPS) == ("healthy", False, None)


def test_a_tools_error_chatter_at_the_end_of_a_finished_run_is_no_failure() -> None:
    assert verdict(STEPS + "wandb: ERROR Problem finishing run\n") == ("healthy", False, None)


# -- corpus14 (the ninth untouched set): Ray's wrappers, kubectl's table, TensorFlow's gRPC ------

RAY_TB = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/rl/trainer/main.py", line 94, in run\n'
    "    trainer.fit()\n"
    '  File "/workspace/rl/single_controller/ray/base.py", line 47, in func\n'
    "    output = ray.get(output)\n"
)


def test_rays_task_error_is_read_as_the_exception_it_wraps() -> None:
    d = diagnose_text(
        STEPS + RAY_TB + "ray.exceptions.RayTaskError(IndexError): ray::WorkerDict.compute_log_"
        "probs() (pid=3345, ip=172.17.0.2, actor_id=11af29bb9f)\n"
        '  File "/workspace/rl/workers/actor.py", line 212, in compute_log_prob\n'
        "    logits = outputs[idx]\n"
    )
    assert (d["category"], d["failed"], d["catalog_id"]) == ("code_error", True, "code_error")
    assert "IndexError" in d["title"]


def test_an_actor_that_failed_in_its_constructor_is_a_failure_its_own_error_names() -> None:
    died = (
        "(LLMRayActor pid=41491) Exception raised in creation task: The actor died because of "
        "an error raised in its creation task, ray::LLMRayActor.__init__() (pid=41491, "
        "ip=10.0.0.7)\n"
        '(LLMRayActor pid=41491)   File "/opt/venv/lib/python3.12/site-packages/vllm/config.py",'
        " line 364, in __init__ [repeated 7x across cluster]\n"
    )
    assert verdict(STEPS + died) == ("unknown", True, "ray_actor_creation_failed")
    named = died + "(LLMRayActor pid=41491) ModuleNotFoundError: No module named 'flash_attn'\n"
    assert verdict(STEPS + named)[:2] == ("module_not_found", True)


def test_an_evicted_pod_in_kubectls_table_is_a_failure_whose_reason_is_not_known() -> None:
    table = (
        "NAME                           READY   STATUS     RESTARTS   AGE\n"
        "trainer-7d9f8b-rlgj8           0/2     Evicted    0          3h\n"
        "trainer-7d9f8b-xsqhd           2/2     Running    0          3h\n"
    )
    d = diagnose_text(table)
    assert (d["category"], d["failed"], d["catalog_id"]) == ("unknown", True, "pod_evicted")
    running = table.replace("Evicted ", "Running ")
    assert verdict(running) == ("healthy", False, None)
    reason = (
        table + "Message: The node was low on resource: memory. Container trainer was using 61Gi\n"
    )
    assert verdict(reason)[0] == "host_oom"


@pytest.mark.parametrize(
    "status",
    [
        "  (1) Unavailable: {{function_node __inference__train_function_133151}} failed to "
        "connect to all addresses",
        "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed",
    ],
)
def test_a_remote_tensorflow_worker_that_stopped_answering_is_a_node_failure(status: str) -> None:
    grpc = (
        "Additional GRPC error information from remote target /job:worker/replica:0/task:0:\n"
        ':{"created":"@1610000786.78","description":"Failed to pick subchannel","grpc_status":14}\n'
    )
    assert verdict(STEPS + status + "\n" + grpc)[:2] == ("node_failure", True)


def test_an_error_reports_detail_line_that_recurs_does_not_start_a_new_run() -> None:
    """TensorFlow prints a gRPC status once per failed op: the log's first line recurring
    after it is the same report again, not an appended run that hides the failure."""
    detail = (
        ':{"created":"@1610000786.78","description":"Failed to pick subchannel","file":"c.cc"}\n'
    )
    status = "  (0) Unavailable: failed to connect to all addresses\n"
    frames = "\t [[{{node StatefulPartitionedCall}}]]\n\t [[IteratorGetNext]]\n"
    log = detail + frames + status + detail + frames  # the status line only before the recurrence
    assert verdict(log)[:2] == ("node_failure", True)


# -- corpus15 (the tenth untouched set): torch's old spawn wrapper, slurmstepd's polled limit ----

SPAWN = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 62, in main\n'
    "    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))\n"
    '  File "/usr/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 119, in join\n'
    "    raise Exception(msg)\n"
    "Exception: \n"
    "\n"
    "-- Process 0 terminated with the following error:\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 20, in _wrap\n'
    "    fn(i, *args)\n"
    '  File "/data/proj/train.py", line 155, in main_worker\n'
    "    model = DDP(model, device_ids=[args.gpu])\n"
)


def test_torch_spawns_bare_exception_is_the_wrapper_not_the_code_error() -> None:
    """PyTorch < 1.8 re-raised a worker's failure as `Exception:` carrying the worker's
    traceback: the worker's own exception is the cause, and without it the cause is unknown."""
    assert verdict(SPAWN) == ("unknown", True, "spawn_reraise")
    nccl = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:514, unhandled system error\n"
    assert verdict(SPAWN + nccl)[:2] == ("nccl_error", True)
    key = "KeyError: 'lr'\n"
    assert verdict(SPAWN + key) == ("code_error", True, "code_error")
    # a bare Exception raised by the program itself is still its code error
    own = 'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\nException: \n'
    assert verdict(STEPS + own) == ("code_error", True, "code_error")


@pytest.mark.parametrize("unit", ["Job 41671884", "Step 41671884.0", "Step 41671884.batch"])
def test_slurmstepds_polled_memory_limit_is_the_cause_of_the_cancel_after_it(unit: str) -> None:
    log = (
        STEPS + f"slurmstepd: error: {unit} exceeded memory limit (527765336 > 524288000), "
        "being killed\n"
        "slurmstepd: error: *** JOB 41671884 ON holybigmem06 CANCELLED AT 2018-04-16T10:23:15 ***\n"
    )
    assert verdict(log) == ("host_oom", True, "host_oom_kill")
    # without the limit's report the cancel alone decides: someone cancelled the job
    assert verdict(log.replace(f"slurmstepd: error: {unit}", "note: the job"))[0] == "cancelled"


# -- corpus16 (the eleventh untouched set): CUDA that failed to initialise, said as a warning -----

TOO_OLD = (
    "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA "
    "initialization: The NVIDIA driver on your system is too old (found version 11000). Please "
    "update your GPU driver (Triggered internally at c10/cuda/CUDAFunctions.cpp:108.)\n"
)
NO_DRIVER = TOO_OLD.replace(
    "The NVIDIA driver on your system is too old (found version 11000)",
    "Found no NVIDIA driver on your system",
)


def test_cuda_that_failed_to_initialise_is_the_end_of_a_job_that_shows_nothing_after_it() -> None:
    """torch says so with a UserWarning, and the job goes on without its GPUs: the root cause
    when nothing follows, and of the CUDA error it runs into; a job that trains after it
    survived it, and a CPU job's 'no driver at all' stays noise."""
    assert verdict(TOO_OLD) == ("cuda_driver_mismatch", True, "cuda_init_failed_warning")
    after = TB + "RuntimeError: Attempting to deserialize object on a CUDA device but "
    after += "torch.cuda.is_available() is False.\n"
    assert verdict(TOO_OLD + after)[:2] == ("cuda_driver_mismatch", True)
    assert verdict(TOO_OLD + STEPS + "Training complete.\n") == ("healthy", False, None)
    assert verdict(NO_DRIVER + STEPS + "Training complete.\n") == ("healthy", False, None)


# -- corpus18 and corpus19: detectron2's records, Hydra's appended runs, cuBLAS, Ray's workers ---

D2 = "".join(
    f"[12/20 18:{m:02d}:09 d2.utils.events]:  eta: 19:46:55  iter: {i}  "
    f"total_loss: {10 - i / 999:.3f}\n"
    for m, i in ((10, 4919), (12, 4939), (14, 4959), (16, 4979))
)


def test_a_log_that_ends_on_detectron2s_error_record_failed_there() -> None:
    rec = "ERROR [12/20 18:16:20 d2.engine.train_loop]: evaluation produced no predictions\n"
    assert verdict(D2 + rec) == ("code_error", True, "logged_error_end")
    # its WARNING records are not the end of anything
    warn = "WARNING [12/20 18:16:20 d2.engine.train_loop]: evaluation produced no predictions\n"
    assert verdict(D2 + warn)[:2] == ("healthy", False)


def test_an_exception_announced_but_cut_off_is_a_failure_whose_cause_is_not_in_the_log() -> None:
    """logger.exception("Exception during training:") is followed by the traceback; a log
    that ends on the announcement shows a failure but not its cause."""
    save = "[12/20 18:16:20 fvcore.common.checkpoint]: Saving checkpoint to ./output/model.pth\n"
    cut = "ERROR [12/20 18:16:20 d2.engine.train_loop]: Exception during training:\n"
    assert verdict(D2 + save + cut) == ("unknown", True, "logged_exception_cut")
    full = cut + TB + "OSError: [Errno 28] No space left on device\n"
    assert verdict(D2 + save + full)[:2] == ("disk_full", True)


def test_cublas_that_could_not_create_its_handle_is_not_a_cudnn_failure() -> None:
    err = (
        TB + "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
        "`cublasCreate(handle)`\n"
    )
    assert verdict(STEPS + err) == ("unknown", True, "cublas_handle_failed")
    alloc = err.replace("NOT_INITIALIZED", "ALLOC_FAILED")
    assert verdict(STEPS + alloc)[0] == "cuda_oom"


def test_runs_appended_by_hydras_logger_are_told_apart_by_its_glued_time_stamp() -> None:
    """Hydra writes `[2022-09-23 19:29:09,028][module][LEVEL] - text`: the stamp's closing
    bracket is glued to the next field; the last run decides."""

    def run(day: str, body: str) -> str:
        return (
            f"[2022-{day} 19:29:09,028][src.utils.utils][INFO] - Enforcing tags! <cfg.extras>\n"
            f"[2022-{day} 19:29:09,045][src.utils.utils][INFO] - Printing config tree with Rich!\n"
            f"[2022-{day} 19:29:09,502][__main__][INFO] - Instantiating datamodule <cifar10>\n"
            + body
        )

    failed = run(
        "09-23",
        "[2022-09-23 19:29:09,527][src.utils.utils][ERROR] - \n"
        + TB
        + "TypeError: __init__() got an unexpected keyword 'lin1_size'\n"
        + "[2022-09-23 19:29:09,535][src.utils.utils][INFO] - Closing loggers...\n",
    )
    done = run(  # no progress line: only the run's start tells the runs apart
        "10-15",
        "[2022-10-15 19:40:00,000][__main__][INFO] - Starting training!\n"
        "[2022-10-15 20:03:01,069][__main__][INFO] - Starting testing!\n"
        "[2022-10-15 20:03:13,356][__main__][INFO] - Best ckpt path: ckpts/epoch_000.ckpt\n"
        "[2022-10-15 20:03:13,362][src.utils.utils][INFO] - Closing loggers...\n",
    )
    assert verdict(failed + done) == ("healthy", False, None)
    assert verdict(done + failed)[:2] == ("code_error", True)


def test_ray_workers_output_flushed_after_the_drivers_failure_is_not_progress() -> None:
    driver = (
        'Traceback (most recent call last):\n  File "evaluate.py", line 108, in evaluate\n'
        "    ray.get(p1)\n"
        "AttributeError: 'PPO' object has no attribute 'workers'\n"
    )
    bars = "".join(
        f"\x1b[2m\x1b[36m(pid=69443)\x1b[0m \r  0%|          | {i}/1314000 "
        "[00:01<10:11, 35.8it/s]\n"
        for i in range(4, 244, 4)
    )
    assert verdict(STEPS + driver + bars)[:2] == ("code_error", True)
    # the same bars from the driver itself: the job did go on after that error
    assert verdict(STEPS + driver + bars.replace("\x1b[2m\x1b[36m(pid=69443)\x1b[0m ", ""))[:2] == (
        "healthy",
        False,
    )


# -- corpus20: a loss whose name carries its part ------------------------------------------------


@pytest.mark.parametrize("name", ["loss_net", "loss_G", "loss/total", "train_loss_ce"])
def test_a_named_part_of_the_loss_that_stays_nan_is_a_nan_loss(name: str) -> None:
    rows = "".join(
        f"train iter: {i} {name}: {'nan' if i else '0.9443'} loss_scale: 785.4 norm: nan\n"
        for i in (0, 100, 200)
    )
    assert verdict(rows) == ("nan_loss", True, "nan_loss_logged")
    # the loss scaler's own value is not the loss
    scale = "".join(f"train iter: {i} loss: 0.5 loss_scale: nan\n" for i in (0, 100, 200))
    assert verdict(scale)[:2] == ("healthy", False)
