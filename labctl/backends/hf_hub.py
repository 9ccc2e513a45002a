"""The Hugging Face Hub and its local cache, through `huggingface_hub` itself.

- `scan_cache(cache_dir)`: `scan_cache_dir` turned into plain records (repos, revisions,
  refs, last access, incomplete downloads, corrupt-repo warnings);
- `delete_cached_repo(cache_dir, repo_path)`: a fresh scan, then the library's own
  `delete_revisions(...)` strategy for every revision of that repo, checked to stay inside
  the cache before `execute()` (the shared blob store of huggingface_hub 2.x is garbage-
  collected by the library from its `.refs` manifests; labctl never unlinks a blob);
- `HubTrees`: `repo_info` (to pin the commit) and `list_repo_tree` of one folder, for
  checking that local files are on the Hub before they are deleted.

huggingface_hub is imported only inside these functions (start-up is a feature).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import BackendError


@dataclass(frozen=True)
class CachedRevision:
    commit: str
    refs: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class CachedRepo:
    repo_id: str
    repo_type: str
    path: str
    revisions: tuple[CachedRevision, ...]
    last_accessed: float
    last_modified: float
    size_on_disk: int  # the library's apparent size (st_size of blobs)
    nb_files: int
    expected_freed: int  # the library's delete strategy: what deleting the repo frees


@dataclass
class HfCache:
    cache_dir: str
    repos: list[CachedRepo] = field(default_factory=list)
    incomplete: list[tuple[str, int]] = field(default_factory=list)  # (path, size)
    warnings: list[str] = field(default_factory=list)


class CacheMissing(Exception):
    pass


def scan_cache(cache_dir: str) -> HfCache:
    """Raises CacheMissing when there is no cache at `cache_dir`."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    try:
        info = scan_cache_dir(cache_dir)
    except (CacheNotFound, ValueError) as exc:
        raise CacheMissing(str(exc)) from None
    out = HfCache(cache_dir=str(info.cache_dir or cache_dir))
    for repo in info.repos:
        revisions = tuple(
            CachedRevision(rev.commit_hash, tuple(sorted(rev.refs)), str(rev.snapshot_path))
            for rev in sorted(repo.revisions, key=lambda r: r.commit_hash)
        )
        out.repos.append(
            CachedRepo(
                repo_id=repo.repo_id,
                repo_type=repo.repo_type,
                path=str(repo.repo_path),
                revisions=revisions,
                last_accessed=repo.last_accessed,
                last_modified=repo.last_modified,
                size_on_disk=repo.size_on_disk,
                nb_files=repo.nb_files,
                expected_freed=info.delete_revisions(
                    *(r.commit_hash for r in repo.revisions)
                ).expected_freed_size,
            )
        )
    out.repos.sort(key=lambda r: r.path)
    out.incomplete = sorted((str(f.file_path), f.size_on_disk) for f in info.incomplete_files)
    out.warnings = [str(w) for w in info.warnings]
    return out


def _inside(root: str, path: Any) -> bool:
    parent = os.path.realpath(os.path.dirname(os.path.abspath(str(path))))
    return parent == root or parent.startswith(root.rstrip("/") + "/")


def delete_cached_repo(cache_dir: str, repo_path: str) -> int:
    """Delete every revision of the cached repo at `repo_path` with the library's own
    strategy; returns the library's expected freed size. Raises BackendError when the repo
    is gone or the strategy would touch anything outside the cache."""
    from huggingface_hub import scan_cache_dir

    info = scan_cache_dir(cache_dir)
    root = os.path.realpath(str(info.cache_dir or cache_dir))
    repo = next((r for r in info.repos if str(r.repo_path) == repo_path), None)
    if repo is None:
        raise BackendError(f"{repo_path} is no longer a cached repo", reason="vanished")
    strategy = info.delete_revisions(*(rev.commit_hash for rev in repo.revisions))
    paths = [*strategy.repos, *strategy.snapshots, *strategy.refs, *strategy.blobs]
    outside = [str(p) for p in paths if not _inside(root, p)]
    if outside:
        raise BackendError(
            f"the cache's delete strategy reaches outside {root}: {outside[0]}",
            reason="outside_root",
        )
    strategy.execute()
    return int(strategy.expected_freed_size)


@dataclass(frozen=True)
class RemoteFile:
    size: int
    blob_id: str  # git blob sha1
    sha256: str | None  # LFS files only


@dataclass
class RemoteTree:
    repo_id: str
    revision: str  # the commit the listing is pinned to
    files: dict[str, RemoteFile]  # path relative to the listed folder


class HubNotFound(Exception):
    """The repo, revision or folder does not exist on the Hub."""


class HubTrees:
    """Tree listings from one Hub endpoint (`[hf] endpoint`, `[hf] token`)."""

    def __init__(self, endpoint: str, token: str | None, timeout_s: float = 30.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.token = token or None
        self.timeout_s = timeout_s
        self._api: Any = None
        self._commits: dict[tuple[str, str, str], str] = {}

    def _client(self) -> Any:
        if self._api is None:
            from huggingface_hub import HfApi

            self._api = HfApi(endpoint=self.endpoint, token=self.token, library_name="labctl")
        return self._api

    def tree(self, repo_id: str, repo_type: str, revision: str, folder: str) -> RemoteTree:
        """Every file under `folder` at `revision` (pinned to one commit). Raises
        HubNotFound, or BackendError(reason="unreachable") when the Hub cannot be reached."""
        from huggingface_hub.errors import (
            EntryNotFoundError,
            HfHubHTTPError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        api = self._client()
        try:
            key = (repo_id, repo_type, revision)
            if key not in self._commits:  # one commit per repo and run: listings agree
                self._commits[key] = api.repo_info(
                    repo_id, repo_type=repo_type, revision=revision
                ).sha
            sha = self._commits[key]
            prefix = folder.strip("/")
            files: dict[str, RemoteFile] = {}
            entries = api.list_repo_tree(
                repo_id, path_in_repo=prefix or None, recursive=True, revision=sha,
                repo_type=repo_type,
            )  # fmt: skip
            for entry in entries:
                if not hasattr(entry, "blob_id"):
                    continue  # a folder
                rel = entry.path[len(prefix) + 1 :] if prefix else entry.path
                sha256 = entry.lfs.sha256 if entry.lfs is not None else None
                files[rel] = RemoteFile(int(entry.size), str(entry.blob_id), sha256)
        except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as exc:
            raise HubNotFound(type(exc).__name__) from None
        except HfHubHTTPError as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            raise BackendError(
                f"Hub {self.endpoint} answered HTTP {status} for {repo_id}", reason="unreachable"
            ) from None
        except OSError as exc:  # connection refused, DNS, TLS, timeouts (httpx errors too)
            raise BackendError(
                f"Hub {self.endpoint} unreachable: {type(exc).__name__}", reason="unreachable"
            ) from None
        except Exception as exc:
            if type(exc).__module__.startswith(("httpx", "httpcore")):
                raise BackendError(
                    f"Hub {self.endpoint} unreachable: {type(exc).__name__}", reason="unreachable"
                ) from None
            raise
        return RemoteTree(repo_id=repo_id, revision=str(sha), files=files)
