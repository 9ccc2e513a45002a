"""Pure decisions: what a PR's state, its review and GitHub's refusals mean for merge-green.

Decisions: merged · would_merge · waiting (nothing to do yet; a later run may merge) ·
blocked (a person must act) · skipped (not ours to merge) · failed (labctl could not
finish; the record says what is left).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labctl.backends.github_model import Pull, Review, instant
from labctl.merge.checks import MAX_NAMES, listing
from labctl.merge.policy import Policy

MERGEABLE_STATES = frozenset({"clean", "has_hooks", "unstable"})
SEE_CONFIG = "merge_green.merge_method or a [merge_green.repos] override"


@dataclass(frozen=True)
class Verdict:
    decision: str
    reason: str
    message: str


def skipped(reason: str, message: str) -> Verdict:
    return Verdict("skipped", reason, message)


def waiting(reason: str, message: str) -> Verdict:
    return Verdict("waiting", reason, message)


def blocked(reason: str, message: str) -> Verdict:
    return Verdict("blocked", reason, message)


def failed(reason: str, message: str) -> Verdict:
    return Verdict("failed", reason, message)


def skip_reason(pull: Pull, policy: Policy, repo: str) -> Verdict | None:
    """Drafts, blocking labels, closed PRs and (unless allowed) fork heads are not ours."""
    if pull.state != "open":
        return skipped("not_open", f"#{pull.number} is {'merged' if pull.merged else 'closed'}")
    if pull.draft or pull.mergeable_state == "draft":
        return skipped("draft", "draft PR")
    wanted = {label.lower() for label in policy.blocking_labels}
    hits = sorted(label for label in pull.labels if label.lower() in wanted)
    if hits:
        return skipped("blocking_label", f"labelled {', '.join(hits)}")
    if pull.base_repo is not None and pull.base_repo != repo:
        return skipped("other_base_repo", f"the PR targets {pull.base_repo}, not {repo}")
    if pull.head_repo != repo and not policy.allow_forks:
        where = pull.head_repo or "a deleted fork"
        return skipped("fork_head", f"head branch lives in {where} (allow_forks = false)")
    return None


def by_state(pull: Pull, policy: Policy) -> Verdict | str:
    """A verdict, or the next step: `merge`, `update` (behind) or `review` (blocked)."""
    state = (pull.mergeable_state or "unknown").lower()
    if state == "dirty":
        return blocked("conflict", f"merge conflict with {pull.base_ref}")
    if state == "behind":
        if policy.update_branch:
            return "update"
        return blocked(
            "behind",
            f"behind {pull.base_ref}, which branch protection wants up to date "
            "(update_branch = false)",
        )
    if state == "blocked":
        return "review"
    if pull.mergeable is False:
        return blocked("not_mergeable", f"GitHub says it cannot be merged ({state})")
    if state in MERGEABLE_STATES:
        return "merge"
    if state == "unknown" or pull.mergeable is None:
        return waiting("mergeability_unknown", "GitHub is still computing mergeability")
    return blocked("protection", f"GitHub reports mergeable_state {state!r}")


def by_review(review: Review, pull: Pull, policy: Policy) -> Verdict | str:
    """Blocked with every check green: a verdict, or `approve`."""
    if review.decision == "CHANGES_REQUESTED":
        return blocked("changes_requested", "changes requested by a reviewer")
    if review.decision == "REVIEW_REQUIRED":
        reason, what = (
            ("code_owner_review", "a code-owner review")
            if review.code_owners
            else ("review_required", "an approving review")
        )
        if not policy.approve:
            return blocked(reason, f"{what} is required (approve = false)")
        if review.viewer is None:
            return blocked(reason, f"{what} is required; the token's own user is unknown")
        if (pull.author or "").lower() == review.viewer.lower():
            return blocked(reason, f"{what} is required; labctl never approves its own PR")
        return "approve"
    return blocked(
        "protection",
        "GitHub reports blocked with every check green and no review missing: another "
        "rule applies (merge queue, conversation resolution, signed commits, deployments "
        "or a ruleset)",
    )


def checks_predate(
    base_changed_at: str | None, finished: Sequence[tuple[str, str | None]], base: str
) -> Verdict | None:
    """Green checks that finished before the PR's base last changed (a retargeted stacked
    child) tested the old base. Every check (name, finish time) must have finished after
    the change, on this head: a re-run, or a push. A check that re-runs on any PR edit (a
    title linter) proves nothing about the rest. None: all newer, or the base never changed."""
    changed = instant(base_changed_at)
    if changed is None:
        return None
    stale = sorted({name for name, at in finished if not (when := instant(at)) or when <= changed})
    if not stale:
        return None
    names = listing(stale[:MAX_NAMES], len(stale))
    return waiting(
        "checks_predate_retarget",
        f"its base became {base} at {base_changed_at}, after {names} finished: they tested "
        "the old base. It merges once they have run on the new base (re-run them or push: "
        "by default GitHub Actions does not run on a base change)",
    )


def merge_refusal(status: int | None, message: str) -> Verdict | str:
    """GitHub refused the merge call: a verdict, or `retry` (base branch was modified)."""
    text = message.lower()
    quoted = f"GitHub: {message}"
    if status == 409:
        return waiting("head_moved", f"the head moved after its checks were read ({quoted})")
    if status != 405:
        if status == 403:
            return failed("forbidden", f"the token may not merge here ({quoted})")
        return failed("merge_rejected", f"merge call answered {status} ({quoted})")
    if "base branch was modified" in text:
        return "retry"
    if "merge queue" in text:
        return blocked("merge_queue_required", f"merge queue required ({quoted})")
    if "not allowed" in text:
        return blocked("merge_method_not_allowed", f"{quoted}; set {SEE_CONFIG}")
    if "required status check" in text:
        return waiting("required_check_missing", quoted)
    if "review" in text:
        return blocked("review_required", quoted)
    if "rule violation" in text:
        return blocked("protection", quoted)
    return blocked("not_mergeable", quoted)
