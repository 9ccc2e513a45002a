"""GitHub's errors, as labctl sees them: what failed, and whether waiting would help.

- `RateLimited`: 429, a 403 that says so (secondary limits, or the primary limit at 0),
  a GraphQL answer whose error is RATE_LIMITED; `wait_s` is what GitHub asked for
  (Retry-After in seconds or as a date, else the primary limit's reset).
- `Unreachable`: no usable answer (connection refused or reset, a timeout, a 5xx).
- `AuthFailed`: 401; every later call would fail too.
- `GitHubError`: anything else, with GitHub's status and message (plus its `errors`).
"""

from __future__ import annotations

import email.utils
from typing import Any


class GitHubError(Exception):
    """GitHub answered with an error (status None: no answer at all)."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class RateLimited(GitHubError):
    """A primary or secondary rate limit; `wait_s` is what GitHub asked for (None: unsaid)."""

    def __init__(self, status: int, message: str, wait_s: float | None) -> None:
        super().__init__(status, message)
        self.wait_s = wait_s


class Unreachable(GitHubError):
    """No usable answer: connection refused or reset, a timeout, 5xx after the GET retries."""


class AuthFailed(GitHubError):
    """401: the token is missing, wrong or expired (every later call would fail too)."""


def _lower(headers: dict[str, Any] | None) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (headers or {}).items()}


def wait_from(headers: dict[str, Any], now: float) -> float | None:
    """Seconds GitHub asked us to wait: Retry-After (seconds or a date), else the primary
    limit's reset (epoch seconds, plus one: the reset second is not over at its start)."""
    low = _lower(headers)
    after = low.get("retry-after", "").strip()
    if after.isdigit():
        return float(after)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(after).timestamp() - now)
    except (TypeError, ValueError, IndexError):
        pass
    if low.get("x-ratelimit-remaining") == "0" and low.get("x-ratelimit-reset", "").isdigit():
        return max(0.0, float(low["x-ratelimit-reset"]) - now) + 1.0
    return None


def message_of(data: Any, fallback: str) -> str:
    """GitHub's message, with its `errors` details ("Can not approve your own pull request")."""
    if not isinstance(data, dict):
        return fallback
    parts = [str(data["message"])] if data.get("message") else []
    for err in data.get("errors") or []:
        detail = err.get("message") if isinstance(err, dict) else err
        if detail:
            parts.append(str(detail))
    return ": ".join(parts[:3]) or fallback


def is_rate_limit(status: int, headers: dict[str, Any], message: str) -> bool:
    """429; a 403 that says so; a GraphQL answer whose error is RATE_LIMITED (PyGithub
    raises those as 400)."""
    low = _lower(headers)
    text = message.lower()
    return status == 429 or (
        status in (400, 403)
        and (
            "retry-after" in low
            or low.get("x-ratelimit-remaining") == "0"
            or "rate limit" in text
            or text.endswith("please retry your request again later.")
        )
    )


def translate(
    status: int, data: Any, headers: dict[str, Any] | None, what: str, now: float
) -> GitHubError:
    """The labctl error for a GitHub answer `status` (body `data`) to the call `what`."""
    message = message_of(data, f"GitHub answered {status} to {what}")
    headers = dict(headers or {})
    if is_rate_limit(status, headers, message):
        return RateLimited(status, message, wait_from(headers, now))
    if status >= 500:
        return Unreachable(status, f"{what}: GitHub answered {status}")
    if status == 401:
        return AuthFailed(status, f"{what}: GitHub refused the token ({message})")
    return GitHubError(status, message)
