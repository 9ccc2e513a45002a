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
