"""Root-cause ranking: the earliest fatal event that explains the rest, wrappers never win,
scheduler state beats log text, harmless look-alikes stay healthy."""

from __future__ import annotations

from typing import Any

from labctl.diagnose import JobState, diagnose_text
from labctl.redact import Redactor

TB = 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    main()\n'
OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
    "GPU 3 has a total capacity of 79.15 GiB of which 1.25 MiB is free."
)
WATCHDOG = (
    "[rank{r}]:[E ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600041 milliseconds before timing out."
)
TRAINING = "".join(
    f"{{'loss': {1.5 - i / 1000:.4f}, 'grad_norm': 0.8, 'learning_rate': 2e-05, "
    f"'epoch': {i / 100:.2f}}}\n"
    for i in range(50)
)


def also(d: dict[str, Any]) -> dict[str, str]:
    return {a["catalog_id"]: a["why"] for a in d["also_matched"]}


def test_gpu_oom_is_not_host_memory_error() -> None:
    d = diagnose_text(TRAINING + TB + "[rank3]: " + OOM + "\n")
    assert d["category"] == "cuda_oom" and d["exception_type"] == "torch.OutOfMemoryError"
    assert d["action"] == {
        "type": "scale_arg", "arg": "per_device_train_batch_size", "factor": 0.5, "min": 1,
    }  # fmt: skip
    assert diagnose_text(TRAINING + TB + "MemoryError\n")["category"] == "host_oom"


def test_oom_on_one_rank_explains_watchdog_on_the_others() -> None:
    before = "".join(WATCHDOG.format(r=r) + "\n" for r in (0, 1, 2))
    for log in (TRAINING + TB + "[rank3]: " + OOM + "\n" + before, TRAINING + before + OOM + "\n"):
        d = diagnose_text(log)
        assert d["category"] == "cuda_oom", d["also_matched"]
        assert also(d)["nccl_timeout"].startswith("explained by cuda_oom")


def test_watchdog_alone_is_nccl_timeout() -> None:
    d = diagnose_text(TRAINING + WATCHDOG.format(r=0) + "\n")
    assert d["category"] == "nccl_timeout" and d["retryable"] is True


def test_child_failed_wrapper_never_wins_over_the_worker_error() -> None:
    wrapper = (
        "E0101 12:00:00.000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed "
        "(exitcode: 1) local_rank: 0 (pid: 2930) of binary: /usr/bin/python3\n"
        'Traceback (most recent call last):\n  File "/usr/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
    )
    worker = TB + "ModuleNotFoundError: No module named 'cv2'\n"
    d = diagnose_text(TRAINING + worker + wrapper)
    assert d["category"] == "module_not_found" and d["title"] == "Missing Python module cv2"
    assert d["action"]["module"] == "cv2" and d["action"]["package"] == "opencv-python"
    assert also(d)["child_failed"].startswith("wrapper")
    alone = diagnose_text(wrapper)
    assert alone["category"] == "unknown" and alone["catalog_id"] == "child_failed"
    assert alone["confidence"] < 0.5 and alone["fingerprint"]


def test_chained_traceback_first_exception_is_the_root() -> None:
    log = (
        TB + "OSError: [Errno 28] No space left on device: '/ckpt/run1/checkpoint-500'\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        + TB
        + "RuntimeError: Failed to save the checkpoint\n"
    )
    d = diagnose_text(TRAINING + log)
    assert d["category"] == "disk_full" and d["action"] == {"type": "prune_disk"}
    assert "code_error" in also(d)


def test_code_error_reports_the_exception_type() -> None:
    d = diagnose_text(TRAINING + TB + "[rank1]: KeyError: 'input_ids'\n")
    assert d["category"] == "code_error" and d["exception_type"] == "KeyError"
    assert d["title"] == "Python exception in user code: KeyError"
    odd = diagnose_text(TRAINING + TB + "StopIteration\n")  # not an *Error name: from the traceback
    assert odd["category"] == "code_error" and odd["exception_type"] == "StopIteration"
    assert odd["evidence"][0]["origin"] == "traceback"


def test_deprecation_warning_with_error_is_healthy() -> None:
    log = (
        TRAINING
        + (
            "/opt/venv/lib/python3.11/site-packages/transformers/training_args.py:1525: "
            "FutureWarning: "
            "`evaluation_strategy` is deprecated and will raise an error in version 4.46\n"
            "  warnings.warn(\n"
            "DeprecationWarning: this will be an error in a future version\n"
        )
        + TRAINING
    )
    d = diagnose_text(log)
    assert d["category"] == "healthy" and d["failed"] is False and d["fingerprint"] is None


def test_harmless_nan_in_a_config_dump_is_healthy() -> None:
    log = (
        "config: {'lr': 2e-05, 'nan_to_num': 0.0, 'skip_nan_loss': True, 'loss_scale': nan}\n"
        + TRAINING
        + "{'loss': nan, 'grad_norm': nan, 'learning_rate': 2e-05, 'epoch': 0.5}\n"  # one AMP step
        + TRAINING
    )
    d = diagnose_text(log)
    assert d["category"] == "healthy"
    assert "needs 2" in also(d)["nan_loss_logged"]


def test_repeated_nan_loss_is_nan_loss() -> None:
    nan = "".join(f"{{'loss': nan, 'grad_norm': nan, 'epoch': {i / 100:.2f}}}\n" for i in range(5))
    d = diagnose_text(TRAINING + nan)
    assert d["category"] == "nan_loss" and len(d["evidence"]) == 3


def test_time_limit_line_followed_by_healthy_looking_lines() -> None:
    log = (
        TRAINING + "slurmstepd: error: *** JOB 4711 ON gpu-a17 CANCELLED AT 2024-05-01T12:00:00 "
        "DUE TO TIME LIMIT ***\n"
        + TRAINING
        + "Bypassing SIGTERM\nKeyboardInterrupt\n"
        + TB
        + "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Terminated.\n"
    )
    d = diagnose_text(log)
    assert d["category"] == "slurm_time_limit" and d["action"]["resume"] is True
    why = also(d)
    assert why["dataloader_worker_killed"].startswith("explained by slurm_time_limit")
    assert why["keyboard_interrupt"].startswith("explained by slurm_time_limit")


def test_scheduler_state_beats_log_text() -> None:
    log = TRAINING + TB + "ValueError: bad batch\n"
    d = diagnose_text(log, sched={"state": "TIMEOUT", "exit_code": "0:15"})
    assert d["category"] == "slurm_time_limit" and d["decided_by"] == "scheduler"
    assert "scheduler state TIMEOUT is authoritative" in also(d)["code_error"]
    assert d["evidence"][-1]["origin"] == "scheduler"
    ok = diagnose_text(log, sched=JobState(state="COMPLETED", exit_code=0))
    assert ok["category"] == "healthy" and ok["decided_by"] == "scheduler"
    oom = diagnose_text(TRAINING, sched={"state": "OUT_OF_MEMORY"})
    assert oom["category"] == "host_oom" and oom["catalog_id"] == "host_oom_kill"


def test_exit_codes_are_weighted_evidence() -> None:
    weak = diagnose_text(TRAINING, sched={"state": "FAILED", "exit_code": 137})
    assert weak["category"] == "host_oom" and weak["catalog_id"] == "host_oom_weak"
    assert weak["confidence"] < 0.5 and weak["decided_by"] == "exit_code"
    strong = diagnose_text(
        TRAINING + "Killed\nslurmstepd: error: Detected 1 oom_kill event in StepId=4711.batch.\n"
    )
    assert strong["catalog_id"] == "host_oom_kill"
    assert also(strong)["host_oom_weak"].startswith("explained by host_oom_kill")
    assert diagnose_text(TRAINING, sched={"exit_code": 139})["category"] == "segfault"


def test_hung_is_decided_from_metadata() -> None:
    sched = {"state": "RUNNING", "log_age": 7200, "hung_after": 3600}
    d = diagnose_text(TRAINING, sched=sched)
    assert d["category"] == "hung_no_output" and d["decided_by"] == "hung"
    fresh = diagnose_text(TRAINING, sched={"state": "RUNNING", "log_age": 60})
    assert fresh["category"] == "healthy"


def test_requeue_is_an_event_not_a_failure() -> None:
    d = diagnose_text(
        TRAINING
        + "submitit INFO (2024-05-01 12:00:00,000) - Requeued job 4711 (3 remaining timeouts)\n"
    )
    assert d["category"] == "healthy" and d["requeued"] is True and d["events"]
    pre = diagnose_text(
        TRAINING + "slurmstepd: error: *** JOB 4711 ON gpu-a17 CANCELLED AT 2024-05-01T12:00:00 "
        "DUE TO PREEMPTION ***\n"
        + "submitit INFO (2024-05-01 12:00:01,000) - Requeued job 4711 (3 remaining timeouts)\n"
    )
    assert pre["category"] == "preemption" and pre["requeued"] is True


def test_unknown_keeps_the_last_traceback_and_a_fingerprint() -> None:
    truncated = TRAINING + TB
    d = diagnose_text(truncated, sched={"state": "FAILED", "exit_code": 1})
    assert d["category"] == "unknown" and d["catalog_id"] == "unknown" and d["fingerprint"]
    assert d["last_traceback"]["excerpt"][0].startswith("Traceback")
    quiet = diagnose_text(TRAINING, sched={"state": "FAILED", "exit_code": 1})
    assert quiet["category"] == "unknown" and quiet["failed"] is True
    assert [e["origin"] for e in quiet["evidence"]] == ["scheduler", "tail"]
    assert quiet["evidence"][0]["text"] == "scheduler: state FAILED, exit code 1"


def test_handled_exception_long_before_the_crash_is_not_the_root() -> None:
    handled = TB + "requests.exceptions.ReadTimeout: read timed out\n"
    filler = TRAINING * 60  # 3000 lines of training after the handled error
    d = diagnose_text(handled + filler + TB + "IndexError: list index out of range\n")
    assert d["exception_type"] == "IndexError" and d["evidence"][0]["line_from_end"] == 1
    retried = "OSError: We couldn't connect to 'https://huggingface.co' to load this file\n"
    d = diagnose_text(retried + filler + TB + "IndexError: list index out of range\n")
    assert d["category"] == "code_error"
    assert also(d)["hf_hub_connection"].startswith("survived")


def test_exception_ignored_at_shutdown_is_healthy() -> None:
    log = TRAINING + (
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f71>\n"
        + TB
        + "AssertionError: can only test a child process\n"
    )
    assert diagnose_text(log)["category"] == "healthy"


def test_message_continuation_prefers_the_specific_line() -> None:
    log = TB + (
        "RuntimeError: Failed to import trl.trainer because of the following error "
        "(look up to see its traceback):\n"
        "/opt/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c10\n"
    )
    assert diagnose_text(log)["catalog_id"] == "shared_library_missing"


def test_evidence_is_redacted_capped_and_located() -> None:
    token = "hf_" + "a1B2" * 8
    log = TRAINING + TB + f"ValueError: bad token {token} " + "x" * 2000 + "\n"
    d = diagnose_text(log, redactor=Redactor())
    ev = d["evidence"][0]
    assert token not in ev["text"] and "[REDACTED:hf_token]" in ev["text"]
    assert len(ev["text"]) <= 400
    assert ev["line"] == 54 and ev["line_from_end"] == 1
    assert ev["before"][-1] == "    main()"


def test_source_lines_quoted_in_a_traceback_are_not_events() -> None:
    log = TRAINING + (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in step\n'
        '    if "CUDA out of memory" in str(err):  # No space left on device handled below\n'
        "ValueError: batch has 0 samples\n"
    )
    d = diagnose_text(log)
    assert d["category"] == "code_error" and d["exception_type"] == "ValueError"


def test_exception_type_in_logger_wrapped_lines() -> None:
    a = diagnose_text(
        "ERROR: an <class 'RuntimeError'> error occurred in the train loop: "
        "RuntimeError('CUDA out of memory. Tried to allocate 20.00 MiB')\n"
    )
    assert a["category"] == "cuda_oom" and a["exception_type"] == "RuntimeError"
    b = diagnose_text(
        TB
        + "AssertionError: \nThe NVIDIA driver on your system is too old (found version 10010).\n"
    )
    assert b["category"] == "cuda_driver_mismatch" and b["exception_type"] == "AssertionError"


def test_traceback_pasted_with_uniform_indentation() -> None:
    log = (
        "        Traceback (most recent call last):\n"
        '        File "scripts/train.py", line 8, in <module>\n'
        "        from mypkg.main import run\n"
        "        ModuleNotFoundError: No module named 'mypkg'\n"
    )
    d = diagnose_text(log)
    assert d["category"] == "module_not_found" and d["action"]["module"] == "mypkg"


def test_worknccl_description_is_not_timeout_evidence() -> None:
    d = diagnose_text(
        "Collective WorkNCCL(SeqNum=7, OpType=BROADCAST, Timeout(ms)=600000) raised the following "
        "async exception: NCCL error: unhandled system error, NCCL version 2.21.5\n"
    )
    assert d["category"] == "nccl_error"


def test_cpp_exception_type_from_the_terminate_banner() -> None:
    cuda = diagnose_text(
        TRAINING + "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  CUDA error: an illegal memory access was encountered\n"
        "Aborted (core dumped)\n"
    )
    assert cuda["category"] == "segfault" and cuda["exception_type"] == "c10::Error"
    alloc = diagnose_text(
        "terminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\n"
    )
    assert alloc["category"] == "host_oom" and alloc["exception_type"] == "std::bad_alloc"
    # same failure, other run: same type, same fingerprint; another C++ type: another one
    again = diagnose_text(
        "[rank1]: terminate called after throwing an instance of 'std::bad_alloc'\n"
        "[rank1]:   what():  std::bad_alloc\n"
    )
    assert again["fingerprint"] == alloc["fingerprint"]
    other = diagnose_text(
        "terminate called after throwing an instance of 'std::length_error'\n"
        "  what():  std::bad_alloc\n"
    )
    assert other["exception_type"] == "std::length_error"
    assert other["fingerprint"] != alloc["fingerprint"]
