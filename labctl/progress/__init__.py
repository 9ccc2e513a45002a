"""Progress reading for `labctl poll`: is a RUNNING job moving forward?

Pure layers, no subprocesses and no network:

- `logscan`: bounded incremental reads of a training log and the progress counter, metrics
  and death markers in the new bytes (`scan_chunk` for bytes from anywhere, `scan_file`).
- `wandb_file`: the last history step of a live W&B run from its `run-<id>.wandb` file.
- `results`: per-trial result files (`result.json`) counted by one bounded `find`.
- `cadence`: the verdict (`running-progressing` / `running-stalled` / `running-unverified`,
  or a terminal one on a death marker) from the stored state and a new observation.
"""
