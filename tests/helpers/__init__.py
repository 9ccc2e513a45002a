"""Helpers shared between test modules (import them from here, never from a test module).

- `cli`: run the real labctl CLI in a subprocess (`run_labctl`, `ROOT`, `LABCTL`).
- `config`: write a labctl config file with `[[clusters]]` tables (`write_config`).
- `slurm`: run SLURM commands against the local test cluster, submit jobs, run
  `labctl poll` on it and pick a scenario's records (`slurm`, `sbatch`, `sacct_states`,
  `poll`, `mine`).
- `disk`: `du` as the reference, real tmpfs mounts, file modes enforced for root
  (`setpriv` without DAC capabilities), trees aged with `os.utime`.
- `prune`: a config with `[[prune.rules]]`, `labctl prune-disk` with its records checked
  against the schema, records by name.
- `redact_reference`: the earlier redactor, the reference of the redaction differential test.
- `startup`: the backend libraries the CLI entry must not import (`HEAVY`) and the modules
  a fresh interpreter loads (`modules_after`).
- `cron`: the bare environment cron gives a job (`cron_env`).
- `yamlstrip_cases`: strip-yaml-comments' hand-written cases with exact bytes (`STRIPPED`);
  `yaml_docs`: generated YAML texts for its property tests (`yaml_texts`, `loads_equal`).
"""
