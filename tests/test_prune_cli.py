"""prune-disk on real volumes: a tmpfs that is short of space (oldest first, stop at the
goal, exit 1 while under the threshold), uv-style hard links, symlinks out of the roots,
a mount inside a candidate, a file held open, the login token, keep-N, bad config."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cronuser import cron_user  # noqa: F401  (a throwaway user: labctl run as not-root)
from helpers.cli import LABCTL, ROOT, run_labctl
from helpers.disk import NO_DAC, age, age_tree, du, no_dac_available, tmpfs, write
from helpers.prune import candidates, disk_after, prune, write_config

MB = 1_000_000
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving files away needs root")


def give(path: Path, uid: int) -> None:
    """`path` and everything below it now belong to `uid`."""
    for p in [path, *path.rglob("*")]:
        os.lchown(p, uid, uid)


def name_of(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def cache_entries(root: Path, n: int, size: int) -> None:
    """Entries e1 (newest, 10 days) … en (oldest, n*10 days), each `size` bytes."""
    for i in range(1, n + 1):
        write(root / f"e{i}" / "blob", size)
        age_tree(root / f"e{i}", 10 * i)


def goal_config(home: Path, root: Path, vol: Path, need: int) -> Path:
    """A threshold `need` bytes above the volume's free space now, margin 1 MB."""
    st = os.statvfs(vol)
    free = st.f_bavail * st.f_frsize
    rule = {"kind": "cache_dir", "root": str(root), "tool": "pip"}
    return write_config(home, [rule], min_free_gb=(free + need - MB) / 1e9, margin_gb=0.001)


def test_frees_oldest_first_until_the_goal_on_a_full_volume(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "vol", "64m") as vol:
        cache_entries(vol / "pip", 5, 4 * MB)
        cfg = goal_config(tmp_path, vol / "pip", vol, 7 * MB)  # two 4 MB entries suffice
        dry = prune(cfg, str(vol))
        assert dry.code == 1  # under the threshold, nothing deleted yet
        status = {n: c["status"] for n, c in candidates(dry).items()}
        assert status == {"e5": "would_delete", "e4": "would_delete", "e3": "not_needed",
                          "e2": "not_needed", "e1": "not_needed"}  # fmt: skip
        assert (vol / "pip" / "e5").exists()
        assert disk_after(dry)["projected_free"] >= disk_after(dry)["goal_free"]

        res = prune(cfg, "--apply", str(vol))
        assert res.code == 0, res.stdout
        assert res.stderr == ""  # piped: no progress bar, no chatter
        done = [r for r in res.records if r["kind"] == "candidate" and r["applied"]]
        assert [r["name"] for r in done] == ["e5", "e4"]  # oldest first, then stop
        assert all(r["bytes_freed"] == r["bytes_exclusive"] for r in done)
        assert done[1]["free_after"] >= disk_after(res)["goal_free"]
        assert sorted(p.name for p in (vol / "pip").iterdir()) == ["e1", "e2", "e3"]
        assert disk_after(res)["below_threshold"] is False


def test_still_under_the_threshold_exits_1(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "vol", "32m") as vol:
        cache_entries(vol / "pip", 2, 2 * MB)
        cfg = goal_config(tmp_path, vol / "pip", vol, 20 * MB)
        res = prune(cfg, "--apply", str(vol))
        assert res.code == 1
        assert not list((vol / "pip").iterdir())  # it freed what it safely could
        assert disk_after(res)["below_threshold"] is True


def test_uv_cache_reports_both_sizes_and_frees_only_unshared(tmp_path: Path) -> None:
    cache = tmp_path / "uv"
    shared = write(cache / "archive-v0" / "abc" / "torch" / "lib.so", 2 * MB)
    write(cache / "archive-v0" / "abc" / "only.py", 300_000)
    venv = tmp_path / "venv" / "lib"
    venv.mkdir(parents=True)
    os.link(shared, venv / "lib.so")
    age_tree(cache, 30)
    shared_bytes = os.stat(shared).st_blocks * 512
    cfg = write_config(tmp_path, [{"kind": "cache_dir", "root": str(cache)}])
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0")
    entry = candidates(res)["archive-v0"]
    assert entry["bytes"] == entry["bytes_exclusive"] + shared_bytes
    assert entry["bytes_freed"] == entry["bytes_exclusive"]
    assert any("hard-links" in n for n in entry["notes"])
    assert (venv / "lib.so").stat().st_size == 2 * MB  # the environment still works


def test_symlinks_never_lead_outside_the_root(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "keep" / "important.log", 5000)
    age_tree(tmp_path / "outside", 30)
    root = tmp_path / "sessions"
    old = write(root / "s1" / "old.log", 5000)
    (root / "s2").mkdir()
    (root / "s2" / "escape").symlink_to(outside.parent)  # a folder link out of the root
    (root / "s3.log").symlink_to(outside)  # a file link out of the root
    age_tree(root, 30)
    rule = {"kind": "glob", "root": str(root), "pattern": "**/*.log"}
    cfg = write_config(tmp_path, [rule])
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0")
    found = candidates(res)
    assert found["s2/escape/important.log"]["reason"] == "outside_root"
    assert found["s3.log"]["reason"] == "symlink"
    assert found["s1/old.log"]["status"] == "deleted" and not old.exists()
    assert outside.read_bytes() == b"x" * 5000


def test_a_mount_inside_or_an_open_file_keeps_the_entry(tmp_path: Path) -> None:
    cache = tmp_path / "torch"
    write(cache / "hub" / "ckpt.pt", 100_000)
    held = write(cache / "busy" / "ckpt.pt", 100_000)
    age_tree(cache, 30)
    holder = subprocess.Popen(
        [sys.executable, "-c", f"f = open({str(held)!r}); import time; time.sleep(60)"]
    )
    try:
        time.sleep(0.3)
        with tmpfs(cache / "hub" / "mnt") as mnt:
            write(mnt / "other-fs.bin", 1000)
            age_tree(cache / "hub", 30)
            cfg = write_config(tmp_path, [{"kind": "cache_dir", "root": str(cache)}])
            res = prune(cfg, "--apply", "--all", "--min-free-gb", "0")
            found = candidates(res)
            assert found["hub"]["reason"] == "mount_point_inside"
            assert found["busy"]["reason"] == "in_use"
            assert str(holder.pid) in found["busy"]["message"]
            assert (mnt / "other-fs.bin").exists() and held.exists()
    finally:
        holder.kill()
        holder.wait()


def test_login_token_and_hub_cache_are_never_entries_to_delete(tmp_path: Path) -> None:
    hf_home = tmp_path / "hf"
    write(hf_home / "token", 37)
    write(hf_home / "stored_tokens", 100)
    write(hf_home / "hub" / "models--a--b" / "blobs" / "x", 1000)
    write(hf_home / "xet" / "chunk-cache" / "c1", 50_000)
    age_tree(hf_home, 30)
    cfg = write_config(tmp_path, [{"kind": "cache_dir", "root": str(hf_home)}])
    res = prune(cfg, "--apply", "--all", "--min-free-gb", "0", env={"HF_HOME": str(hf_home)})
    found = candidates(res)
    assert found["token"]["reason"] == "protected"
    assert found["stored_tokens"]["reason"] == "protected"
    assert found["hub"]["reason"] == "hf_cache_managed"
    assert found["xet"]["status"] == "deleted"
    assert (hf_home / "token").exists() and (hf_home / "hub" / "models--a--b").exists()


def test_a_glob_rule_inside_the_hub_cache_deletes_no_blob(tmp_path: Path) -> None:
    """huggingface_hub's blob store is pruned through its own API only: a hand-written
    glob rooted in the cache finds the blobs and keeps them all."""
    hub = tmp_path / "hf" / "hub"
    blob = write(hub / "models--a--b" / "blobs" / "0123abcd", 50_000)
    age_tree(tmp_path / "hf", 30)
    rule = {"kind": "glob", "root": str(hub), "pattern": "*/blobs/*"}
    cfg = write_config(tmp_path, [rule])
    env = {"HF_HOME": str(tmp_path / "hf")}
    found = candidates(prune(cfg, "--apply", "--all", "--min-free-gb", "0", env=env))
    assert found["models--a--b/blobs/0123abcd"]["reason"] == "hf_cache_managed"
    assert blob.stat().st_size == 50_000


def test_min_age_and_keep_newest(tmp_path: Path) -> None:
    root = tmp_path / "pip"
    cache_entries(root, 4, 1000)
    write(root / "fresh" / "blob", 1000)
    rule = {"kind": "cache_dir", "root": str(root), "min_age_days": 15, "keep": 1}
    cfg = write_config(tmp_path, [rule])
    found = candidates(prune(cfg, "--all", "--min-free-gb", "0"))
    assert found["fresh"]["reason"] == "too_recent"
    assert found["e1"]["reason"] == "too_recent"  # 10 days < 15
    assert found["fresh"].get("other_reasons") == ["keep_newest"]
    assert [n for n, c in found.items() if c["status"] == "would_delete"] == ["e4", "e3", "e2"]


@pytest.mark.parametrize(
    "rule,needle",
    [
        ({"kind": "bogus", "root": "/x"}, "kind must be one of"),
        ({"kind": "cache_dir"}, "needs a root"),
        ({"kind": "glob", "root": "/x", "pattern": "../*"}, "relative pattern"),
        ({"kind": "cache_dir", "root": "~"}, "too broad"),
        ({"kind": "cache_dir", "root": "/x", "color": "red"}, "unknown key 'color'"),
    ],
)
def test_bad_rules_are_one_clear_error(tmp_path: Path, rule: dict[str, str], needle: str) -> None:
    cfg = write_config(tmp_path, [rule])
    res = run_labctl("prune-disk", "--config", str(cfg))
    assert res.code == 2
    assert len(res.records) == 1 and res.records[0]["reason"] == "config"
    assert needle in res.records[0]["message"]
    assert "Traceback" not in res.stderr


def test_unknown_rule_name_is_a_usage_error(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [{"kind": "cache_dir", "root": str(tmp_path / "c")}])
    res = run_labctl("prune-disk", "--config", str(cfg), "--rule", "nope")
    assert res.code == 2 and res.records[0]["reason"] == "usage"


def test_the_same_disk_usage_as_du_for_each_candidate(tmp_path: Path) -> None:
    root = tmp_path / "wandb"
    write(root / "artifacts" / "obj" / "a", 123_456)
    os.link(root / "artifacts" / "obj" / "a", write(root / "media" / "x", 1).parent / "a-link")
    write(root / "staging" / "pending.bin", 10_000)
    age_tree(root, 30)
    age(root, 30)
    cfg = write_config(tmp_path, [{"kind": "cache_dir", "root": str(root)}])
    found = candidates(prune(cfg, "--all", "--min-free-gb", "0"))
    for name in ("artifacts", "media"):
        assert found[name]["bytes"] == du(root / name)
    assert found["staging"]["reason"] == "wandb_staging"
    # the hard link is counted in both entries, and freed by neither alone
    assert found["media"]["bytes_exclusive"] < found["media"]["bytes"]


@pytest.mark.skipif(not no_dac_available(), reason="setpriv cannot drop DAC capabilities")
def test_a_folder_we_may_not_read_keeps_its_entry() -> None:
    """File modes enforced (root without DAC capabilities): the locked folder's entry is
    kept as unreadable, partial; the readable one next to it goes."""
    base = Path(tempfile.mkdtemp(prefix="labctl-perm-"))
    try:
        base.chmod(0o755)
        cache = base / "pip"
        write(cache / "open" / "a.whl", 50_000)
        write(cache / "locked" / "inner" / "b.whl", 50_000)
        age_tree(cache, 30)
        (cache / "locked" / "inner").chmod(0o000)
        cfg = write_config(base, [{"kind": "cache_dir", "root": str(cache)}])
        env = {**os.environ, "HOME": str(base)}
        out = subprocess.run(
            [*NO_DAC, sys.executable, "-m", "labctl", "prune-disk", "--config", str(cfg),
             "--apply", "--all", "--min-free-gb", "0"],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        found = {r["name"]: r for r in map(json.loads, out.stdout.splitlines())
                 if r["kind"] == "candidate"}  # fmt: skip
        locked = found["locked"]
        assert locked["reason"] == "unreadable" and locked["partial"] is True
        assert locked["unreadable"] == [str(cache / "locked" / "inner")]
        assert found["open"]["status"] == "deleted"
        assert (cache / "locked" / "inner").exists()
    finally:
        (base / "pip" / "locked" / "inner").chmod(0o755)
        shutil.rmtree(base)


@needs_root
def test_another_users_files_keep_their_entry(tmp_path: Path) -> None:
    """Cross-user safety before any delete: an entry holding one file of another user is
    kept (who, how many), as is one that is all theirs; ours goes."""
    cache = tmp_path / "pip"
    write(cache / "mine" / "a.whl", 10_000)
    write(cache / "mixed" / "b.whl", 10_000)
    write(cache / "mixed" / "c.whl", 10_000)
    write(cache / "theirs" / "d" / "e.whl", 10_000)
    give(cache / "mixed" / "b.whl", NOBODY)
    give(cache / "theirs", NOBODY)
    age_tree(cache, 30)
    cfg = write_config(tmp_path, [{"kind": "cache_dir", "root": str(cache)}])
    found = candidates(prune(cfg, "--apply", "--all", "--min-free-gb", "0"))
    assert found["mine"]["status"] == "deleted"
    mixed, theirs = found["mixed"], found["theirs"]
    assert mixed["status"] == "kept" and mixed["reason"] == "other_user"
    assert mixed["other_users"] == [{"uid": NOBODY, "user": name_of(NOBODY), "entries": 1}]
    assert mixed["message"].startswith("1 of 3 entries belong to another user")
    assert f"{name_of(NOBODY)} (uid {NOBODY}): 1" in mixed["message"]
    assert str(cache / "mixed" / "b.whl") in mixed["message"]
    assert theirs["reason"] == "other_user" and theirs["other_users"][0]["entries"] == 3
    assert (cache / "mixed" / "b.whl").exists() and (cache / "mixed" / "c.whl").exists()
    assert (cache / "theirs" / "d" / "e.whl").exists()


def test_not_root_keeps_the_file_root_left_in_its_cache(cron_user: str) -> None:  # noqa: F811
    """labctl run as a plain user could unlink root's file in the user's own folder (the
    folder is the user's): it keeps that entry, and deletes the user's own one."""
    base = Path(tempfile.mkdtemp(prefix="labctl-owner-"))  # tmp_path is root-only
    try:
        base.chmod(0o755)
        cache = base / "pip"
        write(cache / "ours" / "a.whl", 10_000)
        write(cache / "shared" / "b.whl", 10_000)
        rooted = write(cache / "shared" / "built-by-root.whl", 10_000)
        give(base, pwd.getpwnam(cron_user).pw_uid)
        os.lchown(rooted, 0, 0)
        age_tree(cache, 30)
        cfg = write_config(base, [{"kind": "cache_dir", "root": str(cache)}])
        give(cfg, pwd.getpwnam(cron_user).pw_uid)
        cmd = ["setpriv", f"--reuid={cron_user}", f"--regid={cron_user}", "--clear-groups"]
        env = {"HOME": str(base), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
        args = ["prune-disk", "--config", str(cfg), "--apply", "--all", "--min-free-gb", "0"]
        out = subprocess.run(
            [*cmd, *LABCTL, *args], env=env, cwd=base, capture_output=True, text=True,
            timeout=60, check=False,
        )  # fmt: skip
        found = {r["name"]: r for r in map(json.loads, out.stdout.splitlines())
                 if r["kind"] == "candidate"}  # fmt: skip
        assert found["ours"]["status"] == "deleted", out.stdout + out.stderr
        shared = found["shared"]
        assert shared["reason"] == "other_user" and shared["status"] == "kept"
        assert shared["other_users"] == [{"uid": 0, "user": "root", "entries": 1}]
        assert f"({cron_user}, uid " in shared["message"]
        assert rooted.exists() and (cache / "shared" / "b.whl").exists()
    finally:
        shutil.rmtree(base)
