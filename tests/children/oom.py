"""A training script that dies of CUDA OOM (a real PyTorch traceback) unless its batch
size is at most OOM_LIMIT (default 8). Sizes and pids change on every run."""

from __future__ import annotations

import os
import random
import sys

from common import arg, steps

batch = int(arg("batch") or 64)
limit = int(os.environ.get("OOM_LIMIT", "8"))
print(f"[rank0]: pid {os.getpid()} starting, per-device batch {batch}", flush=True)
steps(3)
if batch <= limit:
    print("training finished", flush=True)
    sys.exit(0)
tried = random.choice([20.0, 256.0, 1.5 * 1024, 2048.0]) * batch / 8
free = random.uniform(1, 900)
used, torch_gib, reserved = random.randint(10, 99), random.randint(10, 99), random.uniform(1, 900)
message = (
    f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {tried:.2f} MiB. GPU 0 has "
    f"a total capacity of 79.15 GiB of which {free:.2f} MiB is free. Process {os.getpid()} has "
    f"78.{used} GiB memory in use. Of the allocated memory 74.{torch_gib} GiB is allocated by "
    f"PyTorch, and {reserved:.2f} MiB is reserved by PyTorch but unallocated. If reserved but "
    "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
    "to avoid fragmentation.  See documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
)
run = f"/home/lab/runs/sft-{os.getpid()}"
print(
    f"""Traceback (most recent call last):
  File "{run}/train.py", line 212, in <module>
    main()
  File "{run}/train.py", line 198, in main
    trainer.train()
  File "/opt/venv/lib/python3.11/site-packages/transformers/trainer.py", line 1859, in train
    return inner_training_loop(
  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 116, in forward
    return F.linear(input, self.weight, self.bias)
{message}""",
    file=sys.stderr,
    flush=True,
)
sys.exit(1)
