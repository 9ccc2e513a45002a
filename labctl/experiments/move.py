"""Moving an experiment folder: one rename, or copy, verify, place, delete.

- `os.rename` silently replaces an empty destination folder and `shutil.move` nests into
  an existing one; here the rename is `renameat2(RENAME_NOREPLACE)` (atomic: it fails if
  the destination exists), falling back to check-then-rename where the kernel or file
  system lacks it.
- Across file systems (EXDEV, also between two mounts of one file system) the folder is
  copied into `complete/.<name>.labctl-partial` (the destination's file system), every
  file is hashed and fsynced and compared with the source (relative paths, types, sizes,
  sha256, symlink targets), the copy is renamed into place, and only then is the source
  deleted. A crash leaves either the source alone (a leftover partial copy is ours and is
  started over), or both, with the copy complete: a re-run deletes from the source only
  files the copy holds byte-identical.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

Hook = Callable[[str], None]
Manifest = dict[str, tuple[str, int, str]]  # relpath -> (type, size, sha256 or link target)
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
CHUNK = 1 << 20


def rename_noreplace(src: Path, dst: Path) -> None:
    """Rename src to dst; FileExistsError if dst exists (never replaced, never nested)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        fn = None
    if fn is not None:
        rc = fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE)
        if rc == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS):
            raise OSError(err, os.strerror(err), str(src), None, str(dst))
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, "destination exists", str(dst))
    os.rename(src, dst)


def partial_of(dst: Path) -> Path:
    return dst.with_name(f".{dst.name}.labctl-partial")


def _sha256(path: Path, sync: bool) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
        if sync:
            os.fsync(fh.fileno())
    return h.hexdigest()


def manifest(top: Path, *, sync: bool = False) -> Manifest:
    """Every entry under `top` (symlinks not followed); `sync` fsyncs files and folders."""
    out: Manifest = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        for name in [*dirnames, *filenames]:
            path = here / name
            rel = str(path.relative_to(top))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", 0, "")
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", st.st_size, _sha256(path, sync))
            else:
                out[rel] = ("other", 0, "")
        if sync:
            fd = os.open(here, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    return out


def copy_verified(src: Path, dst: Path, hook: Hook) -> tuple[int, int]:
    """Copy src into dst's partial folder and verify it: (files, bytes). The caller
    records that, then renames the partial folder into place."""
    partial = partial_of(dst)
    if partial.exists():
        shutil.rmtree(partial)  # an earlier copy that never finished: ours, start over
    copied = 0

    def copy(s: str, d: str) -> None:
        nonlocal copied
        shutil.copy2(s, d, follow_symlinks=False)
        copied += 1
        if copied == 1:
            hook("mid_copy")

    shutil.copytree(src, partial, symlinks=True, copy_function=copy)
    want, got = manifest(src), manifest(partial, sync=True)
    if want != got:
        bad = sorted(set(want) ^ set(got)) or sorted(k for k in want if want[k] != got.get(k))
        raise OSError(errno.EIO, f"the copy differs from the source at {bad[0]!r}", str(partial))
    hook("copy_verified")
    files = [v for v in want.values() if v[0] == "file"]
    return len(files), sum(v[1] for v in files)


def delete_copied_source(src: Path, dst: Path, hook: Hook) -> None:
    """Delete src, but only what dst holds identically (a resumed delete is checked too)."""
    have, left = manifest(dst), manifest(src)
    differs = [k for k, v in left.items() if have.get(k) != v and v[0] != "dir"]
    if differs:
        raise OSError(errno.EIO, f"{differs[0]!r} differs from the copy; source kept", str(src))
    removed = 0
    for dirpath, dirnames, filenames in os.walk(src, topdown=False, followlinks=False):
        for name in filenames:
            os.unlink(Path(dirpath, name))
            removed += 1
            if removed == 1:
                hook("mid_delete")
        for name in dirnames:
            path = Path(dirpath, name)
            (os.unlink if path.is_symlink() else os.rmdir)(path)
    os.rmdir(src)
