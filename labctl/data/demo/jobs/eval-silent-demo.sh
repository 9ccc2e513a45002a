#!/usr/bin/env bash
#SBATCH --job-name=eval-silent-demo
#SBATCH --time=30
# An eval job that prints progress (tqdm writes \r, not \n) for two seconds, then wedges:
# alive, silent (done before the first poll sees it, so its counter never rises under watch).
for i in $(seq 1 20); do
  printf '\rEvaluating: %3d%%|          | %d/500 [00:%02d<05:00,  1.60it/s]' $((i / 5)) "$i" "$i"
  sleep 0.1
done
sleep 100000
