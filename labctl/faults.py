"""When a place labctl writes cannot take the write: which fault, how much room is left,
what a person does about it (issue 22: degrade, never go blind).

A full disk, a read-only mount, a permission, a quota, a failing disk or a file standing
where a directory should be (EEXIST, ENOTDIR) is not a bug: the
command that meets one says so in an `error` record with its own reason (`state_unwritable`
for labctl's state directory, `not_written` for a file the user asked for), the errno by
name, the free space, and what to do. What could be done is still done.

    is_write_fault(exc)        an OSError one of those faults raises
    probe(directory)           a real small write there: the OSError it meets, or None
    free_bytes(path)           bytes free to this user where `path` is (or would be)
    fault_fields(path, exc)    {"path", "errno", "free_bytes"} for an error record
    describe(exc, free)        "No space left on device (ENOSPC, 0 bytes free)"
    advice(exc)                what to do, in a few words
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Any

WRITE_FAULTS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EFBIG,
     errno.EEXIST, errno.ENOTDIR}  # the last two: a file where a directory should be
)  # fmt: skip
PROBE_BYTES = 4096  # one block: a disk filled to the last block refuses it


def is_write_fault(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in WRITE_FAULTS


def free_bytes(path: Path) -> int | None:
    """Bytes this user may still write where `path` is or would be (None: unknown)."""
    from labctl import volumes

    try:
        return volumes.free_bytes(volumes.existing_ancestor(str(path)))
    except OSError:
        return None


def probe(directory: Path) -> OSError | None:
    """Create `directory` if needed and write one flushed block in it (then remove it): the
    OSError that meets, or None when the directory takes a write."""
    fd, name = -1, None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(dir=directory, prefix=".labctl-probe-")
        os.write(fd, b"\0" * PROBE_BYTES)
        os.fsync(fd)
        return None
    except OSError as exc:
        return exc
    finally:
        if fd >= 0:
            os.close(fd)
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)


def errno_name(exc: OSError) -> str | None:
    return errno.errorcode.get(exc.errno or 0)


def describe(exc: OSError, free: int | None) -> str:
    what = exc.strerror or str(exc)
    room = "free space unknown" if free is None else f"{free} bytes free"
    return f"{what} ({errno_name(exc) or 'no errno'}, {room})"


def advice(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free space: run `labctl prune-disk`"
    if exc.errno == errno.EROFS:
        return "the file system is mounted read-only: remount it read-write"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"uid {os.geteuid()} may not write there: fix the owner or mode"
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        return "a file stands where a directory should be: move it, or fix the configured path"
    return "the disk reports errors: check `dmesg` and the file system"


def fault_fields(path: Path, exc: OSError) -> dict[str, Any]:
    return {"path": str(path), "errno": errno_name(exc), "free_bytes": free_bytes(path)}


def fault_record(reason: str, path: Path, exc: OSError, what: str, **fields: Any) -> dict[str, Any]:
    """The `error` record for a write that failed: `what` says what was not done (and what
    is still as it was); the record adds the errno, the free space and the advice."""
    extra = fault_fields(path, exc)
    message = f"{what}: {describe(exc, extra['free_bytes'])}; {advice(exc)}"
    return {"kind": "error", "reason": reason, "message": message, **extra, **fields}


def not_written(path: Path, exc: OSError, what: str, **fields: Any) -> dict[str, Any]:
    """`not_written`: a file the command was asked to write was not (the original, if any,
    untouched: labctl writes whole files by atomic replacement)."""
    return fault_record("not_written", path, exc, what, applied=False, **fields)


def fault_error(record: dict[str, Any]) -> Any:
    """An error record of this module as the LabctlError `main()` maps (exit 3)."""
    from labctl.errors import BackendError

    fields = {k: v for k, v in record.items() if k not in ("kind", "reason", "message")}
    return BackendError(record["message"], reason=record["reason"], **fields)


def write_fault_error(exc: OSError) -> Any:
    """A write fault no command expected, as the LabctlError `main()` maps (exit 3): never
    an `internal_error`, never a traceback. (Any: keeps labctl.errors a lazy import.)"""
    from labctl.errors import BackendError

    place = exc.filename if isinstance(exc.filename, str) else None
    what = f"{place} was not written" if place else "a file was not written"
    fields: dict[str, Any] = {"errno": errno_name(exc), "free_bytes": None}
    if place is not None:
        fields.update(path=place, free_bytes=free_bytes(Path(place)))
    message = f"{what}: {describe(exc, fields['free_bytes'])}; {advice(exc)}"
    return BackendError(message, reason="not_written", applied=False, **fields)
