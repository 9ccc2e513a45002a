"""Poll's progress glue without SLURM: the remote read planner in bash, observe() across
polls with an injected clock, and matching W&B API runs to jobs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.backends.script import Script, parse_sections
from labctl.backends.wandb_api import ApiRun
from labctl.poll.probes import DEFS, MIN_READ, TOTAL_READ_BUDGET, collect, probes_for
from labctl.poll.running import ProgressSettings, observe
from labctl.poll.sources import match_api
from labctl.progress.cadence import CadenceConfig
from labctl.progress.logstate import ScanConfig, ScanState, plan_read


def run_script(script: Script) -> dict[str, Any]:
    out = subprocess.run(["bash", "-s"], input=script.text().encode(), capture_output=True,
                         check=True).stdout  # fmt: skip
    return parse_sections(out, script.nonce)


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(0, 5000),
    offset=st.one_of(st.none(), st.integers(0, 6000)),
    first=st.integers(1, 3000),
    cap=st.integers(1, 3000),
)
def test_the_bash_read_planner_agrees_with_plan_read(
    tmp_path_factory: Any, size: int, offset: int | None, first: int, cap: int
) -> None:
    log = tmp_path_factory.mktemp("rr") / "train.log"
    data = bytes(range(256)) * 20
    log.write_bytes(data[:size])
    script = Script()
    script.define(DEFS)
    script.emit(f"_rr p0.o {log} {-1 if offset is None else offset} {first} {cap}")
    sec = run_script(script)["p0.o"]
    got_size, got_start = map(int, sec.parts["meta"].split())
    state = None if offset is None else ScanState(offset=offset)
    plan = plan_read(state, size, ScanConfig(max_read=cap, first_tail=first))
    assert (got_size, got_start) == (size, plan.start)
    assert sec.out == data[plan.start : plan.start + plan.length]


def test_the_read_budget_is_shared_by_all_running_jobs(tmp_path: Path) -> None:
    jobs = [{"verdict": "running", "stdout": f"/x/{i}.out", "stderr": f"/x/{i}.out"}
            for i in range(100)] + [{"verdict": "pending", "stdout": "/x/p.out"}]  # fmt: skip
    running = [j for j in jobs if j["verdict"] == "running"]  # poll.examine.choose's pick
    code = probes_for(running, {}, ProgressSettings(wandb_files=False))
    per_job = TOTAL_READ_BUDGET // 100
    assert len(code) == 100  # one log each (stderr is the same file)
    assert code[0] == f"_rr p0.o /x/0.out -1 {256 << 10} {per_job}"
    many = probes_for([dict(j) for j in jobs[:1]] * 1000, {}, ProgressSettings())
    assert many[0].endswith(f" {MIN_READ} {MIN_READ}")


def steps(a: int, b: int) -> bytes:
    return b"".join(b"step:%d - actor/entropy:0.5 - actor/grad_norm:1.5\n" % i for i in range(a, b))


class Log:
    """A job whose log we grow between polls, observed with an injected clock."""

    def __init__(self, tmp: Path, config: CadenceConfig) -> None:
        self.path = tmp / "job.out"
        self.path.write_bytes(b"")
        self.state: dict[str, Any] | None = None
        self.settings = ProgressSettings(cadence=config, wandb_files=False)
        self.job = {"verdict": "running", "stdout": str(self.path), "stderr": str(self.path),
                    "start_epoch": 1000.0, "name": "rl", "restarts": 0}  # fmt: skip

    def poll(self, now: float) -> tuple[str, str | None, dict[str, Any]]:
        job = dict(self.job)
        script = Script()
        script.define(DEFS)
        for code in probes_for([job], {"k": _Row(self.state)}, self.settings, key=lambda j: "k"):
            script.emit(code)
        collect([job], run_script(script))
        seen = observe(job, self.state, now=now, settings=self.settings)
        self.state = seen.state
        return seen.verdict, seen.cause, seen.record


class _Row:
    def __init__(self, progress: dict[str, Any] | None) -> None:
        self.progress = progress


def test_progressing_then_stalled_on_the_second_miss_then_dying(tmp_path: Path) -> None:
    log = Log(tmp_path, CadenceConfig(poll_interval_s=60, floor_s=120, startup_grace_s=0))
    log.path.write_bytes(steps(1, 50))
    assert log.poll(2000)[0] == "running-unverified"
    with log.path.open("ab") as fh:
        fh.write(steps(50, 80))
    verdict, _, rec = log.poll(2060)
    assert verdict == "running-progressing"
    assert (rec["value"], rec["previous"], rec["rate_per_h"]) == (79, 49, 30 * 60)
    assert rec["signals"] == {"entropy": 0.5, "grad_norm": 1.5}
    verdict, _, rec = log.poll(2300)  # first miss: suspect only, not progress
    assert verdict == "running-unverified" and rec["stall_suspect"]
    assert any("(1 consecutive)" in e for e in rec["evidence"])
    verdict, _, rec = log.poll(2360)
    assert verdict == "running-stalled" and rec["misses"] == 2
    with log.path.open("ab") as fh:
        fh.write(b"[E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout\n")
    verdict, cause, rec = log.poll(2420)
    assert (verdict, cause) == ("failed", "nccl_timeout")
    assert rec["markers"][-1]["kind"] == "nccl_timeout"


def test_a_truncated_log_starts_over_instead_of_looking_stalled(tmp_path: Path) -> None:
    log = Log(tmp_path, CadenceConfig(poll_interval_s=60, floor_s=120, startup_grace_s=0))
    log.path.write_bytes(steps(1, 500))
    log.poll(2000)
    log.path.write_bytes(steps(1, 3))  # requeued: sbatch truncated the log
    verdict, _, rec = log.poll(2060)
    assert verdict == "running-unverified" and rec["value"] == 2
    assert any("went back" in e for e in rec["evidence"])


def api(run_id: str, name: str, created: float, lines: int = 1) -> ApiRun:
    return ApiRun(run_id, name, "running", created, created, lines)


def test_api_runs_match_by_run_file_then_by_name_after_the_start() -> None:
    job = {"name": "rl-7", "start_epoch": 10_000.0}
    runs = [api("old", "rl-7", 1_000), api("new", "rl-7", 10_100), api("x", "other", 10_200)]
    assert match_api(runs, job, None).run_id == "new"
    assert match_api(runs[:1], job, None) is None  # created long before the job started
    assert match_api([api("x", "other", 10_200)], job, None) is None
    assert match_api([], job, None) is None
