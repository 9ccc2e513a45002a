"""A PR whose base changed after its checks ran is not merged on those checks: they tested
the old base. The fake records each base change as GitHub does (issue events
`base_ref_changed`, or `automatic_base_change_succeeded` when GitHub retargets a stacked
child itself) and each check run's `completed_at`; the real PyGithub client reads them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.github import FakeGitHub
from fakes.github_state import fake_sha, retarget
from helpers.merge_support import merge_green

from labctl.merge.decide import checks_predate

TRAINER = "lab/trainer"
STALE = ("waiting", "checks_predate_retarget")


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def events_read(gh: FakeGitHub, number: int) -> int:
    return len(gh.calls("GET", rf"/issues/{number}/events$"))


def decision(rec: dict) -> tuple[str, str]:
    return rec["decision"], rec["reason"]


def test_a_child_github_retargeted_itself_waits_for_ci_on_the_new_base(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER, delete_branch_on_merge=True)
    repo.green(repo.pr(1, head="feat-a"))
    child = repo.green(repo.pr(2, head="feat-b", base="feat-a"))
    first = merge_green(gh, tmp_path, apply=True)
    assert decision(first.pr(2)) == ("waiting", "retargeted")  # GitHub moved it to main
    again = merge_green(gh, tmp_path, apply=True)
    assert decision(again.pr(2)) == STALE and again.code == 0
    assert "after job0, job1, job2 finished" in again.pr(2)["message"]
    assert not gh.calls("PUT", "/pulls/2/merge$")
    repo.green(child)  # the workflow re-ran on the child's head
    last = merge_green(gh, tmp_path, apply=True)
    assert last.pr(2)["decision"] == "merged"


def test_one_check_re_run_after_the_retarget_is_not_enough(gh: FakeGitHub, tmp_path: Path) -> None:
    """A title linter re-runs on every PR edit (a retarget is one): CI itself has not."""
    repo = gh.repo(TRAINER)
    pr = repo.pr(1, base="dev")
    repo.checks(pr.sha, ("pr-title", "completed", "success"), ("gpu-tests", "completed", "success"))
    retarget(repo, pr, "main")
    repo.rerun(pr.sha, "pr-title")
    rec = merge_green(gh, tmp_path, apply=True).pr(1)
    assert decision(rec) == STALE and "after gpu-tests finished" in rec["message"]
    repo.rerun(pr.sha, "gpu-tests")
    assert merge_green(gh, tmp_path, apply=True).pr(1)["decision"] == "merged"


def test_a_person_retargeting_a_green_pr_makes_it_wait_until_a_push(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, base="dev"))
    retarget(repo, pr, "main")  # someone's PATCH, after CI ran against dev
    dry = merge_green(gh, tmp_path)
    assert decision(dry.pr(1)) == STALE and dry.pr(1)["actions"] == [] and gh.writes() == []
    rec = merge_green(gh, tmp_path, apply=True).pr(1)
    assert decision(rec) == STALE and "its base became main at " in rec["message"]
    assert "re-run them or push" in rec["message"] and gh.writes() == []
    pr.sha = fake_sha("pushed")  # a push: a new head, its own CI, after the base change
    repo.green(pr)
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert [r.body["sha"] for r in gh.calls("PUT", "/merge$")] == [pr.sha]


def test_a_commit_status_from_before_the_retarget_holds_it_too(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, base="dev"))
    repo.status(pr.sha, ("ci/ext", "success"))
    retarget(repo, pr, "main")
    repo.green(pr)  # the check runs ran again; the external CI did not
    rec = merge_green(gh, tmp_path, apply=True).pr(1)
    assert decision(rec) == STALE and "after ci/ext finished" in rec["message"]
    repo.status(pr.sha, ("ci/ext", "success"))
    assert merge_green(gh, tmp_path, apply=True).pr(1)["decision"] == "merged"


def test_a_base_change_before_ci_ran_does_not_hold_a_pr(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1, base="dev")
    retarget(repo, pr, "main")
    repo.green(pr)
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged" and events_read(gh, 1) == 1


def test_the_latest_base_change_is_found_on_a_later_page(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, base="dev"))
    for _ in range(120):
        repo.event(pr, "subscribed", actor="alice")
    retarget(repo, pr, "main")
    for _ in range(30):
        repo.event(pr, "labeled", actor="alice")
    out = merge_green(gh, tmp_path, apply=True)
    assert decision(out.pr(1)) == STALE and events_read(gh, 1) == 2  # 151 events, 2 pages
    assert gh.writes() == []


def test_stale_checks_are_never_approved(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(
        repo.pr(1, base="dev", mergeable_state="blocked", review_decision="REVIEW_REQUIRED")
    )
    retarget(repo, pr, "main")
    out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    assert decision(out.pr(1)) == STALE and gh.writes() == []


def test_only_a_pr_that_could_merge_costs_the_events_read(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))  # green and clean: asked
    repo.checks(repo.pr(2).sha, ("lint", "completed", "failure"))
    repo.checks(repo.pr(3).sha, ("lint", "in_progress", None))
    repo.green(repo.pr(4, draft=True))
    repo.green(repo.pr(5, mergeable_state="dirty"))
    repo.green(repo.pr(6, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert [n for n in range(1, 7) if events_read(gh, n)] == [1]
    assert len(gh.calls("GET", "/events$")) == 1


T9, T10, T11 = (f"2026-01-01T{h}:00:00Z" for h in (9, 10, 11))


@pytest.mark.parametrize(
    ("changed", "finished", "stale"),
    [
        (None, [("a", T9)], []),  # never retargeted
        (T9, [("a", T10), ("b", T11)], []),  # CI ran after it
        (T10, [("a", T9), ("b", T11)], ["a"]),
        (T10, [("a", T10)], ["a"]),  # the same second: not shown to be after
        (T10, [("a", None), ("b", "garbled")], ["a", "b"]),  # no finish time to compare
        (T10, [("a", "2026-01-01T11:00:00+01:00")], ["a"]),  # 10:00 UTC
        (T10, [("a", "2026-01-01T11:30:00+01:00")], []),
    ],
)
def test_checks_predate(changed: str | None, finished: list, stale: list[str]) -> None:
    verdict = checks_predate(changed, finished, "main")
    assert (verdict is not None) == bool(stale)
    if verdict is not None:
        assert (verdict.decision, verdict.reason) == STALE
        assert f"after {', '.join(stale)} finished" in verdict.message
