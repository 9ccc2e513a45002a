"""What a migration has done so far, kept in the state dir so a re-run can finish it.

Written (atomically) BEFORE each change it describes: the crontab lines and refill
entries about to be retired, the copy about to be placed. A re-run after a crash at any
point reads it back, checks the world against it and completes what is missing; CLOSED.md
is always rendered from it, so it lists the exact lines a crashed run removed too.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Journal:
    path: Path
    data: dict[str, Any]

    @classmethod
    def load(cls, state_dir: Path, name: str, root: Path) -> Journal:
        key = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:10]
        path = state_dir / "migrations" / f"{name}-{key}.json"
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
        return cls(path, data if isinstance(data, dict) else {})

    def start(self, fresh: dict[str, Any], *, new_folder: bool) -> None:
        """Begin, unless a migration is under way or done; `new_folder`: a folder of the
        same name is active again after an earlier migration finished, so begin anew."""
        if not self.data or (new_folder and self.data.get("done_at") is not None):
            self.data = {
                "cron": [],
                "refill": [],
                "backups": [],
                "move": None,
                "revision": 0,
                "logged_revision": 0,
                "done_at": None,
                **fresh,
            }

    def add(self, section: str, item: dict[str, Any], same: tuple[str, ...]) -> bool:
        """Append unless an item with the same `same` fields is there; True if added."""
        key = tuple(item.get(k) for k in same)
        if any(tuple(old.get(k) for k in same) == key for old in self.data[section]):
            return False
        self.data[section].append(item)
        self.data["revision"] += 1
        return True

    def save(self) -> None:
        from labctl.fsops import atomic_write_text

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_text(self.path, json.dumps(self.data, indent=1) + "\n", mode=0o600)


def backup(state_dir: Path, name: str, label: str, data: bytes, when: str) -> Path:
    """Keep `data` (a file's or crontab's bytes before an edit) under the state dir."""
    from labctl.fsops import create_exclusive

    folder = state_dir / "backups" / "migrate-experiment" / name
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    digest = hashlib.sha256(data).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in label)[-80:]
    path = folder / f"{when.replace(':', '')}-{safe}-{digest}.bak"
    if not path.exists():
        create_exclusive(path, data, mode=0o600)
    return path
