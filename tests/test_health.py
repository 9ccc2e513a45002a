"""labctl health on the real machine: thresholds that pass and that fail, a real memory
hog listed by RSS with its secrets masked (and left alive), a real small tmpfs volume."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import time
from pathlib import Path

from helpers.cli import run_labctl
from helpers.disk import tmpfs
from hypothesis import given
from hypothesis import strategies as st
from schema_check import assert_valid

from labctl.health.checks import redact_argv

LENIENT = {
    "volumes": ["~"],
    "disk_min_free_gb": 0.0,
    "mem_min_available_gb": 0.0,
    "psi_some_avg60_max": 100.0,
    "psi_full_avg60_max": 100.0,
    "swap_max_used_pct": 100.0,
    "load_max_per_cpu": 1e6,
}
TOKEN = "hf_" + "Qw7" * 12


def config(home: Path, **health: object) -> Path:
    settings = {**LENIENT, **health}
    lines = ["[health]"]
    for key, value in settings.items():
        lines.append(f"{key} = {value!r}".replace("'", '"'))
    path = home / "labctl.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def health(cfg: Path, *args: str) -> tuple[int, list[dict[str, object]], str]:
    res = run_labctl("health", "--config", str(cfg), *args)
    assert_valid("health", res.records)
    return res.code, res.records, res.stdout + res.stderr


def checks(records: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(r["check"]): r for r in records if r["kind"] == "check"}


def test_all_fine_exits_0_one_record_per_check(tmp_path: Path) -> None:
    code, records, _ = health(config(tmp_path))
    assert code == 0
    found = checks(records)
    assert {"disk_free", "mem_available", "swap_used", "load"} <= set(found)
    psi = {"psi_memory_some", "psi_memory_full"} & set(found)
    if os.path.exists("/proc/pressure/memory"):
        assert psi == {"psi_memory_some", "psi_memory_full"}
    else:
        assert found["psi_memory"]["skipped"] is True
    assert all(r["ok"] for r in found.values())
    assert not [r for r in records if r["kind"] == "process"]  # memory is fine: no list
    mem = found["mem_available"]
    assert isinstance(mem["value"], int) and mem["value"] > 0


def test_low_memory_lists_the_hogs_masked_and_kills_nothing(tmp_path: Path) -> None:
    hog = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; x = bytearray(200 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096]);"
            " print('ready', flush=True); time.sleep(120)",
            "--hf-token",
            TOKEN,
            f"--api-key={TOKEN}",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert hog.stdout is not None and hog.stdout.readline() == b"ready\n"
        cfg = config(tmp_path, mem_min_available_gb=1e9)
        with open(cfg, "a") as fh:
            fh.write("top_processes = 500\n")
        code, records, text = health(cfg)
        assert code == 1
        assert checks(records)["mem_available"]["ok"] is False
        procs = [r for r in records if r["kind"] == "process"]
        mine = next(p for p in procs if p["pid"] == hog.pid)
        assert mine["rss"] >= 200 * 1024 * 1024
        assert mine["user"] == pwd.getpwuid(os.getuid()).pw_name
        assert "[REDACTED" in str(mine["cmdline"]) and TOKEN not in text
        assert [p["rank"] for p in procs] == list(range(1, len(procs) + 1))
        assert [p["rss"] for p in procs] == sorted((p["rss"] for p in procs), reverse=True)
        time.sleep(0.2)
        assert hog.poll() is None  # health never kills
    finally:
        hog.kill()
        hog.wait()


def test_a_full_volume_fails_with_advice(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "8m") as vol:
        cfg = config(tmp_path, disk_min_free_gb=0.05)
        code, records, _ = health(cfg, "--volume", str(vol), "--volume", str(vol / "x"))
        assert code == 1
        disks = [r for r in records if r["kind"] == "check" and r["check"] == "disk_free"]
        assert len(disks) == 1  # one volume, however many paths on it
        assert disks[0]["ok"] is False and disks[0]["mount"] == str(vol)
        assert "prune-disk" in str(disks[0]["message"])


def test_load_threshold_and_top_flag(tmp_path: Path) -> None:
    code, records, _ = health(config(tmp_path, load_max_per_cpu=0.0), "--top")
    load = checks(records)["load"]
    assert load["cpus"] >= 1 and load["threshold"] == 0.0
    assert code == (0 if load["ok"] else 1)
    assert [r for r in records if r["kind"] == "process"]  # --top lists them anyway


def test_redact_argv() -> None:
    argv = ("train.py", "--token", "s3cr3t", "--password=hunter2", "--lr", "3e-4", "-p", "x")
    out = redact_argv(argv)
    assert "s3cr3t" not in out and "hunter2" not in out
    assert "--lr 3e-4" in out and "-p x" in out
    assert len(redact_argv(("a" * 1000,))) == 300


_word = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)


@given(
    before=st.lists(_word, max_size=4),
    flag=st.sampled_from(["--token", "--hf-token", "--api-key", "--password", "-wandb-api-key"]),
    secret=st.text("abcdefXYZ0123456789", min_size=12, max_size=40),
    joined=st.booleans(),
)
def test_a_secret_flag_value_never_survives(
    before: list[str], flag: str, secret: str, joined: bool
) -> None:
    argv = (*before, f"{flag}={secret}") if joined else (*before, flag, secret)
    assert secret not in redact_argv(tuple(argv)) or any(secret in b for b in before)
