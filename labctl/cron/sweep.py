"""What the sweep is: the command cron runs, and how to know a line that runs it.

The sweep is one shell script shipped with labctl, `labctl/data/sweep.sh` (health, poll,
merge-green, diagnose, guard, log, table, then `labctl cron mark-run`). In a checkout
cron runs `scripts/sweep`, which finds the checkout's labctl and runs that script; where
labctl was installed without a checkout (pip, pipx) cron runs the shipped script itself
with `LABCTL` (or `LABCTL_PYTHON`) naming this labctl. Either way it is the same sweep,
and every run is recorded for `labctl cron status`.

A crontab line runs the sweep when its command is the one labctl would install (spaces
aside), names a `scripts/sweep` or the shipped `labctl/data/sweep.sh` as a word of its
own, or pipes `labctl ... poll` into another stage (`|`, not `||`); a shell comment on
the line does not count.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from labctl.cron.lines import shell_code, without_tag

_SCRIPT = re.compile(
    r"""(?:^|[\s;&|(){}'"=/])(?:scripts/sweep|labctl/data/sweep\.sh)(?=$|[\s;&|(){}'"])"""
)
_POLL_PIPE = re.compile(
    r"""(?:^|[\s;&|(){}'"/])labctl\s(?:[^;&|]*\s)?poll(?=$|[\s;&|(){}'"]).*?(?<!\|)\|(?!\|)"""
)


def runs_sweep(command: str, ours: str) -> bool:
    """Does a crontab job's command run the sweep? (`ours`: what labctl would install)"""
    text = without_tag(command)
    if ours and " ".join(text.split()) == " ".join(without_tag(ours).split()):
        return True
    code = shell_code(text)
    return bool(_SCRIPT.search(code) or _POLL_PIPE.search(code))


def command(
    env: Mapping[str, str], *, checkout_script: Path | None, shipped: Path, labctl: list[str]
) -> str:
    """The sweep's crontab command: `env` (labctl's places, cron lacks them), quiet when
    fine, then the checkout's scripts/sweep, else the shipped script with this labctl
    (`labctl`: its executable, or [python, "-m", "labctl"])."""
    words = [f"{k}={shlex.quote(v)}" for k, v in env.items()] + ["SWEEP_QUIET_OK=1"]
    if checkout_script is not None:
        return " ".join([*words, shlex.quote(str(checkout_script))])
    if labctl[1:] == ["-m", "labctl"]:
        words.append(f"LABCTL_PYTHON={shlex.quote(labctl[0])}")
    else:
        words.append(f"LABCTL={shlex.quote(labctl[0])}")
    return " ".join([*words, "/bin/sh", shlex.quote(str(shipped))])
