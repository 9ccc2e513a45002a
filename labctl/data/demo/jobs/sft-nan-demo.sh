#!/usr/bin/env bash
#SBATCH --job-name=sft-nan-demo
#SBATCH --time=30
# An SFT run whose loss turns NaN; the trainer gives up after a few NaN steps.
for step in $(seq 1 5); do
  printf "{'loss': 1.%s, 'grad_norm': 3.%s, 'learning_rate': 0.001, 'epoch': 0.%s}\n" "$step" "$step" "$step"
  sleep 1
done
for step in $(seq 6 9); do
  printf "{'loss': nan, 'grad_norm': nan, 'learning_rate': 0.001, 'epoch': 0.%s}\n" "$step"
  sleep 1
done
echo "Traceback (most recent call last):" >&2
echo '  File "/opt/lab/train_sft.py", line 240, in training_step' >&2
echo "FloatingPointError: Loss became infinite or NaN at iteration=9!" >&2
exit 1
