"""The words schedulers, launchers, clouds, the fabric and the runtimes print when a job ends
(issue 15), mapped to the category a lab supervisor gives them: a table written from their
documented messages, not from any corpus, so a miss on an untouched set is a gap in the table.
Each line ends a log of forward progress; `tb` lines follow a traceback, as Python raises them."""

from __future__ import annotations

import pytest
from helpers.diagnose_logs import STEPS, TB

from labctl.diagnose import diagnose_text

WORDS = [
    (
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4711.batch. Some of "
        "your processes may have been killed by the cgroup out-of-memory handler.",
        "host_oom",
        False,
    ),
    (
        "slurmstepd: error: *** JOB 4711 ON node-a17 CANCELLED AT 2024-05-01T12:00:00 DUE "
        "TO TIME LIMIT ***",
        "slurm_time_limit",
        False,
    ),
    (
        "slurmstepd: error: *** JOB 4711 ON node-a17 CANCELLED AT 2024-05-01T12:00:00 DUE "
        "TO PREEMPTION ***",
        "preemption",
        False,
    ),
    (
        "slurmstepd: error: *** JOB 4711 ON node-a17 CANCELLED AT 2024-05-01T12:00:00 DUE "
        "TO NODE FAILURE ***",
        "node_failure",
        False,
    ),
    (
        "slurmstepd: error: *** STEP 4711.0 ON node-a17 CANCELLED AT 2024-05-01T12:00:00 ***",
        "cancelled",
        False,
    ),
    ("srun: error: Node failure on node-a17", "node_failure", False),
    (
        "slurmstepd: error: Job 4711 exceeded memory limit (8250000 > 8192000), being killed",
        "host_oom",
        False,
    ),
    ("slurmstepd: error: Exceeded job memory limit", "host_oom", False),
    ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "host_oom", False),
    ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "slurm_time_limit", False),
    # Grid Engine's execd (in the job's messages) and qacct's failure code for it
    (
        "job 4711.1 exceeded hard wallclock time - initiate terminate method",
        "slurm_time_limit",
        False,
    ),
    ("failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit", "slurm_time_limit", False),
    ("TERM_OWNER: job killed by owner.", "cancelled", False),
    ("TERM_PREEMPT: job killed after preemption.", "preemption", False),
    ("TERM_ADMIN: job killed by root or LSF administrator.", "cancelled", False),
    (
        "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.",
        "slurm_time_limit",
        False,
    ),
    ("TERM_REQUEUE_OWNER: job killed and requeued by owner.", "cancelled", False),
    ("=>> PBS: job killed: walltime 86410 exceeded limit 86400", "slurm_time_limit", False),
    ("=>> PBS: job killed: mem 33554432kb exceeded limit 31457280kb", "host_oom", False),
    ("=>> PBS: job killed: vmem 40000000kb exceeded limit 31457280kb", "host_oom", False),
    ("Job was evicted.", "preemption", False),
    (
        "Warning  DeadlineExceeded  1m  job-controller  Job was active longer than "
        "specified deadline",
        "slurm_time_limit",
        False,
    ),
    (
        "Message: The node was low on resource: memory. Container trainer was using 30Gi, "
        "which exceeds its request of 16Gi.",
        "host_oom",
        False,
    ),
    (
        "Reason: Preempting  Message: Preempted in order to admit critical pod",
        "preemption",
        False,
    ),
    (
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
        "host_oom",
        True,
    ),
    (
        "RuntimeError: NCCL error in: "
        "/opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled "
        "cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
        "nccl_error",
        True,
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, internal error - please report "
        "this issue to the NCCL developers, NCCL version 2.19.3",
        "nccl_error",
        True,
    ),
    (
        "node-3:1234:5678 [0] transport/net_ib.cc:1294 NCCL WARN NET/IB : Got completion "
        "from peer 10.0.0.2<43920> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
        "localGid ::ffff:10.0.0.1 remoteGid ::ffff:10.0.0.2",
        "nccl_error",
        False,
    ),
    (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.",
        "cuda_oom",
        True,
    ),
    (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of "
        "tokens that can be stored in KV cache (16384). Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
        "engine.",
        "cuda_oom",
        True,
    ),
    (
        "OSError: [Errno 30] Read-only file system: '/data/ckpt/step_1000'",
        "permission_denied",
        True,
    ),
    (
        "OSError: [Errno 5] Input/output error: '/scratch/data/shard-0007.tar'",
        "node_failure",
        True,
    ),
    ("OSError: [Errno 116] Stale file handle", "node_failure", True),
    (
        "RuntimeError: unable to write to file </torch_18693_1954506024>: No space left on "
        "device (28)",
        "dataloader_worker_killed",
        True,
    ),
    (
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        "checkpoint_load_error",
        True,
    ),
    (
        "OSError: Unable to load weights from pytorch checkpoint file for "
        "'/models/llama/pytorch_model.bin' at '/models/llama/pytorch_model.bin'. If you "
        "tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.",
        "checkpoint_load_error",
        True,
    ),
    (
        "requests.exceptions.ReadTimeout: "
        "(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read "
        "timed out. (read timeout=10)\"), '(Request ID: 5e4f)')",
        "hf_hub_error",
        True,
    ),
    (
        "huggingface_hub.errors.HfHubHTTPError: 500 Server Error: Internal Server Error "
        "for url: https://huggingface.co/api/models/gpt2",
        "hf_hub_error",
        True,
    ),
    (
        "wandb.errors.UsageError: api_key not configured (no-tty). call "
        "wandb.login(key=[your_api_key])",
        "code_error",
        True,
    ),
    (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have "
        "an NVIDIA GPU and installed a driver from "
        "http://www.nvidia.com/Download/index.aspx",
        "cuda_driver_mismatch",
        True,
    ),
    ("AssertionError: Torch not compiled with CUDA enabled", "cuda_driver_mismatch", True),
    (
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
        "cudnn_error",
        True,
    ),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "segfault", True),
    (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). "
        "Please update your GPU driver",
        "cuda_driver_mismatch",
        True,
    ),
    ("ModuleNotFoundError: No module named 'flash_attn'", "module_not_found", True),
    ("OSError: [Errno 28] No space left on device", "disk_full", True),
    ("OSError: [Errno 122] Disk quota exceeded", "disk_full", True),
    (
        "PermissionError: [Errno 13] Permission denied: '/data/shared/ckpt'",
        "permission_denied",
        True,
    ),
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when "
        "allocating tensor with shape[32,512,512] and type float on "
        "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        "cuda_oom",
        True,
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while "
        "trying to allocate 17179869184 bytes.",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly",
        "dataloader_worker_killed",
        True,
    ),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "unknown", False),
    (
        "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=1800000) ran for 1800443 milliseconds before timing out.",
        "nccl_timeout",
        False,
    ),
    ("Xid 79, pid=1234, GPU has fallen off the bus.", "node_failure", False),
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "node_failure", True),
    ("KeyboardInterrupt", "cancelled", True),
    ("Killed", "host_oom", False),
    (
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB, other "
        "allocations: 1.2 GB, max allowed: 18.13 GB). Tried to allocate 256.00 MB on "
        "private pool.",
        "cuda_oom",
        True,
    ),
    ("SIGTERM received, preempted by the scheduler; saving checkpoint", "preemption", False),
    ("Instance was preempted.", "preemption", False),
    (
        "botocore.exceptions.NoCredentialsError: Unable to locate credentials",
        "permission_denied",
        True,
    ),
    # launchers, shells, pip and the frameworks (a second table)
    (
        "mpirun noticed that process rank 0 with PID 4242 on node node-3 exited on signal "
        "9 (Killed).",
        "host_oom",
        False,
    ),
    (
        "mpirun noticed that process rank 1 with PID 4243 on node node-3 exited on signal "
        "11 (Segmentation fault).",
        "segfault",
        False,
    ),
    ("srun: error: node-3: task 0: Out Of Memory", "host_oom", False),
    ("srun: error: node-3: task 1: Segmentation fault (core dumped)", "segfault", False),
    (
        "slurmstepd: error: *** JOB 4711 ON node-a17 CANCELLED AT 2024-05-01T12:00:00 DUE "
        "TO JOB NOT ENDING WITH SIGNALS ***",
        "node_failure",
        False,
    ),
    (
        "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) "
        "local_rank: 0 (pid: 4242) of binary: /usr/bin/python3",
        "host_oom",
        False,
    ),
    (
        "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) "
        "local_rank: 0 (pid: 4242) of binary: /usr/bin/python3",
        "segfault",
        False,
    ),
    (
        "[2024-05-01 12:00:00,000] [INFO] [launch.py:315:sigkill_handler] Killing "
        "subprocess 4242\n[2024-05-01 12:00:00,000] [ERROR] "
        "[launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py'] exits with "
        "return code = -9",
        "host_oom",
        False,
    ),
    (
        "[2024-05-01 12:00:00,000] [ERROR] [launch.py:321:sigkill_handler] "
        "['/usr/bin/python3', '-u', 'train.py'] exits with return code = -11",
        "segfault",
        False,
    ),
    (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU "
        "0 has a total capacity of 79.15 GiB of which 512.00 MiB is free.",
        "cuda_oom",
        True,
    ),
    ("RuntimeError: CUDA error: device-side assert triggered", "code_error", True),
    (
        "RuntimeError: Expected all tensors to be on the same device, but found at least "
        "two devices, cuda:0 and cpu!",
        "code_error",
        True,
    ),
    (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)",
        "code_error",
        True,
    ),
    (
        "ImportError: cannot import name 'is_torch_xla_available' from 'transformers.utils'",
        "module_not_found",
        True,
    ),
    (
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: Triton Error [CUDA]: invalid argument",
        "code_error",
        True,
    ),
    ("RuntimeError: Triton Error [CUDA]: out of memory", "cuda_oom", True),
    (
        "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: "
        "Attempting to allocate 2.00G. That was not possible. There are 1.50G free.",
        "cuda_oom",
        True,
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile "
        "permanent error. Ran out of memory in memory space hbm. Used 17.51G of 15.48G "
        "hbm. Exceeded hbm capacity by 2.03G.",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: TPU initialization failed: open(/dev/accel0): Device or resource "
        "busy: Device or resource busy; Couldn't open device: /dev/accel0",
        "node_failure",
        True,
    ),
    (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this "
        "task.\n\tclass_name: RolloutWorker\n\tactor_id: 4f2c\n\tpid: 4242\n\tThe actor is "
        "dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY "
        "Worker exit detail: Task was killed due to the node running low on memory.",
        "host_oom",
        True,
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/imagenet/train'",
        "code_error",
        True,
    ),
    (
        "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find an appropriate cached "
        "snapshot folder for the specified revision on the local disk and outgoing traffic "
        "has been disabled. To enable repo look-ups and downloads online, pass "
        "'local_files_only=False' as input.",
        "hf_hub_error",
        True,
    ),
    (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, "
        "couldn't find it in the cached files and it looks like bert-base-uncased is not "
        "the path to a directory containing a file named config.json.",
        "hf_hub_error",
        True,
    ),
    (
        "requests.exceptions.ConnectionError: "
        "(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max "
        "retries exceeded with url: /api/models/gpt2 (Caused by "
        "NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f>: Failed "
        "to establish a new connection: [Errno 101] Network is unreachable'))\"), "
        "'(Request ID: 1)')",
        "hf_hub_error",
        True,
    ),
    (
        "torch.serialization.pickle.UnpicklingError: Weights only load failed. Re-running "
        "`torch.load` with `weights_only` set to `False` will likely succeed, but it can "
        "result in arbitrary code execution.",
        "checkpoint_load_error",
        True,
    ),
    (
        "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n\tsize "
        "mismatch for lm_head.weight: copying a param with shape torch.Size([32000, 4096]) "
        "from checkpoint, the shape in current model is torch.Size([32001, 4096]).",
        "checkpoint_load_error",
        True,
    ),
    (
        "ValueError: Unrecognized configuration class <class "
        "'transformers.models.qwen2.configuration_qwen2.Qwen2Config'> for this kind of "
        "AutoModel: AutoModelForSeq2SeqLM.",
        "code_error",
        True,
    ),
    ("KeyError: 'qwen2'", "code_error", True),
    ("RuntimeError: NCCL Error 3: internal error", "nccl_error", True),
    (
        "[rank0]:[E1201 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=1234, "
        "OpType=_ALLGATHER_BASE, NumelIn=1, NumelOut=8, Timeout(ms)=600000) ran for 600012 "
        "milliseconds before timing out.",
        "nccl_timeout",
        False,
    ),
    (
        "[E1201 12:00:00.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID "
        "0(default_pg) Rank 0] Process group watchdog thread terminated with exception: "
        "[Rank 0] Watchdog caught collective operation timeout",
        "nccl_timeout",
        False,
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 3 "
        "has a total capacity of 39.39 GiB of which 90.00 MiB is free. Including "
        "non-PyTorch memory, this process has 39.29 GiB memory in use.",
        "cuda_oom",
        True,
    ),
    ("Segmentation fault (core dumped)", "segfault", False),
    ("Illegal instruction (core dumped)", "segfault", False),
    ("Floating point exception (core dumped)", "segfault", False),
    ("Aborted (core dumped)", "segfault", False),
    (
        "/var/spool/slurmd/job4711/slurm_script: line 28: 4242 Killed                  "
        "python train.py",
        "host_oom",
        False,
    ),
    (
        "/var/spool/slurmd/job4711/slurm_script: line 28: 4242 Bus error               "
        "(core dumped) python train.py",
        "segfault",
        False,
    ),
    (
        "ERROR: Could not find a version that satisfies the requirement torch==2.9.0 (from "
        "versions: 2.1.0, 2.2.0)\nERROR: No matching distribution found for torch==2.9.0",
        "module_not_found",
        False,
    ),
    (
        "python: can't open file '/home/u/run/train.py': [Errno 2] No such file or directory",
        "code_error",
        False,
    ),
    ("bash: python: command not found", "module_not_found", False),
    ("/usr/bin/env: 'python': No such file or directory", "module_not_found", False),
    (
        "OSError: [Errno 122] Disk quota exceeded: '/home/u/.cache/huggingface/hub/tmp123'",
        "disk_full",
        True,
    ),
    (
        "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1234 vs 1200",
        "disk_full",
        True,
    ),
    ("OSError: [Errno 28] No space left on device: '/tmp/tmpab12'", "disk_full", True),
    ("RuntimeError: CUDA error: unspecified launch failure", "segfault", True),
    (
        "vllm: ERROR 12-01 12:00:00 engine.py:400] RuntimeError: CUDA error: an illegal "
        "memory access was encountered",
        "segfault",
        False,
    ),
    (
        "sglang: Exception: Capture cuda graph failed: CUDA out of memory. Tried to "
        "allocate 2.00 GiB.",
        "cuda_oom",
        True,
    ),
    # the training stacks: DeepSpeed, accelerate, Lightning, Megatron, transformers, datasets
    (
        "deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload "
        "with a client provided optimizer (<class 'torch.optim.adamw.AdamW'>) which in "
        "most cases will yield poor performance. Please either use "
        "deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config "
        "(https://www.deepspeed.ai/docs/config-json/#optimizer-parameters). If you really "
        "want to use a custom optimizer w. ZeRO-Offload and understand the performance "
        'impacts you can also set <"zero_force_ds_cpu_optimizer": false> in your '
        "configuration file.",
        "code_error",
        True,
    ),
    (
        "AssertionError: Check batch related parameters. train_batch_size is not equal to "
        "micro_batch_per_gpu * gradient_acc_step * world_size 256 != 8 * 4 * 4",
        "code_error",
        True,
    ),
    (
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using "
        "Ampere GPU with cuda>=11.0",
        "cuda_driver_mismatch",
        True,
    ),
    ("ValueError: Attempting to unscale FP16 gradients.", "code_error", True),
    (
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
        "code_error",
        True,
    ),
    (
        "RuntimeError: one of the variables needed for gradient computation has been "
        "modified by an inplace operation: [torch.cuda.FloatTensor [512]] is at version 3; "
        "expected version 2 instead.",
        "code_error",
        True,
    ),
    ("IndexError: index out of range in self", "code_error", True),
    (
        "ValueError: Asking to pad but the tokenizer does not have a padding token. Please "
        "select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token "
        "e.g.)` or add a new pad token via `tokenizer.add_special_tokens({'pad_token': "
        "'[PAD]'})`.",
        "code_error",
        True,
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
        "`cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, "
        "CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, "
        "CUBLAS_GEMM_DFALT_TENSOR_OP)`",
        "cudnn_error",
        True,
    ),
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the "
        "'CUDA' backend.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with "
        "error: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
        "code_error",
        True,
    ),
    ("RuntimeError: No CUDA GPUs are available", "cuda_driver_mismatch", True),
    (
        "RuntimeError: Distributed package doesn't have NCCL built in",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "ImportError: "
        "/opt/conda/lib/python3.10/site-packages/"
        "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "module_not_found",
        True,
    ),
    (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at "
        "least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0. You can use "
        "float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
        "--dtype=half.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 "
        "has a total capacity of 23.64 GiB of which 50.81 MiB is free.",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not "
        "enough memory: you tried to allocate 17179869184 bytes.",
        "host_oom",
        True,
    ),
    (
        "RuntimeError: unable to open shared memory object </torch_4242_1234_0> in "
        "read-write mode: Too many open files (24)",
        "dataloader_worker_killed",
        True,
    ),
    (
        "RuntimeError: Too many open files. Communication with the workers is no longer "
        "possible. Please increase the limit using `ulimit -n` in the shell or change the "
        "sharing strategy by calling "
        "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of "
        "your code",
        "dataloader_worker_killed",
        True,
    ),
    (
        "OSError: [Errno 24] Too many open files: '/data/shard-00042.tar'",
        "dataloader_worker_killed",
        True,
    ),
    (
        "lightning.fabric.utilities.exceptions.MisconfigurationException: You requested "
        "gpu: [0, 1] But your machine only has: [0]",
        "code_error",
        True,
    ),
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: No "
        "`training_step()` method defined.",
        "code_error",
        True,
    ),
    ("Detected KeyboardInterrupt, attempting graceful shutdown ...", "cancelled", False),
    (
        "accelerate.utils.launch: ValueError: You need to use at least one process with "
        "`--num_processes`",
        "code_error",
        True,
    ),
    (
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py', "
        "'--config', 'x.yaml']' returned non-zero exit status 1.",
        "unknown",
        True,
    ),
    (
        "megatron: AssertionError: num_layers (30) must be divisible by "
        "pipeline_model_parallel_size (4)",
        "code_error",
        True,
    ),
    (
        "RuntimeError: shape '[8, 2048, 32, 128]' is invalid for input of size 33554432",
        "code_error",
        True,
    ),
    (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU",
        "cuda_oom",
        True,
    ),
    (
        "ValueError: Expected input batch_size (32) to match target batch_size (64).",
        "code_error",
        True,
    ),
    (
        "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] "
        "at entry 0 and [1, 224, 224] at entry 5",
        "code_error",
        True,
    ),
    (
        "PIL.UnidentifiedImageError: cannot identify image file '/data/images/0001.jpg'",
        "code_error",
        True,
    ),
    (
        "OSError: Can't load the model for 'mymodel'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with "
        "the same name. Otherwise, make sure 'mymodel' is the correct path to a directory "
        "containing a file named pytorch_model.bin, tf_model.h5, model.ckpt or "
        "flax_model.msgpack.",
        "hf_hub_error",
        True,
    ),
    (
        "datasets.exceptions.DatasetGenerationError: An error occurred while generating "
        "the dataset",
        "code_error",
        True,
    ),
    (
        "pyarrow.lib.ArrowInvalid: JSON parse error: Missing a name for object member. in row 0",
        "code_error",
        True,
    ),
    (
        "RuntimeError: Timed out initializing process group in store based barrier on "
        "rank: 3, for key: store_based_barrier_key:1 (world_size=8, worker_count=4, "
        "timeout=0:30:00)",
        "nccl_timeout",
        True,
    ),
    (
        "RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for "
        "failure was: [Rank 2] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=12, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800125 "
        "milliseconds before timing out.",
        "nccl_timeout",
        True,
    ),
    (
        "ValueError: The checkpoint you are trying to load has model type `qwen3` but "
        "Transformers does not recognize this architecture. This could be because of an "
        "issue with the checkpoint, or because your version of Transformers is out of date.",
        "module_not_found",
        True,
    ),
    (
        "torch._C._cuda_init() RuntimeError: CUDA driver initialization failed, you might "
        "not have a CUDA gpu.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, "
        "2) but found runtime version (8, 5, 0).",
        "cudnn_error",
        True,
    ),
    ("OverflowError: cannot fit 'int' into an index-sized integer", "code_error", True),
    (
        "RecursionError: maximum recursion depth exceeded while calling a Python object",
        "code_error",
        True,
    ),
    # serving engines (vLLM, SGLang), JAX's backends, extension builds
    (
        "ValueError: Free memory on device (3.2/79.1 GiB) on startup is less than desired "
        "GPU memory utilization (0.9, 71.2 GiB). Decrease GPU memory utilization or reduce "
        "GPU memory used by other processes.",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: Error building extension 'fused_adam'",
        "module_not_found",
        True,
    ),
    (
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA "
        "install root.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No "
        "visible GPU devices. (you may need to uninstall the failing plugin package, or "
        "set JAX_PLATFORMS=cpu to skip this backend.)",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "RuntimeError: Unable to initialize backend 'tpu': UNKNOWN: TPU initialization "
        "failed: open(/dev/accel0): Device or resource busy: Device or resource busy; "
        "Couldn't open device: /dev/accel0",
        "node_failure",
        True,
    ),
    (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed "
        "core proc(s): {}",
        "unknown",
        True,
    ),
    # Megatron's check of the gradients before their all-reduce, and torch's clipping refusing
    # a non-finite norm
    (
        "AssertionError: Rank 3: found NaN in local grad norm in backward pass before "
        "data-parallel communication collective. Device: 3, node: node-7",
        "nan_loss",
        True,
    ),
    (
        "RuntimeError: Rank 0, node node-1, device 0, iteration 1200: Unexpected result nan "
        "(message='found NaN in local grad norm for bucket #0 in backward pass before "
        "data-parallel communication collective')",
        "nan_loss",
        True,
    ),
    (
        "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is "
        "non-finite, so it cannot be clipped. To disable this error and scale the gradients by "
        "the non-finite norm anyway, set `error_if_nonfinite=False`",
        "nan_loss",
        True,
    ),
    # transformers' and datasets' words for what neither the Hub nor a local folder had
    (
        "OSError: Incorrect path_or_model_id: '/data/models/llama-7b'. Please provide either "
        "the path to a local folder or the repo_id of a model on the Hub.",
        "hf_hub_error",
        True,
    ),
    (
        "OSError: meta-llama/Llama-2-7b-hf does not appear to have a file named config.json. "
        "Checkout 'https://huggingface.co/meta-llama/Llama-2-7b-hf/None' for available files.",
        "hf_hub_error",
        True,
    ),
    (
        "FileNotFoundError: Couldn't find a dataset script at /work/data/squad/squad.py or any "
        "data file in the same directory.",
        "hf_hub_error",
        True,
    ),
    (
        "ConnectionError: Couldn't reach https://raw.githubusercontent.com/huggingface/datasets/"
        "2.0.0/datasets/glue/glue.py (ConnectionError(MaxRetryError(...)))",
        "hf_hub_error",
        True,
    ),
    # glibc's strerror and strsignal in the node's language
    ("cp: 写入'/scratch/out.bin' 出错: 设备上没有空间", "disk_full", False),
    (
        "tar: out.tar: Wrote only 4096 of 10240 bytes: Auf dem Gerät ist kein Speicherplatz "
        "mehr verfügbar",
        "disk_full",
        False,
    ),
    ("bash: ./train.sh: 权限不够", "permission_denied", False),
    ("PermissionError: [Errno 13] Keine Berechtigung: '/data/ckpt'", "permission_denied", True),
    ("已放弃 (核心已转储)", "segfault", False),
    ("Abgebrochen (Speicherabzug geschrieben)", "segfault", False),
    ("已终止", "unknown", False),
    # MPICH's and Intel MPI's kill report, the clouds' and notebooks' words for memory
    ("=   KILLED BY SIGNAL: 9 (Killed)", "host_oom", False),
    ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", "host_oom", False),
    (
        "Your notebook tried to allocate more memory than is available. It has restarted.",
        "host_oom",
        False,
    ),
    (
        "The replica workerpool0-0 ran out-of-memory and exited with a non-zero status of "
        "9(SIGKILL).",
        "host_oom",
        False,
    ),
    ("The replica workerpool0-0 exited with a non-zero status of 137.", "host_oom", False),
    ("OutOfMemoryError: Container killed due to memory usage", "host_oom", False),
    # ROCm, oneAPI, Gaudi
    ("RuntimeError: HIP error: invalid device function", "cuda_driver_mismatch", True),
    (
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
        "cuda_driver_mismatch",
        False,
    ),
    ("RuntimeError: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "cuda_oom", True),
    (
        "RuntimeError: synStatus=26 [Generic failure] Device acquire failed.",
        "node_failure",
        True,
    ),
    ("=>> PBS: job killed: cput 3601 exceeded limit 3600", "slurm_time_limit", False),
    # llama.cpp's check of a GGUF file, Ollama's of the host's memory, gym's missing extra
    (
        "llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within "
        "the file bounds, model is corrupted or incomplete",
        "checkpoint_load_error",
        False,
    ),
    (
        "Error: model requires more system memory (12.5 GiB) than is available (8.0 GiB)",
        "host_oom",
        False,
    ),
    (
        "gym.error.DependencyNotInstalled: box2D is not installed, run `pip install gym[box2d]`",
        "module_not_found",
        True,
    ),
    # Windows' ERROR_COMMITMENT_LIMIT (its paging file full), in any language, even while
    # torch loads a DLL
    (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. "
        'Error loading "C:\\Python39\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" '
        "or one of its dependencies.",
        "host_oom",
        True,
    ),
    ("OSError: [WinError 1455] 页面文件太小，无法完成操作。", "host_oom", True),
    # an import that says what to install, transformers' version check, cffi's dlopen
    (
        "ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install "
        "accelerate` and the latest version of bitsandbytes: `pip install -i "
        "https://pypi.org/simple/ bitsandbytes`",
        "module_not_found",
        True,
    ),
    (
        "ImportError: This modeling file requires the following packages that were not found in "
        "your environment: flash_attn. Run `pip install flash_attn`",
        "module_not_found",
        True,
    ),
    (
        "ImportError: accelerate>=0.26.0 is required for a normal functioning of this module, "
        "but found accelerate==0.20.3.",
        "module_not_found",
        True,
    ),
    ("OSError: sndfile library not found", "module_not_found", True),
    (
        "OSError: cannot load library 'libsndfile.so': libsndfile.so: cannot open shared object "
        "file: No such file or directory",
        "module_not_found",
        True,
    ),
    # Ray's own words (verl's and OpenRLHF's runtime), vLLM's async engine, DeepSpeed's builder
    (
        "ray.exceptions.ObjectStoreFullError: Failed to put object ffff in object store because "
        "it is full. Object size is 2.00 GB.",
        "host_oom",
        True,
    ),
    (
        "ray.exceptions.NodeDiedError: Task failed due to the node (node ID: abc) where this "
        "task was running crashed unexpectedly.",
        "node_failure",
        True,
    ),
    (
        "The node with node id: abc and address: 10.0.0.3 and node name: 10.0.0.3 has been "
        "marked dead because the detector has missed too many heartbeats from it.",
        "node_failure",
        False,
    ),
    (
        "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this "
        "task. Check python-core-worker-*.log files for more information.",
        "unknown",
        True,
    ),
    (
        "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already.",
        "unknown",
        True,
    ),
    (
        "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: "
        "Installed CUDA version 12.1 does not match the version torch was compiled with 11.8",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable "
        "to compile CUDA op(s)",
        "cuda_driver_mismatch",
        True,
    ),
    # a TPU slice's hosts that could not meet, glog's FATAL check, Google Cloud's and W&B's
    # refusals, W&B's start-up timing out, NCCL's InfiniBand verbs
    (
        "RuntimeError: Unable to initialize backend 'tpu': INTERNAL: Failed to establish "
        "SliceBuilder grpc channel to 10.130.0.4:8471.",
        "node_failure",
        True,
    ),
    ("F0501 12:00:00.123456 1234 tpu_driver.cc:812] Check failed: status.ok()", "segfault", False),
    (
        "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/storage/v1/"
        "b/bucket/o/x: sa@x.iam.gserviceaccount.com does not have storage.objects.get access to "
        "the Google Cloud Storage object.",
        "permission_denied",
        True,
    ),
    (
        "wandb.errors.AuthenticationError: The API key you provided is either invalid or missing.",
        "permission_denied",
        True,
    ),
    (
        "wandb.errors.errors.CommError: Run initialization has timed out after 90.0 sec.",
        "unknown",
        True,
    ),
    (
        "misc/ibvwrap.cc:210 NCCL WARN Call to ibv_create_qp failed with error Cannot allocate "
        "memory",
        "nccl_error",
        False,
    ),
    # vLLM V1's and SGLang's reports of an engine process that died: its error is above
    ("ERROR 05-01 12:00:00 [core.py:586] EngineCore failed to start.", "unknown", False),
    ("Rank 0 scheduler is dead. Please check if there are relevant logs.", "unknown", False),
    (
        "Received sigquit from a child process. It usually means the child failed.",
        "unknown",
        False,
    ),
    # the other runtimes a data job runs: R's, Julia's and Go's words for memory and crashes,
    # R's missing package
    ("Error: cannot allocate vector of size 7.5 Gb", "host_oom", False),
    ("ERROR: LoadError: OutOfMemoryError()", "host_oom", False),
    ("fatal error: runtime: out of memory", "host_oom", False),
    (" *** caught segfault ***\naddress 0x18, cause 'memory not mapped'", "segfault", False),
    ("fatal error: unexpected signal during runtime execution", "segfault", False),
    (
        "Error in library(ggplot2) : there is no package called ‘ggplot2’\nExecution halted",
        "module_not_found",
        False,
    ),
    # a process pool's report of a worker that died without an exception: no cause named
    (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed "
        "by the executor was unexpectedly terminated. This could be caused by a segmentation "
        "fault while calling the function or by an excessive memory usage causing the "
        "Operating System to kill the worker.",
        "unknown",
        True,
    ),
    (
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was "
        "terminated abruptly while the future was running or pending.",
        "unknown",
        True,
    ),
    # jax.distributed.initialize: not every host reached the coordinator's barrier in time
    (
        "jax.errors.JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: "
        "PjRT_Client_Connect. This usually happens because a task triggered the barrier too "
        "early or too slowly.",
        "nccl_error",
        True,
    ),
    # Keras' TerminateOnNaN callback ending fit()
    ("Batch 123: Invalid loss, terminating training", "nan_loss", False),
    # an HTCondor pool's periodic hold for memory over the job's request
    ("Job was held. Reason: Memory usage exceeded request_memory", "host_oom", False),
    ("ray.exceptions.OutOfDiskError: Local disk is full", "disk_full", True),
    (
        "RuntimeError: Attempting to deserialize object on a CUDA device but "
        "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please "
        "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "node-3:1234:5678 [0] misc/socket.cc:49 NCCL WARN NET/Socket : Connection closed by "
        "remote peer 10.0.0.2<44646>",
        "nccl_error",
        False,
    ),
    (
        "node-3:1234:5678 [0] NCCL WARN NET/Socket : peer 10.0.0.2<54321> message truncated : "
        "receiving 4096 bytes instead of 1024",
        "nccl_error",
        False,
    ),
    ("RuntimeError: DataLoader timed out after 600 seconds", "dataloader_worker_killed", True),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime "
        "executable: run time error: custom call 'xla.gpu.custom_call' failed: "
        "jaxlib/gpu/prng_kernels.cc:33: operation gpuGetLastError() failed: out of memory.",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
        "node_failure",
        True,
    ),
    (
        "ValueError: Can't find a checkpoint index (pytorch_model.bin.index.json or "
        "model.safetensors.index.json) in /ckpt/step_100.",
        "checkpoint_load_error",
        True,
    ),
    (
        "ValueError: No valid checkpoint found in output directory (/out/run1)",
        "checkpoint_load_error",
        True,
    ),
    # AWS Batch's and Flux's words for a job past its time limit
    ("Job attempt duration exceeded timeout", "slurm_time_limit", False),
    (
        "flux-job: job.exception type=timeout severity=0 resource allocation expired",
        "slurm_time_limit",
        False,
    ),
    # Kueue, LSF's resource connector and AWS Batch taking the job's capacity back
    ("Preempted to accommodate a higher priority Workload", "preemption", False),
    (
        "TERM_RC_RECLAIM: job killed and requeued when an LSF resource connector execution host "
        "is reclaimed by EC2.",
        "preemption",
        False,
    ),
    ("Host EC2 (instance i-0abc123) terminated.", "preemption", False),
    # a step whose processes would not die, a hung job LSF removed: the node's
    (
        "slurmstepd: error: *** JOB 4711 STEPD TERMINATED ON node-a17 AT 2024-05-01T12:00:00 "
        "DUE TO JOB NOT COMPLETING ***",
        "node_failure",
        False,
    ),
    ("TERM_REMOVE_HUNG_JOB: job removed from the LSF system.", "node_failure", False),
    (
        "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit "
        "initialization on GPU:0 failed. Status: out of memory",
        "cuda_oom",
        True,
    ),
    (
        "tensorflow.python.framework.errors_impl.UnimplementedError: DNN library is not found.",
        "cudnn_error",
        True,
    ),
    (
        "RuntimeError: jaxlib version 0.4.1 is newer than and incompatible with jax version "
        "0.3.25. Please update your jax and/or jaxlib packages.",
        "module_not_found",
        True,
    ),
    (
        "TypeError: Descriptors cannot be created directly. If this call came from a _pb2.py "
        "file, your generated code is out of date and must be regenerated with protoc >= 3.19.0.",
        "module_not_found",
        True,
    ),
    (
        "ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 "
        "from C header, got 88 from PyObject",
        "module_not_found",
        True,
    ),
    (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error "
        "802: system not yet initialized",
        "node_failure",
        True,
    ),
    (
        "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, "
        "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the "
        "available devices to be zero.",
        "unknown",
        True,
    ),
    # the other runtimes' uncaught errors: Go's panic, the JVM's exception in main, MATLAB's
    ("panic: runtime error: index out of range [5] with length 3", "code_error", False),
    (
        'Exception in thread "main" java.lang.IllegalArgumentException: bad input',
        "code_error",
        False,
    ),
    ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', "host_oom", False),
    ("Error using trainNetwork (line 184)", "code_error", False),
    # a job that builds its native code first: the build tools' failure lines
    ("make: *** [Makefile:12: all] Error 1", "module_not_found", False),
    ("CMake Error at CMakeLists.txt:10 (find_package):", "module_not_found", False),
    ("ERROR: Command errored out with exit status 1:", "module_not_found", False),
    (
        "csrc/ops.cu:3:10: fatal error: cuda_runtime.h: No such file or directory",
        "module_not_found",
        False,
    ),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_90'", "module_not_found", False),
    ("/usr/bin/ld: cannot find -lcudart", "module_not_found", False),
    # slurmstepd's banner for a step whose program failed by itself: the program's error decides
    (
        "slurmstepd: error: *** STEP 4711.0 ON node-a17 FAILED (non-zero exit code or other "
        "failure mode) ***",
        "unknown",
        False,
    ),
    # the kernel's OOM report in its other lines
    (
        "[12345.678901] Killed process 4242 (python) total-vm:123456789kB, anon-rss:98765432kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:200000kB oom_score_adj:0",
        "host_oom",
        False,
    ),
    (
        "[12345.678901] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
        "mems_allowed=0-1,oom_memcg=/slurm/uid_1000/job_4711,task=python,pid=4242,uid=1000",
        "host_oom",
        False,
    ),
    # a notebook's kernel dying (Jupyter, VS Code, nbclient)
    (
        "Kernel Restarting: The kernel for train.ipynb appears to have died. It will restart "
        "automatically.",
        "unknown",
        False,
    ),
    (
        "The Kernel crashed while executing code in the current cell or a previous cell. Please "
        "review the code in the cell(s) to identify a possible cause of the failure.",
        "unknown",
        False,
    ),
    ("nbclient.exceptions.DeadKernelError: Kernel died", "unknown", True),
    # macOS' shells: strsignal with its number, zsh's job report
    ("zsh: killed     python train.py --epochs 10", "host_oom", False),
    ("Killed: 9", "host_oom", False),
    ("Illegal instruction: 4", "segfault", False),
    # a CI runner's step (GitHub Actions)
    ("##[error]Process completed with exit code 1.", "unknown", False),
    ("##[error]The operation was canceled.", "cancelled", False),
    # the LLM APIs a data-generation or evaluation job calls: a refused or dropped call is the
    # service's, a refused key a credential, a request too long for the model the job's own
    (
        "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached for "
        "gpt-4 in organization org-abc on tokens per min (TPM)', 'code': 'rate_limit_exceeded'}}",
        "unknown",
        True,
    ),
    ("openai.APIConnectionError: Connection error.", "unknown", True),
    ("openai.APITimeoutError: Request timed out.", "unknown", True),
    (
        "anthropic.InternalServerError: Error code: 529 - {'type': 'error', 'error': {'type': "
        "'overloaded_error', 'message': 'Overloaded'}}",
        "unknown",
        True,
    ),
    ("httpx.ConnectError: [Errno 111] Connection refused", "unknown", True),
    (
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
        "provided.', 'type': 'invalid_request_error', 'code': 'invalid_api_key'}}",
        "permission_denied",
        True,
    ),
    (
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"This model's "
        'maximum context length is 4096 tokens. However, you requested 5000 tokens"}',
        "code_error",
        True,
    ),
    # the other frameworks' device allocators and fatal records
    ("OSError: (External) CUDA error(2), out of memory.", "cuda_oom", True),
    (
        "dgl._ffi.base.DGLError: [12:00:00] /opt/dgl/src/runtime/cuda/cuda_device_api.cc:117: "
        "Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading: CUDA: out of memory",
        "cuda_oom",
        True,
    ),
    (
        "RuntimeError: Malloc for kernel output failed, Memory isn't enough, "
        "node:Default/Conv2D-op1",
        "cuda_oom",
        True,
    ),
    (
        "[12/01/2023-10:00:00] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::145] Error "
        "Code 2: OutOfMemory (no further information)",
        "cuda_oom",
        False,
    ),
    (
        "[LightGBM] [Fatal] Check failed: (best_split_info.left_count) > (0) at "
        "/src/treelearner/serial_tree_learner.cpp, line 630 .",
        "code_error",
        False,
    ),
    # PBS and LSF refusing the job itself
    ("qsub: job rejected by all possible destinations", "code_error", False),
    (
        "TERM_CWD_NOTEXIST: current working directory not accessible or does not exist on the "
        "execution host",
        "code_error",
        False,
    ),
    # Ray: the objects a task needed went with the process or node that held them
    (
        "ray.exceptions.OwnerDiedError: Failed to retrieve object 00ff. The object's owner has "
        "exited.",
        "unknown",
        True,
    ),
    (
        "ray.exceptions.ObjectLostError: Failed to retrieve object 00ff. All copies of 00ff are "
        "lost due to node failure.",
        "unknown",
        True,
    ),
    (
        "ray.exceptions.RaySystemError: System error: Failed to unpickle serialized exception",
        "unknown",
        True,
    ),
    (
        "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to "
        "compile PyTorch (11.8). Please make sure to use the same CUDA versions.",
        "cuda_driver_mismatch",
        True,
    ),
    (
        "OSError: Error no file named pytorch_model.bin, model.safetensors, tf_model.h5, "
        "model.ckpt.index or flax_model.msgpack found in directory /ckpt/step_100.",
        "checkpoint_load_error",
        True,
    ),
    # the other runtimes a job's tools run on: Node.js, Ruby, the JVM, Lua, Perl, MATLAB and
    # Intel Fortran, in their own words
    ("Error: Cannot find module 'express'", "module_not_found", False),
    (
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /app/index.js",
        "module_not_found",
        False,
    ),
    (
        "/usr/lib/ruby/2.7.0/rubygems/core_ext/kernel_require.rb:92:in `require': cannot load "
        "such file -- nokogiri (LoadError)",
        "module_not_found",
        False,
    ),
    (
        'Exception in thread "main" java.lang.NoClassDefFoundError: '
        "org/apache/spark/sql/SparkSession",
        "module_not_found",
        False,
    ),
    ("Error: Could not find or load main class org.example.Train", "module_not_found", False),
    ("lua: train.lua:1: module 'nn' not found:", "module_not_found", False),
    (
        "Can't locate Moose.pm in @INC (you may need to install the Moose module) (@INC "
        "contains: /etc/perl) at run.pl line 3.",
        "module_not_found",
        False,
    ),
    ("Undefined function or variable 'trainNetwork'.", "code_error", False),
    ("forrtl: error (69): process interrupted (SIGINT)", "cancelled", False),
    ("forrtl: severe (41): insufficient virtual memory", "host_oom", False),
    (
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
        "host_oom",
        False,
    ),
]


@pytest.mark.parametrize(("line", "category", "tb"), WORDS)
def test_the_words_that_end_a_job_name_its_cause(line: str, category: str, tb: bool) -> None:
    d = diagnose_text(STEPS + (TB if tb else "") + line + "\n")
    assert (d["category"], d["failed"]) == (category, True)


NCCL_IB = (
    "node-3:1234:5678 [0] transport/net_ib.cc:1294 NCCL WARN NET/IB : Got completion from peer "
    "10.0.0.2<43920> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
)


def test_nccls_warn_is_its_error_level() -> None:
    """NCCL writes only INFO and WARN, and its failures at WARN: a fatal line there is the cause,
    one the job trained on after is survived, and a WARN no entry knows is no failure."""
    assert diagnose_text(STEPS + NCCL_IB)["category"] == "nccl_error"
    assert diagnose_text(NCCL_IB + STEPS)["failed"] is False
    plugin = "node-3:1234:5678 [0] NCCL WARN NET/Plugin: Could not find: libnccl-net.so\n"
    assert diagnose_text(STEPS + plugin + STEPS)["failed"] is False


def test_a_git_remote_that_refuses_the_job_is_noise_it_carries_on_after() -> None:
    git = "fatal: could not read Username for 'https://github.com': No such device or address\n"
    assert diagnose_text(git + STEPS)["failed"] is False


@pytest.mark.parametrize(
    "end",
    [
        "RuntimeError: Engine core initialization failed. See root cause above.\n",
        "ERROR 05-01 12:00:00 [core.py:586] EngineCore failed to start.\n",
        "Rank 0 scheduler is dead. Please check if there are relevant logs.\n",
    ],
)
def test_a_serving_engines_start_up_failure_leaves_the_cause_to_the_error_above(end: str) -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    assert diagnose_text(STEPS + TB + oom + TB + end)["category"] == "cuda_oom"


def test_a_failed_extension_build_names_the_compiler_missing_when_it_is() -> None:
    log = "/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found\n"
    log += "ninja: build stopped: subcommand failed.\n"
    log += TB + "RuntimeError: Error building extension 'fused_adam'\n"
    d = diagnose_text(STEPS + log)
    assert (d["category"], d["failed"]) == ("module_not_found", True)
    assert d["catalog_id"] != "extension_build_failed"


JOBLIB = (
    "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by "
    "the executor was unexpectedly terminated. This could be caused by a segmentation fault "
    "while calling the function or by an excessive memory usage causing the Operating System "
    "to kill the worker.\n\nThe exit codes of the workers are {%s}\n"
)


@pytest.mark.parametrize(
    ("codes", "category"),
    [("SIGKILL(-9)", "host_oom"), ("SIGSEGV(-11)", "segfault"), ("EXIT(1)", "unknown")],
)
def test_joblibs_workers_exit_codes_name_the_cause_its_report_does_not(
    codes: str, category: str
) -> None:
    d = diagnose_text(STEPS + TB + JOBLIB % codes)
    assert (d["category"], d["failed"]) == (category, True)


def test_a_helper_the_script_stopped_itself_is_not_the_jobs_end() -> None:
    """bash reports each background job the script ends; a GPU monitor killed after the work is
    done is no failure, the job's own program killed is one."""
    line = "/var/spool/slurmd/job4711/slurm_script: line 20:  4242 Terminated              {}\n"
    assert diagnose_text(STEPS + line.format("nvidia-smi dmon -s u > gpu.log"))["failed"] is False
    assert diagnose_text(STEPS + line.format("sleep 3600"))["failed"] is False
    assert diagnose_text(STEPS + line.format("python train.py"))["failed"] is True


ATEXIT_TB = (
    'Traceback (most recent call last):\n  File "/opt/conda/lib/python3.8/site-packages/wandb/'
    'sdk/wandb_run.py", line 1234, in _atexit_cleanup\n    self._on_finish()\n'
    "BrokenPipeError: [Errno 32] Broken pipe\n"
)


def test_an_atexit_callbacks_error_does_not_end_the_job() -> None:
    """Python prints an atexit callback's exception and exits with the status it had."""
    assert diagnose_text(STEPS + "Error in atexit._run_exitfuncs:\n" + ATEXIT_TB)["failed"] is False
    assert diagnose_text(STEPS + ATEXIT_TB)["failed"] is True
