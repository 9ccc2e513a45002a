"""The crontab adapter: read and write a crontab, without losing anyone else's update.

A crontab is either the user's own, reached only through the `crontab` command
(`crontab -l` reads it, `crontab -` installs it; `crontab -u USER` for another user, which
only root may do), or a crontab file the config names (written atomically, mode and
owner kept). `crontab -l` exits 1 with "no crontab for USER" when there is none: that is
an empty crontab, any other failure is an error (reason `crontab_failed`, exit 3).

Debian's `crontab -l` shows a carriage return as the two characters `\r` (and a backspace
as `\b`; bug #585552), so a crontab with CRLF line endings would come back changed. A `\r`
right before a line break is read back as the carriage return it stands for (a shell
command has no reason to end in a literal backslash-r); one anywhere else is left as it is
(`tr -d '\r'` is a common cron command).

An edit is read -> change -> write, and the user (or `crontab -e`, or another tool) may
write in between. `edit` holds labctl's crontab lock for the whole edit, re-reads just
before writing and starts over from the fresh text when it changed, and reads back what
it wrote. (The crontab command itself offers no compare-and-swap, so the window left is
the few milliseconds between the last read and the write.)
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from labctl.errors import BackendError, LabctlError

_NO_CRONTAB = re.compile(rb"^no crontab for ", re.MULTILINE)
_LISTED_CR = re.compile(rb"\\r(?=\n|\Z)")
ATTEMPTS = 3


class CrontabError(BackendError):
    reason = "crontab_failed"


class CrontabChanged(LabctlError):
    """The crontab kept changing under us; nothing was written."""

    reason = "changed_on_disk"


@dataclass(frozen=True)
class CrontabTarget:
    """Which crontab: a file (`file`), else the user's through the crontab command."""

    file: Path | None = None
    user: str | None = None  # crontab -u USER (root only)
    program: str = "crontab"
    system: bool = False  # a system crontab file: a user field after the schedule
    timeout_s: float = 30.0

    @property
    def label(self) -> str:
        if self.file is not None:
            return str(self.file)
        return f"crontab of {self.user}" if self.user else "the user's crontab"

    def _argv(self, *args: str) -> list[str]:
        return [self.program, *(("-u", self.user) if self.user else ()), *args]


@dataclass(frozen=True)
class Snapshot:
    data: bytes
    exists: bool


def _run(target: CrontabTarget, args: list[str], data: bytes | None = None) -> tuple[int, bytes]:
    argv = target._argv(*args)
    try:
        proc = subprocess.run(
            argv,
            input=data if data is not None else b"",
            capture_output=True,
            timeout=target.timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise CrontabError(
            f"{target.program}: command not found (install the cron package)"
        ) from None
    except subprocess.TimeoutExpired:
        raise CrontabError(f"{' '.join(argv)} did not finish in {target.timeout_s:g}s") from None
    if proc.returncode != 0 and not (args == ["-l"] and _NO_CRONTAB.search(proc.stderr)):
        tail = proc.stderr.decode("utf-8", "replace").strip().replace("\n", " | ")[-300:]
        raise CrontabError(f"{' '.join(argv)} exited {proc.returncode}: {tail or 'no stderr'}")
    return proc.returncode, proc.stdout


def read(target: CrontabTarget) -> Snapshot:
    """The crontab's bytes; an absent crontab reads as empty (exists=False)."""
    if target.file is not None:
        try:
            return Snapshot(target.file.read_bytes(), True)
        except FileNotFoundError:
            return Snapshot(b"", False)
        except OSError as exc:
            raise CrontabError(f"cannot read {target.file}: {exc.strerror}") from None
    rc, out = _run(target, ["-l"])
    return Snapshot(_LISTED_CR.sub(b"\r", out), True) if rc == 0 else Snapshot(b"", False)


def _install(target: CrontabTarget, before: Snapshot, data: bytes) -> None:
    if target.file is not None:
        from labctl.fsops import atomic_write_bytes

        if data or before.exists:
            try:
                atomic_write_bytes(target.file, data, mode=0o644)
            except OSError as exc:
                raise CrontabError(f"cannot write {target.file}: {exc.strerror}") from None
        return
    if data:
        _run(target, ["-"], data)
    elif before.exists:
        _run(target, ["-r"])


def edit(
    target: CrontabTarget,
    change: Callable[[bytes], bytes],
    *,
    lock_dir: Path,
    lock_wait_s: float = 10.0,
) -> tuple[Snapshot, bytes]:
    """Apply `change` to the crontab's text and install the result (if it differs).

    Returns (what was read, what is installed now). `change` may run more than once (on
    fresh text) when the crontab changed between the read and the write."""
    from labctl.fsops import state_lock

    with state_lock(lock_dir, "crontab", wait_s=lock_wait_s):
        for _ in range(ATTEMPTS):
            before = read(target)
            after = change(before.data)
            if after == before.data:
                return before, after
            if read(target) != before:
                continue  # someone wrote in between: start over from their text
            _install(target, before, after)
            check = read(target)
            if check.data != after:
                raise CrontabError(
                    f"{target.label} reads back different bytes than labctl installed"
                )
            return before, after
    raise CrontabChanged(
        f"{target.label} changed {ATTEMPTS} times while labctl was editing it; nothing written"
    )


def home_lookup(target: CrontabTarget) -> Callable[[str | None], str | None]:
    """Home directories for the paths in `target`'s lines (labctl.cron.expand): a name ->
    that user's home; None -> the home of whoever the crontab's lines run as: the `-u`
    user, else the user running labctl, or a crontab file's owner (a system crontab's
    lines name their user). None when the password database does not know them."""
    import os
    import pwd
    from functools import cache

    @cache
    def home(name: str | None) -> str | None:
        try:
            if name is not None:
                return pwd.getpwnam(name).pw_dir
            if target.user:
                return pwd.getpwnam(target.user).pw_dir
            if target.file is not None:
                return pwd.getpwuid(target.file.stat().st_uid).pw_dir
            return pwd.getpwuid(os.getuid()).pw_dir
        except (KeyError, OSError):
            return None

    return home


def daemon_running(proc: Path = Path("/proc")) -> bool | None:
    """Is a cron daemon (cron, crond, cronie, busybox crond) running here? None: can't tell."""
    try:
        entries = [p for p in proc.iterdir() if p.name.isdigit()]
    except OSError:
        return None
    for entry in entries:
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if comm in ("cron", "crond", "cronie", "fcron"):
            return True
    return False
