"""The supervision loop: run, diagnose, fix, re-run, and escalate instead of looping.

`supervise(opts, svc)` yields the run's events as they happen (records for the one
emitter): attempt_started, attempt_ended, diagnosis (diagnose's own record for the
attempt's log and exit status, plus run_id/attempt), fix_applied, and one final
succeeded, escalated or interrupted. Inputs are arguments: the options, the environment,
the clock, the redactor, the catalog, the signal catcher; the child, pip and the notify
command run through labctl.backends.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from labctl.backends.child import Child, ChildResult, ChildSpec
from labctl.backends.localrun import pip_install
from labctl.diagnose import JobState, diagnose_path, diagnose_text
from labctl.errors import BackendError
from labctl.records import rfc3339
from labctl.supervise import escalation
from labctl.supervise.escalation import AttemptLog
from labctl.supervise.fixes import Fix, FixContext, Setup
from labctl.supervise.options import Options, Services
from labctl.supervise.policy import Escalate, History, decide
from labctl.supervise.registration import Registration, prune
from labctl.supervise.unwritten import Unwritten

Record = dict[str, Any]
MARKER_ENV = ("LABCTL_SUPERVISE_RUN", "LABCTL_SUPERVISE_ATTEMPT")


class Run:
    def __init__(self, opts: Options, svc: Services) -> None:
        from labctl.backends.proc import start_ticks

        self.opts, self.svc = opts, svc
        started = svc.clock()
        prune(opts.state_dir, now=started, keep_s=opts.keep_s)
        self.run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started)) + f"-{svc.pid}"
        self.started = rfc3339(started)
        self.logs = opts.state_dir / "supervise" / "logs" / self.run_id
        self.unwritten = Unwritten(opts.state_dir)
        try:
            self.logs.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:  # a full or read-only state dir: the command still runs
            self.unwritten.note("the attempt logs", exc)
        self.setup = Setup(opts.argv)
        self.attempts: list[AttemptLog] = []
        self.seen: set[tuple[Any, ...]] = set()
        self.once_used: set[str] = set()
        self.fingerprints: list[str] = []
        self.finished = False
        self.running: int | None = None  # the pgid of a child started and not yet waited for
        self.unlogged: bytes | None = None  # the last attempt's output tail, if not logged
        self.reg = Registration(
            opts.state_dir,
            {
                "run_id": self.run_id,
                "name": opts.name,
                "host": socket.gethostname(),
                "user": svc.environ.get("USER") or svc.environ.get("LOGNAME"),
                "cwd": opts.cwd or os.getcwd(),
                "argv": list(opts.argv),
                "pid": svc.pid,
                "pid_start_ticks": start_ticks(svc.pid),
                "max_attempts": opts.max_retries + 1,
                "started": self.started,
            },
            svc.redactor,
            on_fault=lambda exc: self.unwritten.note("the run's registration (poll's view)", exc),
        )
        self.reg.update(state="starting", attempt=0, updated=self.started)

    def now(self) -> str | None:
        return rfc3339(self.svc.clock())

    def event(self, kind: str, **fields: Any) -> Record:
        return {"kind": kind, "run_id": self.run_id, **fields}

    # -- the loop ---------------------------------------------------------------------------
    def go(self) -> Iterator[Record]:
        """The events, each after what could not be written on the way to it."""
        for rec in self._go():
            yield from self.unwritten.records()
            yield rec
        yield from self.unwritten.records()

    def _go(self) -> Iterator[Record]:
        try:
            while True:
                if self.svc.signals.signum:  # caught between attempts
                    yield self._end("interrupted", signal=self.svc.signals.signum)
                    return
                res = yield from self._attempt(len(self.attempts) + 1)
                caught = res.interrupted or self.svc.signals.signum
                if caught:
                    yield self._end("interrupted", signal=caught)
                    return
                if res.exit_code == 0:
                    yield self._end("succeeded")
                    return
                d = self._diagnose(res)
                yield d
                step = decide(d, self.setup, self._history(), self._fix_context())
                if isinstance(step, Escalate):
                    yield self._escalate(step.reason, step.message, d)
                    return
                if not (yield from self._apply(step.fix, d)):
                    return
        finally:
            if self.running is not None:  # abandoned mid-attempt (stdout's reader went away)
                from labctl.backends.proc import terminate_group

                terminate_group(self.running, self.opts.kill_grace)
            if not self.finished:
                self.reg.update(state="aborted", ended=self.now(), updated=self.now())

    def _attempt(self, n: int) -> Generator[Record, None, ChildResult]:
        opts, svc, setup = self.opts, self.svc, self.setup
        log = self.logs / f"attempt-{n}.log"
        env = setup.environ(svc.environ) | dict(zip(MARKER_ENV, (self.run_id, str(n)), strict=True))
        spec = ChildSpec(
            setup.argv, env, opts.cwd, log, opts.stall_after, opts.kill_grace,
            svc.redactor.text, svc.tee,
        )  # fmt: skip
        try:
            child = Child(spec)
            self.running = child.pid
            if child.log_fault is not None and self.logs.is_dir():  # else: said at the start
                self.unwritten.note(f"attempt {n}'s log", child.log_fault)
        except OSError as exc:
            raise BackendError(
                f"cannot run {setup.argv[0]}: {exc.strerror}", reason="cannot_run"
            ) from None
        self.seen.add(setup.key())
        entry = AttemptLog(n, list(setup.argv), setup.env_changes(), str(log))
        self.attempts.append(entry)
        at = self.now()
        self.reg.update(
            state="running", attempt=n, child_pid=child.pid, pgid=child.pid, log=str(log),
            current_argv=list(setup.argv), env_changes=setup.env_changes(), attempt_started=at,
            updated=at,
        )  # fmt: skip
        svc.note(f"labctl supervise: attempt {n} (pid {child.pid}), log {log}")
        yield self.event(
            "attempt_started", attempt=n, argv=list(setup.argv), env_changes=setup.env_changes(),
            installed=list(setup.installed), pid=child.pid, pgid=child.pid, log=str(log),
            started_at=at,
        )  # fmt: skip
        res = child.wait(svc.signals)
        self.running = None
        if res.log_fault is not None and self.logs.is_dir():
            self.unwritten.note(f"attempt {n}'s log", res.log_fault)
        entry.exit_code, entry.signal, entry.duration_s = res.exit_code, res.signal, res.duration_s
        self.unlogged = res.tail if res.log_fault is not None else None
        entry.stalled, entry.leftovers = res.stalled, res.leftovers
        last = {"exit_code": res.exit_code, "signal": res.signal, "stalled": res.stalled}
        self.reg.update(child_pid=None, pgid=None, last_exit=last, updated=self.now())
        yield self._ended(n, res, log)
        return res

    def _ended(self, n: int, res: ChildResult, log: Path) -> Record:
        return self.event(
            "attempt_ended", attempt=n, exit_code=res.exit_code, signal=res.signal,
            duration_s=round(res.duration_s, 3), log=str(log), stalled=res.stalled,
            silence_s=round(res.silence_s, 3), interrupted_by=res.interrupted,
            killed=res.killed, leftovers=res.leftovers, pipe_closed=res.pipe_closed,
            bytes=res.bytes_out, ended_at=self.now(),
        )  # fmt: skip

    def _diagnose(self, res: ChildResult) -> Record:
        entry = self.attempts[-1]
        if res.stalled:
            js = JobState("RUNNING", log_age=res.silence_s, hung_after=self.opts.stall_after)
        else:
            js = JobState("FAILED", exit_code=res.exit_code, signal=res.signal)
        how: dict[str, Any] = {
            "sched": js, "catalog": self.opts.catalog, "redactor": self.svc.redactor,
        }  # fmt: skip
        if res.log_fault is None:
            d = diagnose_path(entry.log, now=self.svc.clock(), **how)
        else:  # the log stopped (a full disk): the output's tail, kept in memory
            text = res.tail.decode("utf-8", "replace")
            d = diagnose_text(text, source=entry.log, **how)
        d.update(run_id=self.run_id, attempt=entry.attempt)
        ev = d.get("evidence") or [{}]
        entry.diagnosis = {
            k: d.get(k) for k in ("category", "catalog_id", "title", "fingerprint", "retryable")
        } | {"fix": d.get("fix"), "evidence": ev[0].get("text")}
        if d.get("fingerprint"):
            self.fingerprints.append(str(d["fingerprint"]))
        self.reg.update(last_diagnosis=entry.diagnosis, updated=self.now())
        self.svc.note(f"labctl supervise: attempt {entry.attempt} failed: {d.get('title')}")
        return d

    def _history(self) -> History:
        earlier = frozenset(self.fingerprints[:-1])  # the last one is this attempt's
        return History(len(self.attempts), frozenset(self.seen), earlier, self.opts.max_retries)

    def _fix_context(self) -> FixContext:
        from labctl.backends.localrun import free_port

        return FixContext(
            base_env=self.svc.environ,
            families=self.opts.families,
            allow_install=self.opts.allow_install,
            once_used=frozenset(self.once_used),
            free_port=free_port,
        )

    def _apply(self, fix: Fix, d: Record) -> Generator[Record, None, bool]:
        """Install (if the fix says so), record the fix, back off; False when the run ended."""
        if fix.install:
            failed = pip_install(
                self.setup.argv, self.setup.environ(self.svc.environ), self.opts.cwd,
                fix.install, self.logs / f"install-{len(self.attempts)}.log",
                kill_grace=self.opts.kill_grace, redact=self.svc.redactor.text,
                tee=self.svc.tee, signals=self.svc.signals,
            )  # fmt: skip
            if self.svc.signals.signum:  # forwarded to pip's group: not pip's failure
                yield self._end("interrupted", signal=self.svc.signals.signum)
                return False
            if failed:
                yield self._escalate("install_failed", failed, d)
                return False
        action = dict(d.get("action") or {}) if not fix.resubmit else {"type": "resubmit"}
        if fix.resubmit and fix.backoff_s:
            action["backoff_s"] = fix.backoff_s
        changes = [c.record() for c in fix.changes]
        fixed = {"catalog_id": d.get("catalog_id"), "action": action["type"], "changes": changes}
        self.attempts[-1].fix = fixed
        if fix.once_key:
            self.once_used.add(fix.once_key)
        self.setup = fix.setup
        what = "; ".join(f"{c['name']}: {c['old']} → {c['new']}" for c in changes) or "re-run"
        self.svc.note(f"labctl supervise: fix {d.get('catalog_id')}: {what}")
        yield self.event(
            "fix_applied", attempt=len(self.attempts) + 1, catalog_id=d.get("catalog_id"),
            fingerprint=d.get("fingerprint"), action=action, changes=changes,
            resubmit=fix.resubmit, argv=list(fix.setup.argv),
            env_changes=fix.setup.env_changes(),
        )  # fmt: skip
        if fix.backoff_s:
            self.reg.update(state="backoff", updated=self.now())
            if self.svc.signals.wait(fix.backoff_s):
                yield self._end("interrupted", signal=self.svc.signals.signum)
                return False
        return True

    # -- the end ----------------------------------------------------------------------------
    def _end(self, kind: str, **fields: Any) -> Record:
        self.finished = True
        at = self.now()
        self.reg.update(state=kind, ended=at, updated=at)
        self.svc.note(f"labctl supervise: {kind} after {len(self.attempts)} attempt(s)")
        return self.event(
            kind, attempts=len(self.attempts), argv=list(self.setup.argv),
            env_changes=self.setup.env_changes(), ended_at=at, **fields,
        )  # fmt: skip

    def _escalate(self, reason: str, message: str, d: Record) -> Record:
        doc = escalation.document(
            self.reg.data, reason=reason, message=message, diagnosis=d,
            final=(self.setup.argv, self.setup.env_changes()), attempts=self.attempts,
            at=self.now(),
            last_lines=None if self.unlogged is None else self._unlogged_lines(),
        )  # fmt: skip
        folders = [self.opts.state_dir / "escalations"]
        if self.opts.escalate_to is not None:
            folders.append(self.opts.escalate_to)
        written = escalation.deliver(
            doc, folders, self.svc.clock(), self.svc.redactor, self.opts.notify,
            self._escalation_fault,
        )  # fmt: skip
        if written["path"] is not None:
            self.reg.update(escalation=written["path"])
        return self._end(
            "escalated", reason=reason, message=message, catalog_id=d.get("catalog_id"),
            fingerprint=d.get("fingerprint"), next_steps=doc["next_steps"], **written,
        )  # fmt: skip

    def _unlogged_lines(self) -> list[str]:
        from labctl.backends.sink import TAIL_KEEP

        data = self.unlogged or b""
        return escalation.tail_lines(data, cut=len(data) >= TAIL_KEEP)

    def _escalation_fault(self, folder: Path, exc: OSError) -> None:
        if folder == self.opts.state_dir / "escalations":
            self.unwritten.note("the escalation files", exc)
        else:  # the copy the user asked for (--escalate-to / [supervise] escalate_to)
            self.unwritten.lost(folder, exc, f"the escalation copy in {folder} was not written")


def supervise(opts: Options, svc: Services) -> Iterator[Record]:
    """Run `opts.argv` under supervision; yields the run's events (see the module doc)."""
    yield from Run(opts, svc).go()
