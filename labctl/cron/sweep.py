"""What the sweep is: how to know a crontab line that runs it.

A crontab line runs the sweep when its command is the one labctl would install (spaces
aside), names a `scripts/sweep` as a word of its
own, or pipes `labctl ... poll` into another stage (`|`, not `||`); a shell comment on
the line does not count.
"""

from __future__ import annotations

import re

from labctl.cron.lines import without_tag

_SCRIPT = re.compile(r"""(?:^|[\s;&|(){}'"=/])scripts/sweep(?=$|[\s;&|(){}'"])""")
_POLL_PIPE = re.compile(
    r"""(?:^|[\s;&|(){}'"/])labctl\s(?:[^;&|]*\s)?poll(?=$|[\s;&|(){}'"]).*?(?<!\|)\|(?!\|)"""
)


def _uncommented(text: str) -> str:
    """A shell command without its comment (a `#` starting a word, outside quotes)."""
    quote, prev = "", " "
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev in " \t;&|(":
            return text[:i]
        prev = ch
    return text


def runs_sweep(command: str, ours: str) -> bool:
    """Does a crontab job's command run the sweep? (`ours`: what labctl would install)"""
    text = without_tag(command)
    if ours and " ".join(text.split()) == " ".join(without_tag(ours).split()):
        return True
    code = _uncommented(text)
    return bool(_SCRIPT.search(code) or _POLL_PIPE.search(code))
