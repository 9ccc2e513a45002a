"""After a failed attempt: fix and re-run, re-run as it was, or escalate (pure).

Rules, in order:
1. An unknown failure escalates (`unknown_failure`): guessing a fix is looping blindly.
2. A fix that changes something is used, unless it leads back to an attempt already run
   (`would_repeat`) or the re-run budget is spent (`budget_spent`).
3. With nothing (more) to change, a retryable failure (the catalog says a plain re-run can
   succeed: NCCL timeout, rate limit, hang) is re-run as it was once; the same fingerprint
   again escalates (`repeated_failure`). This single plain re-run is the only way an attempt
   identical to an earlier one is ever started.
4. Otherwise escalate with why nothing can be changed: `no_fix` (the catalog has no fix
   supervise can apply), `fix_exhausted` (the batch is at its minimum, a once-only fix was
   used), `arg_not_found`, `install_disabled`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labctl.supervise.fixes import Fix, FixContext, NoFix, Setup, plan


@dataclass(frozen=True)
class History:
    attempts: int  # attempts run so far, the failed one included
    seen: frozenset[tuple[Any, ...]]  # Setup keys of every attempt started
    earlier_fingerprints: frozenset[str]  # fingerprints of the attempts before this one
    max_retries: int

    @property
    def budget_left(self) -> bool:
        return self.attempts - 1 < self.max_retries


@dataclass(frozen=True)
class Retry:
    fix: Fix


@dataclass(frozen=True)
class Escalate:
    reason: str
    message: str


def _name(d: Mapping[str, Any]) -> str:
    return str(d.get("title") or d.get("category") or "the failure")


def _spent(d: Mapping[str, Any], hist: History) -> Escalate:
    return Escalate(
        "budget_spent",
        f"{hist.max_retries} re-run(s) spent (--max-retries) and it still fails: {_name(d)}",
    )


def decide(d: Mapping[str, Any], setup: Setup, hist: History, ctx: FixContext) -> Retry | Escalate:
    if d.get("category") == "unknown" or not d.get("catalog_id"):
        return Escalate(
            "unknown_failure",
            f"no known failure signature matched ({_name(d)}); a person has to look",
        )
    found = plan(d.get("action"), setup, ctx)
    if isinstance(found, Fix) and not found.resubmit:
        if found.setup.key() in hist.seen:
            found = NoFix(
                "would_repeat", "the fix leads back to a command line and environment already run"
            )
        elif not hist.budget_left:
            return _spent(d, hist)
        else:
            return Retry(found)
    if d.get("retryable"):
        fp = d.get("fingerprint")
        if fp in hist.earlier_fingerprints:
            why = f" ({found.message})" if isinstance(found, NoFix) else ""
            return Escalate(
                "repeated_failure",
                f"{_name(d)}: the same failure again (fingerprint {fp}) and nothing more to "
                f"change{why}",
            )
        if not hist.budget_left:
            return _spent(d, hist)
        backoff = found.backoff_s if isinstance(found, Fix) else 0.0
        return Retry(Fix(setup, backoff_s=backoff, resubmit=True))
    if isinstance(found, Fix):  # a resubmit action on an entry that says retrying cannot help
        return Escalate("no_fix", f"{_name(d)} is not fixed by re-running it")
    return Escalate(found.reason, f"{_name(d)}: {found.message}")
