"""Each class of miss the third untouched set (corpus6) showed, as a principle that also catches
its siblings: runtimes besides Python (Julia, R, Rust) and their place above a bare exit report,
the next stage of a pipeline failing on a file its training never wrote, TPU runtimes and chips
lost under the job, the Hub's files served by a CDN or a mirror that timed out, Grid Engine's
execd kill, container images that could not be pulled or mounted, a task that could not register
with the coordination service, a NaN loss shown by a progress bar, device memory in other
runtimes' words, a child's error inside torch.multiprocessing.spawn's report, and logs that hold
several runs (appended submissions), judged by the last. The logs are written for these tests,
modelled on what the tools print."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.diagnose_logs import STEPS, TB, reasons, why

from labctl.diagnose import diagnose_path, diagnose_text

PBS_REPORT = (
    "\n=============================================================\n"
    "   Exit Status:        1\n"
    "   Walltime Used:      03:12:40\n"
)
LSF_EXIT = "\n" + "-" * 60 + "\n\nExited with exit code 1.\n"


# -- a language runtime's own error, above a bare exit report ------------------------------

JULIA = (
    "ERROR: LoadError: ArgumentError: matrix is not square: dimensions are (3, 4)\n"
    "Stacktrace:\n [1] checksquare at ./LinearAlgebra/src/LinearAlgebra.jl:224 [inlined]\n"
    " [2] solve(::Matrix{Float64}) at /home/u/sim/src/solver.jl:31\n"
    "in expression starting at /home/u/sim/run.jl:12\n"
)
R_HALT = (
    "Error in solve.default(cov_mat) : \n"
    "  Lapack routine dgesv: system is exactly singular: U[3,3] = 0\n"
    "Calls: fit_model -> solve -> solve.default\nExecution halted\n"
)
RUST = (
    "thread 'main' panicked at src/bin/fit.rs:57:22:\n"
    "called `Result::unwrap()` on an `Err` value: ParseFloatError { kind: Invalid }\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
)
RUNTIMES = [("julia", JULIA, PBS_REPORT), ("r", R_HALT, LSF_EXIT),
            ("rust", RUST, "srun: error: cn-07: task 0: Exited with exit code 101\n")]  # fmt: skip


@pytest.mark.parametrize(("what", "error", "report"), RUNTIMES, ids=[r[0] for r in RUNTIMES])
def test_a_runtimes_own_error_is_a_code_error_that_outranks_the_exit_report(
    what: str, error: str, report: str
) -> None:
    d = diagnose_text(STEPS + error + report)
    assert (d["category"], d["catalog_id"]) == ("code_error", "runtime_error_report"), d["why"]
    assert "job_exit_report" in why(d)
    # the report alone names no cause
    alone = diagnose_text(STEPS + report)
    assert alone["category"] == "unknown" and alone["failed"] is True


def test_a_rust_mains_error_and_pips_errors() -> None:
    main_err = 'Error: ParseError { line: 12, reason: "unexpected token" }\n'
    d = diagnose_text(STEPS + "     Running `target/release/fit`\n" + main_err)
    assert (d["category"], d["catalog_id"]) == ("code_error", "runtime_error_report")
    pip = (
        "ERROR: pip's dependency resolver does not currently take into account all the "
        "packages that are installed.\nSuccessfully installed numpy-1.26.4\n"
    )
    assert diagnose_text(pip + STEPS)["category"] == "healthy"


# -- the next stage of a pipeline ----------------------------------------------------------

MISSING = [
    "cp: cannot stat 'runs/exp7/checkpoint-final/model.safetensors': No such file or directory",
    "mv: cannot move 'preds/val.jsonl' to 'results/': No such file or directory",
    "cat: eval/metrics.json: No such file or directory",
    "/var/spool/slurmd/job51/slurm_script: line 40: cd: outputs/run7: No such file or directory",
]


@pytest.mark.parametrize("line", MISSING, ids=["cp", "mv", "cat", "cd"])
def test_the_next_command_failing_on_a_missing_file_is_the_jobs_failure(line: str) -> None:
    """Training reached its end; the script's next command found nothing to work on."""
    d = diagnose_text(STEPS + line + "\n\n")
    assert (d["category"], d["catalog_id"]) == ("code_error", "shell_file_missing"), d["why"]
    # the script went on after it (another command printed): not the job's end
    on = diagnose_text(STEPS + line + "\n+ echo packing\nINFO: writing archive\n")
    assert on["category"] == "healthy" and reasons(on, "shell_file_missing") == ["survived"]


def test_a_missing_file_after_the_programs_failure_is_the_script_carrying_on() -> None:
    d = diagnose_text(STEPS + TB + "KeyError: 'labels'\n" + MISSING[0] + "\n")
    assert d["category"] == "code_error" and d["exception_type"] == "KeyError"
    assert reasons(d, "shell_file_missing") == ["after_failure"]
    rm = "rm: cannot remove 'tmp/*.lock': No such file or directory\n"
    assert diagnose_text(STEPS + rm)["category"] == "healthy"


def test_a_later_stages_error_after_training_finished_is_a_failure() -> None:
    evaluate = TB.replace("trainer.fit(model)", "evaluate(model)") + "IndexError: list index "
    d = diagnose_text(STEPS + "Training completed successfully!\n" + evaluate + "out of range\n")
    assert d["category"] == "code_error" and d["failed"] is True


# -- TPU: the runtime taken away, a chip that failed ---------------------------------------

SESSION = (
    "INFO:tensorflow:An error was raised. This may be due to a preemption in a connected worker "
    "or parameter server. The current session will be closed and a new session will be created. "
    "Error: {error}\n"
)


def test_a_tpu_runtime_lost_under_the_session_is_a_preemption() -> None:
    lost = SESSION.format(error="Socket closed") + "INFO:tensorflow:Error recorded from outfeed: "
    d = diagnose_text(STEPS + lost + "Socket closed\n")
    assert (d["category"], d["catalog_id"]) == ("preemption", "tpu_session_lost"), d["why"]
    infeed = "INFO:tensorflow:Error recorded from infeed: Connection reset by peer\n"
    assert diagnose_text(STEPS + infeed)["category"] == "preemption"
    # a new session that trains on was a blip; another error is a session restart
    assert diagnose_text(STEPS[:300] + lost + "Socket closed\n" + STEPS)["category"] == "healthy"
    restart = SESSION.format(error="OS Error") + "INFO:tensorflow:Graph was finalized.\n"
    assert diagnose_text(STEPS + restart)["category"] == "healthy"


def test_a_tpu_chip_or_driver_fault_is_a_node_failure_that_explains_the_error_after() -> None:
    chip = (
        "E0911 04:05:06.000001    77 session_master.cc:505] Session is failing with the "
        "following status: Session master detected TPU session error from worker "
        "job-slice-0-3.svc:8471.\n"
        "E0911 04:05:06.000101    77 tpunetd_client.cc:311] Detected failure "
        "SLICE_FAILURE_CHIP_DRIVER_ERROR in session 0a1b2c3d4e5f6789; Start failure handling\n"
    )
    raised = TB + "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: stream did not block host\n"
    d = diagnose_text(STEPS + chip + raised)
    assert (d["category"], d["catalog_id"]) == ("node_failure", "tpu_chip_failure"), d["why"]
    assert why(d)["code_error"].startswith("explained by tpu_chip_failure")


# -- the Hub's files from a CDN or a mirror ------------------------------------------------

HUB_TIMEOUTS = [
    "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='cdn-lfs.huggingface.co', "
    "port=443): Read timed out. (read timeout=10)",
    "Error while downloading from https://cdn-lfs-us-1.hf-mirror.com/repos/0c/9e/0c9e/"
    "unet/diffusion_pytorch_model.safetensors: HTTPSConnectionPool(host='cdn-lfs-us-1.hf-mirror"
    ".com', port=443): Read timed out.",
    '    "message": "HTTPSConnectionPool(host=\'cdn-lfs-eu-1.hf.co\', port=443): Read timed out.",',
    "urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='huggingface.co', port=443): "
    "Read timed out. (read timeout=10.0)",
]


def test_a_read_timeout_from_the_hub_its_cdn_or_a_mirror_is_one_hub_failure() -> None:
    ds = [diagnose_text(STEPS + line + "\n") for line in HUB_TIMEOUTS]
    assert {d["catalog_id"] for d in ds} == {"hf_hub_read_timeout"}
    assert {d["category"] for d in ds} == {"hf_hub_error"}  # one fingerprint: fingerprint tests
    other = diagnose_text(
        STEPS + "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='api.wandb.ai', "
        "port=443): Read timed out. (read timeout=20)\n"
    )
    assert other["category"] != "hf_hub_error"
    dns = diagnose_text(
        STEPS + "OSError: We couldn't connect to 'https://huggingface.co' to load this file.\n"
    )
    assert (dns["category"], dns["catalog_id"]) == ("hf_hub_error", "hf_hub_connection")


# -- Grid Engine's execd kill ----------------------------------------------------------------

QACCT = "qname        gpu.q\nhostname     c14\n{failed}\n{exit_status}\nmaxvmem      15.998G\n"


@pytest.mark.parametrize("status", ["exit_status  137", "exit_status  140"])
def test_grid_engines_kill_after_the_job_ran_is_a_memory_kill(status: str) -> None:
    killed = QACCT.format(failed="failed       100 : assumedly after job", exit_status=status)
    notice = "Received Signal 12 (User defined signal 2) in PID=8812 from: PID=8790 (UID=0)\n"
    d = diagnose_text(STEPS + notice + killed)
    assert (d["category"], d["catalog_id"]) == ("host_oom", "sge_execd_kill"), d["why"]


def test_grid_engines_other_accounting_is_no_memory_kill() -> None:
    ok = QACCT.format(failed="failed       0", exit_status="exit_status  0")
    assert diagnose_text(STEPS + ok)["category"] == "healthy"
    failed = QACCT.format(failed="failed       100 : assumedly after job", exit_status="exit_st"
                          "atus  1")  # fmt: skip
    assert diagnose_text(STEPS + failed)["category"] != "host_oom"


# -- a job that never started: its image, its coordination service --------------------------

IMAGES = [
    '  Warning  Failed  40s (x4 over 2m)  kubelet  Failed to pull image "registry.lab/train:'
    'v3": rpc error: code = Unknown desc = Error reading manifest v3: name unknown\n'
    "  Warning  Failed  40s (x4 over 2m)  kubelet  Error: ErrImagePull\n",
    "trainer-worker-1   0/1   Init:ImagePullBackOff   0   6m\n",
    "docker: Error response from daemon: manifest for lab/trainer:v9 not found: manifest unknown"
    ": manifest unknown.\n",
    "FATAL:   container creation failed: mount /proc/self/fd/9->/var/apptainer/mnt/session/rootfs "
    "error: can't mount image /proc/self/fd/9: kernel reported a bad superblock for squashfs "
    "image partition\n",
]


@pytest.mark.parametrize("image", IMAGES, ids=["pull", "backoff", "docker", "squashfs"])
def test_an_image_that_cannot_be_pulled_or_mounted_is_a_failure(image: str) -> None:
    d = diagnose_text(image)
    assert (d["category"], d["catalog_id"]) == ("unknown", "container_image_failed")
    assert d["failed"] is True
    pulled = '  Normal  Pulled  3s  kubelet  Successfully pulled image "registry.lab/train:v3"\n'
    assert diagnose_text(pulled + STEPS)["category"] == "healthy"


def test_a_corrupt_image_is_not_the_permission_line_before_it() -> None:
    noise = "Unable to open log file. Permission denied\n"
    d = diagnose_text(noise + IMAGES[3] + LSF_EXIT.replace("code 1", "code 255"))
    assert d["catalog_id"] == "container_image_failed" and d["category"] != "permission_denied"


def test_a_task_that_cannot_register_with_the_coordination_service_is_a_failure() -> None:
    register = (
        "Additional GRPC error information from remote target coordination_leader while calling "
        "/tensorflow.CoordinationService/RegisterTask:\n"
        ':{"created":"@1712000000.1","description":"Deadline Exceeded","grpc_status":4}\n'
    )
    raised = TB + "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n"
    d = diagnose_text(register + raised)
    assert (d["category"], d["catalog_id"]) == ("unknown", "coordination_register_failed")
    assert d["failed"] is True and why(d)["code_error"].startswith("explained by")
    connected = "I0101 coordination_service_agent.cc:300] Coordination agent has connected.\n"
    assert diagnose_text(connected + STEPS)["category"] == "healthy"


# -- NaN in a progress bar ------------------------------------------------------------------


def bar(epoch: int, loss: str) -> str:
    return f"Epoch {epoch}: 100%|#####| 320/320 [00:21<00:00, 14.77it/s, loss={loss}, v_num=0]\n"


def test_a_progress_bars_nan_loss_is_a_nan_loss_even_once() -> None:
    """A bar shows a running mean over many steps: one frame at NaN is many steps of it."""
    d = diagnose_text(bar(0, "0.693") + bar(1, "nan"))
    assert (d["category"], d["catalog_id"]) == ("nan_loss", "nan_loss_bar"), d["why"]
    assert diagnose_text(bar(0, "0.693") + bar(1, "0.412"))["category"] == "healthy"
    stop = (
        "INFO: Monitored metric val_loss = nan is not finite. Previous best value was 0.512. "
        "Signaling Trainer to stop.\n"
    )
    assert diagnose_text(bar(0, "0.693") + stop)["category"] == "nan_loss"


# -- device memory in other runtimes' words ---------------------------------------------------

DEVICE = [
    "MemoryError: Error allocating 531000000 bytes of device memory (out of memory). Driver "
    "report 118000000 bytes free and 5032000000 bytes total",
    "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 2,147,483,648 bytes (allocated "
    "so far: 10,737,418,240 bytes).",
    "mxnet.base.MXNetError: [09:14:02] src/storage/./pooled_storage_manager.h:161: cudaMalloc "
    "retry failed: out of memory",
]


@pytest.mark.parametrize("line", DEVICE, ids=["theano", "cupy", "mxnet"])
def test_device_memory_is_a_device_oom_whatever_the_runtime_calls_it(line: str) -> None:
    d = diagnose_text(STEPS + TB + line + "\n")
    assert d["category"] == "cuda_oom", d["catalog_id"]
    host = diagnose_text(STEPS + TB + "MemoryError: Unable to allocate 3.2 GiB for an array\n")
    assert host["category"] == "host_oom"


# -- a child's error inside torch.multiprocessing.spawn's report -------------------------------

SPAWN = (
    TB + '  File "/opt/py/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line '
    "160, in join\n    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n"
    "torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
    "-- Process 1 terminated with the following error:\n"
    'Traceback (most recent call last):\n  File "/opt/py/lib/python3.10/site-packages/torch/'
    'multiprocessing/spawn.py", line 69, in _wrap\n    fn(i, *args)\n'
    '  File "/work/run/train.py", line 41, in run\n    state = torch.load(path)\n'
)


def test_a_spawned_childs_error_keeps_its_category() -> None:
    zip_err = "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding "
    d = diagnose_text(STEPS + SPAWN + zip_err + "central directory\n")
    assert (d["category"], d["catalog_id"]) == ("checkpoint_load_error", "checkpoint_corrupt")
    assert why(d)["child_failed"].startswith("wrapper")
    plain = diagnose_text(STEPS + TB + zip_err + "central directory\n")
    assert plain["fingerprint"] == d["fingerprint"]
    key = diagnose_text(STEPS + SPAWN + "KeyError: 'model_state'\n")
    assert key["category"] == "code_error" and key["exception_type"] == "KeyError"


# -- logs that hold several runs: the last one decides -----------------------------------------

BANNER = "Loaded module: cuda/12.1.1-gcc-11.4\nLoaded module: python3/3.11.4\n"
LSF_REPORT = (
    "\n------------------------------------------------------------\n"
    "Sender: LSF System <lsf@gpu-n07>\nSubject: Job {job}: <train> in cluster <hpc> {word}\n\n"
    "{body}\n\nResource usage summary:\n\n    CPU time :   42.00 sec.\n"
)
KILLED = LSF_REPORT.format(job=101, word="Exited", body="TERM_OWNER: job killed by owner.\n"
                           "Exited with exit code 130.")  # fmt: skip
DONE = LSF_REPORT.format(job=102, word="Done", body="Successfully completed.")


def test_an_appended_output_file_is_judged_by_its_last_jobs_end_report() -> None:
    d = diagnose_text("epoch 1 of run A\n" + KILLED + "epoch 1 of run B\n" + DONE)
    assert d["category"] == "healthy" and d["failed"] is False, d["why"]
    assert reasons(d, "cancelled") == ["later_success"]
    later = diagnose_text("epoch 1 of run A\n" + DONE + "epoch 1 of run B\n" + KILLED)
    assert later["category"] == "cancelled"


def test_the_last_run_of_an_appended_stderr_decides() -> None:
    first = BANNER + TB + "ValueError: too many values to unpack (expected 2)\n"
    d = diagnose_text(first + BANNER)
    assert d["category"] == "healthy" and reasons(d, "code_error") == ["earlier_run"], d["why"]
    [c] = [c for c in d["candidates"] if c["catalog_id"] == "code_error"]
    assert c["by"]["role"] == "run_start" and c["by"]["line"] == first.count("\n") + 1
    # the last run's own failure decides, whatever the earlier ones did
    last = diagnose_text(first + BANNER + TB + "KeyError: 'boxes'\n")
    assert last["category"] == "code_error" and last["exception_type"] == "KeyError"
    assert diagnose_text(BANNER + STEPS + BANNER + TB + "KeyError: 'boxes'\n")["failed"]


def test_a_line_every_run_prints_as_it_starts_is_survived_when_a_run_went_past_it() -> None:
    opening = "defined(@array) is deprecated at /opt/lsf/etc/site-wrapper line 281.\n"
    opening += "Unable to open log file. Permission denied\n"
    run1 = opening + "INFO:root:start\n" + TB + "RuntimeError: Expected 4-dimensional input\n"
    d = diagnose_text(run1 + opening + "INFO:root:start\nWARNING: a slow save\n")
    assert d["category"] == "healthy", d["why"]  # the last run's copy was demoted too
    # when every run ended at it, it is what ended them
    same = diagnose_text(opening + opening)
    assert same["category"] == "permission_denied"


@pytest.mark.parametrize(
    "opening",
    [
        "Traceback (most recent call last):",  # a chained exception's second traceback
        "== Status ==",  # a short header a program repeats
        '  File "/work/run/train.py", line 88, in <module>',  # an indented frame
        "step 3 | loss 1.2000 | lr 2e-05 | tokens 4096",  # progress
    ],
)
def test_a_repeated_header_or_traceback_line_is_not_a_new_run(opening: str) -> None:
    log = opening + "\nRuntimeError: CUDA error: out of memory\n" + opening + "\nnothing more\n"
    assert diagnose_text(log)["category"] == "cuda_oom"


def test_a_big_logs_tail_knows_where_its_last_run_starts(tmp_path: Path) -> None:
    """Read tail-first, the regions after the start take the opening from the file's head."""
    run = BANNER + TB + "ValueError: bad shape\n" + "".join(f"noise {i}\n" for i in range(3000))
    p = tmp_path / "train.err"
    p.write_text(run + BANNER + "INFO: waiting for the data loader\n")
    d = diagnose_path(p, window=8 << 10)
    assert d["window"]["mode"] == "tail" and d["category"] == "healthy", d["why"]
    assert diagnose_path(p, full=True)["category"] == "healthy"
