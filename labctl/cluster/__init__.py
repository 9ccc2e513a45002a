"""Clusters: where jobs run, how to reach them, and their schedulers (one level below the
commands that use them: poll, diagnose, and the commands to come).

- `config`: the `[[clusters]]` tables validated into `ClusterConfig` (`configured_clusters`,
  `cluster_named`); each scheduler's own keys are checked by its adapter.
- `scheduler`: the `Scheduler` protocol, the adapter table (`SCHEDULERS`), `scheduler_for`
  and `transport_for` (local, or SSH through the user's host alias).
- `snapshot`: what poll asks (`Ask`) and a scheduler answers (`Snapshot`, jobs of facts),
  and a job's identity across polls (`Key`, `job_key`).
- `slurm`, `jobtable`: the adapters (squeue + sacct; a job table printed as JSON).
"""
