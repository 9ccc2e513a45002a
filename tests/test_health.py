"""labctl health on the real machine: thresholds that pass and that fail, a real memory
hog listed by RSS with its secrets masked (and left alive), a real small tmpfs volume.
Then a /proc directory written as the kernel's files with chosen values: memory pressure
over its limit, swap over its limit, no PSI file, a PSI file not in the kernel's format,
no meminfo: each fails, skips or goes on as it should, and a memory failure lists the
processes by RSS."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
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


# -- a /proc tree written as files: the kernel's text formats, values chosen -------------

MEMINFO = """MemTotal:       16000000 kB
MemFree:         1000000 kB
MemAvailable:    8000000 kB
SwapCached:            0 kB
SwapTotal:       2000000 kB
SwapFree:        1500000 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
"""
PSI_CALM = "some avg10=0.00 avg60=0.10 avg300=0.05 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=12\n"  # noqa: E501


def fake_proc(root: Path, *, meminfo: str = MEMINFO, psi: str | None = PSI_CALM) -> Path:
    """A /proc directory: meminfo, loadavg, pressure/memory (None: a kernel without PSI)
    and three processes (a kernel thread without RSS among them)."""
    (root / "pressure").mkdir(parents=True)
    (root / "meminfo").write_text(meminfo)
    (root / "loadavg").write_text("0.50 0.40 0.30 1/200 4242\n")
    if psi is not None:
        (root / "pressure" / "memory").write_text(psi)
    procs = [
        (4242, "python3", 1000, 6_000_000, [b"python3", b"rl.py", b"--hf-token", TOKEN.encode()]),
        (77, "vllm", 0, 9_000_000, [b"vllm", b"serve", f"--api-key={TOKEN}".encode()]),
        (2, "kthreadd", 0, None, []),
        (99, "bash", 1000, 3_000, [b"-bash"]),
    ]
    for pid, name, uid, rss_kb, argv in procs:
        d = root / str(pid)
        d.mkdir()
        rss = "" if rss_kb is None else f"VmRSS:\t{rss_kb:>8} kB\n"
        d.joinpath("status").write_text(
            f"Name:\t{name}\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t{pid}\n"
            f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}\n{rss}Threads:\t1\n"
        )
        d.joinpath("cmdline").write_bytes(b"\0".join(argv) + (b"\0" if argv else b""))
    (root / "self").symlink_to("4242")
    return root


def thresholds(**kw: Any) -> Any:
    from labctl.health.checks import Thresholds

    base = dict(
        volumes=(), disk_min_free=0, mem_min_available=1_000_000_000,
        psi_some_avg60_max=20.0, psi_full_avg60_max=5.0, swap_max_used_pct=80.0,
        load_max_per_cpu=2.0, top_n=10,
    )  # fmt: skip
    return Thresholds(**{**base, **kw})


def run_health(proc: Path, **kw: Any) -> list[dict[str, Any]]:
    from labctl.health.checks import health

    records = list(health(thresholds(**kw), proc=str(proc), cpus=2))
    assert_valid("health", records)
    return records


def listed(records: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(r["pid"], r["rss"]) for r in records if r["kind"] == "process"]


def test_memory_pressure_over_its_limit_fails_and_lists_the_hogs(tmp_path: Path) -> None:
    psi = "some avg10=41.00 avg60=25.50 avg300=9.00 total=98765\nfull avg10=3.00 avg60=1.25 avg300=0.40 total=4321\n"  # noqa: E501
    records = run_health(fake_proc(tmp_path / "proc", psi=psi))
    found = checks(records)
    some, full = found["psi_memory_some"], found["psi_memory_full"]
    assert (some["ok"], some["value"], some["threshold"]) == (False, 25.5, 20.0)
    assert (some["avg10"], some["avg300"]) == (41.0, 9.0)
    assert (full["ok"], full["value"]) == (True, 1.25)
    assert found["mem_available"]["ok"] is True  # 8 GB available: only the pressure says it
    assert listed(records) == [(77, 9_000_000 * 1024), (4242, 6_000_000 * 1024), (99, 3_000 * 1024)]
    procs = [r for r in records if r["kind"] == "process"]
    assert procs[0]["user"] == "root" and procs[0]["name"] == "vllm"
    assert TOKEN not in json.dumps(records) and "[REDACTED" in procs[1]["cmdline"]


def test_swap_over_its_limit_fails_and_lists_the_hogs(tmp_path: Path) -> None:
    meminfo = MEMINFO.replace("SwapFree:        1500000", "SwapFree:         100000")
    records = run_health(fake_proc(tmp_path / "proc", meminfo=meminfo))
    swap = checks(records)["swap_used"]
    assert (swap["ok"], swap["value"], swap["threshold"]) == (False, 95.0, 80.0)
    assert (swap["swap_total"], swap["swap_used"]) == (2_048_000_000, 1_945_600_000)
    assert [pid for pid, _ in listed(records)] == [77, 4242, 99]


def test_no_pressure_file_is_a_skipped_check_not_a_failure(tmp_path: Path) -> None:
    records = run_health(fake_proc(tmp_path / "proc", psi=None))
    found = checks(records)
    assert found["psi_memory"]["skipped"] is True and found["psi_memory"]["ok"] is True
    assert not {"psi_memory_some", "psi_memory_full"} & set(found)
    assert all(r["ok"] for r in found.values())
    assert listed(records) == []  # memory is fine: no list


def test_low_memory_available_from_the_files(tmp_path: Path) -> None:
    meminfo = MEMINFO.replace("MemAvailable:    8000000", "MemAvailable:     300000")
    records = run_health(fake_proc(tmp_path / "proc", meminfo=meminfo), top_n=2)
    mem = checks(records)["mem_available"]
    assert (mem["ok"], mem["value"], mem["total"]) == (False, 307_200_000, 16_384_000_000)
    assert [pid for pid, _ in listed(records)] == [77, 4242]  # top_n


@pytest.mark.parametrize("psi", ["", "\n", "some avg10\n", "some avg10=x avg60=\n", "garbage"])
def test_a_pressure_file_that_does_not_parse_is_skipped(tmp_path: Path, psi: str) -> None:
    """Not the kernel's format (an emulated /proc in a container, a truncated read): the
    PSI check says it is skipped, never a traceback and never silently nothing."""
    records = run_health(fake_proc(tmp_path / "proc", psi=psi))
    found = checks(records)
    assert found["psi_memory"]["skipped"] is True, found
    assert listed(records) == []


def test_a_proc_without_meminfo_or_loadavg_fails_those_checks_and_goes_on(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path / "proc")
    (proc / "meminfo").unlink()
    (proc / "loadavg").write_text("garbage\n")
    records = run_health(proc)
    found = checks(records)
    for name in ("mem_available", "swap_used", "load"):
        assert found[name]["ok"] is False and found[name]["value"] is None, name
        assert "cannot read" in found[name]["message"]
    assert found["psi_memory_some"]["ok"] is True  # what could be read still is
    assert [pid for pid, _ in listed(records)] == [77, 4242, 99]  # memory unknown: the hogs
