"""diagnose: name the root cause of a failed job from its log, fast, in bounded memory.

Public API (the CLI command wires inputs and transport on top of it):

    diagnose_path(path, *, window=4 MiB, max_window=64 MiB, full=False, sched=None,
                  catalog=None, redactor=None, threads=None, now=None) -> dict
    diagnose_chunks(chunks, *, sched=None, tail=False, source=None, catalog=None,
                    redactor=None, threads=None) -> dict
    diagnose_text(text, **same keywords as diagnose_chunks) -> dict
    group(diagnoses_or_records) -> list[dict]          # --group
    catalog_records(catalog=None) -> list[dict]        # --catalog
    explain(id, catalog=None) -> dict                  # --explain ID (UsageError if unknown)
    load_catalog(user_files=(), *, shipped=True) -> Catalog   # ConfigError on a bad file
    self_check(catalog=None) -> list[str]              # examples/near-misses that fail
    JobState(state, exit_code, signal, reason, log_age, hung_after, verdict)  # or a mapping

The diagnosis dict (`kind: "diagnosis"`):
    source          the path / name given (None for anonymous streams)
    failed          False only for healthy logs (and healthy scheduler states)
    category        taxonomy category (cuda_oom, host_oom, ..., unknown) or "healthy"
    catalog_id, title, severity (high|medium|low), retryable, fix, action (dict: the machine
                    fix for `supervise`; install_module gets `module` and `package` filled in)
    exception_type  the exception type on the root line (Python, or the C++ type std::terminate
                    names), if any
    fingerprint     16 hex digits, stable across runs (see fingerprint.py); None when healthy
    confidence      0..1
    decided_by      scheduler | hung | log | exit_code | none
    why             why the root cause won, or why the log counts as healthy / unknown
    evidence        [{origin: log|traceback|scheduler|tail, line, line_from_end, text,
                      before: [..], after: [..]}]: the root line first, then up to two more
                    hits of the same entry; texts redacted and capped at 400 characters
    also_matched    [{catalog_id, category, role, line, line_from_end, count, text, why}]:
                    every other candidate and why it lost or was demoted (survived: progress
                    after it; logged at WARNING/INFO level; an informational notice; later
                    success; a later independent failure; after the program failed (shell
                    noise after a traceback); an earlier run of a log holding several (an
                    appended submission); an earlier job's (another job's end follows);
                    handled when an interrupt came; explained by X; wrapper; outranked)
    candidates      [{catalog_id, category, role, line, line_from_end, count, fate, reason, why,
                      by}]: every candidate in log order (the scheduler's last) and its fate --
                    `won` (the root cause, reason root_cause) or `demoted` (reason survived,
                    logged, notice, later_success, later_failure, after_failure, too_few,
                    earlier_run, earlier_job, handled, explained, wrapper, weak, later,
                    earlier_event, outranked,
                    scheduler, completed, hung, earlier_report); `by` is what decided it
                    ({catalog_id, role, line, line_from_end} of a hit, or a line that is none:
                    role "progress", the last forward-progress line; "run_start", where the
                    log's last run starts (restarts.py); "output", the log's last output) or
                    None. `labctl diagnose --why` renders them.
    events          [{catalog_id, line, line_from_end, text}] (requeues: not failures)
    requeued        True when a requeue event was seen
    last_traceback  {line_from_end, exception, excerpt} or None
    bytes_read      bytes of log scanned
    window          {mode: tail|full|stream, complete, size, bytes_read, regions,
                     lines_scanned}
    scheduler       the JobState used (with poll's `verdict`), or None; a failed verdict
                    or state is never overruled by a quiet log (`unknown`, failed: true)

Line numbers: `line` is the absolute 1-based line number (lines split on \\n, \\r and \\r\\n)
when the scan covered the log from its first byte, else None; `line_from_end` (1 = last
line) is always given for log evidence. A log saved from a terminal that wrapped its lines at a
fixed width is recognised (wrap.py), and so is Rich's logging handler, which wraps a record
onto rows indented to its message column: a failure whose words a wrap split is matched on the
joined rows and reported at its first row.
"""

from __future__ import annotations

from labctl.diagnose.catalog import Catalog, Entry
from labctl.diagnose.check import self_check
from labctl.diagnose.engine import (
    DEFAULT_MAX_WINDOW,
    DEFAULT_WINDOW,
    catalog_records,
    diagnose_chunks,
    diagnose_path,
    diagnose_text,
    explain,
    group,
)
from labctl.diagnose.fingerprint import fingerprint, normalise
from labctl.diagnose.jobstate import JobState
from labctl.diagnose.load import default_catalog, load_catalog
from labctl.diagnose.reader import LogUnreadable

__all__ = [
    "DEFAULT_MAX_WINDOW",
    "DEFAULT_WINDOW",
    "Catalog",
    "Entry",
    "JobState",
    "LogUnreadable",
    "catalog_records",
    "default_catalog",
    "diagnose_chunks",
    "diagnose_path",
    "diagnose_text",
    "explain",
    "fingerprint",
    "group",
    "load_catalog",
    "normalise",
    "self_check",
]
