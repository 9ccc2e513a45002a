#!/usr/bin/env bash
#SBATCH --job-name=sft-oom-demo
#SBATCH --time=30
# An SFT run that dies of CUDA out of memory after a few steps (the message a real one prints).
for step in $(seq 1 6); do
  printf "{'loss': %s, 'grad_norm': 1.%s, 'learning_rate': 2e-05, 'epoch': 0.0%s}\n" "2.$((9 - step))" "$step" "$step"
  sleep 1
done
cat >&2 <<'TRACE'
Traceback (most recent call last):
  File "/opt/lab/train_sft.py", line 212, in <module>
    trainer.train()
  File "/opt/lab/.venv/lib/python3.11/site-packages/transformers/trainer.py", line 2241, in train
    return inner_training_loop(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.21 GiB is free. Of the allocated memory 76.02 GiB is allocated by PyTorch, and 1.05 GiB is reserved by PyTorch but unallocated.
TRACE
exit 1
