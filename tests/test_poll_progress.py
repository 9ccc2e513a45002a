"""RUNNING is not progress: poll against real SLURM jobs that move, go silent, and die.

One module-scoped scenario starts jobs whose behaviour changes when the test touches a
trigger file, so consecutive polls (a few seconds apart, with allowances shrunk through
the config) see each transition:

  steady     prints verl-style steps (with RL signals) every 0.3 s, forever
  silent     prints five tqdm frames (`\\r` only), then sleeps: stalled on the 2nd miss
  dies       steps until the trigger, then a traceback and exit 1: FAILED
  nccl       steps until the trigger, then an NCCL watchdog timeout line, stays alive
  traceback  steps until the trigger, then a traceback, stays alive: failed once nothing
             more is written by the next poll
  trials     writes trials/<n>/result.json every 0.3 s (the `results` counter)
  wandb      a real W&B offline run logging steps until the trigger, then finish(),
             the job staying alive: its step read from run-<id>.wandb, live and finished
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.slurm import SSH_CONFIG, mine, poll, sbatch, slurm

pytestmark = pytest.mark.slurm
PYTHON = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "python"
FAST = {
    "poll_interval_s": 1.0,
    "floor_s": 2.0,
    "startup_grace_s": 0.0,
    "misses_to_stall": 2,
}

STEADY = """#!/bin/bash
i=0
while true; do
  i=$((i+1))
  echo "step:$i - actor/entropy:0.41 - actor/grad_norm:0.15 - actor/ppo_kl:0.002 \
- rollout_corr/log_ppl_diff:0.01"
  sleep 0.3
done
"""
SILENT = r"""#!/bin/bash
for i in 1 2 3 4 5; do
  printf '\r %3d%%|#         | %d/100 [00:%02d<01:35,  1.00it/s]' $i $i $i
  sleep 0.1
done
sleep 600
"""
UNTIL = """#!/bin/bash
i=0
until [ -e {trigger} ]; do i=$((i+1)); echo "step:$i - actor/entropy:0.4"; sleep 0.3; done
"""
DIES = (
    UNTIL
    + """cat <<'EOF'
Traceback (most recent call last):
  File "train.py", line 9, in <module>
    main()
RuntimeError: dataloader worker died
EOF
exit 1
"""
)
NCCL = (
    UNTIL
    + """echo "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective \
operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran for 600000 milliseconds"
sleep 600
"""
)
TRACEBACK = (
    UNTIL
    + """printf 'Traceback (most recent call last):\\n  File "x.py", line 1\\n\
ValueError: bad batch\\n'
sleep 600
"""
)
TRIALS = """#!/bin/bash
n=0
while true; do
  n=$((n+1)); mkdir -p trials/$n
  echo '{{"score": 1}}' > trials/$n/tmp && mv trials/$n/tmp trials/$n/result.json
  sleep 0.3
done
"""
WANDB = """#!/bin/bash
export WANDB_MODE=offline WANDB_SILENT=true WANDB_DIR=$PWD WANDB_CACHE_DIR=$PWD/.cache \
  WANDB_CONFIG_DIR=$PWD/.config WANDB_DATA_DIR=$PWD/.data
exec {python} - <<'EOF'
import os, time, wandb
settings = wandb.Settings(x_transaction_log_flush_interval=0.3)
run = wandb.init(mode="offline", project="labctl-poll", settings=settings)
step = 0
while not os.path.exists("{trigger}"):
    run.log({{"loss": 1.0 / (step + 1), "actor/entropy": 0.3}})
    step += 1
    time.sleep(0.3)
run.finish()
open("finished", "w").write(str(step))
time.sleep(600)
EOF
"""


class Scenario:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.trigger = root / "trigger"
        self.tag = f"pp{uuid.uuid4().hex[:6]}"
        self.ids: dict[str, str] = {}
        self.dirs: dict[str, Path] = {}


def _submit(sc: Scenario) -> None:
    scripts = {
        "steady": STEADY,
        "silent": SILENT,
        "dies": DIES.format(trigger=sc.trigger),
        "nccl": NCCL.format(trigger=sc.trigger),
        "traceback": TRACEBACK.format(trigger=sc.trigger),
        "trials": TRIALS.format(),
        "wandb": WANDB.format(python=PYTHON, trigger=sc.trigger),
    }
    for role, script in scripts.items():
        d = sc.root / role
        d.mkdir()
        sc.dirs[role] = d
        sc.ids[role] = sbatch(d, "-J", f"{sc.tag}-{role}", script=script)


def _ready(sc: Scenario) -> bool:
    states = slurm("squeue", "-h", "-j", ",".join(sc.ids.values()), "-o", "%i %T").split()
    if states.count("RUNNING") < len(sc.ids):
        return False
    for role in ("steady", "dies", "nccl", "traceback"):
        log = sc.dirs[role] / f"slurm-{sc.ids[role]}.out"
        if not log.exists() or log.stat().st_size == 0:
            return False
    silent = sc.dirs["silent"] / f"slurm-{sc.ids['silent']}.out"
    if not silent.exists() or b" 5/100 [" not in silent.read_bytes():
        return False
    runs = list((sc.dirs["wandb"] / "wandb").glob("*run-*/run-*.wandb"))
    return bool(runs) and runs[0].stat().st_size > 4096 and (sc.dirs["trials"] / "trials").exists()


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    root = tmp_path_factory.mktemp("progress-jobs")
    root.chmod(0o777)
    sc = Scenario(root)
    try:
        _submit(sc)
        deadline = time.monotonic() + 120
        while not _ready(sc):
            assert time.monotonic() < deadline, "the progress jobs never got going"
            time.sleep(0.5)
        yield sc
    finally:
        if sc.ids:
            slurm("scancel", *sc.ids.values(), check=False)


def by_role(res: Any, sc: Scenario, cluster: str = "local") -> dict[str, dict[str, Any]]:
    return mine(res, sc, cluster)  # type: ignore[arg-type]


def test_progress_stall_and_death_across_polls(tmp_path: Path, scenario: Scenario) -> None:
    clusters: list[dict[str, Any]] = [{"name": "local", "results": ["result.json"]}]
    if SSH_CONFIG.exists():
        clusters.append(
            {"name": "remote", "host": "labctl-test", "ssh_options": ["-F", str(SSH_CONFIG)]}
        )

    def sweep() -> tuple[dict[str, dict[str, Any]], Any]:
        res = poll(tmp_path, clusters, poll_settings=None, extra={"progress": FAST})
        return by_role(res, scenario), res

    first, _ = sweep()
    for role in ("steady", "silent", "dies", "nccl", "traceback", "trials", "wandb"):
        assert first[role]["verdict"] == "running-unverified", (role, first[role]["progress"])
        assert first[role]["progress"]["evidence"][0].startswith("first sighting"), role
    steady = first["steady"]["progress"]
    assert steady["source"] == "log" and steady["format"] == "log:verl"
    assert steady["signals"] == {"entropy": 0.41, "grad_norm": 0.15, "kl": 0.002,
                                 "is_log_ratio": 0.01}  # fmt: skip
    silent = first["silent"]["progress"]
    assert (silent["value"], silent["total"], silent["format"]) == (5, 100, "log:tqdm")
    assert first["trials"]["progress"]["source"] == "results"
    assert first["trials"]["progress"]["counter"] == "trials"
    wb = first["wandb"]["progress"]
    assert wb["source"] == "wandb_file" and wb["wandb"]["run_id"] and wb["value"] >= 0

    scenario.trigger.touch()
    time.sleep(3)
    second, res2 = sweep()
    assert second["steady"]["verdict"] == "running-progressing"
    assert second["steady"]["progress"]["value"] > steady["value"]
    assert second["steady"]["progress"]["rate_per_h"] > 0
    assert second["trials"]["verdict"] == "running-progressing"
    assert second["wandb"]["progress"]["value"] > wb["value"]
    # first miss: only a suspicion (RUNNING is not progress)
    assert second["silent"]["verdict"] == "running-unverified"
    assert second["silent"]["progress"]["stall_suspect"]
    assert (second["dies"]["verdict"], second["dies"]["exit_code"]) == ("failed", 1)
    nccl = second["nccl"]
    assert (nccl["state"], nccl["verdict"], nccl["cause"]) == ("RUNNING", "failed", "nccl_timeout")
    assert "Watchdog caught collective operation timeout" in nccl["progress"]["markers"][-1]["line"]
    assert second["traceback"]["verdict"] != "failed"  # a soft marker waits for the next poll
    assert res2.code == 1

    deadline = time.monotonic() + 30
    while not (scenario.dirs["wandb"] / "finished").exists():
        assert time.monotonic() < deadline, "wandb.finish() never returned"
        time.sleep(0.3)
    time.sleep(2)
    third, res3 = sweep()
    assert third["silent"]["verdict"] == "running-stalled"
    assert third["silent"]["progress"]["misses"] == 2
    assert res3.code == 1
    tb = third["traceback"]
    assert (tb["verdict"], tb["cause"]) == ("failed", "user_code")
    assert any("no growth since" in e for e in tb["progress"]["evidence"])
    assert third["steady"]["verdict"] == "running-progressing"
    done = third["wandb"]["progress"]
    final = int((scenario.dirs["wandb"] / "finished").read_text())
    assert done["wandb"]["finished"] and done["value"] == final - 1
    if len(clusters) == 2:
        remote = by_role(res3, scenario, "remote")
        assert remote["wandb"]["progress"]["value"] == done["value"]
        assert remote["silent"]["verdict"] == "running-stalled"
