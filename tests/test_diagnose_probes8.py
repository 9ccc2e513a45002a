"""Principles issue 15's fourth pool of untouched sets (corpus73 to corpus81) taught, each tested
with its siblings on logs written for these tests: a phase's "process finished" is a success; the
runtimes' and tools' own words for a missing package (Julia), a framework's fatal error (Darknet),
Perl's die and a script's failure mark at the end of the log; a training loop's own report of a
Ctrl-C, and a launcher killing its children because of one; a loss abbreviated `L`; a glog CHECK
of a CUDA call (Caffe) that names a kernel not built for the GPU; and one fingerprint for every
report of an interrupt."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, verdict

from labctl.diagnose import diagnose_text

LOGGED_OOM = "2025-08-22 14:04:49,973 - ERROR - CUDA out of memory in epoch 1. Training stopped.\n"
REPORT = "".join(f"2025-08-22 18:29:{i:02d},000 - INFO - Saved run {i} report\n" for i in range(8))

# -- a phase's own "process/run/pipeline finished" ---------------------------------------------


@pytest.mark.parametrize(
    "end",
    [
        "2025-08-22 18:29:26,027 - INFO - Testing process finished.",
        "Training run completed successfully!",
        "[INFO] Evaluation pipeline finished",
        "Inference job done.",
    ],
)
def test_a_phases_process_finished_is_a_success(end: str) -> None:
    # an earlier attempt's logged OOM, then a run that got to its end
    assert verdict(STEPS + LOGGED_OOM + REPORT + end + "\n")[:2] == ("healthy", False)


@pytest.mark.parametrize(
    "end",
    [
        "Training process failed.",
        "Testing process finished with errors",
        "The training process has not finished",
    ],
)
def test_a_phases_failure_or_unfinished_run_is_no_success(end: str) -> None:
    assert verdict(STEPS + LOGGED_OOM + REPORT + end + "\n")[1] is True


# -- the other runtimes' and tools' words -------------------------------------------------------


def test_julias_missing_package_is_a_missing_module() -> None:
    log = "ERROR: LoadError: ArgumentError: Package Lux not found in current path.\n"
    log += '- Run `import Pkg; Pkg.add("Lux")` to install the Lux package.\nStacktrace:\n'
    log += " [1] macro expansion\n   @ ./loading.jl:2223 [inlined]\n"
    log += "in expression starting at /home/u/model/simple.jl:1\n"
    assert verdict(log)[:2] == ("module_not_found", True)


def test_darknets_error_is_the_programs_error() -> None:
    log = STEPS + " 105 conv     18       1 x 1/ 1    104 x 104 x 256 ->  104 x 104 x  18\n"
    log += " 106 yolo\nDarknet error location: ./src/parser.c, parse_yolo(), line #458\n"
    log += "Error: l.outputs == params.inputs, filters= in the [convolutional]-layer doesn't "
    log += "correspond to classes= or mask= in [yolo]-layer: Success\nbacktrace (3 entries)\n"
    log += "1/3: ./darknet(log_backtrace+0x38) [0x5c6c92b5a1f8]\n"
    log += "2/3: ./darknet(error+0x3d) [0x5c6c92b5a2dd]\n3/3: ./darknet(main+0x326) [0x5c6c9]\n"
    assert verdict(log)[:2] == ("code_error", True)


@pytest.mark.parametrize(
    "end",
    [
        "✗ Evaluation failed: nan",
        "❌ Training failed: CUDA device not found",
        "You MUST specify the parameter -external-bin-dir at /opt/moses/train-model.perl line 371.",
        "Died at scripts/prepare.pl line 88.",
    ],
)
def test_a_scripts_failure_mark_or_perls_die_ending_the_log_is_a_failure(end: str) -> None:
    assert verdict(STEPS + "Evaluating and comparing models...\n" + end + "\n")[:2] == (
        "code_error",
        True,
    )


def test_the_same_words_with_the_job_going_on_after_them_are_survived() -> None:
    perl_warn = "Use of uninitialized value $x in concatenation at tokenize.pl line 12.\n"
    assert verdict(perl_warn + STEPS + "Training complete.\n")[:2] == ("healthy", False)
    mark = "✗ Failed to train U-Net: shapes do not match\n"
    assert verdict(STEPS + mark + STEPS + "Training complete.\n")[:2] == ("healthy", False)
    assert verdict(STEPS + "✓ Evaluation done, no error\n")[:2] == ("healthy", False)


# -- an interrupt, in a loop's words and a launcher's -------------------------------------------


@pytest.mark.parametrize(
    "end",
    [
        "Training interrupted by user",
        "21:58:02 | train | INFO | Run stopped by user",
        "[!] Job cancelled by the user",
    ],
)
def test_a_loops_report_of_a_ctrl_c_is_a_cancel(end: str) -> None:
    assert verdict(STEPS + end + "\n")[:2] == ("cancelled", True)


def test_advice_about_an_interrupt_is_not_one() -> None:
    line = "Note: this run can be interrupted by user at any time; a checkpoint is kept\n"
    assert verdict(STEPS + line + STEPS[:200])[:2] == ("healthy", False)


DS_SIGINT = (
    "[2025-12-10 12:07:07,831] [INFO] [launch.py:335:sigkill_handler] Killing subprocess 3757\n"
    "[2025-12-10 12:07:08,014] [INFO] [launch.py:344:sigkill_handler] Main process received "
    "SIGINT, exiting\n"
    "Traceback (most recent call last):\n"
    '  File "/venv/bin/deepspeed", line 6, in <module>\n    main()\n'
    '  File "/venv/lib/python3.13/site-packages/deepspeed/launcher/runner.py", line 646, in main\n'
    "    result.wait()\n"
    '  File "/usr/lib/python3.13/subprocess.py", line 2060, in _wait\n    time.sleep(delay)\n'
    "KeyboardInterrupt\n"
)


def test_a_launcher_that_killed_its_children_on_a_ctrl_c_was_cancelled() -> None:
    assert verdict(STEPS + DS_SIGINT)[:2] == ("cancelled", True)
    # a child that failed on its own is still the launcher's report of it
    child = STEPS + TB + "KeyError: 'labels'\n"
    child += (
        "[2025-12-10 12:07:07,831] [INFO] [launch.py:335:sigkill_handler] Killing subprocess 3\n"
    )
    assert verdict(child)[:2] == ("code_error", True)


def test_every_report_of_an_interrupt_is_one_fingerprint() -> None:
    bare = STEPS + TB + "KeyboardInterrupt\n"
    prints = {diagnose_text(log)["fingerprint"] for log in (bare, STEPS + DS_SIGINT)}
    prints.add(diagnose_text(STEPS + "Training interrupted by user\n")["fingerprint"])
    assert len(prints) == 1


# -- a loss abbreviated L -----------------------------------------------------------------------


def test_a_loss_called_l_at_nan_on_many_steps_is_a_nan_loss() -> None:
    log = "".join(f"[INFO] ep=3 step={i}/193 LR=4.9e-04 L=1.07{i} mfm=0.0004\n" for i in range(30))
    log += "".join(
        f"[INFO] ep=4 step={i}/193 LR=4.9e-04 L=nan mfm=nan top=1.08\n" for i in range(30)
    )
    log += "[INFO] Epoch done. ep=4 avg_L=nan avg_mfm=nan\n[INFO] Epoch 5/200 started\n"
    assert verdict(log)[:2] == ("nan_loss", True)


def test_other_keys_ending_in_l_at_nan_are_not_the_loss() -> None:
    log = "".join(f"step {i} | loss 0.5{i} | LR=nan | val_L=nan | NLL=nan\n" for i in range(30))
    assert verdict(log)[:2] == ("healthy", False)


# -- a glog CHECK of a CUDA call ----------------------------------------------------------------


def test_caffes_cuda_check_of_an_invalid_device_function_is_a_build_for_another_gpu() -> None:
    log = STEPS + "data_augmentation_layer.cu:551] Check failed: error == cudaSuccess (8 vs. 0)"
    log += "  invalid device function\n*** Check failure stack trace: ***\n"
    log += "    @     0x7f74eda1d5cd  google::LogMessage::Fail()\n"
    log += "    @     0x7f74ee331fbf  caffe::DataAugmentationLayer<>::Forward_gpu()\n"
    assert verdict(log)[:2] == ("cuda_driver_mismatch", True)


def test_a_glog_check_whose_record_prefix_was_cut_still_ends_the_job() -> None:
    log = STEPS + "net.cpp:88] Check failed: top_vecs[i]->count() == 1200 (1100 vs. 1200)\n"
    log += (
        "*** Check failure stack trace: ***\n    @     0x7f74eda1d5cd  google::LogMessage::Fail()\n"
    )
    assert verdict(log)[1] is True
