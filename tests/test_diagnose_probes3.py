"""Each class of miss the twenty-sixth and twenty-seventh untouched sets (corpus26, corpus27)
showed, as a principle that also catches its siblings: srun's teardown of a step whose task
failed is not a person's cancel; an unpickling failure inside multiprocessing's spawn bootstrap
is a child that lost its parent, not a checkpoint; batchgenerators' dead background workers;
a launcher's own time limit; PaddlePaddle's GPU allocator; and a log appended to by a program
relaunched after a failure, whose relaunch logs something else second. The logs are written
for these tests, modelled on what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

# -- srun's teardown of a step whose task failed ------------------------------------------------

TEARDOWN = (
    "srun: error: gpu-a17: task 5: Exited with exit code 1\n"
    "srun: launch/slurm: _step_signal: Terminating StepId=4711.0\n"
    "slurmstepd: error: *** STEP 4711.0 ON gpu-a17 CANCELLED AT 2024-07-14T08:00:36 ***\n"
    "srun: error: gpu-a17: tasks 3,7: Killed\n"
    "srun: error: gpu-b02: tasks 9-10,12-15: Killed\n"
    "srun: Force Terminated StepId=4711.0\n"
)


def test_a_step_srun_ended_after_a_task_failed_was_not_cancelled_by_a_person() -> None:
    assert verdict(STEPS + TEARDOWN) == ("unknown", True, "srun_step_teardown")


def test_the_failing_tasks_own_error_before_the_teardown_is_the_cause() -> None:
    log = STEPS + TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert verdict(log + TEARDOWN)[:2] == ("cuda_oom", True)


def test_a_bare_step_cancel_with_no_failed_task_is_still_a_cancel() -> None:
    banner = "slurmstepd: error: *** STEP 4711.0 ON gpu-a17 CANCELLED AT 2024-07-14T08:00:36 ***\n"
    assert verdict(STEPS + banner)[:2] == ("cancelled", True)


# -- a spawned child that lost its parent ---------------------------------------------------------

SPAWN = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    '  File "C:\\Python311\\Lib\\multiprocessing\\spawn.py", line 120, in spawn_main\n'
    "    exitcode = _main(fd, parent_sentinel)\n"
    '  File "C:\\Python311\\Lib\\multiprocessing\\spawn.py", line 130, in _main\n'
    "    self = reduction.pickle.load(from_parent)\n"
)


@pytest.mark.parametrize(
    "line", ["_pickle.UnpicklingError: pickle data was truncated", "EOFError: Ran out of input"]
)
def test_an_unpickling_failure_in_spawns_bootstrap_is_not_a_checkpoint(line: str) -> None:
    assert verdict(SPAWN + line + "\n") == ("unknown", True, "spawn_start_data_lost")


def test_the_same_error_loading_a_checkpoint_is_still_a_checkpoint() -> None:
    load = TB + '  File "/work/run/train.py", line 40, in load\n    torch.load(path)\n'
    assert verdict(load + "_pickle.UnpicklingError: pickle data was truncated\n")[:2] == (
        "checkpoint_load_error",
        True,
    )


# -- the library's own words ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "category"),
    [
        (
            "RuntimeError: One or more background workers are no longer alive. Exiting. "
            "Please check the print statements above for the actual error message",
            "dataloader_worker_killed",
        ),
        (
            "The user-provided time limit for job execution has been reached:\n\n"
            "  Timeout: 180 seconds\n\nThe job will now be aborted.",
            "slurm_time_limit",
        ),
        (
            "W0713 16:34:31.576385   221 operator.cc:242] roi_align raises an exception "
            "paddle::memory::allocation::BadAlloc, ResourceExhaustedError: \n\n"
            "Out of memory error on GPU 0. Cannot allocate 48.473877MB memory on GPU 0, "
            "7.900513GB memory has been allocated and available memory is only 29.437500MB.",
            "cuda_oom",
        ),
    ],
)
def test_a_librarys_own_words_for_its_failure(line: str, category: str) -> None:
    assert verdict(STEPS + line + "\n")[:2] == (category, True)


# -- a program relaunched into the same log after a failure ---------------------------------------


def _record(t: str, level: str, text: str) -> str:
    return f"2025-01-04 {t},100 - {level} - {text}\n"


def test_a_relaunch_after_a_failure_starts_a_new_run_even_if_it_logs_otherwise() -> None:
    first = _record("17:18:04", "INFO", "Starting the fine-tuning process...")
    first += _record("17:18:04", "INFO", "Model config: type=llama, 4bit=True")
    first += _record(
        "17:18:06",
        "ERROR",
        "Could not load the tokenizer: Can't load tokenizer for 'org/model'. If you were "
        "trying to load it from 'https://huggingface.co/models', make sure you don't have a "
        "local directory with the same name.",
    )
    # the relaunch: the same opening record, then something else (the code changed)
    last = _record("17:23:35", "INFO", "Starting the fine-tuning process...")
    last += _record("17:23:35", "INFO", "Dataset loaded. Size: 98")
    # a run that shows no progress counter and no success words a parser knows
    last += _record("17:23:36", "INFO", "Formatting the examples for the assistant template")
    last += _record("17:23:40", "INFO", "Configuring the adapters and the trainer")
    last += _record("18:30:31", "INFO", "Tudo pronto: modelo salvo em ./saida")
    assert verdict(first + last)[:2] == ("healthy", False)
    # without the relaunch, the failure ends the log
    assert verdict(first)[:2] == ("hf_hub_error", True)


def test_the_opening_record_recurring_within_a_run_is_not_a_relaunch() -> None:
    log = _record("10:00:00", "INFO", "Starting the evaluation loop now")
    log += _record("10:00:00", "INFO", "Loaded 500 examples")
    log += _record("10:00:05", "INFO", "step 1 loss 0.5")
    log += _record("10:01:00", "INFO", "Starting the evaluation loop now")  # no failure before
    log += _record("10:01:01", "INFO", "Evaluating 500 examples")
    log += TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert verdict(log)[:2] == ("cuda_oom", True)


# -- from the thirtieth untouched set (corpus30) ------------------------------------------------

LUA_FRAMES = (
    "stack traceback:\n"
    "\t[C]: in function 'write'\n"
    "\t/opt/torch/share/lua/5.1/torch/File.lua:210: in function 'writeObject'\n"
)


def test_a_lua_programs_uncaught_error_is_the_programs_failure() -> None:
    log = STEPS + "lua: train.lua:88: attempt to index a nil value (field 'model')\n" + LUA_FRAMES
    assert verdict(log) == ("code_error", True, "runtime_error_report")


def test_torch7s_short_write_of_a_checkpoint_is_a_full_disk() -> None:
    log = STEPS + "saving checkpoint to cv/lm_lstm_epoch0.10_1.2833.t7\n"
    log += (
        "/opt/torch/bin/luajit: /opt/torch/share/lua/5.1/torch/File.lua:210: write error: "
        "wrote 39776036 blocks instead of 41251350 at /tmp/torch7/lib/TH/THDiskFile.c:340\n"
    )
    assert verdict(log + LUA_FRAMES) == ("disk_full", True, "disk_full")


NET = (
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='docs.google.com', "
    "port=443): Max retries exceeded with url: /uc?export=download&id=15S (Caused by "
    "NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to "
    "establish a new connection: [Errno 110] Connection timed out'))\n"
)


def test_a_download_that_could_not_reach_its_host_is_not_a_bug_in_the_code() -> None:
    assert verdict(TB + NET) == ("unknown", True, "network_unreachable")


def test_a_connection_error_a_download_loop_logged_and_went_past_was_handled() -> None:
    handled = "Recovering from connection error [" + NET.split(": ", 1)[1].rstrip("\n") + "]"
    log = "".join(f"downloading month {m}...\n{handled}, attempt 1 of 500\n" for m in range(1, 13))
    log += "all downloads done\n"
    assert verdict(log)[:2] == ("healthy", False)
