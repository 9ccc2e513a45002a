"""Waiting out GitHub rate limits, within a budget.

GitHub names the wait: `Retry-After` (secondary limits, 429), else `x-ratelimit-reset`
(primary limit). A secondary limit without either means "wait at least a minute". One run
spends at most `max_wait_s` waiting in total; a limit that needs longer — or that is still
there after a few waits — ends the run cleanly (`RateLimitStop`), and the caller reports
every PR it did not get to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from labctl.backends.github import RateLimited

T = TypeVar("T")
SECONDARY_WAIT_S = 60.0  # GitHub's advice when a secondary limit names no wait
READ_ATTEMPTS = 3


class RateLimitStop(Exception):
    """The rate limit outlasts what this run may wait."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Pacer:
    def __init__(self, sleep: Callable[[float], None], max_wait_s: float) -> None:
        self.sleep = sleep
        self.budget = max_wait_s
        self.waited = 0.0

    def wait_out(self, exc: RateLimited) -> None:
        """Sleep as long as GitHub asked, or raise `RateLimitStop` if that is over budget."""
        wait = SECONDARY_WAIT_S if exc.wait_s is None else max(0.0, exc.wait_s)
        if wait > self.budget - self.waited:
            left = max(0.0, self.budget - self.waited)
            raise RateLimitStop(
                f"GitHub rate limit ({exc.message}): it asks for {wait:.0f} s, more than the "
                f"{left:.0f} s this run may still wait (merge_green.max_wait_s)"
            )
        self.waited += wait
        self.sleep(wait)

    def read(self, fn: Callable[..., T], *args: object) -> T:
        """A read, re-sent after each rate-limit wait (reads are safe to repeat)."""
        for _ in range(READ_ATTEMPTS - 1):
            try:
                return fn(*args)
            except RateLimited as exc:
                self.wait_out(exc)
        try:
            return fn(*args)
        except RateLimited as exc:
            raise RateLimitStop(
                f"GitHub rate limit persists after {READ_ATTEMPTS - 1} waits ({exc.message})"
            ) from None

    def write(self, send: Callable[[], T], landed: Callable[[], bool]) -> T | None:
        """A write, sent at most twice: after a rate limit, wait, re-read (`landed`), and
        send again only if it did not land. None: it had landed after all."""
        try:
            return send()
        except RateLimited as exc:
            self.wait_out(exc)
        if landed():
            return None
        try:
            return send()
        except RateLimited as exc:
            raise RateLimitStop(
                f"GitHub rate limit persists ({exc.message}): the write was refused twice "
                "and is not sent again in this run"
            ) from None
