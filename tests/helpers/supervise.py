"""Helpers for the supervise tests: run it on a test child, find processes left behind."""

from __future__ import annotations

import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.cli import Result, run_labctl

CHILDREN = Path(__file__).parent.parent / "children"
PY = sys.executable


def child(name: str, *args: str) -> list[str]:
    return [PY, str(CHILDREN / f"{name}.py"), *args]


def alive(pid: int | str) -> bool:
    """A process that exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def left_behind(marker: str) -> list[int]:
    """Live processes whose environment carries the test's marker."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if marker.encode() in env and alive(name):
            out.append(int(name))
    return out


@dataclass
class Run:
    res: Result
    state: Path
    marker: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == kind]

    @property
    def final(self) -> dict[str, Any]:
        return self.records[-1]

    def escalations(self) -> list[Path]:
        folder = self.state / "escalations"
        return sorted(folder.iterdir()) if folder.is_dir() else []

    def everything_written(self) -> str:
        """stdout, stderr and every file supervise wrote (logs, registration, escalations)."""
        parts = [self.res.stdout, self.res.stderr]
        for path in sorted(self.state.rglob("*")):
            if path.is_file():
                parts.append(path.read_text(errors="replace"))
        return "\n".join(parts)


def supervise(
    tmp_path: Path,
    command: list[str],
    *options: str,
    env: dict[str, str] | None = None,
    config: str | None = None,
    timeout: float = 120,
) -> Run:
    """`labctl supervise [options] -- command` with its own state dir and a marker in the
    environment its processes inherit."""
    state = tmp_path / "state"
    marker = uuid.uuid4().hex
    full = {"LABCTL_STATE_DIR": str(state), "LABCTL_TEST_MARKER": marker}
    full.update(env or {})
    args = list(options)
    if config is not None:
        cfg = tmp_path / "config.toml"
        cfg.write_text(config)
        cfg.chmod(0o600)
        args = ["--config", str(cfg), *args]
    res = run_labctl("supervise", *args, "--", *command, env=full, timeout=timeout)
    return Run(res, state, marker, res.records)


def registration(state: Path) -> dict[str, Any]:
    (path,) = (state / "supervise" / "runs").glob("*.json")
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def venv_borrowing_pip(tmp_path: Path) -> tuple[Path, Path]:
    """A venv without pip of its own (it borrows the test venv's pip): its python, site dir."""
    import subprocess
    import sysconfig

    import pip

    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (site / "borrowed_pip.pth").write_text(str(Path(pip.__file__).parent.parent) + "\n")
    return venv / "bin" / "python", site
