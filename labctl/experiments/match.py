"""Which jobs and which crontab lines belong to an experiment — exactly, never by substring.

A job belongs to experiment NAME when its name matches one of the job name patterns
(`[experiments] job_patterns`, default `NAME`, `NAME-*`, `NAME_*`, `NAME.*`: so `exp10-a`
is not a job of `exp1`) or its work dir is the experiment's folder or inside it.

A crontab job line feeds NAME when it carries the tag `# labctl:experiment=NAME` or its
command names the experiment's folder as a path: `<root>/active/NAME` followed by `/`,
the end, a quote, a space or a shell separator — never `<root>/active/NAME0`, and never
`/elsewhere/active/NAME` or `/data/NAME/x`, which merely contain the name. The command is
read as cron's shell sees it (labctl.cron.expand): `~/...`, `~user/...`, `$HOME/...`,
`${HOME}/...` and the crontab's own variables are expanded first, and a path spelled with
`..` or `//` is normalised.

A job line that mentions the name any other way is a `mention`: shown, never retired. It
is `unresolved` when the name stands as a path component or a word of its own in a part
of the command labctl cannot resolve to an absolute path — a relative path
(`./active/exp1/x.sh`), a variable the crontab does not set (`$LAB/active/exp1`), a `~`
it cannot expand, or a bare argument (`refill.sh exp1`): such a line may well feed the
experiment, so a person must look. Absolute paths elsewhere (`/data/exp1/x`), longer words
(`exp1-ablation`) and comments are mentions that need no one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from labctl.verdicts import ACTIVE

DEFAULT_JOB_PATTERNS = ("{name}", "{name}-*", "{name}_*", "{name}.*")
TAG = "experiment={name}"
_END = r"""(?=$|[/\s"'`;&|)<>])"""
_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


def valid_name(name: str) -> bool:
    """An experiment name is one path component (no `/`, no `..`, no leading dot)."""
    return bool(_NAME_OK.match(name)) and name not in (".", "..")


def job_patterns(name: str, templates: Sequence[str] = DEFAULT_JOB_PATTERNS) -> list[str]:
    return [t.replace("{name}", name) for t in templates]


def _under(path: str, folders: Iterable[str]) -> bool:
    clean = os.path.normpath(path)
    return any(clean == f or clean.startswith(f.rstrip("/") + "/") for f in folders)


def job_belongs(rec: Mapping[str, Any], patterns: Sequence[str], folders: Sequence[str]) -> bool:
    name = str(rec.get("name") or "")
    if name and any(fnmatchcase(name, p) for p in patterns):
        return True
    work_dir = rec.get("work_dir")
    return bool(work_dir) and _under(str(work_dir), folders)


def is_active_job(rec: Mapping[str, Any]) -> bool:
    """Pending or running (a job that still holds, or will take, a slot)."""
    verdict = str(rec.get("verdict") or "")
    state = str(rec.get("state") or "").upper()
    return (
        verdict in ACTIVE  # pending or running (labctl.verdicts)
        or state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING")
    )


def folder_forms(folder: Path) -> list[str]:
    """The ways a crontab line may spell a folder: as configured, absolute, resolved."""
    forms = {os.path.normpath(str(folder)), os.path.abspath(folder)}
    try:
        forms.add(str(folder.resolve()))
    except OSError:
        pass
    return sorted(forms, key=len, reverse=True)


def line_refers(command: str, folders: Sequence[str]) -> bool:
    """Does a crontab command name one of `folders` as a path (with a boundary after)?"""
    for form in folders:
        for m in re.finditer(re.escape(form) + _END, command):
            before = command[m.start() - 1] if m.start() > 0 else " "
            if not (before.isalnum() or before in "._-/~$"):
                return True
    return False


_WORDS = re.compile(r"""[\s'"`;&|()<>=:]+""")


def _resolved(word: str) -> bool:
    return word.startswith("/") and "$" not in word


def words_refer(command: str, folders: Sequence[str]) -> bool:
    """Does an absolute path among the command's words lead into one of `folders` once
    normalised (`/lab/x/../experiments/active/exp1`, `//lab/...`)?"""
    return any(_resolved(w) and _under("/" + w.lstrip("/"), folders) for w in _WORDS.split(command))


def unresolved(command: str, name: str) -> bool:
    """Is the name a path component or a word of its own in a word of the (expanded,
    comment-free) command that is not a resolved absolute path?"""
    part = re.compile(r"(?:^|/)" + re.escape(name) + r"(?=/|$)")
    return any(part.search(w) and not _resolved(w) for w in _WORDS.split(command))


def line_mentions(command: str, name: str) -> bool:
    """The name as a word anywhere (shown as a mention when not a reference)."""
    return (
        re.search(r"(?<![A-Za-z0-9_.-])" + re.escape(name) + r"(?![A-Za-z0-9_])", command)
        is not None
    )


def job_ref(rec: Mapping[str, Any]) -> dict[str, Any]:
    """A job as a violation or a refusal names it."""
    return {
        "cluster": rec.get("cluster"),
        "job_id": rec.get("job_id"),
        "name": rec.get("name"),
        "state": rec.get("state"),
        "verdict": rec.get("verdict"),
    }
