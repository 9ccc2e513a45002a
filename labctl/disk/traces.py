"""Experiment trace folders: a candidate only once every local file is on the Hub.

Each folder `<root>/<experiment>/` is compared with `path_in_repo` (default
`traces/<experiment>`) of the experiment's Hub repo at one pinned commit: every local
regular file must exist there with the same size and — before anything is deleted, or in
a dry run with `--verify hash` — the same content (sha256 for LFS files, the git blob
sha1 otherwise). Files only on the Hub do not matter. A folder with anything missing,
different, unreadable, or whose Hub cannot be reached is kept with the reason.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from labctl.disk.candidate import MAX_LISTED, Candidate, check_common
from labctl.disk.rules import Rule
from labctl.disk.scan import ScanEnv
from labctl.errors import BackendError
from labctl.records import error_record

CHUNK = 1 << 20


@dataclass
class LocalFiles:
    files: dict[str, tuple[str, int]] = field(default_factory=dict)  # rel -> (path, size)
    symlinks: int = 0
    errors: list[str] = field(default_factory=list)


def local_files(folder: str) -> LocalFiles:
    """Regular files below `folder` (symlinks are counted, never followed)."""
    out = LocalFiles()

    def onerror(exc: OSError) -> None:
        out.errors.append(str(exc.filename))

    for dirpath, dirnames, filenames in os.walk(folder, onerror=onerror):
        for name in dirnames:
            if os.path.islink(os.path.join(dirpath, name)):
                out.symlinks += 1
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            except OSError:
                out.errors.append(path)
                continue
            if os.path.islink(path):
                out.symlinks += 1
            elif os.path.isfile(path):
                out.files[os.path.relpath(path, folder)] = (path, st.st_size)
    return out


def file_hashes(path: str, size: int) -> tuple[str, str]:
    """(sha256, git blob sha1) of a file, in one read."""
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(CHUNK):
            sha256.update(chunk)
            sha1.update(chunk)
    return sha256.hexdigest(), sha1.hexdigest()


def compare(local: LocalFiles, remote: Any, *, hashes: bool) -> tuple[str, str] | None:
    """The first reason the local files are not all on the Hub, or None."""
    missing = sorted(rel for rel in local.files if rel not in remote.files)
    if missing:
        return "not_uploaded", (
            f"{len(missing)} of {len(local.files)} files are not on the Hub at "
            f"{remote.revision[:12]}: {', '.join(missing[:MAX_LISTED])}"
        )
    sized = sorted(rel for rel, (_, size) in local.files.items() if remote.files[rel].size != size)
    if sized:
        return "size_mismatch", f"{len(sized)} files differ in size from the Hub: " + ", ".join(
            sized[:MAX_LISTED]
        )
    if hashes:
        bad = []
        for rel, (path, size) in sorted(local.files.items()):
            want = remote.files[rel]
            sha256, sha1 = file_hashes(path, size)
            if (sha256 != want.sha256) if want.sha256 else (sha1 != want.blob_id):
                bad.append(rel)
        if bad:
            return (
                "hash_mismatch",
                f"{len(bad)} files differ in content from the Hub: " + ", ".join(bad[:MAX_LISTED]),
            )
    return None


class Hub:
    """One listing per (repo, folder) per run; one error record per unreachable repo."""

    def __init__(self, env: ScanEnv) -> None:
        self.env = env
        self.trees: dict[tuple[str, str, str, str], Any] = {}
        self.down: dict[str, str] = {}  # repo -> message

    def tree(self, rule: Rule, repo: str, folder: str) -> Any:
        key = (repo, rule.repo_type, rule.revision, folder)
        if key not in self.trees:
            self.trees[key] = self.env.hub.tree(repo, rule.repo_type, rule.revision, folder)
        return self.trees[key]


def _verify(cand: Candidate, rule: Rule, hub: Hub, env: ScanEnv) -> dict[str, Any] | None:
    from labctl.backends.hf_hub import HubNotFound

    exp = cand.name
    repo = rule.repos.get(exp) or (rule.repo.format(experiment=exp) if rule.repo else "")
    folder = rule.path_in_repo.format(experiment=exp)
    cand.extra.update(hub_repo=repo or None, path_in_repo=folder, verified=None)
    if not repo:
        cand.keep("no_hub_repo", f"no Hub repo is configured for experiment {exp!r}")
        return None
    local = local_files(cand.path)
    cand.extra["local_files"] = len(local.files)
    if local.errors:
        cand.keep("unreadable", f"cannot read {local.errors[0]}")
        return None
    if repo in hub.down:
        cand.keep("hub_unreachable", hub.down[repo])
        return None
    try:
        remote = hub.tree(rule, repo, folder)
    except HubNotFound as exc:
        if local.files:
            cand.keep("hub_repo_not_found", f"{repo}:{folder} not found on the Hub ({exc})")
        return None
    except BackendError as exc:
        hub.down[repo] = exc.message
        cand.keep("hub_unreachable", exc.message)
        return error_record("unreachable", exc.message, source=repo, path=cand.path)
    cand.extra["hub_revision"] = remote.revision
    hashes = env.verify == "hash"
    problem = compare(local, remote, hashes=hashes)
    if problem:
        cand.keep(*problem)
    else:
        cand.extra["verified"] = "hash" if hashes else "size"
    return None


def collect_one(rule: Rule, path: str, env: ScanEnv, hub: Hub | None = None) -> Candidate:
    hub = hub or Hub(env)
    cand = Candidate(rule=rule, path=path, name=os.path.basename(path), item="experiment")
    if os.path.islink(path) or not os.path.isdir(path):
        cand.usage = env.measure(path)
        cand.keep("symlink", "a symlink, not a folder of this root: left alone")
        return cand
    cand.usage = env.measure(path, label=f"traces {cand.name}")
    if cand.usage is None:
        cand.keep("vanished", f"{path} disappeared while it was being measured")
        return cand
    cand.last_used = cand.usage.newest_mtime
    check_common(cand, now=env.now, open_files=env.open_files, protected=env.protected)
    err = _verify(cand, rule, hub, env)
    if err is not None:
        cand.extra["_error"] = err
    return cand


def collect(rule: Rule, env: ScanEnv) -> Iterator[Candidate | dict[str, Any]]:
    if not os.path.isdir(rule.root):
        return
    hub = Hub(env)
    with os.scandir(rule.root) as it:  # folders (and links posing as folders), not files
        names = sorted(e.name for e in it if e.is_dir() or e.is_symlink())
    for name in names:
        cand = collect_one(rule, os.path.join(rule.root, name), env, hub)
        err = cand.extra.pop("_error", None)
        if err is not None:
            yield err
        yield cand
