"""merge-green's fifteen scenarios (research notes §5), each against the fake GitHub with
the real PyGithub client; assertions are on the records and on the requests the server saw.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.github import FakeGitHub
from fakes.github_state import fake_sha
from helpers.merge_support import merge_green

TRAINER = "lab/trainer"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def at(gh: FakeGitHub, method: str, path: str = "") -> list[int]:
    """Positions in the server's log of the matching requests."""
    return [i for i, r in enumerate(gh.log) if r in gh.calls(method, path) and r.method == method]


def merge_puts(gh: FakeGitHub, number: int) -> list[dict]:
    return [r.body for r in gh.calls("PUT", rf"/pulls/{number}/merge$")]


# 1 -------------------------------------------------------------------------------------
def test_1_green_and_clean_is_merged_at_the_checked_sha(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, title="Add eval harness"))
    out = merge_green(gh, tmp_path, apply=True, extra='merge_method = "rebase"\n')
    assert merge_puts(gh, 1) == [{"sha": pr.sha, "merge_method": "rebase"}]
    assert not gh.calls("DELETE")
    rec = out.pr(1)
    assert rec["repo"] == TRAINER and rec["head_sha"] == pr.sha
    assert rec["decision"] == "merged" and rec["applied"] is True and rec["dry_run"] is False
    assert rec["merge_commit_sha"] == repo.pulls[1].merge_commit_sha is not None
    assert rec["checks"]["passed"] == 3 and out.code == 0


def test_1_per_repo_override_of_the_merge_method(gh: FakeGitHub, tmp_path: Path) -> None:
    trainer, evals = gh.repo(TRAINER), gh.repo("lab/evals")
    trainer.green(trainer.pr(1))
    pr = evals.green(evals.pr(7))
    extra = '[merge_green.repos."lab/evals"]\nmerge_method = "merge"\n'
    out = merge_green(gh, tmp_path, allowlist=[TRAINER, "lab/evals"], apply=True, extra=extra)
    assert merge_puts(gh, 1) == [{"sha": trainer.pulls[1].sha, "merge_method": "squash"}]
    assert [r.body for r in gh.calls("PUT", "lab/evals/pulls/7/merge")] == [
        {"sha": pr.sha, "merge_method": "merge"}
    ]
    assert {r["decision"] for r in out.kinds("pr")} == {"merged"}


# 2 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", ["in_progress", "queued", "waiting"])
def test_2_a_running_check_means_waiting(gh: FakeGitHub, tmp_path: Path, status: str) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1)
    repo.checks(pr.sha, ("lint", "completed", "success"), ("gpu-tests", status, None))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("waiting", "checks_pending")
    assert "gpu-tests" in rec["message"] and rec["checks"]["waiting_on"] == ["gpu-tests"]
    assert gh.writes() == [] and out.code == 0


# 3 -------------------------------------------------------------------------------------
def test_3_a_failure_on_the_second_page_blocks(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1)
    runs = [(f"job{i:03d}", "completed", "success") for i in range(120)]
    runs[107] = ("job107", "completed", "failure")
    repo.checks(pr.sha, *runs)
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "check_failed")
    assert rec["message"] == "check failed: job107"
    assert len(gh.calls("GET", "/check-runs$")) == 2  # both pages, nothing more
    assert gh.writes() == [] and out.code == 1


def test_3_fewer_runs_than_total_count_is_an_incomplete_read(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER, runs_total_bonus=5)
    repo.green(repo.pr(1))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("waiting", "incomplete_read")
    assert "3 of 8 check runs" in rec["message"] and gh.writes() == []


# 4 -------------------------------------------------------------------------------------
def test_4_actions_only_repo_merges_despite_combined_pending(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))  # no commit statuses: GitHub's combined state reads "pending"
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged" and len(merge_puts(gh, 1)) == 1


def test_4_an_errored_status_blocks_even_with_green_runs(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1))
    repo.status(pr.sha, ("ci/ext", "error"), ("ci/docs", "success"))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "check_failed")
    assert "ci/ext" in rec["message"] and rec["checks"]["statuses"] == 2
    assert gh.writes() == []


def test_4_no_ci_at_all_is_waiting_not_green(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1)
    repo.suites[pr.sha] = [{"id": 9, "status": "queued", "latest_check_runs_count": 0}]
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("waiting", "no_ci")
    assert gh.writes() == [] and out.code == 0


# 5 -------------------------------------------------------------------------------------
def test_5_skipped_and_neutral_pass_and_are_named(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1)
    repo.checks(
        pr.sha,
        ("build", "completed", "success"),
        ("deploy-preview", "completed", "skipped"),
        ("codecov", "completed", "neutral"),
    )
    out = merge_green(gh, tmp_path)
    rec = out.pr(1)
    assert rec["decision"] == "would_merge"
    assert "skipped: deploy-preview" in rec["message"] and "neutral: codecov" in rec["message"]
    strict = merge_green(gh, tmp_path, strict_skipped=True)
    rec = strict.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "check_not_passed")
    assert "deploy-preview (skipped)" in rec["message"] and strict.code == 1
    by_config = merge_green(gh, tmp_path, extra="strict_skipped = true\n")
    assert by_config.pr(1)["reason"] == "check_not_passed"


@pytest.mark.parametrize(
    "conclusion", ["cancelled", "timed_out", "action_required", "stale", "startup_failure"]
)
def test_5_other_conclusions_block(gh: FakeGitHub, tmp_path: Path, conclusion: str) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1)
    repo.checks(pr.sha, ("build", "completed", "success"), ("train-smoke", "completed", conclusion))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert rec["decision"] == "blocked" and f"train-smoke ({conclusion})" in rec["message"]
    assert gh.writes() == [] and out.code == 1


# 6 -------------------------------------------------------------------------------------
def test_6_mergeability_computed_lazily_is_re_read(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, null_reads=2))
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert len(gh.calls("GET", "/pulls/1$")) == 3 and out.sleeps == [1.0, 2.0]
    assert merge_puts(gh, 1) == [{"sha": pr.sha, "merge_method": "squash"}]


def test_6_mergeability_never_computed_is_waiting(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, null_reads=100))
    out = merge_green(gh, tmp_path, apply=True, extra="mergeable_polls = 3\n")
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("waiting", "mergeability_unknown")
    assert len(gh.calls("GET", "/pulls/1$")) == 4 and gh.writes() == []


def test_6_behind_is_updated_when_allowed_then_waits(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, mergeable_state="behind"))
    old = pr.sha
    out = merge_green(gh, tmp_path, apply=True, extra="update_branch = true\n")
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("waiting", "branch_updated")
    assert [r.body for r in gh.writes()] == [{"expected_head_sha": old}]
    assert rec["actions"] == ["update_branch"] and rec["applied"] is True
    assert repo.pulls[1].sha != old  # the fake made the update commit; CI starts over


def test_6_behind_without_update_is_blocked(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="behind"))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "behind")
    assert gh.writes() == [] and out.code == 1


# 7 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "decision,reason",
    [("REVIEW_REQUIRED", "review_required"), ("CHANGES_REQUESTED", "changes_requested")],
)
def test_7_blocked_green_reads_the_review_decision(
    gh: FakeGitHub, tmp_path: Path, decision: str, reason: str
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision=decision))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", reason)
    assert rec["review_decision"] == decision
    assert not gh.calls("POST", "/reviews") and gh.writes() == [] and out.code == 1


def test_7_code_owner_review_is_named(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER, code_owners=True)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["reason"] == "code_owner_review" and gh.writes() == []


def test_7_blocked_with_no_review_missing_is_an_unknown_rule(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="APPROVED"))
    out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "protection")
    assert gh.writes() == []


def test_7_blocked_by_a_required_merge_queue_is_named(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER, merge_queue=True)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="APPROVED"))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "merge_queue_required")
    assert gh.writes() == [] and len(gh.calls("POST", "graphql$")) == 2


def test_7_a_server_without_merge_queues_still_answers(tmp_path: Path) -> None:
    with FakeGitHub(prefix="/api/v3") as gh:
        repo = gh.repo(TRAINER)
        repo.green(repo.pr(1, mergeable_state="blocked", review_decision="APPROVED"))
        old = {"errors": [{"message": "Field 'isMergeQueueEnabled' doesn't exist on type"}]}
        gh.fail("POST", "graphql$", 200, body=old, when="isMergeQueueEnabled")
        out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "protection")
    assert gh.faults[0].times == 0 and gh.writes() == []


def test_7_code_owner_rules_the_token_cannot_read_are_left_out(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER, code_owners=True)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    forbidden = {"errors": [{"type": "FORBIDDEN", "message": "Resource not accessible"}]}
    gh.fail("POST", "graphql$", 200, body=forbidden, when="branchProtectionRule")
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "review_required")
    assert len(gh.calls("POST", "graphql$")) == 2 and gh.writes() == []


# 8 -------------------------------------------------------------------------------------
def test_8_approves_where_allowed_then_merges(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    rec = out.pr(1)
    assert rec["decision"] == "merged" and rec["actions"] == ["approve", "merge"]
    reviews = gh.calls("POST", "/pulls/1/reviews$")
    assert len(reviews) == 1
    assert reviews[0].body["event"] == "APPROVE" and reviews[0].body["commit_id"] == pr.sha
    seq = [(r.method, r.path.rsplit("/", 1)[-1]) for r in gh.log if "/pulls/1" in r.path]
    assert seq == [("GET", "1"), ("POST", "reviews"), ("GET", "1"), ("PUT", "merge")]
    assert merge_puts(gh, 1) == [{"sha": pr.sha, "merge_method": "squash"}]


def test_8_never_approves_its_own_pr(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(
        repo.pr(1, author=gh.viewer, mergeable_state="blocked", review_decision="REVIEW_REQUIRED")
    )
    out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "review_required")
    assert "own PR" in rec["message"] and gh.writes() == []


def test_8_a_refused_approval_is_blocked_and_nothing_is_merged(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    # e.g. a rule that refuses approvals from a user who worked on the PR with an agent
    gh.fail("POST", r"/pulls/1/reviews$", 422, "Can not approve your own pull request")
    out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", "approve_refused")
    assert "Can not approve your own pull request" in rec["message"]
    assert len(gh.calls("POST", "/reviews$")) == 1 and not gh.calls("PUT")


# 9 -------------------------------------------------------------------------------------
def test_9_a_head_that_moved_is_never_merged(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1))
    checked = pr.sha
    pr.move_head_on_merge = fake_sha("pushed later")
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("waiting", "head_moved")
    assert merge_puts(gh, 1) == [{"sha": checked, "merge_method": "squash"}]  # exactly one
    assert repo.pulls[1].merged is False and out.code == 0


# 10 ------------------------------------------------------------------------------------
def test_10_base_modified_gets_one_re_evaluation(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1))
    gh.fail("PUT", r"/pulls/1/merge$", 405, "Base branch was modified. Review and try again.")
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert merge_puts(gh, 1) == [{"sha": pr.sha, "merge_method": "squash"}] * 2


@pytest.mark.parametrize(
    "setup,reason",
    [
        ({"merge_queue": True}, "merge_queue_required"),
        ({"methods": {"merge", "rebase"}}, "merge_method_not_allowed"),
    ],
)
def test_10_refusals_that_need_a_person(
    gh: FakeGitHub, tmp_path: Path, setup: dict, reason: str
) -> None:
    repo = gh.repo(TRAINER, **setup)
    repo.green(repo.pr(1))
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("blocked", reason)
    assert len(merge_puts(gh, 1)) == 1 and out.code == 1


def test_10_a_502_after_the_merge_landed_is_merged_without_a_second_put(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.fail("PUT", r"/pulls/1/merge$", 502, "Bad Gateway", then_apply=True)
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert rec["decision"] == "merged" and rec["merge_commit_sha"] == repo.pulls[1].merge_commit_sha
    assert len(merge_puts(gh, 1)) == 1


def test_10_a_502_that_did_not_merge_is_failed_and_not_resent(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.fail("PUT", r"/pulls/1/merge$", 502, "Bad Gateway")
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("failed", "merge_unconfirmed")
    assert len(merge_puts(gh, 1)) == 1 and out.code == 1
    assert at(gh, "GET", "/pulls/1$")[-1] > at(gh, "PUT")[0]  # re-read after the 502


# 11 ------------------------------------------------------------------------------------
def stack(gh: FakeGitHub, **repo_kw: object) -> tuple:
    repo = gh.repo(TRAINER, **repo_kw)
    parent = repo.green(repo.pr(1, head="feat-a"))
    child = repo.green(repo.pr(2, head="feat-b", base="feat-a"))
    return repo, parent, child


def test_11_stack_parent_merges_child_is_retargeted_not_merged(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo, _parent, child = stack(gh)
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    rec = out.pr(2)
    assert (rec["decision"], rec["reason"]) == ("waiting", "retargeted")
    assert rec["stacked_on"] == 1 and rec["base"] == "main" and rec["actions"] == ["retarget"]
    assert len(gh.calls("PUT")) == 1 and not gh.calls("DELETE")
    assert [r.body for r in gh.calls("PATCH", "/pulls/2$")] == [{"base": "main"}]
    assert repo.pulls[2].state == "open" and repo.pulls[2].base == "main"
    # the next run: the child's checks ran against feat-a, before the retarget
    again = merge_green(gh, tmp_path, apply=True)
    rec = again.pr(2)
    assert (rec["decision"], rec["reason"]) == ("waiting", "checks_predate_retarget")
    assert "tested the old base" in rec["message"] and merge_puts(gh, 2) == []
    repo.green(child)  # CI runs again on the child's head, now against main
    last = merge_green(gh, tmp_path, apply=True)
    assert last.pr(2)["decision"] == "merged"
    assert merge_puts(gh, 2) == [{"sha": child.sha, "merge_method": "squash"}]


def test_11_stack_dry_run_says_what_would_happen(gh: FakeGitHub, tmp_path: Path) -> None:
    stack(gh)
    out = merge_green(gh, tmp_path)
    assert out.pr(1)["decision"] == "would_merge"
    rec = out.pr(2)
    assert (rec["decision"], rec["reason"]) == ("waiting", "stacked")
    assert "retargeted to main" in rec["message"] and gh.writes() == []


def test_11_a_child_closed_by_the_base_deletion_is_failed_with_the_recovery(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    _repo, parent, _child = stack(gh, close_children_on_merge=True)
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(2)
    assert (rec["decision"], rec["reason"]) == ("failed", "child_closed")
    assert f"recreate feat-a at {parent.sha}" in rec["message"] and "reopen #2" in rec["message"]
    assert not gh.calls("PATCH") and out.code == 1


def test_11_github_retargeted_already_needs_no_patch(gh: FakeGitHub, tmp_path: Path) -> None:
    stack(gh, delete_branch_on_merge=True)
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(2)
    assert (rec["decision"], rec["reason"]) == ("waiting", "retargeted")
    assert rec["actions"] == [] and not gh.calls("PATCH")


def test_11_an_orphaned_child_of_a_merged_parent_is_retargeted(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    _repo, parent, _child = stack(gh)
    parent.state, parent.merged = "closed", True  # merged by a person, branch kept
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(2)
    assert (rec["decision"], rec["reason"]) == ("waiting", "retargeted")
    assert [r.body for r in gh.calls("PATCH")] == [{"base": "main"}] and not gh.calls("PUT")


# 12 ------------------------------------------------------------------------------------
def test_12_upstream_and_case_variants_are_never_touched(gh: FakeGitHub, tmp_path: Path) -> None:
    upstream = gh.repo("upstream/trainer")
    upstream.green(upstream.pr(5))
    trainer = gh.repo(TRAINER, parent="upstream/trainer")
    trainer.green(trainer.pr(1))
    out = merge_green(gh, tmp_path, "upstream/trainer", "LAB/trainer", apply=True)
    assert [(r["repo"], r["reason"]) for r in out.kinds("repo")] == [
        ("upstream/trainer", "not_allowlisted"),
        ("LAB/trainer", "not_allowlisted"),
    ]
    assert gh.log == [] and out.code == 1  # not even read


@pytest.mark.parametrize("asked", ["lab/old-trainer", "Lab/Trainer"])
def test_12_a_canonical_name_that_differs_is_refused(
    gh: FakeGitHub, tmp_path: Path, asked: str
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.rename("lab/old-trainer", TRAINER)
    out = merge_green(gh, tmp_path, allowlist=[asked], apply=True)
    [rec] = out.records
    assert (rec["kind"], rec["reason"], rec["canonical"]) == ("repo", "renamed", TRAINER)
    assert gh.writes() == [] and not gh.calls("GET", "/pulls") and out.code == 1


# 13 ------------------------------------------------------------------------------------
def test_13_drafts_labels_and_forks_are_skipped(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, draft=True))
    repo.green(repo.pr(2, mergeable_state="draft"))
    repo.green(repo.pr(3, labels=["Do-Not-Merge"]))
    repo.green(repo.pr(4, head_repo="stranger/trainer"))
    out = merge_green(gh, tmp_path, apply=True)
    reasons = {r["number"]: (r["decision"], r["reason"]) for r in out.kinds("pr")}
    assert reasons == {
        1: ("skipped", "draft"),
        2: ("skipped", "draft"),
        3: ("skipped", "blocking_label"),
        4: ("skipped", "fork_head"),
    }
    assert gh.writes() == [] and out.code == 0
    forks = merge_green(gh, tmp_path, "lab/trainer#4", apply=True, extra="allow_forks = true\n")
    assert forks.pr(4)["decision"] == "merged"


# 14 ------------------------------------------------------------------------------------
def test_14_a_secondary_limit_on_the_merge_waits_re_reads_and_resends_once(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1))
    gh.fail(
        "PUT",
        r"/pulls/1/merge$",
        403,
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        headers={"Retry-After": "1"},
    )
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged" and out.sleeps == [1.0]
    assert merge_puts(gh, 1) == [{"sha": pr.sha, "merge_method": "squash"}] * 2
    first, second = at(gh, "PUT")
    assert any(first < i < second for i in at(gh, "GET", "/pulls/1$"))  # re-read between


def test_14_a_persistent_limit_ends_the_run_and_reports_the_rest(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    for n in (1, 2, 3):
        repo.green(repo.pr(n))
    gh.fail("GET", r"/pulls/2$", 403, "secondary rate limit", headers={"Retry-After": "900"})
    out = merge_green(gh, tmp_path, allowlist=[TRAINER, "lab/evals"], apply=True)
    assert out.pr(1)["decision"] == "merged"
    for n in (2, 3):
        assert (out.pr(n)["decision"], out.pr(n)["reason"]) == ("failed", "rate_limited")
    errors = out.kinds("error")
    assert [e["reason"] for e in errors] == ["rate_limited", "rate_limited"]
    assert errors[1]["repo"] == "lab/evals" and "not visited" in errors[1]["message"]
    assert out.sleeps == [] and len(gh.calls("PUT")) == 1 and out.code == 3


def test_14_a_primary_reset_beyond_the_cap_stops_cleanly(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    reset = str(int(time.time()) + 3600)
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}
    gh.fail("GET", r"/pulls$", 403, "API rate limit exceeded for user ID 1.", headers=headers)
    out = merge_green(gh, tmp_path, apply=True)
    [err] = out.records
    assert err["reason"] == "rate_limited" and re.search(r"asks for 360\d s", err["message"])
    assert out.sleeps == [] and gh.writes() == [] and out.code == 3


def test_14_a_primary_reset_within_the_cap_is_waited_for(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    reset = str(int(time.time()) + 20)
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}
    gh.fail("GET", r"/check-runs$", 403, "API rate limit exceeded", headers=headers)
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert len(out.sleeps) == 1 and 15 <= out.sleeps[0] <= 22


# 15 ------------------------------------------------------------------------------------
def test_15_dry_run_sends_no_write_at_all(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, head="feat-a"))
    repo.green(repo.pr(2, head="feat-b", base="feat-a"))
    repo.green(repo.pr(3, mergeable_state="behind"))
    repo.green(repo.pr(4, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    extra = "approve = true\nupdate_branch = true\n"
    out = merge_green(gh, tmp_path, extra=extra)
    assert gh.writes() == []
    assert {r.method for r in gh.log} <= {"GET", "POST"}
    assert all("mutation" not in r.body["query"] for r in gh.calls("POST"))
    assert all(r["dry_run"] is True and r["applied"] is False for r in out.kinds("pr"))
    decisions = {r["number"]: r["decision"] for r in out.kinds("pr")}
    assert decisions == {1: "would_merge", 2: "waiting", 3: "waiting", 4: "would_merge"}
    assert out.pr(4)["actions"] == ["approve", "merge"] and out.pr(3)["actions"] == [
        "update_branch"
    ]
    assert all(not p.merged for p in repo.pulls.values()) and out.code == 0
