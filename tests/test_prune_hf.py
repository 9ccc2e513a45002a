"""prune-disk on a Hugging Face cache built for real: huggingface_hub's own downloads
(`snapshot_download`, `hf_hub_download`) from a fake Hub on 127.0.0.1, then pruned through
huggingface_hub's cache API. A download in flight, the login token and recent repos stay."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.hub import FakeHub
from helpers.disk import age, age_tree, du
from helpers.prune import candidates, disk_after, prune, write_config

MB = 1_000_000


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def download(hub: FakeHub, cache: Path, repo: str, filename: str | None = None, **kw: str) -> None:
    from huggingface_hub import hf_hub_download, snapshot_download

    if filename is None:
        snapshot_download(repo, cache_dir=cache, endpoint=hub.url, token=False, **kw)
    else:
        hf_hub_download(repo, filename, cache_dir=cache, endpoint=hub.url, token=False, **kw)


@pytest.fixture
def cache(hub: FakeHub, isolated_env: Path) -> Path:
    """old model (40 days unused), new model and a dataset (fresh), and a login token."""
    hub.add(
        "org/old-model",
        {"config.json": b'{"layers": 2}', "model.safetensors": os.urandom(3 * MB)},
        lfs={"model.safetensors"},
    )
    hub.add("org/new-model", {"config.json": b"{}", "weights.bin": os.urandom(MB)}, lfs="*")
    hub.add("org/corpus", {"train.jsonl": b'{"text": "hi"}\n' * 5000}, repo_type="dataset")
    hf_home = isolated_env / ".cache" / "huggingface"
    cache = hf_home / "hub"
    download(hub, cache, "org/old-model")
    download(hub, cache, "org/new-model")
    download(hub, cache, "org/corpus", repo_type="dataset")
    age_tree(cache / "models--org--old-model", 40)
    (hf_home / "token").write_text("hf_" + "a" * 34)
    return cache


def config(home: Path, **rule: object) -> Path:
    return write_config(home, [{"kind": "hf_cache", "min_age_days": 7, **rule}], margin_gb=0)


def test_dry_run_lists_repos_with_du_sizes_and_ages(cache: Path, isolated_env: Path) -> None:
    res = prune(config(isolated_env), "--min-free-gb", "1e9")
    assert res.code == 1  # far under a 1e9 GB threshold: needs a person
    found = candidates(res)
    assert set(found) == {"model/org/old-model", "model/org/new-model", "dataset/org/corpus"}
    old = found["model/org/old-model"]
    assert old["bytes"] == du(cache / "models--org--old-model")
    assert old["bytes_exclusive"] == old["bytes"]
    assert old["safe"] and old["status"] == "would_delete" and not old["applied"]
    assert old["age_s"] > 39 * 86400 and old["refs"] == ["main"]
    new = found["model/org/new-model"]
    assert not new["safe"] and new["reason"] == "too_recent" and new["status"] == "kept"
    assert (cache / "models--org--old-model").exists()  # a dry run touches nothing
    assert disk_after(res)["below_threshold"] is True


def test_apply_deletes_through_the_library_and_keeps_the_rest(
    cache: Path, isolated_env: Path, hub: FakeHub
) -> None:
    old = cache / "models--org--old-model"
    expected = du(old)
    env = {"HF_HOME": str(cache.parent)}
    res = prune(config(isolated_env), "--apply", "--all", "--min-free-gb", "0", env=env)
    assert res.code == 0, res.stdout
    found = candidates(res)
    gone = found["model/org/old-model"]
    assert gone["status"] == "deleted" and gone["applied"] and gone["bytes_freed"] == expected
    assert gone["free_after"] > 0
    assert not old.exists()
    assert (cache.parent / "token").read_text().startswith("hf_")  # the login stays
    from huggingface_hub import hf_hub_download, scan_cache_dir

    left = {r.repo_id for r in scan_cache_dir(cache).repos}
    assert left == {"org/new-model", "org/corpus"}
    # what is left is still a working cache: no network needed for it
    path = hf_hub_download(
        "org/new-model", "weights.bin", cache_dir=cache, local_files_only=True, token=False
    )
    assert os.path.getsize(path) == MB


def test_a_download_in_flight_is_never_deleted(
    cache: Path, isolated_env: Path, hub: FakeHub
) -> None:
    hub.add("org/busy", {"a.json": b"{}", "big.bin": os.urandom(2 * MB)}, lfs={"big.bin"})
    download(hub, cache, "org/busy", "a.json")
    age_tree(cache / "models--org--busy", 30)
    hub.stall("big.bin")
    code = (
        "import sys\nfrom huggingface_hub import hf_hub_download\n"
        f"print(hf_hub_download('org/busy', 'big.bin', cache_dir={str(cache)!r}, "
        f"endpoint={hub.url!r}, token=False))"
    )
    env = {**os.environ, "HF_HOME": str(cache.parent), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    downloader = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert hub.stalling.wait(30), downloader.stderr.read() if downloader.stderr else ""
        blobs = cache / "models--org--busy" / "blobs"
        partial = next(blobs.glob("*.incomplete"))
        age(partial, 30)  # old by its date: only "open by a process" protects it now
        # an abandoned partial download in another repo: old, closed, unlocked
        stale = cache / "models--org--new-model" / "blobs" / "deadbeef.0a1b2c3d.incomplete"
        stale.write_bytes(b"y" * 100_000)
        age(stale, 5)
        res = prune(config(isolated_env, keep=0), "--apply", "--all", "--min-free-gb", "0")
        found = candidates(res)
        busy = found["model/org/busy"]
        assert busy["status"] == "kept" and busy["reason"] == "download_in_progress"
        assert partial.exists()
        orphan = next(c for c in found.values() if c["item"] == "hf_incomplete")
        assert orphan["status"] == "deleted" and not stale.exists()
        assert (cache / "models--org--new-model" / "snapshots").exists()
    finally:
        hub.release()
        out, err = downloader.communicate(timeout=60)
    assert downloader.returncode == 0, err
    assert os.path.getsize(out.decode().strip()) == 2 * MB  # the download finished intact


def test_a_recent_partial_download_keeps_its_repo(cache: Path, isolated_env: Path) -> None:
    blobs = cache / "models--org--old-model" / "blobs"
    (blobs / "cafe.12345678.incomplete").write_bytes(b"z" * 1000)  # written just now
    res = prune(config(isolated_env), "--all", "--min-free-gb", "0")
    old = candidates(res)["model/org/old-model"]
    assert old["reason"] == "download_in_progress" and "min ago" in old["message"]


def test_keep_newest_and_a_missing_cache(cache: Path, isolated_env: Path) -> None:
    for repo in cache.glob("*--org--*"):
        age_tree(repo, 20)
    res = prune(config(isolated_env, keep=2), "--all", "--min-free-gb", "0")
    kept = [c for c in candidates(res).values() if c["reason"] == "keep_newest"]
    assert len(kept) == 2
    res = prune(config(isolated_env, root=str(isolated_env / "nowhere")), "--min-free-gb", "0")
    assert res.code == 0 and not candidates(res)


def test_never_hand_deletes_a_blob_shared_by_two_revisions(
    cache: Path, isolated_env: Path, hub: FakeHub
) -> None:
    """Two revisions share a blob; deleting the repo goes through the strategy, and a
    scan afterwards finds no broken symlink anywhere in the cache."""
    repo = hub.add("org/two-revs", {"shared.bin": b"s" * 50_000, "v.txt": b"1"})
    first = repo.sha
    download(hub, cache, "org/two-revs", revision=first)
    hub.add("org/two-revs", {"shared.bin": b"s" * 50_000, "v.txt": b"2"})
    download(hub, cache, "org/two-revs")
    age_tree(cache / "models--org--two-revs", 30)
    res = prune(config(isolated_env), "--apply", "--all", "--min-free-gb", "0")
    rec = candidates(res)["model/org/two-revs"]
    assert rec["status"] == "deleted" and len(rec["revisions"]) == 2
    from huggingface_hub import scan_cache_dir

    info = scan_cache_dir(cache)
    assert not info.warnings
    assert {r.repo_id for r in info.repos} == {"org/new-model", "org/corpus"}
