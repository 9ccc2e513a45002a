"""A rate limit that keeps coming back although each wait fits the run's budget
(merge_green.max_wait_s): a read is sent three times, a write twice, and then the run ends
cleanly: every PR not finished is reported, every repo not visited gets an error, and no
write is ever sent a third time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.github import FakeGitHub
from helpers.merge_support import Outcome, merge_green

TRAINER, EVALS = "lab/trainer", "lab/evals"
SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
RETRY_1S = {"Retry-After": "1"}


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def assert_stopped(out: Outcome, unfinished: list[int]) -> None:
    """The run ended on the limit: the unfinished PRs are failed, lab/evals not visited."""
    for n in unfinished:
        assert (out.pr(n)["decision"], out.pr(n)["reason"]) == ("failed", "rate_limited")
        assert out.pr(n)["applied"] is False
    errors = out.kinds("error")
    assert [(e["reason"], e["repo"]) for e in errors] == [
        ("rate_limited", TRAINER),
        ("rate_limited", EVALS),
    ]
    assert "the run stopped" in errors[0]["message"] and "not visited" in errors[1]["message"]
    assert out.code == 3


def test_a_read_limited_on_its_last_attempt_ends_the_run(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    for n in (1, 2, 3):
        repo.green(repo.pr(n))
    gh.repo(EVALS).green(gh.repos[EVALS].pr(7))
    gh.fail("GET", r"/pulls/2$", 403, SECONDARY, headers=RETRY_1S, times=3)
    out = merge_green(gh, tmp_path, allowlist=[TRAINER, EVALS], apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert_stopped(out, [2, 3])
    assert "persists after 2 waits" in out.pr(2)["message"]
    assert out.pr(3)["message"].startswith("not read: the run stopped at #2: ")
    assert out.sleeps == [1.0, 1.0] and len(gh.calls("GET", "/pulls/2$")) == 3
    assert [r.path for r in gh.writes()] == ["/repos/lab/trainer/pulls/1/merge"]
    assert not gh.calls("GET", "/pulls/3$") and not gh.calls("GET", "/repos/lab/evals")


def test_a_merge_limited_twice_is_not_sent_a_third_time(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1))
    repo.green(repo.pr(2))
    gh.fail("PUT", r"/pulls/1/merge$", 403, SECONDARY, headers=RETRY_1S, times=9)
    out = merge_green(gh, tmp_path, allowlist=[TRAINER, EVALS], apply=True)
    assert_stopped(out, [1, 2])
    assert (
        out.pr(1)["message"].startswith("not finished: ")
        and "refused twice" in out.pr(1)["message"]
    )
    assert out.pr(2)["message"].startswith("not read: the run stopped at #1: ")
    assert [r.body for r in gh.calls("PUT")] == [{"sha": pr.sha, "merge_method": "squash"}] * 2
    assert out.sleeps == [1.0] and not repo.pulls[1].merged
    reads = [i for i, r in enumerate(gh.log) if r.method == "GET" and r.path.endswith("/pulls/1")]
    first, second = (i for i, r in enumerate(gh.log) if r.method == "PUT")
    assert any(first < i < second for i in reads)  # re-read before the second send
    assert not gh.calls("GET", "/pulls/2$")  # the run stopped before PR 2


def test_an_approval_limited_twice_is_not_sent_again_nor_merged(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    gh.fail("POST", r"/pulls/1/reviews$", 429, "Too Many Requests", headers=RETRY_1S, times=9)
    out = merge_green(
        gh, tmp_path, allowlist=[TRAINER, EVALS], apply=True, extra="approve = true\n"
    )
    assert_stopped(out, [1])
    assert len(gh.calls("POST", "/reviews$")) == 2 and not gh.calls("PUT")
    assert out.sleeps == [1.0]
