#!/usr/bin/env bash
#SBATCH --job-name=rl-grpo-demo
#SBATCH --time=30
# A healthy RL run: verl-style step lines with the collapse signals, one every 2 seconds.
echo "(TaskRunner pid=$$) starting GRPO on qwen-0.5b (demo)"
for step in $(seq 1 900); do
  ent=$(awk -v s="$step" 'BEGIN{printf "%.3f", 0.9 - s*0.0004}')
  gn=$(awk -v s="$step" 'BEGIN{printf "%.3f", 0.25 + (s%7)*0.01}')
  echo "(TaskRunner pid=$$) step:$step - actor/entropy:$ent - actor/grad_norm:$gn - actor/ppo_kl:0.002 - rollout_corr/kl:0.011 - critic/score/mean:0.$((step % 90 + 10))"
  sleep 2
done
