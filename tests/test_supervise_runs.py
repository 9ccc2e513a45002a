"""supervise on real child processes (tests/children): fixes, re-runs, escalations, cleanup.

Every run gets its own state dir and a marker in its environment; no process carrying the
marker may outlive the run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from helpers.supervise import PY, Run, child, left_behind, supervise, venv_borrowing_pip
from schema_check import assert_valid

FAST = ("--stall-after", "1", "--kill-grace", "1")


def _checked(run: Run, code: int) -> Run:
    assert run.res.code == code, (run.res.stderr, run.records[-3:])
    assert_valid("supervise", run.records)
    assert left_behind(run.marker) == []
    return run


@pytest.mark.parametrize(
    ("spelling", "final"),
    [
        (["--batch-size", "64"], ["--batch-size", "8"]),
        (["--batch_size=64"], ["--batch_size=8"]),
        (["--per_device_train_batch_size", "64"], ["--per_device_train_batch_size", "8"]),
        (["data.train_batch_size=64", "model=llama"], ["data.train_batch_size=8", "model=llama"]),
    ],
    ids=["dash", "equals", "hf", "hydra"],
)
def test_cuda_oom_halves_the_batch_in_every_spelling(
    tmp_path: Path, spelling: list[str], final: list[str]
) -> None:
    run = _checked(supervise(tmp_path, child("oom", *spelling)), 0)
    started = run.kinds("attempt_started")
    assert len(started) == 4 and started[-1]["argv"] == child("oom", *final)
    changes = [f["changes"][0] for f in run.kinds("fix_applied")]
    assert [(c["old"], c["new"]) for c in changes] == [("64", "32"), ("32", "16"), ("16", "8")]
    diagnoses = run.kinds("diagnosis")
    assert {d["category"] for d in diagnoses} == {"cuda_oom"}
    # tried sizes, free memory and the pid differ on every attempt: one fingerprint
    assert len({d["fingerprint"] for d in diagnoses}) == 1
    assert run.final["kind"] == "succeeded" and run.final["attempts"] == 4
    assert run.escalations() == []


def test_batch_size_args_in_the_config_teach_supervise_a_spelling(tmp_path: Path) -> None:
    """`--mbs` is no spelling the catalog knows: escalated as arg_not_found, until
    [supervise] batch_size_args names it; then it is halved like any other."""
    unknown = _checked(supervise(tmp_path / "plain", child("oom", "--mbs", "64")), 1)
    assert len(unknown.kinds("attempt_started")) == 1
    assert unknown.final["reason"] == "arg_not_found"
    config = '[supervise]\nbatch_size_args = ["mbs"]\n'
    run = _checked(supervise(tmp_path, child("oom", "--mbs", "64", "--lr", "3"), config=config), 0)
    starts = run.kinds("attempt_started")
    assert [s["argv"][-3] for s in starts] == ["64", "32", "16", "8"]
    assert starts[-1]["argv"] == child("oom", "--mbs", "8", "--lr", "3")
    changes = [f["changes"] for f in run.kinds("fix_applied")]
    assert changes[0] == [{"what": "arg", "name": "--mbs", "old": "64", "new": "32"}]
    assert run.final["kind"] == "succeeded" and run.final["attempts"] == 4


RUN_FIELDS = ("run_id", "attempt")


@pytest.mark.parametrize("name", ["oom", "nan", "missing_module", "unknown"])
def test_the_diagnosis_event_is_what_labctl_diagnose_says(tmp_path: Path, name: str) -> None:
    """The same record `labctl diagnose` gives for the attempt's log (and, for a failure
    only its exit status tells, for a job record carrying that status)."""
    run = supervise(tmp_path, child(name), "--max-retries", "0", env={"NAN_ALWAYS": "1"})
    (event,) = run.kinds("diagnosis")
    (ended,) = run.kinds("attempt_ended")
    assert event["source"] == ended["log"] and event["attempt"] == 1
    mine = {k: v for k, v in event.items() if k not in RUN_FIELDS}
    if name != "unknown":  # the log says it all: diagnose on the file alone agrees
        (theirs,) = run_labctl("diagnose", ended["log"]).records
        status = mine.pop("scheduler")  # the exit status supervise adds; a file has none
        assert (status["state"], status["exit_code"]) == ("FAILED", ended["exit_code"])
        assert theirs.pop("scheduler") is None
        assert mine == theirs
        return
    job = {"kind": "job", "job_id": "1", "state": "FAILED", "verdict": "failed",
           "exit_code": ended["exit_code"], "stdout": ended["log"]}  # fmt: skip
    (rec,) = run_labctl("diagnose", input=json.dumps(job) + "\n").records
    theirs = rec["diagnosis"]
    assert mine["category"] == theirs["category"] == "unknown"
    same = ("catalog_id", "fingerprint", "title", "fix", "action", "retryable", "confidence",
            "decided_by", "failed", "severity", "source")  # fmt: skip
    assert {k: mine[k] for k in same} == {k: theirs[k] for k in same}
    assert mine["evidence"][1:] == theirs["evidence"][1:]  # [0]: the status, as each had it


def test_batch_at_its_minimum_escalates_with_the_whole_history(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    run = supervise(
        tmp_path,
        child("oom", "--batch_size=4"),
        "--max-retries", "9", "--escalate-to", str(inbox),
        env={"OOM_LIMIT": "0"},
    )  # fmt: skip
    _checked(run, 1)
    assert [a["argv"][-1] for a in run.kinds("attempt_started")] == [
        "--batch_size=4", "--batch_size=2", "--batch_size=1",
    ]  # fmt: skip
    end = run.final
    assert end["kind"] == "escalated" and end["reason"] == "fix_exhausted"
    assert "min 1" in end["message"]
    md, js = Path(end["path"]), Path(end["json_path"])
    assert md.parent == run.state / "escalations" and md.name.endswith("_oom.md")
    assert sorted(p.name for p in inbox.iterdir()) == sorted([md.name, js.name])
    doc = json.loads(js.read_text())
    assert [a["argv"][-1] for a in doc["attempts"]] == [
        "--batch_size=4",
        "--batch_size=2",
        "--batch_size=1",
    ]
    assert [a["fix"]["changes"][0]["new"] for a in doc["attempts"][:2]] == ["2", "1"]
    assert doc["attempts"][-1]["diagnosis"]["category"] == "cuda_oom"
    assert any("CUDA out of memory" in line for line in doc["last_log_lines"])
    text = md.read_text()
    assert "## Suggested next steps" in text and "Halve the per-device batch size" in text
    assert "### Attempt 3: exit 1" in text and "--batch_size=1" in text


def test_budget_spent_escalates(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("oom", "--bs", "64"), "--max-retries", "1"), 1)
    assert len(run.kinds("attempt_started")) == 2
    assert run.final["reason"] == "budget_spent"
    shown = run_labctl("table", "-f", "table", input=run.res.stdout)  # the events, for people
    assert shown.code == 1
    assert "--bs: 64 → 32" in shown.stdout and "✗ escalated" in shown.stdout


def test_nan_loss_adds_gradient_clipping_in_the_commands_style(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("nan", "--learning-rate", "3e-4")), 0)
    (fix,) = run.kinds("fix_applied")
    assert fix["catalog_id"].startswith("nan_") and fix["action"]["type"] == "add_arg"
    assert run.kinds("attempt_started")[-1]["argv"][-3:] == ["3e-4", "--max-grad-norm", "1.0"]


def test_a_once_only_fix_is_not_applied_twice(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("nan"), env={"NAN_ALWAYS": "1"}), 1)
    assert len(run.kinds("attempt_started")) == 2
    assert run.final["reason"] == "fix_exhausted"
    assert "add_arg max_grad_norm was already applied once" in run.final["message"]


def test_reducing_scope_is_once_only_even_when_the_entry_does_not_say_so(
    tmp_path: Path,
) -> None:
    """A user catalog's reduce_scope without `once = true`: still one reduction per run."""
    lab = tmp_path / "lab.toml"
    lab.write_text(
        '[[entry]]\nid = "frob_phase"\ntitle = "Frobnicator out of phase"\n'
        'category = "code_error"\nspecificity = 90\nretryable = false\n'
        'fix = "run shorter"\nany = ["frobnicator is out of phase"]\n'
        'action = { type = "reduce_scope", arg = "max_steps", factor = 0.5, min = 1 }\n'
        'examples = ["the frobnicator is out of phase; giving up"]\n'
    )
    config = f'[catalog]\nfiles = ["{lab}"]\n'
    run = supervise(tmp_path, child("unknown", "--max-steps", "100"), "--max-retries", "5",
                    config=config)  # fmt: skip
    _checked(run, 1)
    assert [s["argv"][-1] for s in run.kinds("attempt_started")] == ["100", "50"]
    assert {d["catalog_id"] for d in run.kinds("diagnosis")} == {"frob_phase"}
    assert run.final["reason"] == "fix_exhausted"
    assert "reduce_scope max_steps was already applied once" in run.final["message"]


def test_cpu_fallback_clears_cuda_visible_devices(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("cuda"), env={"CUDA_VISIBLE_DEVICES": "0,1"}), 0)
    (fix,) = run.kinds("fix_applied")
    assert fix["changes"] == [
        {"what": "env", "name": "CUDA_VISIBLE_DEVICES", "old": "0,1", "new": ""}
    ]
    assert run.kinds("attempt_started")[-1]["env_changes"] == {"CUDA_VISIBLE_DEVICES": ""}


def test_missing_module_escalates_naming_it_and_installs_nothing(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("missing_module")), 1)
    assert len(run.kinds("attempt_started")) == 1
    end = run.final
    assert end["reason"] == "install_disabled" and "labctl_test_missing_module" in end["message"]
    assert not list(run.state.rglob("install-*.log"))
    assert "allow_install" in " ".join(end["next_steps"])


@pytest.mark.parametrize("ignore_term", [False, True], ids=["term", "ignores-term"])
def test_a_hang_is_killed_with_its_grandchild_then_scope_reduced_once(
    tmp_path: Path, ignore_term: bool
) -> None:
    args = ["--max-steps", "100"] + (["--ignore-term"] if ignore_term else [])
    run = _checked(supervise(tmp_path, child("hang", *args), *FAST), 1)
    ended = run.kinds("attempt_ended")
    assert len(ended) == 2 and all(e["stalled"] for e in ended)
    assert all(e["killed"] is ignore_term for e in ended)  # SIGKILL only when TERM is ignored
    assert {d["category"] for d in run.kinds("diagnosis")} == {"hung_no_output"}
    assert run.kinds("fix_applied")[0]["changes"][0] == {
        "what": "arg", "name": "--max-steps", "old": "100", "new": "50",
    }  # fmt: skip
    assert run.final["reason"] == "repeated_failure"


def test_a_hang_without_a_step_limit_is_rerun_once(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("hang"), *FAST), 1)
    (fix,) = run.kinds("fix_applied")
    assert fix["resubmit"] is True and fix["changes"] == []
    starts = run.kinds("attempt_started")
    assert len(starts) == 2 and starts[0]["argv"] == starts[1]["argv"]
    assert run.final["reason"] == "repeated_failure"


def test_unknown_failure_escalates_at_once(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("unknown"), "--name", "frob-eval"), 1)
    assert len(run.kinds("attempt_started")) == 1 and not run.kinds("fix_applied")
    assert run.final["reason"] == "unknown_failure"
    md = Path(run.final["path"])
    assert md.name.endswith("_frob-eval.md") and "frobnicator is out of phase" in md.read_text()


def test_helper_processes_left_in_the_group_are_ended(tmp_path: Path) -> None:
    run = _checked(supervise(tmp_path, child("helper_dies")), 1)
    (ended,) = run.kinds("attempt_ended")
    assert len(ended["leftovers"]) == 1 and ended["exit_code"] == 1
    assert run.final["reason"] == "no_fix"


def test_success_first_time_and_events_to_a_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    run = supervise(tmp_path, child("ok"), "--events", str(events))
    assert run.res.code == 0 and run.res.stdout == ""
    recs = [json.loads(x) for x in events.read_text().splitlines()]
    assert [r["kind"] for r in recs] == ["attempt_started", "attempt_ended", "succeeded"]
    log = Path(recs[0]["log"]).read_text()
    assert "training finished" in log and "'step': 5" in log


def test_secrets_never_reach_logs_events_escalations_or_notify_records(tmp_path: Path) -> None:
    seen = tmp_path / "notified.txt"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$@" > {seen}\necho "posting with hook-S3CRET-99"\n')
    hook.chmod(0o755)
    config = f'[supervise]\nnotify = "{hook} https://hooks.example/hook-S3CRET-99"\n'
    env = {
        "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
        "LAB_PUSH_PASSWORD": "s3cr3t-pass-word",
    }
    run = _checked(supervise(tmp_path, child("tokens"), env=env, config=config), 1)
    everything = run.everything_written()
    for secret in (
        "A1b2C3d4E5f6G7h8", "ZyZyZy", env["WANDB_API_KEY"], env["LAB_PUSH_PASSWORD"],
        "SECRETKEYBODYLINETWO", "MIIEvQIBADANBgkq", "hook-S3CRET-99",
    ):  # fmt: skip
        assert secret not in everything, secret
    assert "[REDACTED:github_token]" in everything and "[REDACTED:private_key]" in everything
    # the notify command got the escalation's path (and its secret stayed out of the record)
    assert seen.read_text().split() == ["https://hooks.example/hook-S3CRET-99", run.final["path"]]
    assert run.final["notify"]["ok"] is True


def _hook(tmp_path: Path) -> tuple[Path, str]:
    """A notify command that records the path it was given."""
    seen = tmp_path / "notified.txt"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$@" > {seen}\n')
    hook.chmod(0o755)
    return seen, f'[supervise]\nnotify = "{hook}"\n'


def test_an_unwritable_escalate_to_costs_neither_the_files_nor_the_notify(
    tmp_path: Path,
) -> None:
    inbox = tmp_path / "inbox"
    inbox.write_text("a file where the directory should be\n")
    seen, config = _hook(tmp_path)
    run = supervise(tmp_path, child("unknown"), "--escalate-to", str(inbox), config=config)
    end = run.final
    assert end["kind"] == "escalated" and end["path"] is not None, run.records
    md, js = Path(end["path"]), Path(end["json_path"])
    assert md.parent == run.state / "escalations" and md.is_file() and js.is_file()
    assert seen.read_text().split() == [str(md)] and end["notify"]["ok"] is True
    assert end["copies"] == [] and end["not_written"] == [str(inbox)]
    _checked(run, 3)  # the escalation's 1, made worse by a file it was asked for and lost
    (err,) = run.kinds("error")
    assert err["reason"] == "not_written" and err["path"] == str(inbox)
    assert err["errno"] == "EEXIST" and "escalation copy" in err["message"]
    assert inbox.read_text() == "a file where the directory should be\n"


def test_usage_errors_start_nothing(tmp_path: Path) -> None:
    missing = supervise(tmp_path, ["no-such-program-xyz", "--batch-size", "8"])
    assert missing.res.code == 2 and "command not found" in missing.final["message"]
    grace = supervise(tmp_path, child("ok"), "--kill-grace", "60")
    assert grace.res.code == 2 and "kill grace" in grace.final["message"]
    assert not (tmp_path / "state" / "supervise").exists()


def test_options_stop_at_the_command(tmp_path: Path) -> None:
    """Without `--`, the child's own options are not labctl's."""
    res = run_labctl(
        "supervise", "--max-retries", "0", PY, str(Path(__file__).parent / "children" / "ok.py"),
        "--max-retries", "7",
        env={"LABCTL_STATE_DIR": str(tmp_path / "s")},
    )  # fmt: skip
    assert res.code == 0, res.stderr
    assert res.records[0]["argv"][-2:] == ["--max-retries", "7"]


def _wheel(folder: Path, name: str, version: str = "1.0") -> None:
    """A minimal pure-Python wheel for `name` (so pip installs offline)."""
    import base64
    import hashlib
    import zipfile

    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": b"VALUE = 1\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as whl:
        for path, data in files.items():
            whl.writestr(path, data)


def _missing_module_in_venv(tmp_path: Path, wheels: Path) -> tuple[Run, Path]:
    """The missing-module child in its own venv, installs allowed, pip offline on `wheels`."""
    python, site = venv_borrowing_pip(tmp_path)
    wheels.mkdir(exist_ok=True)
    run = supervise(
        tmp_path,
        [str(python), str(Path(__file__).parent / "children" / "missing_module.py")],
        env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)},
        config="[supervise]\nallow_install = true\n",
    )
    return run, site


def test_allow_install_pip_installs_into_the_childs_own_interpreter(tmp_path: Path) -> None:
    import pip

    _wheel(tmp_path / "wheels", "labctl_test_missing_module")
    run, site = _missing_module_in_venv(tmp_path, tmp_path / "wheels")
    _checked(run, 0)
    (fix,) = run.kinds("fix_applied")
    assert fix["changes"] == [{
        "what": "install", "name": "labctl_test_missing_module", "old": None,
        "new": "labctl_test_missing_module",
    }]  # fmt: skip
    assert run.kinds("attempt_started")[1]["installed"] == ["labctl_test_missing_module"]
    assert (site / "labctl_test_missing_module.py").is_file()
    assert not (Path(pip.__file__).parent.parent / "labctl_test_missing_module.py").exists()


def test_a_failed_install_escalates_with_pips_words(tmp_path: Path) -> None:
    run, _ = _missing_module_in_venv(tmp_path, tmp_path / "empty")
    _checked(run, 1)
    assert len(run.kinds("attempt_started")) == 1 and not run.kinds("fix_applied")
    assert run.final["reason"] == "install_failed"
    assert "No matching distribution" in run.final["message"]
