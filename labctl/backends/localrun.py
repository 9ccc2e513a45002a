"""Small local side jobs of `supervise`: which Python a command runs, pip-installing a
module into it, running the configured notify command, finding a free TCP port."""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labctl.backends.child import Signals

INSTALL_TIMEOUT_S = 900.0  # no output for this long: pip is hung
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")


def _which(prog: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    if "/" in prog:
        path = Path(cwd or ".", prog) if not prog.startswith("/") else Path(prog)
        return str(path) if os.access(path, os.X_OK) and path.is_file() else None
    return shutil.which(prog, path=env.get("PATH", os.defpath))


def find_program(argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> str | None:
    """The executable the command would run (None: not found / not executable)."""
    return _which(argv[0], env, cwd) if argv else None


def interpreter_of(argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> str | None:
    """The Python interpreter a command runs in: the program itself (`python3 train.py`), or
    the interpreter of its `#!` line (`torchrun`, `accelerate`, a venv's console script)."""
    path = find_program(argv, env, cwd)
    if path is None:
        return None
    if _PYTHON.match(os.path.basename(path)):
        return path
    try:
        with open(path, "rb") as fh:
            first = fh.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    if not words or not _PYTHON.match(os.path.basename(words[0])):
        return None
    return _which(words[0], env, cwd)


def pip_install(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    package: str,
    log: Path,
    *,
    kill_grace: float,
    redact: Callable[[str], str],
    tee: IO[bytes] | None,
    signals: Signals,
    timeout: float = INSTALL_TIMEOUT_S,
) -> str | None:
    """`python -m pip install PACKAGE` into the interpreter `argv` runs, with the command's
    environment, output (redacted) in `log`; None when it worked, else what failed."""
    from labctl.backends.child import Child, ChildSpec

    python = interpreter_of(argv, env, cwd)
    if python is None:
        return f"cannot tell which Python {argv[0]} runs, to install {package} into it"
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check", package]
    spec = ChildSpec(pip, env, cwd, log, timeout, kill_grace, redact, tee)
    res = Child(spec).wait(signals)
    if res.exit_code == 0:
        return None
    try:
        with open(log, "rb") as fh:
            tail = fh.read()[-600:].decode("utf-8", "replace").strip().splitlines()[-3:]
    except OSError:  # the log was not written (a full disk)
        tail = []
    return f"{python} -m pip install {package} failed ({log}): {' | '.join(tail)}"


def notify(command: str, md_path: Path, json_path: Path, timeout: float = 60.0) -> dict[str, Any]:
    """Run the notify command with the escalation's .md path as its last argument (and both
    paths in LABCTL_ESCALATION / LABCTL_ESCALATION_JSON). Its output is discarded: it may
    echo the webhook's secret. Returns {ok, exit_code, timed_out}."""
    import shlex

    from labctl.backends.transport import Transport

    try:
        argv = [*shlex.split(command), str(md_path)]
    except ValueError as exc:
        return {"ok": False, "exit_code": None, "timed_out": False, "error": f"bad command: {exc}"}
    env = {"LABCTL_ESCALATION": str(md_path), "LABCTL_ESCALATION_JSON": str(json_path)}
    try:
        res = Transport(env=env).run(argv, timeout=timeout)
    except Exception as exc:  # cannot start it: say so without echoing the command
        return {"ok": False, "exit_code": None, "timed_out": False, "error": type(exc).__name__}
    return {"ok": res.ok, "exit_code": res.returncode, "timed_out": res.timed_out}


def free_port() -> int:
    """A TCP port nobody listens on right now (for MASTER_PORT)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
