"""Trace folders are deleted only once every local file is verified on the Hub (HfApi
against a fake Hub on 127.0.0.1): verified, a file missing, a size mismatch, a content
mismatch caught by the hash re-check before deleting (a plain file by its git sha1, an LFS
file by its sha256), an unknown repo, and an
unreachable Hub (exit 3). The Hub token is used but never printed."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.hub import FakeHub
from helpers.disk import age_tree, write
from helpers.prune import candidates, prune, write_config

TOKEN = "hf_" + "Zq9" * 12


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _files(exp: str) -> dict[str, bytes]:
    return {
        f"traces/{exp}/rollouts/step-000.jsonl": b'{"reward": 1}\n' * 300,
        f"traces/{exp}/rollouts/step-001.jsonl": b'{"reward": 0}\n' * 200,
        f"traces/{exp}/summary.parquet": bytes(range(256)) * 40,
    }


@pytest.fixture
def traces(hub: FakeHub, isolated_env: Path) -> Path:
    root = isolated_env / "experiments" / "traces"
    remote: dict[str, bytes] = {}
    for exp in ("exp-ok", "exp-missing", "exp-size", "exp-content", "exp-lfs", "exp-elsewhere"):
        for path, data in _files(exp).items():
            write(root / path.removeprefix("traces/"), 0)
            (root / path.removeprefix("traces/")).write_bytes(data)
            if exp != "exp-elsewhere":
                remote[path] = data
    del remote["traces/exp-missing/rollouts/step-001.jsonl"]  # a partial upload
    remote["traces/exp-size/summary.parquet"] += b"more"
    remote["traces/exp-content/rollouts/step-000.jsonl"] = b'{"reward": 9}\n' * 300  # same size
    remote["traces/exp-lfs/summary.parquet"] = bytes(range(255, -1, -1)) * 40  # LFS, same size
    hub.add("lab/traces", remote, repo_type="dataset", lfs={p for p in remote if "parquet" in p})
    for exp in root.iterdir():
        age_tree(exp, 10)
    outside = write(isolated_env / "elsewhere" / "exp-linked" / "step.jsonl", 100)
    (root / "exp-linked").symlink_to(outside.parent)  # an experiment folder that is a link
    (root / "README.md").write_text("traces of the lab's RL runs\n")  # not an experiment
    return root


def config(home: Path, hub_url: str) -> tuple[Path, dict[str, str]]:
    rule = {
        "kind": "traces",
        "root": "~/experiments/traces",
        "repo": "lab/traces",
        "repos": {"exp-elsewhere": "lab/other-traces"},
    }
    env = {"HF_ENDPOINT": hub_url, "HF_TOKEN": TOKEN}
    return write_config(home, [rule], margin_gb=0), env


def test_dry_run_verifies_by_size(traces: Path, hub: FakeHub, isolated_env: Path) -> None:
    cfg, env = config(isolated_env, hub.url)
    res = prune(cfg, "--all", "--min-free-gb", "0", env=env)
    assert res.code == 0, res.stdout
    found = candidates(res)
    ok = found["exp-ok"]
    assert ok["safe"] and ok["verified"] == "size" and ok["status"] == "would_delete"
    assert ok["hub_repo"] == "lab/traces" and ok["path_in_repo"] == "traces/exp-ok"
    assert ok["hub_revision"] == hub.repos[("dataset", "lab/traces")].sha
    assert found["exp-missing"]["reason"] == "not_uploaded"
    assert "step-001.jsonl" in found["exp-missing"]["message"]
    assert found["exp-size"]["reason"] == "size_mismatch"
    assert found["exp-content"]["safe"] and found["exp-lfs"]["safe"]  # only a hash tells
    assert found["exp-elsewhere"]["reason"] == "hub_repo_not_found"
    assert found["exp-linked"]["reason"] == "symlink"
    assert "README.md" not in found
    # the token was sent to the Hub and never printed
    assert any(h.get("authorization") == f"Bearer {TOKEN}" for _, _, h in hub.requests)
    assert TOKEN not in res.stdout + res.stderr


def test_verify_hash_in_a_dry_run(traces: Path, hub: FakeHub, isolated_env: Path) -> None:
    cfg, env = config(isolated_env, hub.url)
    res = prune(cfg, "--all", "--verify", "hash", "--min-free-gb", "0", env=env)
    found = candidates(res)
    assert found["exp-ok"]["verified"] == "hash"  # its LFS parquet by sha256 (oid: the pointer's)
    assert found["exp-content"]["reason"] == "hash_mismatch"
    lfs = found["exp-lfs"]  # an LFS file whose content differs: its sha256 tells
    assert lfs["reason"] == "hash_mismatch" and lfs["message"].endswith(": summary.parquet")


def test_apply_rechecks_by_hash_and_deletes_only_what_is_on_the_hub(
    traces: Path, hub: FakeHub, isolated_env: Path
) -> None:
    cfg, env = config(isolated_env, hub.url)
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0", env=env)
    assert res.code == 0, res.stdout
    found = candidates(res)
    assert found["exp-ok"]["status"] == "deleted" and found["exp-ok"]["verified"] == "hash"
    assert not (traces / "exp-ok").exists()
    content = found["exp-content"]
    assert content["status"] == "kept" and content["reason"] == "hash_mismatch"
    assert found["exp-lfs"]["status"] == "kept" and found["exp-lfs"]["reason"] == "hash_mismatch"
    for exp in ("exp-missing", "exp-size", "exp-content", "exp-lfs", "exp-elsewhere"):
        assert len(list((traces / exp).rglob("*.*"))) == 3, exp
    assert (traces / "exp-linked" / "step.jsonl").exists()
    assert TOKEN not in res.stdout + res.stderr


def test_unreachable_hub_keeps_everything_and_exits_3(traces: Path, isolated_env: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    cfg, env = config(isolated_env, dead)
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0", env=env)
    assert res.code == 3, res.stdout
    errors = [r for r in res.records if r["kind"] == "error"]
    assert {e["reason"] for e in errors} == {"unreachable"}
    assert {e["source"] for e in errors} == {"lab/traces", "lab/other-traces"}  # once per repo
    found = candidates(res)
    linked = found.pop("exp-linked")
    assert linked["reason"] == "symlink"
    assert all(c["status"] == "kept" and c["reason"] == "hub_unreachable" for c in found.values())
    assert all((traces / exp).exists() for exp in found)


def test_recent_traces_and_no_repo_configured(
    traces: Path, hub: FakeHub, isolated_env: Path
) -> None:
    write(traces / "exp-new" / "step.jsonl", 100)
    rule = {"kind": "traces", "root": str(traces), "repos": {"exp-ok": "lab/traces"}}
    cfg = write_config(isolated_env, [rule])
    res = prune(cfg, "--all", "--min-free-gb", "0", env={"HF_ENDPOINT": hub.url})
    found = candidates(res)
    assert found["exp-new"]["reason"] == "too_recent"
    assert found["exp-size"]["reason"] == "no_hub_repo"
    assert found["exp-ok"]["safe"]


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.lstat().st_size) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "rule",
    [
        {"kind": "glob", "root": "~/experiments", "pattern": "traces/*"},
        {"kind": "glob", "root": "~/experiments", "pattern": "*/*"},
        {"kind": "cache_dir", "root": "~/experiments"},
        {"kind": "glob", "root": "~/experiments/traces", "pattern": "*"},
        {"kind": "glob", "root": "~/experiments/traces/exp-missing", "pattern": "**"},
    ],
)
def test_no_other_rule_deletes_trace_folders_even_with_no_traces_rule(
    traces: Path, isolated_env: Path, rule: dict[str, str]
) -> None:
    """The runbook: traces go only once verified on the Hub, never in a blanket delete.
    No traces rule is configured, so the default trace location is the one guarded; the
    same rule still deletes what lies next to it."""
    scratch = write(isolated_env / "experiments" / "scratch" / "old.log", 5000)
    age_tree(scratch.parent, 30)
    before = _tree(traces)
    cfg = write_config(isolated_env, [rule])
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0")
    found = candidates(res)
    inside = {n: c for n, c in found.items() if c["path"].startswith(str(traces))}
    assert inside, found  # the rule did reach into the traces
    for name, cand in inside.items():
        assert cand["status"] == "kept" and not cand["applied"], name
        if cand["reason"] != "symlink":  # exp-linked: a link, kept for that first
            assert cand["reason"] == "traces_managed", cand
            assert "kind traces" in cand["message"]
    assert _tree(traces) == before
    if rule["root"] == "~/experiments" and rule.get("pattern") != "traces/*":
        assert not scratch.exists()  # the rule still works outside the traces


def test_a_configured_traces_root_is_guarded_when_only_another_rule_runs(
    hub: FakeHub, isolated_env: Path
) -> None:
    """A traces rule with its own root guards it from the other rules even when
    `--rule` runs only another one (and an unverified folder stays)."""
    runs = isolated_env / "runs"
    write(runs / "traces" / "exp1" / "step-000.jsonl", 4000)
    age_tree(runs, 30)
    rules = [
        {"kind": "traces", "root": str(runs / "traces"), "repo": "lab/traces", "name": "tr"},
        {"kind": "glob", "root": str(runs), "pattern": "*/*", "name": "sweep"},
    ]
    cfg = write_config(isolated_env, rules)
    env = {"HF_ENDPOINT": hub.url}
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0", "--rule", "sweep", env=env)
    (cand,) = candidates(res).values()
    assert cand["rule"] == "sweep" and cand["reason"] == "traces_managed"
    assert (runs / "traces" / "exp1" / "step-000.jsonl").stat().st_size == 4000
