"""Deleting inside a root and nothing else: symlinks out of the root, a path that only
reaches the root through a symlink, hard links, and a real tmpfs mounted inside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.disk import du, tmpfs, write

from labctl.disk.remove import OutsideRoot, remove_inside


def test_symlinks_inside_are_unlinked_never_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    precious = write(tmp_path / "precious" / "keep.txt", 1000)
    victim = root / "old"
    write(victim / "a" / "b.bin", 50_000)
    (victim / "a" / "to-dir").symlink_to(precious.parent)
    (victim / "to-file").symlink_to(precious)
    expected = du(victim)
    out = remove_inside(os.path.realpath(root), str(victim))
    assert not victim.exists()
    assert precious.read_bytes() == b"x" * 1000
    assert out.errors == [] and out.bytes_freed == expected


def test_refuses_a_path_that_resolves_outside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = write(tmp_path / "outside" / "data.bin", 1000)
    root.mkdir()
    (root / "escape").symlink_to(outside.parent)
    with pytest.raises(OutsideRoot):
        remove_inside(os.path.realpath(root), str(root / "escape" / "data.bin"))
    with pytest.raises(OutsideRoot):
        remove_inside(os.path.realpath(root), str(root / ".."))
    with pytest.raises(OutsideRoot):
        remove_inside(os.path.realpath(root), str(root))
    assert outside.exists()
    # the link itself is inside: removing it removes the link only
    remove_inside(os.path.realpath(root), str(root / "escape"))
    assert not (root / "escape").exists() and outside.exists()


def test_hard_linked_files_free_nothing_while_linked_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    shared = write(root / "entry" / "shared.so", 400_000)
    alone = write(root / "entry" / "alone.so", 100_000)
    (tmp_path / "venv").mkdir()
    os.link(shared, tmp_path / "venv" / "shared.so")
    alone_blocks = os.stat(alone).st_blocks * 512
    dir_blocks = os.stat(root / "entry").st_blocks * 512
    out = remove_inside(os.path.realpath(root), str(root / "entry"))
    assert out.bytes_freed == alone_blocks + dir_blocks
    assert (tmp_path / "venv" / "shared.so").stat().st_size == 400_000


def test_never_enters_a_file_system_mounted_inside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root / "entry" / "here.bin", 10_000)
    with tmpfs(root / "entry" / "mnt") as mnt:
        kept = write(mnt / "on-tmpfs.bin", 10_000)
        out = remove_inside(os.path.realpath(root), str(root / "entry"))
        assert kept.exists()
        assert (str(mnt), "mount_point") in out.errors
        assert not (root / "entry" / "here.bin").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files away needs root")
def test_nothing_another_uid_owns_is_deleted(tmp_path: Path) -> None:
    """The last line of the cross-user check: whatever changed since the re-check, an
    entry of another uid stays (and so does the folder holding it); ours go."""
    root = tmp_path / "root"
    ours = write(root / "t" / "ours.bin", 1000)
    theirs = write(root / "t" / "sub" / "theirs.bin", 1000)
    their_dir = write(root / "t" / "their-dir" / "x.bin", 1000).parent
    os.lchown(theirs, 65534, 65534)
    os.lchown(their_dir, 65534, 65534)
    out = remove_inside(str(root), str(root / "t"), owner=os.geteuid())
    assert not ours.exists() and theirs.exists() and (their_dir / "x.bin").exists()
    owned = [p for p, why in out.errors if why.startswith("owned by uid 65534")]
    assert sorted(owned) == sorted([str(theirs), str(their_dir)])
    whole = write(root / "gift" / "a.bin", 10)
    os.lchown(whole.parent, 65534, 65534)
    out = remove_inside(str(root), str(whole.parent), owner=os.geteuid())
    assert whole.exists() and out.errors[0][0] == str(whole.parent)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files away needs root")
def test_the_recheck_before_deleting_sees_a_file_given_away(tmp_path: Path) -> None:
    """A candidate safe when collected, one of whose files changes owner before --apply
    reaches it: the re-check just before deleting keeps it (`other_user`)."""
    import time

    from labctl.disk import caches
    from labctl.disk.plan import Target, apply_one
    from labctl.disk.rules import parse_rules
    from labctl.disk.scan import ScanEnv

    cache = tmp_path / "pip"
    late = write(cache / "entry" / "wheel.whl", 4000)
    (rule,) = parse_rules([{"kind": "cache_dir", "root": str(cache)}], {"HOME": "/h"}, 0.0)
    env = ScanEnv(now=time.time(), protected=[])
    cand = caches.collect_one(rule, str(cache / "entry"), env)
    assert cand.safe
    os.lchown(late, 65534, 65534)
    done = apply_one(cand, env, Target(str(tmp_path), 0, 0, apply=True, everything=True))
    assert done.status == "kept" and not done.applied
    assert done.reasons[0][0] == "other_user" and "uid 65534" in done.reasons[0][1]
    assert "re-checked just before deleting: kept" in done.notes
    assert late.exists()
