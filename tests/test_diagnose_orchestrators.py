"""Each class of miss the second untouched set (corpus5) showed, as a principle that also
catches its siblings: the end reports of the schedulers and orchestrators besides SLURM and
LSF (PBS/Torque, Grid Engine and HTCondor memory, storage and run-time kills; Kubernetes pod
termination reasons and events), accelerator (XLA/TPU) memory and health, command-line usage
errors, crashes the job survived (a DataLoader worker's, a second launch's), and a failure
logged just before the traceback it names. The logs are written for these tests, modelled on
what the tools print."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB, why

from labctl.diagnose import diagnose_text

PBS_REPORT = (
    "\n=============================================================\n"
    "   Exit Status:        271 (Linux Signal 15 SIGTERM Termination)\n"
    "   Walltime Used:      05:12:40\n"
)


# -- the scheduler's memory and storage kills ----------------------------------------------

MEMORY_KILLS = [
    "=>> PBS: job killed: mem 131941472kb exceeded limit 131072000kb",
    "=>> PBS: job killed: mem job total 67108900 kb exceeded limit 67108864 kb",
    "=>> PBS: job killed: pvmem 4400000000b exceeded limit 4294967296b",
    "Aborted by PBS Server\nJob exceeded a memory resource limit (vmem, pvmem, etc.). Job was "
    "aborted\nSee Administrator for help",
    "Job 77121.gadi-pbs killed due to exceeding memory limit.",
    'job 4711.1 exceeds job hard limit "h_rss" of queue "gpu.q@c14" (32.5G > limit:32.0G) - '
    "sending SIGKILL",
    "Job has gone over cgroup memory limit of 16384 megabytes. Last measured usage: 16400 "
    "megabytes.  Consider resubmitting with a higher request_memory.",
]


@pytest.mark.parametrize("kill", MEMORY_KILLS, ids=[k[:28] for k in MEMORY_KILLS])
def test_a_schedulers_memory_kill_is_a_host_oom_whatever_its_report_says_after(kill: str) -> None:
    d = diagnose_text(STEPS + kill + "\n" + PBS_REPORT)
    assert (d["category"], d["catalog_id"]) == ("host_oom", "sched_memory_limit_kill"), d["why"]
    # the same report without the kill line names no cause
    alone = diagnose_text(STEPS + PBS_REPORT)
    assert alone["category"] == "unknown" and alone["failed"] is True


def test_a_schedulers_other_limits_keep_their_own_category() -> None:
    walltime = "=>> PBS: job killed: walltime 172830 exceeded limit 172800\n"
    assert diagnose_text(STEPS + walltime)["category"] == "slurm_time_limit"
    h_rt = 'job 4711.1 exceeds job hard limit "h_rt" of queue "gpu.q@c14" (86401 > limit:86400)\n'
    assert diagnose_text(STEPS + h_rt)["category"] == "slurm_time_limit"
    usage = "resources_used.mem=65011712kb\nresources_used.vmem=70254592kb\n"
    assert diagnose_text(STEPS + usage)["category"] == "healthy"


@pytest.mark.parametrize(
    "kill",
    [
        "Job 88121.gadi-pbs killed due to exceeding jobfs quota. Quota: 200.0GB, Used: 200.4GB, "
        "Host: gadi-gpu-v100-0031",
        "Job 88121 killed for exceeding its local scratch quota (400 GB)",
    ],
)
def test_a_storage_quota_kill_is_a_full_disk_not_the_sigterm_that_carried_it(kill: str) -> None:
    d = diagnose_text(STEPS + kill + "\n" + PBS_REPORT)
    assert (d["category"], d["catalog_id"]) == ("disk_full", "sched_storage_quota_kill")
    assert "sigterm_cascade" in why(d)


# -- Kubernetes: a pod's termination reason, its events, a `kubectl get pods` listing -------

POD_ENDS = [
    ("status DiskPressure", "status:\n  message: 'The node had condition: [DiskPressure]. '\n"
     "  phase: Failed\n  reason: Evicted\n", "disk_full"),
    ("listing DiskPressure", "NAME                 READY   STATUS    RESTARTS   AGE\n"
     "trainer-5c8d-qm2x   0/1     Evicted   0          2d    The node had condition: "
     "[DiskPressure].\n", "disk_full"),
    ("event pod storage", "Warning  Evicted  3m  kubelet  Pod ephemeral local storage usage "
     "exceeds the total limit of containers 40Gi.\n", "disk_full"),
    ("event emptyDir", 'Warning  Evicted  3m  kubelet  Usage of EmptyDir volume "cache" exceeds '
     'the limit "10Gi".\n', "disk_full"),
    ("status MemoryPressure", "  message: 'The node had condition: [MemoryPressure]. '\n"
     "  reason: Evicted\n", "host_oom"),
    ("OOMKilled", "    lastState:\n      terminated:\n        exitCode: 137\n        reason: "
     "OOMKilled\n", "host_oom"),
    ("deadline status", "status:\n  message: Pod was active on the node longer than the "
     "specified deadline\n  phase: Failed\n  reason: DeadlineExceeded\n", "slurm_time_limit"),
    ("deadline listing", "trainer-7f2c-d9wq   0/1   DeadlineExceeded   0   12h\n",
     "slurm_time_limit"),
    ("node shutdown", "status:\n  message: Pod was terminated in response to imminent node "
     "shutdown.\n  phase: Failed\n  reason: Terminated\n", "preemption"),
    ("shutdown rejected", "Warning  NodeShutdown  8s  kubelet  Pod was rejected as the node is "
     "shutting down.\n", "preemption"),
    ("crash loop", "trainer-master-0   0/2   CrashLoopBackOff   9   14m\n"
     "trainer-worker-0   0/1   Init:1/2   0   14m\n", "unknown"),
    ("backoff limit", "Warning  BackoffLimitExceeded  40s  job-controller  Job has reached the "
     "specified backoff limit\n", "unknown"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "end", "category"), POD_ENDS, ids=[p[0] for p in POD_ENDS])
def test_a_pods_termination_reason_decides(what: str, end: str, category: str) -> None:
    d = diagnose_text(STEPS + end)
    assert d["category"] == category and d["failed"] is True, (what, d["catalog_id"], d["why"])


def test_words_of_other_timeouts_and_pod_specs_are_not_an_end() -> None:
    spec = "spec:\n  activeDeadlineSeconds: 86400\n  restartPolicy: OnFailure\n  backoffLimit: 3\n"
    spec += "  resources:\n    limits:\n      ephemeral-storage: 40Gi\n"
    assert diagnose_text(spec + STEPS)["category"] == "healthy"
    tf = TB + "tensorflow.python.framework.errors_impl.DeadlineExceededError: Deadline Exceeded\n"
    assert diagnose_text(STEPS + tf)["category"] == "code_error"
    pending = (
        "Warning  FailedScheduling  20s  default-scheduler  0/6 nodes are available: 6 node(s) "
        "had untolerated taint {node.kubernetes.io/disk-pressure: }.\n"
    )
    assert diagnose_text(STEPS + pending)["category"] == "healthy"


def test_a_crash_loop_is_a_report_the_containers_own_error_outranks() -> None:
    listing = "trainer-master-0   0/1   CrashLoopBackOff   4   6m\n"
    d = diagnose_text(TB + "KeyError: 'input_ids'\n" + listing)
    assert d["category"] == "code_error" and why(d)["pod_crash_loop"].startswith("wrapper")
    alone = diagnose_text(listing)
    assert (alone["category"], alone["catalog_id"]) == ("unknown", "pod_crash_loop")


def test_an_eviction_for_disk_is_not_the_programs_own_full_disk() -> None:
    """Both are disk_full, with different fixes (the pod's storage request, or pruning the
    file system): two fingerprints. Every program's ENOSPC stays one failure."""
    evicted = diagnose_text(
        STEPS + "  message: 'The node was low on resource: ephemeral-storage. "
        "Container trainer was using 88Gi, which exceeds its request of 0. '\n"
    )
    rm = diagnose_text(STEPS + "/bin/rm: write error: No space left on device\n")
    save = diagnose_text(STEPS + TB + "OSError: [Errno 28] No space left on device\n")
    assert {d["category"] for d in (evicted, rm, save)} == {"disk_full"}
    assert rm["fingerprint"] == save["fingerprint"] != evicted["fingerprint"]  # fmt: skip


# -- accelerators: XLA/TPU memory and the TPU's health ------------------------------------

HBM = [
    TB + "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent "
    "error. Ran out of memory in memory space hbm. Used 40.11G of 31.25G hbm. Exceeded hbm "
    "capacity by 8.86G.\n",
    "ERROR:tensorflow:Error recorded from training_loop: From /job:worker/replica:0/task:0:\n"
    "Compilation failure: Ran out of memory in memory space hbm. Used 17.6G of 16.0G hbm. "
    "Exceeded hbm capacity by 1.6G.\n",
    "Status code: Resource exhausted [4x]\n  Compilation failure: Ran out of memory in memory "
    "space hbm. Used 8.52G of 8.00G hbm. Exceeded hbm capacity by 530.0M.\n",
    TB + "RuntimeError: RESOURCE_EXHAUSTED: Attempting to reserve 12.01G at the bottom of "
    "memory. That was not possible. There are 10.22G free, 0B reserved, and 10.22G "
    "reservable.\n",
]


def test_hbm_exhaustion_is_a_device_oom_and_one_failure_in_every_framework() -> None:
    ds = [diagnose_text(STEPS + h) for h in HBM]
    assert {(d["category"], d["catalog_id"]) for d in ds} == {("cuda_oom", "xla_hbm_oom")}
    assert len({d["fingerprint"] for d in ds}) == 1
    gpu = diagnose_text(
        STEPS + TB + "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Failed to "
        "allocate request for 9.00GiB (9663676416B) on device ordinal 1\n"
    )
    assert gpu["category"] == "cuda_oom" and gpu["fingerprint"] != ds[0]["fingerprint"]


def test_a_tpu_reset_under_the_job_is_a_node_failure_not_the_code() -> None:
    reset = (
        TB + "tensorflow.python.framework.errors_impl.FailedPreconditionError: From "
        "/job:worker/replica:0/task:0:\n2 root error(s) found.\n  (0) Failed precondition: The "
        "TPU system has not been initialized.\n\t [[node Slice_3 (defined at ops.py:1748) ]]\n"
        "  (1) Failed precondition: The TPU system has not been initialized.\n"
        "0 successful operations.\n1 derived errors ignored.\n"
    )
    d = diagnose_text(STEPS + reset)
    assert (d["category"], d["catalog_id"]) == ("node_failure", "tpu_system_lost"), d["why"]
    assert why(d)["code_error"].startswith("explained by tpu_system_lost")


POLL = "W0409 02:13:44.120931 139911 preempted_hook.py:91] TPUPollingThread found TPU b'pod-a' "


def test_the_tpu_pollers_word_on_health_and_state() -> None:
    healthy = "".join(POLL + "in state READY, and health HEALTHY.\n" + s for s in STEPS.split("\n"))
    assert diagnose_text(healthy)["category"] == "healthy"
    sick = diagnose_text(STEPS + POLL + "in state READY, and health UNHEALTHY_MAINTENANCE.\n")
    assert (sick["category"], sick["catalog_id"]) == ("node_failure", "tpu_system_lost")
    # a report it recovered from: training went on long after it
    assert (
        diagnose_text(POLL + "in state READY, and health UNHEALTHY_MAINTENANCE.\n" + STEPS)[
            "category"
        ]
        == "healthy"
    )
    gone = (
        POLL + "in state PREEMPTED, and health HEALTHY.\nWARNING:tensorflow:TPU node pod-a "
        "reached an unrecoverable state PREEMPTED, terminating the session now.\n"
    )
    assert diagnose_text(STEPS + gone + STEPS[:200])["category"] == "preemption"


# -- a command line the program rejected --------------------------------------------------

USAGE = [
    "usage: train.py [-h] [--lr LR] [--epochs EPOCHS]\n                [--world-size N]\n"
    "train.py: error: unrecognized arguments: -ws 8",
    "usage: run_clm.py [-h] --model_name_or_path MODEL_NAME_OR_PATH\n"
    "run_clm.py: error: the following arguments are required: --output_dir",
    "usage: finetune.py [-h] [--epochs EPOCHS]\nfinetune.py: error: argument --epochs: invalid "
    "int value: '3x'",
    "Usage: cli.py train [OPTIONS]\nTry 'cli.py train --help' for help.\n\nError: No such "
    "option: --nodes",
    "FATAL Flags parsing error: Unknown command line flag 'num_epoch'",
]


@pytest.mark.parametrize("usage", USAGE, ids=["argparse-extra", "argparse-req", "argparse-value",
                                              "click", "absl"])  # fmt: skip
def test_a_rejected_command_line_is_a_code_error_even_after_earlier_steps(usage: str) -> None:
    """A job script's last step fails on its arguments, on every rank, after the earlier
    steps printed their results: the job failed, not healthy."""
    d = diagnose_text(STEPS + (usage + "\n") * 4)
    assert (d["category"], d["catalog_id"]) == ("code_error", "cli_usage_error"), d["why"]
    # a later step that runs on means the script carried on past it
    assert diagnose_text(usage + "\n" + STEPS)["category"] == "healthy"


def test_a_usage_text_alone_is_not_a_failure() -> None:
    helptext = "usage: train.py [-h] [--lr LR]\n\noptions:\n  -h, --help  show this help message\n"
    assert diagnose_text(helptext + STEPS)["category"] == "healthy"


# -- crashes the job survived -------------------------------------------------------------

EPOCHS = "".join(f"INFO:trainer:====> Epoch: {i}\nINFO:trainer:Train Epoch: {i + 1} [5%]\n"
                 for i in range(412, 414))  # fmt: skip


@pytest.mark.parametrize(
    ("report", "entry"),
    [
        ("ERROR: Unexpected segmentation fault encountered in worker.",
         "dataloader_worker_crash_report"),
        ("ERROR: Unexpected floating-point exception encountered in worker.",
         "dataloader_worker_crash_report"),
        ("ERROR: Unexpected bus error encountered in worker. This might be caused by "
         "insufficient shared memory (shm).", "dataloader_shm"),
    ],
)  # fmt: skip
def test_a_workers_own_crash_report_is_survived_when_training_goes_on(
    report: str, entry: str
) -> None:
    d = diagnose_text(STEPS + report + "\n" + EPOCHS)
    assert d["category"] == "healthy" and d["failed"] is False
    assert why(d)[entry].startswith("survived")
    # when the main process dies of it, its report follows: the worker's crash is the cause
    main = TB + "RuntimeError: DataLoader worker (pid 31337) is killed by signal: Segmentation "
    died = diagnose_text(STEPS + report + "\n" + main + "fault.\n")
    assert (died["category"], died["catalog_id"]) == ("dataloader_worker_killed", entry)
    assert diagnose_text(STEPS + report + "\n")["category"] == "dataloader_worker_killed"


RENDEZVOUS = (
    'Traceback (most recent call last):\n  File "/opt/env/bin/torchrun", line 8, in <module>\n'
    "    sys.exit(main())\n"
    '  File "/opt/env/lib/python3.11/site-packages/torch/distributed/rendezvous.py", line 189, '
    "in _create_c10d_store\n    return TCPStore(\n"
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
    "network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address "
    "already in use\n"
)
LOGGED_EPOCHS = "".join(
    f"2025-03-02 10:{i:02d}:00,001 INFO: [run..][epoch: {i}, iter: {100 * i}] l_total: 0.{i}1\n"
    for i in range(1, 5)
)


def test_a_second_launch_that_fails_while_the_first_trains_is_not_the_jobs_end() -> None:
    """A nohup.out shared by two launches: the second's rendezvous cannot bind the port the
    first holds; the first goes on logging epochs."""
    d = diagnose_text(STEPS[:400] + RENDEZVOUS + LOGGED_EPOCHS)
    assert d["category"] == "healthy" and d["failed"] is False, d["why"]
    assert why(d)["rendezvous_port_in_use"].startswith("survived")
    # a launch that fails and is the log's end is the job's failure
    end = diagnose_text(STEPS[:400] + RENDEZVOUS)
    assert (end["category"], end["catalog_id"]) == ("nccl_error", "rendezvous_port_in_use")


# -- a failure logged just before the traceback it names ----------------------------------

OP_FAILED = (
    "2024-02-11 08:15:02.331847: W tensorflow/core/framework/op_kernel.cc:1745] OP_REQUIRES "
    "failed at save_restore_v2_ops.cc:160 : {status}\n"
)
CUT = TB + '  File "/usr/lib/python3/dist-packages/tensorflow/python/training/saver.py", line '
CUT += "1441, in save\n    {self.saver_def.filename_tensor_name: checkpoint_file})\n"


@pytest.mark.parametrize(
    ("status", "category"),
    [
        ("Permission denied: /ckpt/run4; Permission denied", "permission_denied"),
        ("Resource exhausted: /ckpt/run4/model.ckpt-900.data-00000-of-00001.tempstate; No space "
         "left on device", "disk_full"),
    ],
)  # fmt: skip
def test_a_status_logged_before_a_cut_traceback_names_its_cause(status: str, category: str) -> None:
    d = diagnose_text(STEPS + OP_FAILED.format(status=status) + CUT)
    assert d["category"] == category and d["failed"] is True, d["why"]
    assert d["why"].startswith("logged at WARNING/INFO level just before an uncaught traceback")
    # the same warning in a job that trains on is a warning
    assert diagnose_text(OP_FAILED.format(status=status) + STEPS)["category"] == "healthy"
    # and a traceback that names its own exception keeps it
    named = diagnose_text(STEPS + OP_FAILED.format(status=status) + TB + "KeyError: 'step'\n")
    assert named["category"] == "code_error" and named["exception_type"] == "KeyError"
