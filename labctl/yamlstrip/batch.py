"""Many files: read, analyze and (with `apply`) rewrite each, across cores when there are
many, yielding one record per file in a deterministic order (the order of the walk).

The workers of the process pool only read and write the YAML files and return records;
the caller's emitter stays the only writer of output. With `move_to`, every file is
analyzed first, the notes are appended, and only then are the files rewritten (each is
read again and must hold the bytes the notes were taken from).
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from pathlib import Path
from typing import Any

from labctl.records import Redacted
from labctl.redact import Redactor, set_default_redactor
from labctl.yamlstrip.files import ChangedOnDiskError, analyze_path, apply, file_record
from labctl.yamlstrip.notes import append_notes, notes_block
from labctl.yamlstrip.walk import Skipped, iter_yaml_paths

PARALLEL_MIN_FILES = 8  # fewer files than this are not worth starting workers for
# how many files the walk finds before the workers start: a tree this small is counted
# (chunks sized to it), a bigger one is handed to the workers while the walk goes on
COUNTED_FILES = 1024
STREAM_CHUNK = 32  # files per task when the count is not known yet


@dataclass(frozen=True)
class Job:
    """One file's work: analyze it; with `apply`, rewrite it (if it still holds `digest`)."""

    path: str
    apply: bool = False
    digest: str | None = None  # --move-to: the bytes the notes were taken from
    when: str | None = None  # --move-to: the notes' timestamp (phase 1)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_job(job: Job) -> tuple[dict[str, Any], str, str]:
    """(record, notes block or "", digest of the bytes read -- "" unless --move-to, whose
    two phases need it); never raises for I/O. The garbage collector is paused for the
    whole job, not only for `analyze`: the record's thousands of small dicts hold no cycle,
    and the collections their allocation set off freed nothing (a twentieth of the time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run_job(job)
    finally:
        if was_enabled:
            gc.enable()


def _run_job(job: Job) -> tuple[dict[str, Any], str, str]:
    result = analyze_path(job.path)
    digest = _digest(result.data) if job.digest is not None or job.when is not None else ""
    applied = False
    try:
        if job.digest is not None and digest != job.digest:
            raise ChangedOnDiskError(
                f"{job.path} changed since its comments were moved to the notes; "
                "nothing was written",
                path=job.path,
            )
        if job.apply:
            applied = apply(job.path, result)
    except ChangedOnDiskError as exc:
        return exc.record(), "", digest
    except OSError as exc:  # the atomic write left the file as it was
        return unwritten(Path(job.path), exc), "", digest
    rec = file_record(result, job.path, applied=applied)
    block = notes_block(result, job.path, when=job.when) if job.when is not None else ""
    return rec, block, digest


def unwritten(path: Path, exc: OSError, what: str = "not rewritten") -> dict[str, Any]:
    """The `error` record (`not_written`, exit 3; `io_error` for a fault that is not the
    disk's) for a file left as it was."""
    from labctl.faults import is_write_fault, not_written

    rec = not_written(path, exc, f"{path} was {what}; the original is untouched")
    if not is_write_fault(exc):
        rec["reason"] = "io_error"
    rec["original_intact"] = True
    return rec


_encode: Callable[[Redacted], Redacted] | None = None  # a worker's: labctl.emit.encoded


def _init_worker(redactor: Redactor, encode: Callable[[Redacted], Redacted] | None) -> None:
    global _encode
    set_default_redactor(redactor)
    _encode = encode
    # what the worker inherited (the interpreter, labctl, yaml) lives as long as it does:
    # out of the collector's sight, each full collection no longer walks it all
    gc.freeze()


def run_job_encoded(job: Job) -> tuple[dict[str, Any], str, str]:
    """`run_job` in a worker: a file record leaves already encoded (records.Encoded)."""
    rec, block, digest = run_job(job)
    if _encode is not None and type(rec) is Redacted:
        rec = _encode(rec)
    return rec, block, digest


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _mapper(
    count: int,
    jobs: int,
    redactor: Redactor,
    encode: Callable[[Redacted], Redacted] | None = None,
    *,
    more: bool = False,
) -> tuple[
    Callable[[Iterable[Job]], Iterator[tuple[dict[str, Any], str, str]]], Callable[[], None]
]:
    """A function running jobs in order (in a pool when worth it), and one to stop it.
    `count` files are known; `more`: others follow, as many as the walk will find."""
    workers = min(jobs, count)
    if workers < 2 or count < PARALLEL_MIN_FILES:
        return (lambda batch: map(run_job, batch)), (lambda: None)
    # fork is cheap and safe while this process has no other thread
    method = "fork" if threading.active_count() == 1 else "spawn"
    pool = multiprocessing.get_context(method).Pool(
        workers, initializer=_init_worker, initargs=(redactor, encode)
    )
    chunk = STREAM_CHUNK if more else max(1, min(STREAM_CHUNK, count // (workers * 4)))

    def run(batch: Iterable[Job]) -> Iterator[tuple[dict[str, Any], str, str]]:
        return pool.imap(run_job_encoded, batch, chunksize=chunk)

    def stop() -> None:
        pool.terminate()
        pool.join()

    return run, stop


def strip_files(
    paths: Sequence[str],
    *,
    apply: bool,
    move_to: Path | None,
    hidden: bool,
    ignore: bool,
    jobs: int,
    redactor: Redactor,
    when: str | None = None,
    check: Callable[[str], object] | None = None,
    encode: Callable[[Redacted], Redacted] | None = None,
) -> Iterator[dict[str, Any]]:
    """One record per file (`file`, or `error`), then one `skipped` record if directories
    held hidden or ignored entries. `jobs` <= 0 means one per usable CPU. `check` sees
    every file found before any is read (it raises to refuse one: labctl.confine).
    `encode` (labctl.emit.encoded, with the command's exit-code rules) turns a worker's
    file records into records.Encoded, which cross back as their lines; not with
    `move_to`, whose records gain a field here. Without `check` and `move_to`, a big
    tree's files go to the workers as the walk finds them (the walk runs in the pool's
    feeder thread, beside the work)."""
    skipped = Skipped()
    found = iter_yaml_paths(paths, hidden=hidden, ignore=ignore, skipped=skipped)
    notes = move_to if apply else None
    if check is not None or notes is not None:
        files = list(found)
        if check is not None:
            for path in files:
                check(path)  # before any file is read
        found = iter(())
    else:
        files = list(islice(found, COUNTED_FILES))
    more = len(files) == COUNTED_FILES
    workers = jobs if jobs > 0 else usable_cpus()
    run, stop = _mapper(
        len(files), workers, redactor, None if notes is not None else encode, more=more
    )
    try:
        if notes is None:
            batch = (Job(path, apply=apply) for path in chain(files, found))
            for rec, _, _ in run(batch):
                yield rec
        else:
            yield from _move_then_apply(files, run, notes, when or "")
    finally:
        stop()
    if skipped.counts:
        yield skipped_record(skipped)


def _move_then_apply(
    files: list[str],
    run: Callable[[Iterable[Job]], Iterator[tuple[dict[str, Any], str, str]]],
    move_to: Path,
    when: str,
) -> Iterator[dict[str, Any]]:
    """Notes first (one append for all files), then the rewrites. Notes that cannot be
    written stop the rewrites: the comments stay in the files, nothing is lost."""
    first = list(run([Job(path, when=when) for path in files]))
    try:
        notes_path = append_notes(move_to, [block for _, block, _ in first])
    except OSError as exc:
        yield unwritten(move_to, exc, "not appended to, so no YAML file was rewritten")
        for rec, _, _ in first:
            yield rec
        return
    jobs = [
        Job(path, apply=True, digest=digest)
        for path, (_, _, digest) in zip(files, first, strict=True)
    ]
    for rec, _, _ in run(jobs):
        if notes_path is not None and rec.get("kind") == "file" and rec.get("verified"):
            rec["notes"] = str(notes_path)
        yield rec


def skipped_record(skipped: Skipped) -> dict[str, Any]:
    counts = dict(sorted(skipped.counts.items()))
    total = sum(counts.values())
    parts = ", ".join(f"{n} {reason}" for reason, n in counts.items())
    hints = []
    if "hidden" in counts:
        hints.append("--hidden includes hidden ones")
    if "ignored" in counts:
        hints.append("--no-ignore ignored ones")
    return {
        "kind": "skipped",
        "entries": total,
        "counts": counts,
        "examples": {reason: skipped.examples[reason] for reason in counts},
        "message": (
            f"{total} entries in the searched directories were not read ({parts}): "
            + "; ".join(hints)
        ),
    }
