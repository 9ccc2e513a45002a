"""Sub-runs that end while the job goes on, and the level stamps that say a record was only
reported: an Optuna study logs a failed trial at WARNING (`[W 2024-03-01 10:05:00,000]`, the
level letter and timestamp in brackets that Optuna, Tornado and Jupyter write) and goes on to
the next trial; torchelastic's agent says when every local worker exited 0. Each written from
the tools' own messages, not from a corpus."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, verdict

from labctl.diagnose.signs import level

OOM = "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity)"
FAILED = (
    "[W 2024-03-01 10:05:00,000] Trial 4 failed with parameters: {'lr': 0.1} because of the "
    f"following error: OutOfMemoryError('{OOM}').\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/py/site-packages/optuna/study/_optimize.py", line 200, in _run_trial\n'
    "    value_or_values = func(trial)\n"
    '  File "tune.py", line 40, in objective\n'
    "    loss.backward()\n"
    f"torch.OutOfMemoryError: {OOM}\n"
    "[W 2024-03-01 10:05:00,001] Trial 4 failed with value None.\n"
)
FINISHED = (
    "[I 2024-03-01 10:20:00,000] Trial 5 finished with value: 0.799 and parameters: "
    "{'lr': 0.0003}. Best is trial 3 with value: 0.812.\n"
)


@pytest.mark.parametrize(
    "prefix, name",
    [
        ("[W 2024-03-01 10:05:00,000] Trial 4 failed", "warning"),
        ("[I 2024-03-01 10:05:00,000] Trial 4 finished", "info"),
        ("[E 2024-03-01 10:05:00,000] Trial 4", "error"),
        ("[W 240301 10:00:00 web:2250] ", "warning"),
        ("[E 10:00:00.123 ServerApp] Uncaught exception", "error"),
        ("[D 10:00:00.123 ServerApp] ", "debug"),
        ("[C 2024-03-01 10:05:00,000] ", "critical"),
    ],
)
def test_a_bracketed_level_letter_with_its_timestamp_is_a_level(prefix: str, name: str) -> None:
    assert level(prefix.encode()) == name


def test_a_bracketed_letter_without_a_timestamp_is_not_read_as_this_stamp() -> None:
    assert level(b"[W x] ") is None and level(b"[Weights 10:00:00] ") is None


def test_a_trial_that_failed_is_survived_when_the_next_trial_finishes() -> None:
    # the study caught the error (`catch=`) and ran the next trial: one line later, not 20
    assert verdict(STEPS + FAILED + FINISHED)[:2] == ("healthy", False)
    assert verdict(STEPS + FAILED + "[I 2024-03-01 10:21:00,000] Trial 5 pruned. \n")[:2] == (
        "healthy",
        False,
    )


RERAISED = (
    'Traceback (most recent call last):\n  File "tune.py", line 90, in <module>\n'
    f"    study.optimize(objective)\ntorch.OutOfMemoryError: {OOM}\n"
)


def test_a_trial_that_failed_and_ended_the_study_is_the_cause() -> None:
    # Optuna re-raises what no `catch=` names: the study, and the job, end on it
    assert verdict(STEPS + FAILED + RERAISED)[:2] == ("cuda_oom", True)


def test_the_failed_trials_records_alone_are_logged_warnings() -> None:
    # the WARNING record and the traceback it was logged with (it quotes the exception): what
    # ended the job, if anything did, is not in the log
    assert verdict(STEPS + FAILED)[:2] == ("healthy", False)


def test_a_trial_finished_before_the_failure_does_not_excuse_it() -> None:
    assert verdict(STEPS + FINISHED + FAILED + RERAISED)[:2] == ("cuda_oom", True)


def test_torchelastics_succeeded_worker_group_is_a_success() -> None:
    log = STEPS + (
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1234 closing "
        "signal SIGTERM\n"
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully "
        "finished. Waiting 300 seconds for other agents to finish.\n"
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished "
        "(WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish\n"
    )
    assert verdict(log)[:2] == ("healthy", False)


def test_torchelastics_failed_worker_group_is_not_a_success() -> None:
    log = STEPS + 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
    log += "    main()\nKeyError: 'labels'\n"
    log += "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0"
    log += " (pid: 11) of binary: /usr/bin/python\n"
    log += "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished "
    log += "(WorkerState.FAILED).\n"
    assert verdict(log)[:2] == ("code_error", True)
