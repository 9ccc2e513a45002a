"""One PR, from a fresh read to a verdict: checks, mergeability, review, and (with
--apply) the writes.

Every write is pinned to the head SHA whose checks were read: the merge sends `sha=`, an
approval `commit_id`, a branch update `expected_head_sha`. A write is sent at most twice,
and the second time only after a rate-limit wait and a re-read that shows it did not land;
after any other write error the PR is re-read before anything is decided. The branch is
never deleted (that would close stacked children). A check that finished before the PR's
base last changed (a retargeted stacked child) tested the old base: the PR waits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from labctl.backends.github import GitHub, GitHubError, Pull, RepoInfo, Unreachable
from labctl.merge.checks import Rollup, rollup
from labctl.merge.decide import (
    Verdict,
    blocked,
    by_review,
    by_state,
    checks_predate,
    failed,
    merge_refusal,
    skip_reason,
    skipped,
    waiting,
)
from labctl.merge.pacing import Pacer
from labctl.merge.policy import Settings
from labctl.merge.record import Facts, pr_record

POLL_DELAYS = (1.0, 2.0, 4.0)  # then 4 s per re-read


@dataclass
class Session:
    """What every repo of one run shares."""

    gh: GitHub
    pacer: Pacer
    sleep: Callable[[float], None]
    settings: Settings
    apply: bool


def _settled(pull: Pull) -> bool:
    return pull.state != "open" or (
        pull.mergeable is not None and pull.mergeable_state not in (None, "unknown")
    )


class RepoRun:
    def __init__(self, session: Session, repo: RepoInfo) -> None:
        self.s = session
        self.gh = session.gh
        self.name = repo.full_name
        self.policy = session.settings.policy_for(self.name)
        self.merged: dict[int, Pull] = {}  # merged by this run: their children wait
        self.would_merge: set[int] = set()  # dry run: would have merged

    # -- reads -------------------------------------------------------------------------
    def read(self, number: int) -> Pull:
        return self.s.pacer.read(self.gh.pull, self.name, number)

    def settle(self, pull: Pull, done: Callable[[Pull], bool] = _settled) -> Pull:
        """Re-read while GitHub is still computing (mergeable null), a few times."""
        for i in range(self.s.settings.mergeable_polls):
            if done(pull):
                break
            self.s.sleep(POLL_DELAYS[min(i, len(POLL_DELAYS) - 1)])
            pull = self.read(pull.number)
        return pull

    def checks(self, sha: str) -> Rollup:
        runs, runs_total = self.s.pacer.read(self.gh.check_runs, self.name, sha)
        statuses, statuses_total = self.s.pacer.read(self.gh.statuses, self.name, sha)
        return rollup(
            runs, runs_total, statuses, statuses_total, strict_skipped=self.policy.strict_skipped
        )

    def predate(self, facts: Facts, roll: Rollup) -> Verdict | None:
        """Did the base change after a check finished? Asked only of a PR about to be
        approved or merged: one more read (its issue events), a page per 100 events."""
        pull = facts.pull
        changed = self.s.pacer.read(self.gh.base_changed_at, self.name, pull.number)
        return checks_predate(changed, roll.finished, pull.base_ref)

    def record(self, facts: Facts, verdict: Verdict) -> dict[str, Any]:
        return pr_record(self.name, facts, verdict, dry_run=not self.s.apply)

    def _landed(self, facts: Facts, sha: str) -> bool:
        """After a rate-limited write: re-read; True when re-sending would be wrong."""
        fresh = facts.pull = self.read(facts.pull.number)
        return fresh.merged or fresh.state != "open" or fresh.head_sha != sha

    # -- one PR --------------------------------------------------------------------------
    def evaluate(self, listed: Pull) -> dict[str, Any]:
        facts = Facts(listed)
        verdict = skip_reason(listed, self.policy, self.name) or self._evaluate(facts)
        if verdict.decision == "would_merge":
            self.would_merge.add(listed.number)
        return self.record(facts, verdict)

    def _evaluate(self, facts: Facts) -> Verdict:
        pull = facts.pull = self.read(facts.pull.number)
        skip = skip_reason(pull, self.policy, self.name)
        if skip is not None:
            return skip
        sha = pull.head_sha
        roll = self.checks(sha)
        facts.checks = roll.summary
        if roll.state == "red":
            return blocked(roll.reason, roll.message)
        if roll.state == "pending":
            return waiting(roll.reason, roll.message)
        pull = facts.pull = self.settle(pull)
        if pull.head_sha != sha:
            return waiting("head_moved", f"the head moved from {sha[:12]} while it was read")
        return self.act(facts, sha, roll)

    def act(self, facts: Facts, sha: str, roll: Rollup, approved: bool = False) -> Verdict:
        step = by_state(facts.pull, self.policy)
        if isinstance(step, Verdict):
            return step
        if step == "update":
            return self.update(facts, sha)
        if step == "review":
            if approved:
                return blocked("protection", "approved, but GitHub still reports it blocked")
            return self.review(facts, sha, roll)
        if not approved:  # an approval is sent only after the same question
            stale = self.predate(facts, roll)
            if stale is not None:
                return stale
        return self.merge(facts, sha, roll)

    def review(self, facts: Facts, sha: str, roll: Rollup) -> Verdict:
        number = facts.pull.number
        review = self.s.pacer.read(self.gh.review, self.name, number)
        facts.review_decision = review.decision
        step = by_review(review, facts.pull, self.policy)
        if isinstance(step, Verdict):
            if step.reason == "protection" and self.s.pacer.read(
                self.gh.merge_queue, self.name, number
            ):
                return blocked(
                    "merge_queue_required",
                    "the base branch requires the merge queue (labctl does not enqueue)",
                )
            return step
        stale = self.predate(facts, roll)
        if stale is not None:
            return stale
        facts.actions.append("approve")
        if not self.s.apply:
            facts.actions.append("merge")
            facts.merge_method = self.policy.merge_method
            return Verdict("would_merge", "green", f"would approve, then merge; {roll.message}")
        try:
            self.s.pacer.write(
                lambda: self.gh.approve(self.name, number, sha),
                lambda: (
                    self.s.pacer.read(self.gh.review, self.name, number).decision
                    != "REVIEW_REQUIRED"
                ),
            )
        except Unreachable as exc:  # did it land? the review decision says
            decision = self.s.pacer.read(self.gh.review, self.name, number).decision
            if decision == "REVIEW_REQUIRED":
                return failed("approve_unconfirmed", f"{exc.message}; not approved, not re-sent")
        except GitHubError as exc:  # refused: re-read before deciding anything
            return self._gone(facts) or blocked(
                "approve_refused", f"GitHub refused the approval: {exc.message}"
            )
        facts.applied = True
        fresh = facts.pull = self.settle(
            self.read(number), lambda p: _settled(p) and p.mergeable_state != "blocked"
        )
        if fresh.head_sha != sha:
            return waiting("head_moved", f"the head moved from {sha[:12]} after the approval")
        return self.act(facts, sha, roll, approved=True)

    def merge(self, facts: Facts, sha: str, roll: Rollup) -> Verdict:
        method = facts.merge_method = self.policy.merge_method
        number = facts.pull.number
        facts.actions.append("merge")
        if not self.s.apply:
            return Verdict("would_merge", "green", f"would {method} {sha[:12]}; {roll.message}")
        for attempt in (1, 2):
            try:
                commit = self.s.pacer.write(
                    lambda: self.gh.merge(self.name, number, sha, method),
                    lambda: self._landed(facts, sha),
                )
            except Unreachable as exc:
                return self._unconfirmed(facts, sha, roll, exc)
            except GitHubError as exc:  # refused: re-read before deciding anything
                gone = self._gone(facts)
                if gone is not None:
                    return gone
                step = merge_refusal(exc.status, exc.message)
                if isinstance(step, Verdict):
                    return step
                if attempt == 1 and facts.pull.head_sha == sha:  # base branch was modified
                    continue
                return waiting("base_modified", f"the base branch moved ({exc.message})")
            return self._merged(facts, sha, roll, commit)
        return waiting("base_modified", "the base branch kept moving")

    def _gone(self, facts: Facts) -> Verdict | None:
        """After a refused write: re-read; a PR merged or closed meanwhile is not ours."""
        fresh = facts.pull = self.read(facts.pull.number)
        if fresh.state == "open":
            return None
        return skipped("not_open", f"{'merged' if fresh.merged else 'closed'} meanwhile")

    def _merged(self, facts: Facts, sha: str, roll: Rollup, commit: str | None) -> Verdict:
        pull = facts.pull
        if commit is None:  # a re-read after a rate limit decided
            if not pull.merged:
                if pull.head_sha != sha:
                    return waiting("head_moved", f"the head moved from {sha[:12]}; not merged")
                return skip_reason(pull, self.policy, self.name) or failed(
                    "merge_unconfirmed", "the merge did not land"
                )
            commit = pull.merge_commit_sha
        facts.merge_commit_sha = commit
        facts.applied = True
        self.merged[pull.number] = pull
        message = f"merged {sha[:12]} ({facts.merge_method}); {roll.message}"
        return Verdict("merged", "green", message)

    def _unconfirmed(self, facts: Facts, sha: str, roll: Rollup, exc: GitHubError) -> Verdict:
        """The merge call got no usable answer: re-read, never re-send."""
        fresh = facts.pull = self.read(facts.pull.number)
        if fresh.merged:
            return self._merged(facts, sha, roll, fresh.merge_commit_sha)
        return failed(
            "merge_unconfirmed",
            f"{exc.message}; a re-read shows it is not merged, and the merge was not "
            "re-sent (a later run will look again)",
        )

    def update(self, facts: Facts, sha: str) -> Verdict:
        pull = facts.pull
        facts.actions.append("update_branch")
        if not self.s.apply:
            return waiting("behind", f"behind {pull.base_ref}: would update the branch, then wait")
        try:
            self.s.pacer.write(
                lambda: self.gh.update_branch(self.name, pull.number, sha),
                lambda: self._landed(facts, sha),
            )
        except GitHubError as exc:
            fresh = facts.pull = self.read(pull.number)
            if fresh.head_sha == sha:
                return failed("update_failed", f"could not update the branch: {exc.message}")
        facts.applied = True
        return waiting(
            "branch_updated", f"updated from {pull.base_ref}; CI runs again on the new head"
        )
