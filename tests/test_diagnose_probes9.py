"""Principles issue 15's fifth pool of untouched sets (corpus82 to corpus88) taught, each tested
with its siblings on logs written for these tests: a traceback printed as a WARNING/INFO
record's exc_info (the record quotes its exception) is a logged warning, not a crash;
slurmstepd's banner cut off after its node is the scheduler's end with its reason lost; a
program's own words naming permissions; torch's write() EIO; IPython's header naming torch's
OutOfMemoryError; Intel Fortran's Ctrl-C on Windows; wasabi's fail mark and bash's `set -u`
abort ending the log; the deepspeed launcher's ERROR record of the child it killed; gpt-neox's
overflow monitor."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

IMPORT_TB = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/googleapiclient/discovery_cache/__init__.py", line 41, in x\n'
    "    from . import file_cache\n"
    "ImportError: file_cache is unavailable when using oauth2client >= 4.0.0 or google-auth\n"
)
GOES_ON = "I0724 02:39:43.878710 140 tf_logging.py:115] Using config: {'_model_dir': 'gs://b'}\n"

# -- a record's exc_info ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        "W0724 02:39:43.722238 140 __init__.py:44] file_cache is unavailable when using "
        "oauth2client >= 4.0.0 or google-auth\n",
        "WARNING:googleapiclient.discovery_cache:file_cache is unavailable when using "
        "oauth2client >= 4.0.0 or google-auth\n",
        "2024-07-24 02:39:43,722 - INFO - optional cache off: ImportError('file_cache is "
        "unavailable when using oauth2client >= 4.0.0 or google-auth')\n",
    ],
)
def test_the_traceback_a_warning_record_was_logged_with_is_a_logged_warning(record: str) -> None:
    assert verdict(STEPS + record + IMPORT_TB + GOES_ON)[:2] == ("healthy", False)


def test_a_record_that_quotes_nothing_of_the_exception_is_only_the_line_before_a_crash() -> None:
    dep = "WARNING:tensorflow:From train.py:12: The name tf.Session is deprecated.\n"
    assert verdict(STEPS + dep + IMPORT_TB)[:2] == ("code_error", True)


def test_an_error_record_with_its_traceback_stays_a_failure() -> None:
    rec = "2024-07-24 02:39:43,722 - ERROR - file_cache is unavailable when using oauth2client\n"
    assert verdict(STEPS + rec + IMPORT_TB)[:2] == ("code_error", True)


def test_a_logged_warnings_device_memory_line_is_logged_too() -> None:
    oom = "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity)"
    rec = f"WARNING:sampler:batch too large, halving it: OutOfMemoryError('{oom}')\n"
    tb = 'Traceback (most recent call last):\n  File "gen.py", line 9, in step\n    out = m(x)\n'
    tb += f"torch.OutOfMemoryError: {oom}\n"
    assert verdict(STEPS + rec + tb + STEPS[:300])[:2] == ("healthy", False)


# -- the scheduler's banner, cut ----------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "[2026-04-20T03:25:23.011] error: *** STEP 1942963.1 ON",
        "slurmstepd: error: *** JOB 1942963 ON gpu-b07",
    ],
)
def test_a_slurm_banner_cut_after_its_node_is_the_schedulers_end_with_no_reason(
    line: str,
) -> None:
    assert verdict(STEPS + "[after training is done] datetime: 2026-04-20\n" + line + "\n")[:3] == (
        "unknown",
        True,
        "scheduler_banner_cut",
    )


def test_a_whole_banner_keeps_its_own_reason() -> None:
    line = "slurmstepd: error: *** STEP 4711.0 ON gpu12 CANCELLED AT 2026-04-20T03:25:23 DUE TO"
    assert verdict(STEPS + line + " TIME LIMIT ***\n")[0] == "slurm_time_limit"


# -- the tools' words ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, category",
    [
        ("Error creating log directory. Check permissions! Exiting...", "permission_denied"),
        ("RuntimeError: write(): fd 29 failed with Input/output error", "node_failure"),
        ("forrtl: error (200): program aborting due to control-C event", "cancelled"),
        (
            "Exception: Skipped 50 iterations in a row due to Overflow - Exiting training.",
            "nan_loss",
        ),
    ],
)
def test_the_tools_words_name_the_cause(line: str, category: str) -> None:
    assert verdict(STEPS + line + "\n")[:2] == (category, True)


def test_advice_to_check_permissions_is_no_failure() -> None:
    tip = "Tip: check permissions of the output directory before a long run\n"
    assert verdict(tip + STEPS + "Training complete.\n")[:2] == ("healthy", False)


def test_ipythons_header_naming_torchs_out_of_memory_is_device_memory() -> None:
    log = STEPS + "-" * 75 + "\n"
    log += "OutOfMemoryError                          Traceback (most recent call last)\n"
    log += "/tmp/ipykernel_36/773422404.py in <cell line: 0>()\n"
    log += "----> 1 trainer_stats = trainer.train()\n"
    assert verdict(log)[:2] == ("cuda_oom", True)
    other = log.replace("OutOfMemoryError      ", "KeyError              ")
    assert verdict(other)[:2] == ("code_error", True)


@pytest.mark.parametrize(
    "end",
    [
        "\x1b[38;5;1m[x] Invalid config override 'paths.dev': name should start with --\x1b[0m",
        "✘ Can't find model 'en_core_web_sm'. It doesn't seem to be a Python package",
        "/data/run/run_deepspeed.sh: line 9: PYTHONPATH: unbound variable",
    ],
)
def test_a_fail_mark_or_an_unbound_variable_ending_the_log_is_the_programs_error(
    end: str,
) -> None:
    assert verdict("nohup: ignoring input\n" + end + "\n")[:2] == ("code_error", True)


def test_an_unbound_variable_the_job_went_on_after_is_survived() -> None:
    line = "/opt/conda/etc/profile.d/conda.sh: line 55: PS1: unbound variable\n"
    assert verdict(line + STEPS + "Training complete.\n")[:2] == ("healthy", False)


def test_the_deepspeed_launchers_error_record_of_its_killed_child_is_its_report() -> None:
    log = STEPS + "[2023-04-07 13:09:33,201] [INFO] [launch.py:318:sigkill_handler] Killing "
    log += "subprocess 80\n[2023-04-07 13:09:33,220] [ERROR] [launch.py:324:sigkill_handler] "
    log += "['/usr/bin/python3', '-u', 'run_clm.py', '--local_rank=0', '--deepspeed'\n"
    assert verdict(log)[:3] == ("unknown", True, "child_failed")
    assert verdict(log.replace("'--deepspeed'", "'x'] exits with return code = -9"))[0] == (
        "host_oom"
    )
    # a child's own traceback above it is still the cause
    assert verdict(STEPS + TB + "KeyError: 'labels'\n" + log[len(STEPS) :])[0] == "code_error"


# -- an import error's message printed alone ----------------------------------------------------

UNABLE = (
    "2024-07-09 13:31:30.053565: Unable to plot network architecture:\n"
    "2024-07-09 13:31:30.061743: No module named 'hiddenlayer'\n"
)


def test_an_import_errors_message_printed_alone_is_survived_when_the_job_moves_on() -> None:
    log = STEPS + UNABLE + "2024-07-09 13:31:30.162810: Epoch 0\n"
    log += "".join(f"2024-07-09 13:35:54.72742{i}: train_loss nan\n" for i in range(3))
    assert verdict(log)[:2] == ("nan_loss", True)
    assert verdict(STEPS + UNABLE + "2024-07-09 13:31:30.162810: Epoch 0\n")[:2] == (
        "healthy",
        False,
    )


def test_an_import_errors_message_the_log_ends_with_is_still_the_cause() -> None:
    assert verdict(STEPS + UNABLE)[:2] == ("module_not_found", True)
    raised = STEPS + "ModuleNotFoundError: No module named 'hiddenlayer'\nEpoch 3\n"
    assert verdict(raised)[:2] == ("module_not_found", True)


# -- the sixth pool: a type named alone, an HTTP error in the Hub's frames ----------------------


def test_ray_naming_torchs_out_of_memory_as_the_tasks_type_is_device_memory() -> None:
    log = STEPS + 'Traceback (most recent call last):\n  File "main_ppo.py", line 9, in <module>\n'
    log += "ray.exceptions.RayTaskError(OutOfMemoryError): ray::main_task() (pid=508648, "
    log += 'ip=10.1.200.6)\n  File "/w/verl/trainer/ppo/ray_trainer.py", line 901, in fit\n'
    assert verdict(log)[:2] == ("cuda_oom", True)
    other = log.replace("(OutOfMemoryError)", "(KeyError)")
    assert verdict(other)[:2] == ("code_error", True)


HUB_401 = (
    "Traceback (most recent call last):\n"
    '  File "/opt/py/site-packages/huggingface_hub/utils/_errors.py", line 304, in '
    "hf_raise_for_status\n    response.raise_for_status()\n"
    '  File "/opt/py/site-packages/requests/models.py", line 1024, in raise_for_status\n'
    "    raise HTTPError(http_error_msg, response=self)\n"
    "requests.exceptions.HTTPError: 401 Client Error:\n"
)


def test_an_http_error_raised_in_the_hubs_code_is_the_hub() -> None:
    assert verdict(STEPS + HUB_401)[:2] == ("hf_hub_error", True)


def test_an_http_error_raised_elsewhere_is_not_the_hub() -> None:
    other = HUB_401.replace("huggingface_hub/utils/_errors.py", "wandb/sdk/internal_api.py")
    assert verdict(STEPS + other)[0] != "hf_hub_error"
