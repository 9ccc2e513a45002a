"""Disk usage counted like `du -sxB1`, checked against du itself on real trees: hard
links, symlinks out of the tree, a real tmpfs mount inside, files deleted mid-scan, and a
folder we may not read (file modes enforced by dropping root's DAC capabilities)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest
from helpers.disk import du, no_dac_available, run_unprivileged, tmpfs, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.disk.usage import PROGRESS_EVERY, disk_usage


def test_hard_links_once_symlinks_not_followed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    outside = write(tmp_path / "outside" / "big.bin", 3_000_000)
    write(tree / "a" / "data.bin", 200_000)
    os.link(tree / "a" / "data.bin", tree / "data-link.bin")
    os.link(tree / "a" / "data.bin", tree / "a" / "again.bin")
    (tree / "to-outside").symlink_to(outside.parent)
    (tree / "to-file").symlink_to(outside)
    got = disk_usage(str(tree))
    assert got.bytes == du(tree)
    assert got.bytes < 1_000_000  # the 3 MB behind the symlinks is not counted
    assert got.exclusive == got.bytes  # every link of data.bin is inside the tree
    assert got.files == 5 and got.dirs == 2


def test_exclusive_leaves_out_files_linked_from_elsewhere(tmp_path: Path) -> None:
    """Like uv's cache: hard-linked into an environment outside the tree."""
    cache = tmp_path / "cache"
    shared = write(cache / "wheels" / "torch.so", 1_000_000)
    write(cache / "wheels" / "only-here.so", 300_000)
    os.link(shared, write(tmp_path / "venv" / "placeholder", 1).parent / "torch.so")
    got = disk_usage(str(cache))
    assert got.bytes == du(cache)
    assert got.bytes - got.exclusive == os.stat(shared).st_blocks * 512


def test_top_may_be_a_file_or_a_symlink(tmp_path: Path) -> None:
    f = write(tmp_path / "f.bin", 10_000)
    link = tmp_path / "link"
    link.symlink_to(f)
    assert disk_usage(str(f)).bytes == du(f)
    assert disk_usage(str(link)).bytes == du(link)


def test_does_not_cross_into_a_mounted_tmpfs(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write(tree / "here.bin", 100_000)
    with tmpfs(tree / "mnt") as mnt:
        write(mnt / "elsewhere.bin", 4_000_000)
        got = disk_usage(str(tree))
        assert got.bytes == du(tree)
        assert got.bytes < 1_000_000
        assert got.mounts == [str(mnt)] and got.mount_count == 1


def test_a_folder_deleted_mid_scan_is_counted_as_vanished(tmp_path: Path) -> None:
    """Depth first: the folder listed first is walked last, so at the first progress
    call (after PROGRESS_EVERY folders) it was listed but not yet opened."""
    tree = tmp_path / "tree"
    for i in range(100):
        write(tree / f"d{i:03d}" / "f.bin", 20_000)
    doomed = tree / os.listdir(tree)[0]
    doomed_files = du(doomed) - os.lstat(doomed).st_blocks * 512
    before = du(tree)
    calls = []

    def progress(entries: int, nbytes: int) -> None:
        if not calls:
            shutil.rmtree(doomed)
        calls.append(entries)

    got = disk_usage(str(tree), progress=progress)
    assert calls and PROGRESS_EVERY < 100
    assert got.vanished == 1 and got.error_count == 0
    assert got.bytes == before - doomed_files


def test_files_deleted_while_scanning_never_crash(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    paths = [write(tree / f"d{i // 50}" / f"f{i}", 5000) for i in range(3000)]
    before = du(tree)
    stop = threading.Event()

    def deleter() -> None:
        for p in reversed(paths):
            if stop.is_set():
                return
            p.unlink()

    t = threading.Thread(target=deleter)
    t.start()
    try:
        got = disk_usage(str(tree))
    finally:
        stop.set()
        t.join()
    assert got.error_count == 0
    assert du(tree) <= got.bytes <= before


@pytest.mark.skipif(not no_dac_available(), reason="setpriv cannot drop DAC capabilities")
def test_permission_denied_folder_is_reported_not_fatal() -> None:
    base = Path(tempfile.mkdtemp(prefix="labctl-perm-"))
    try:
        base.chmod(0o755)
        tree = base / "tree"
        write(tree / "open" / "a.bin", 50_000)
        write(tree / "locked" / "secret.bin", 500_000)
        (tree / "locked").chmod(0o000)
        code = (
            "import json; from labctl.disk.usage import disk_usage\n"
            f"u = disk_usage({str(tree)!r})\n"
            "print(json.dumps([u.bytes, u.errors, u.error_count, u.partial]))"
        )
        got_bytes, errors, count, partial = json.loads(run_unprivileged(code))
        assert partial and count == 1
        assert errors == [[str(tree / "locked"), "permission_denied"]]
        assert got_bytes == du(tree, "setpriv", "--bounding-set=-dac_override,-dac_read_search")
        assert got_bytes < du(tree)  # what we could not read is not in the total
    finally:
        (base / "tree" / "locked").chmod(0o755)
        shutil.rmtree(base)


def test_split_across_processes_counts_the_same(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    first = write(tree / "d0" / "shared.bin", 70_000)
    for i in range(60):
        write(tree / f"d{i}" / "e" / "f.bin", 1000 * i)
    os.link(first, tree / "d59" / "e" / "shared-link.bin")  # links in both halves
    one = disk_usage(str(tree))
    two = disk_usage(str(tree), workers=2, split_after=5)
    assert one.bytes == two.bytes == du(tree)
    assert one.exclusive == two.exclusive == one.bytes
    assert (one.files, one.dirs) == (two.files, two.dirs)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files away needs root")
def test_entries_of_other_users_are_counted_by_uid_whatever_the_split(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for i in range(60):
        write(tree / f"d{i}" / "f.bin", 100)
    for i in (3, 40, 57):  # in the parent's share and in the child's
        os.lchown(tree / f"d{i}" / "f.bin", 65534, 65534)
    os.lchown(tree / "d40", 1234, 1234)
    for workers in (1, 2):
        got = disk_usage(str(tree), workers=workers, split_after=5)
        assert got.other_owners == {65534: 3, 1234: 1} and got.other_owned == 4
        assert sorted(got.other_paths) == sorted(
            [str(tree / f"d{i}" / "f.bin") for i in (3, 40, 57)] + [str(tree / "d40")]
        )
    theirs = disk_usage(str(tree), owner=65534)
    assert theirs.other_owners == {0: 117, 1234: 1}  # the top, 59 folders, 57 files
    assert disk_usage(str(tree / "d3" / "f.bin")).other_owners == {65534: 1}  # a file top


_names = st.text("abcdefgh", min_size=1, max_size=3)
_tree = st.recursive(
    st.integers(0, 40_000),  # a file of that many bytes
    lambda kids: st.dictionaries(_names, kids, max_size=4),
    max_leaves=25,
)


def _build(root: Path, spec: object, files: list[Path]) -> None:
    if isinstance(spec, int):
        write(root, spec)
        files.append(root)
        return
    root.mkdir(parents=True, exist_ok=True)
    for name, child in spec.items():  # type: ignore[attr-defined]
        _build(root / name, child, files)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spec=st.dictionaries(_names, _tree, max_size=5), links=st.lists(st.integers(0, 50)))
def test_equals_du_on_any_tree(tmp_path: Path, spec: dict[str, object], links: list[int]) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    files: list[Path] = []
    _build(root / "t", spec, files)
    for i, n in enumerate(links):
        if files:
            os.link(files[n % len(files)], root / "t" / f"link{i}")
            (root / "t" / f"sym{i}").symlink_to(files[n % len(files)])
    for workers in (1, 2):
        got = disk_usage(str(root / "t"), workers=workers, split_after=3)
        assert got.bytes == du(root / "t")
        assert got.exclusive == got.bytes
