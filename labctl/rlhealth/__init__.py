"""The pure core of `labctl rl-health`: is an RL job in an untested setting worth keeping?

Parts, each pure (no printing, no environment, no clock of its own):

- keys: the RL metric names each framework logs (verl, TRL, OpenRLHF, SkyRL, NeMo-RL, W&B
  `train/` prefixes) mapped to one canonical name per signal.
- history: the metric history of one job (points in log order, step, offset, raw key).
- logread: a bounded read of a training log (head, evenly spaced samples, tail) parsed with
  poll's progress recognisers (`labctl.progress.formats`) into a history.
- wandbread: the same from a W&B run file (sampled regions of `run-*.wandb`) or API rows.
- stats: robust statistics over windows (median, MAD, fractions).
- signals, signals_run: one detector per failure signature, each with its window, its
  thresholds and the numbers that tripped it.
- verdict: KILL / NO-KILL / WATCH from the signals (KILL needs two independent families),
  the confidence and what a person should check next.
- select: which `job` records are RL jobs in an untested setting.
- run: wires job records and file arguments to their sources and yields `rl_health` records.
"""
