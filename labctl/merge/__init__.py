"""merge-green's core: merge what is truly green, only where we own it, never an unchecked
head. `run` yields one `pr` record per pull request (and `repo`/`error` records); it talks
to GitHub only through `labctl.backends.github`."""

from labctl.merge.policy import Settings, Target, load, targets
from labctl.merge.run import run

__all__ = ["Settings", "Target", "load", "run", "targets"]
