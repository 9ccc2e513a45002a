"""Candidates from the Hugging Face cache, found and deleted through huggingface_hub.

One candidate per cached repo (all its revisions; the library's `delete_revisions`
strategy turns that into deleting the repo folder and lets the shared blob store collect
what no other repo uses), aged by the library's `last_accessed`. A repo with a download
in flight is kept: an `.incomplete` file that is recent, open by a process, or whose
`.locks/` lock is held. Abandoned `.incomplete` files (old, closed, unlocked) are
candidates of their own.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from typing import Any

from labctl.disk.candidate import Candidate, check_common
from labctl.disk.rules import Rule
from labctl.disk.scan import ScanEnv
from labctl.records import error_record


def lock_held(lock_path: str) -> bool:
    """Someone holds the `flock` huggingface_hub takes around a download."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def download_state(path: str, cache_root: str, rule: Rule, env: ScanEnv) -> str | None:
    """Why an `.incomplete` file is a live download (None: it is abandoned)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    age = env.now - st.st_mtime
    if age < rule.incomplete_min_age_s:
        return f"{os.path.basename(path)} was written {age / 60:.0f} min ago"
    real = os.path.realpath(path)
    if env.open_files.under(real):
        pid = env.open_files.owners.get(real)
        return f"{os.path.basename(path)} is open (pid {pid})"
    repo_folder = os.path.basename(os.path.dirname(os.path.dirname(path)))
    etag = os.path.basename(path).split(".", 1)[0]
    lock = os.path.join(cache_root, ".locks", repo_folder, f"{etag}.lock")
    if lock_held(lock) or env.open_files.under(os.path.realpath(lock)):
        return f"the download lock {lock} is held"
    return None


def _repo_candidate(rule: Rule, repo: Any, cache: Any, env: ScanEnv) -> Candidate:
    cand = Candidate(
        rule=rule, path=repo.path, name=f"{repo.repo_type}/{repo.repo_id}", item="hf_repo"
    )
    cand.usage = env.measure(repo.path, label=f"hf {repo.repo_id}")
    cand.last_used = repo.last_accessed
    cand.extra.update(
        repo_id=repo.repo_id,
        repo_type=repo.repo_type,
        revisions=[r.commit for r in repo.revisions],
        refs=sorted({ref for r in repo.revisions for ref in r.refs}),
        hf_size_on_disk=repo.size_on_disk,
        hf_expected_freed=repo.expected_freed,
    )
    if cand.usage is None:
        cand.keep("vanished", f"{repo.path} disappeared while it was being measured")
        return cand
    blobs = os.path.join(repo.path, "blobs") + os.sep
    for path, _size in cache.incomplete:
        if path.startswith(blobs):
            why = download_state(path, cache.cache_dir, rule, env)
            if why:
                cand.keep("download_in_progress", why)
    check_common(cand, now=env.now, open_files=env.open_files, protected=env.protected)
    return cand


def _incomplete_candidate(rule: Rule, path: str, cache: Any, env: ScanEnv) -> Candidate:
    repo_dir = os.path.dirname(os.path.dirname(path))
    cand = Candidate(
        rule=rule,
        path=path,
        name=f"{os.path.basename(repo_dir)}/{os.path.basename(path)}",
        item="hf_incomplete",
    )
    cand.usage = env.measure(path)
    if cand.usage is None:
        cand.keep("vanished", f"{path} is gone (the download finished or was cleaned)")
        return cand
    cand.last_used = cand.usage.newest_mtime
    why = download_state(path, cache.cache_dir, rule, env)
    if why:
        cand.keep("download_in_progress", why)
    check_common(cand, now=env.now, open_files=env.open_files, protected=env.protected,
                 min_age_s=rule.incomplete_min_age_s)  # fmt: skip
    return cand


def _scan(rule: Rule, env: ScanEnv) -> Any:
    try:
        return env.hf_cache_api.scan_cache(rule.root)
    except env.hf_cache_api.CacheMissing:
        return None
    except OSError as exc:
        raise CacheUnreadable(f"cannot scan the Hugging Face cache {rule.root}: {exc}") from None


class CacheUnreadable(Exception):
    pass


def _corrupt(cache: Any, rule: Rule, env: ScanEnv) -> Iterator[dict[str, Any]]:
    """Repo folders the library skipped, unless a first download is filling them."""
    known = {r.path for r in cache.repos}
    for name in sorted(os.listdir(cache.cache_dir)):
        folder = os.path.join(cache.cache_dir, name)
        if "--" not in name or folder in known or not os.path.isdir(folder):
            continue
        blobs = os.path.join(folder, "blobs") + os.sep
        if any(
            download_state(p, cache.cache_dir, rule, env)
            for p, _ in cache.incomplete
            if p.startswith(blobs)
        ):
            continue
        said = next((w for w in cache.warnings if name in w), "not a valid cached repo")
        yield error_record(
            "hf_cache_corrupt", f"huggingface_hub skipped {folder}: {said}", path=folder
        )


def collect(rule: Rule, env: ScanEnv) -> Iterator[Candidate | dict[str, Any]]:
    try:
        cache = _scan(rule, env)
    except CacheUnreadable as exc:
        yield error_record("unreadable", str(exc), path=rule.root)
        return
    if cache is None:
        return
    yield from _corrupt(cache, rule, env)
    for repo in cache.repos:
        yield _repo_candidate(rule, repo, cache, env)
    for path, _size in cache.incomplete:
        if download_state(path, cache.cache_dir, rule, env) is None:
            yield _incomplete_candidate(rule, path, cache, env)


def collect_one(rule: Rule, path: str, env: ScanEnv) -> Candidate:
    """The candidate at `path` as it is now (for the re-check just before deleting)."""
    try:
        cache = _scan(rule, env)
    except CacheUnreadable:
        cache = None
    if cache is not None:
        if path.endswith(".incomplete"):
            return _incomplete_candidate(rule, path, cache, env)
        for repo in cache.repos:
            if repo.path == path:
                return _repo_candidate(rule, repo, cache, env)
    cand = Candidate(rule=rule, path=path, name=os.path.basename(path), item="hf_repo")
    cand.keep("vanished", f"{path} is no longer in the cache")
    return cand


def delete(cand: Candidate, env: ScanEnv) -> tuple[int, list[str]]:
    """Delete through the library (repos) or unlink inside the cache (abandoned
    `.incomplete` files); returns (bytes freed, problems)."""
    from labctl.disk.remove import remove_inside

    if cand.item == "hf_incomplete":
        out = remove_inside(cand.rule.root_real, cand.path)
        return out.bytes_freed, [f"{p}: {r}" for p, r in out.errors]
    before = cand.usage.exclusive if cand.usage else 0
    env.hf_cache_api.delete_cached_repo(cand.rule.root, cand.path)
    left = None
    with contextlib.suppress(FileNotFoundError):
        left = env.measure(cand.path) if os.path.lexists(cand.path) else None
    problems = [f"{cand.path} still holds {left.bytes} bytes"] if left else []
    return before - (left.exclusive if left else 0), problems
