"""`labctl poll` against the real single-node SLURM (scripts/slurm-up) and sshd (sshd-up).

One module-scoped scenario submits a job that ends every way (completed, failed with an
exit code, time limit, cancelled, out of memory, an array with one failing task), jobs
that never start (held, dependency never satisfied) and one that keeps running, then
waits for all of them in one loop. The tests poll it locally, over SSH, with broken
clusters beside it, and after slurmctld has purged the finished jobs.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from helpers.config import write_config
from helpers.slurm import ENDED, local_cluster, mine, poll, sacct_states, sbatch, slurm, ssh_cluster

pytestmark = pytest.mark.slurm
OOM_SCRIPT = """#!/bin/bash
python3 -c "
import time
a = bytearray(400 * 1024 * 1024)
for i in range(0, len(a), 4096): a[i] = 1
time.sleep(30)
"
"""
CUSTOM_LOG_SCRIPT = """#!/bin/bash
#SBATCH --output=custom-%j.log
echo 'written to a path only the script knows'
"""


class Scenario:
    def __init__(self, workdir: Path, tag: str) -> None:
        self.workdir = workdir
        self.tag = tag
        self.ids: dict[str, str] = {}

    def name(self, what: str) -> str:
        return f"{self.tag}-{what}"


def _submit(sc: Scenario) -> None:
    w = sc.workdir
    sc.ids["completed"] = sbatch(w, "-J", sc.name("completed"), wrap="echo done")
    sc.ids["failed"] = sbatch(w, "-J", sc.name("failed"), wrap="echo boom >&2; exit 3")
    sc.ids["timeout"] = sbatch(
        w, "-J", sc.name("timeout"), "--time=5", wrap="echo started; exec sleep 300"
    )
    sc.ids["cancelled"] = sbatch(w, "-J", sc.name("cancelled"), wrap="sleep 300")
    sc.ids["oom"] = sbatch(w, "-J", sc.name("oom"), "--mem=60M", script=OOM_SCRIPT)
    sc.ids["array"] = sbatch(
        w,
        "-J",
        sc.name("array"),
        "--array=0-3",
        "-o",
        "arr-%A_%a.out",
        wrap='[ "$SLURM_ARRAY_TASK_ID" = 2 ] && exit 5; echo task ok',
    )
    sc.ids["held"] = sbatch(w, "-J", sc.name("held"), "--hold", wrap="echo never")
    sc.ids["dependency"] = sbatch(
        w, "-J", sc.name("dependency"), f"--dependency=afterok:{sc.ids['failed']}", wrap="true"
    )
    sc.ids["running"] = sbatch(
        w, "-J", sc.name("running"), wrap="while true; do echo tick; sleep 1; done"
    )
    sc.ids["odd name"] = sbatch(w, "-J", f"{sc.tag} lr=3e-4|bs=64 ü", wrap="echo odd")
    sc.ids["custom log"] = sbatch(w, "-J", sc.name("custom-log"), script=CUSTOM_LOG_SCRIPT)


def _script_ran(sc: Scenario, what: str) -> bool:
    """The job's script has started: a time limit hit while slurmd is still launching it
    kills the batch step before its shell runs (CANCELLED 0:0, no signal to report)."""
    if what != "timeout":
        return True
    log = sc.workdir / f"slurm-{sc.ids[what]}.out"
    return log.exists() and log.read_text(errors="replace").startswith("started")


def _drive(sc: Scenario, deadline: float) -> None:
    """Cancel and time out the running ones, then wait until every job has settled."""
    ids = sc.ids
    pushed: set[str] = set()
    while True:
        states = sacct_states(list(ids.values()))
        for what in ("timeout", "cancelled"):
            if what not in pushed and states.get(ids[what]) == "RUNNING" and _script_ran(sc, what):
                pushed.add(what)
                if what == "cancelled":
                    slurm("scancel", ids[what])
                else:  # a 2 s time limit from now: TIMEOUT in ~25 s instead of 60+
                    end = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 2))
                    slurm("scontrol", "update", f"jobid={ids[what]}", f"EndTime={end}")
        array = [s for j, s in states.items() if j.startswith(ids["array"] + "_") and "." not in j]
        # slurmdbd writes a job's row before its .batch row (where a timeout's signal and
        # an OOM kill's step state are): every job that ran must have both, settled
        ran = [j for j in states if "." not in j and j not in (ids["held"], ids["dependency"])]
        batches_settled = all(
            states.get(f"{j}.batch", "").split(" ")[0] in ENDED for j in ran if j != ids["running"]
        )
        dep = slurm("squeue", "-h", "-j", ids["dependency"], "-o", "%r").strip()
        settled = (
            all(
                states.get(ids[w], "").split(" ")[0] in want
                for w, want in (
                    ("completed", {"COMPLETED"}),
                    ("failed", {"FAILED"}),
                    ("timeout", {"TIMEOUT"}),
                    ("cancelled", {"CANCELLED"}),
                    ("oom", {"FAILED", "OUT_OF_MEMORY"}),
                    ("running", {"RUNNING"}),
                    ("odd name", {"COMPLETED"}),
                    ("custom log", {"COMPLETED"}),
                )
            )
            and len(array) == 4
            and all(s in ("COMPLETED", "FAILED") for s in array)
            and dep == "DependencyNeverSatisfied"
            and batches_settled
        )
        if settled:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"scenario did not settle: {states} dependency={dep!r}")
        time.sleep(1)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    workdir = tmp_path_factory.mktemp("slurm-jobs")
    workdir.chmod(0o777)
    sc = Scenario(workdir, f"lp{uuid.uuid4().hex[:6]}")
    try:
        _submit(sc)
        _drive(sc, time.monotonic() + 150)
        sc.settled_at = time.time()  # type: ignore[attr-defined]
        yield sc
    finally:
        alive = [sc.ids[w] for w in ("held", "dependency", "running", "timeout") if w in sc.ids]
        if alive:
            slurm("scancel", *alive, check=False)


def test_every_way_a_job_ends_gets_its_verdict(tmp_path: Path, scenario: Scenario) -> None:
    res = poll(tmp_path, [local_cluster()])
    assert res.code == 1, res.stderr  # failed, timeout, oom need a person
    got = mine(res, scenario)
    verdicts = {k: (v["verdict"], v["cause"]) for k, v in got.items()}
    assert verdicts == {
        "completed": ("completed", None),
        "failed": ("failed", "exit_code"),
        "timeout": ("timeout", "time_limit"),
        "cancelled": ("cancelled", "user_cancel"),
        "oom": ("out_of_memory", "oom"),
        "array_0": ("completed", None),
        "array_1": ("completed", None),
        "array_2": ("failed", "exit_code"),
        "array_3": ("completed", None),
        "held": ("pending", "held"),
        "dependency": ("pending", "dependency_never_satisfied"),
        "running": ("running-unverified", None),
        "odd name": ("completed", None),
        "custom log": ("completed", None),
    }
    assert (got["failed"]["exit_code"], got["failed"]["signal"]) == (3, 0)
    assert (
        got["array_2"]["exit_code"] == 5 and got["array_2"]["array_job_id"] == scenario.ids["array"]
    )
    timed_out = got["timeout"]
    assert timed_out["signal"] == 15 and 0 < timed_out["time_limit_s"] <= 300, (
        timed_out,
        slurm(
            "sacct", "-n", "-P", "-D", "-j", scenario.ids["timeout"], "-o", "JobID,State,ExitCode"
        ),
    )
    assert got["cancelled"]["state_raw"] == "CANCELLED by 0"
    assert "oom" in got["oom"]["log_markers"] and got["oom"]["signal"] == 9
    assert got["odd name"]["name"] == f"{scenario.tag} lr=3e-4|bs=64 ü"
    held = got["held"]
    assert held["start_time"] is None and held["reason"] == "JobHeldUser"
    assert held["stdout_size"] is None  # pending: no log yet, nothing to stat
    run = got["running"]
    assert run["start_time"] and run["end_time"] is None and run["exit_code"] is None
    assert run["stdout"] == str(scenario.workdir / f"slurm-{scenario.ids['running']}.out")
    assert run["stdout_size"] > 0 and run["log_age_s"] < 30
    assert got["array_1"]["stdout"] == str(scenario.workdir / f"arr-{scenario.ids['array']}_1.out")
    done = got["completed"]
    assert done["stdout_size"] == len("done\n") and done["node_list"]
    assert done["submit_time"].endswith("Z") and done["end_time"] >= done["start_time"]
    for rec in got.values():
        assert rec["new"] and rec["changed_since_last_poll"] and rec["scheduler"] == "slurm"
        assert rec["user"] == "root" and rec["partition"] == "debug"

    second = poll(tmp_path, [local_cluster()])
    again = mine(second, scenario)
    # finished jobs were reported; only what is still queued or running comes again
    assert set(again) == {"held", "dependency", "running"}, {
        k: v["changed_fields"] for k, v in again.items()
    }
    assert not again["held"]["changed_since_last_poll"] and not again["held"]["new"]
    assert again["held"]["first_seen"] == held["first_seen"]
    assert second.code in (0, 1)


def test_ssh_gives_the_same_records_as_local(tmp_path: Path, scenario: Scenario) -> None:
    res = poll(tmp_path, [local_cluster(), ssh_cluster()])
    assert res.code == 1
    local, remote = mine(res, scenario, "local"), mine(res, scenario, "remote")
    assert set(local) == set(remote) and len(local) == 14
    volatile = {"cluster", "key", "observed_at", "first_seen", "elapsed_s", "stdout_size",
                "stderr_size", "stdout_mtime", "stderr_mtime", "log_age_s"}  # fmt: skip
    for role, rec in local.items():
        other = remote[role]
        skip = volatile | ({"progress"} if role == "running" else set())  # its log grows
        assert {k: v for k, v in rec.items() if k not in skip} == {
            k: v for k, v in other.items() if k not in skip
        }, role
        assert other["key"] == rec["key"].replace("local:", "remote:", 1)
        if role != "running":
            assert other["stdout_size"] == rec["stdout_size"]
    for key in ("source", "counter", "format"):
        assert remote["running"]["progress"][key] == local["running"]["progress"][key]


def test_broken_clusters_beside_a_good_one(tmp_path: Path, scenario: Scenario) -> None:
    bins: dict[str, Path] = {}
    for name, body in {
        "hung": "#!/bin/sh\nexec sleep 120\n",
        "dbdown": "#!/bin/sh\necho 'sacct: error: Problem talking to the database: "
        "Connection refused' >&2\nexit 1\n",
        "noacct": "#!/bin/sh\necho 'Slurm accounting storage is disabled'\nexit 1\n",
    }.items():
        d = tmp_path / name
        d.mkdir()
        (d / "sacct").write_text(body)
        (d / "sacct").chmod(0o755)
        bins[name] = d
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "squeue").write_text("#!/bin/sh\necho 'this is not squeue output'\n")
    (junk / "squeue").chmod(0o755)
    clusters = [
        local_cluster(),
        ssh_cluster("hung", path_prepend=[str(bins["hung"])], timeout_s=3),
        local_cluster(name="dbdown", path_prepend=[str(bins["dbdown"])]),
        local_cluster(name="noacct", path_prepend=[str(bins["noacct"])]),
        local_cluster(name="junk", path_prepend=[str(junk)]),
        local_cluster(name="squeue-only", path_prepend=[str(bins["noacct"])], accounting=False),
        {"name": "nowhere", "host": "127.0.0.1", "ssh_options": ["-p", "1"]},
    ]
    start = time.monotonic()
    res = poll(tmp_path, clusters)
    elapsed = time.monotonic() - start
    assert res.code == 3
    assert elapsed < 20, elapsed  # the hung sacct was killed at the 3 s deadline
    errors = {r["cluster"]: r for r in res.records if r["kind"] == "error"}
    assert {c: e["reason"] for c, e in errors.items()} == {
        "hung": "timeout",
        "dbdown": "command_failed",
        "noacct": "no_accounting",
        "junk": "bad_output",
        "nowhere": "unreachable",
    }
    assert "Problem talking to the database" in errors["dbdown"]["message"]
    assert "accounting = false" in errors["noacct"]["message"]
    assert len(mine(res, scenario, "local")) == 14
    # without accounting only what slurmctld still holds is known
    live = mine(res, scenario, "squeue-only")
    assert {"held", "dependency", "running"} <= set(live)
    assert all(r["source"] == "squeue" for r in live.values())


def test_vanished_job_is_unknown(tmp_path: Path, scenario: Scenario) -> None:
    from labctl.poll.model import StoredJob
    from labctl.poll.store import Store

    first = poll(tmp_path, [local_cluster()])
    assert first.code == 1
    store = Store(Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "poll.sqlite")
    gone = {**mine(first, scenario)["running"], "job_id": "987654", "job_id_raw": "987654"}
    with store.transaction():
        store.put_jobs("local", [StoredJob(
            key=("987654", -1, 1_700_000_000), job_id="987654", array_job_id=None,
            first_seen=time.time() - 600, last_seen=time.time() - 300, verdict="running",
            terminal=False, active=True, stdout=None, stderr=None, record=gone,
        )])  # fmt: skip
    store.close()
    res = poll(tmp_path, [local_cluster()])
    [rec] = [r for r in res.records if r.get("job_id") == "987654"]
    assert (rec["verdict"], rec["cause"], rec["state"]) == ("unknown", "vanished", None)
    assert res.code == 1


def test_log_paths_survive_the_purge_from_squeue(tmp_path: Path, scenario: Scenario) -> None:
    first = mine(poll(tmp_path, [local_cluster()], "--since", "1h"), scenario)
    custom = first["custom log"]
    expected = str(scenario.workdir / f"custom-{scenario.ids['custom log']}.log")
    if custom["source"] == "sacct":
        pytest.skip("slurmctld purged the job before the first poll (MinJobAge)")
    assert custom["stdout"] == expected  # from squeue's STDOUT pattern
    deadline = time.monotonic() + 120
    while slurm(
        "squeue", "-h", "--states=all", "-j", scenario.ids["custom log"], check=False
    ).strip():
        assert time.monotonic() < deadline, "slurmctld never purged the job"
        time.sleep(2)
    later = mine(poll(tmp_path, [local_cluster()], "--since", "1h"), scenario)
    assert later["custom log"]["source"] == "sacct"
    assert later["custom log"]["stdout"] == expected  # remembered by the state store
    assert later["custom log"]["stdout_size"] == len("written to a path only the script knows\n")
    fresh_state = {"XDG_STATE_HOME": str(tmp_path / "fresh")}
    config = write_config(tmp_path, [local_cluster()])
    cold = run_labctl("poll", "--config", str(config), "--since", "1h", env=fresh_state)
    cold_rec = mine(cold, scenario)["custom log"]
    # a store that never saw it cannot know `#SBATCH --output`: no guessed path
    assert cold_rec["stdout"] is None
    assert mine(cold, scenario)["completed"]["stdout_size"] == len("done\n")  # default name
