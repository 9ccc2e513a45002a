"""merge-green's pure parts: the green rollup (property-tested), stack order, refusals."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from labctl.backends.github_model import Check, Pull
from labctl.merge.checks import FAIL, PASS, SOFT, rollup
from labctl.merge.decide import merge_refusal
from labctl.merge.record import missing_pull
from labctl.merge.stack import stack_order

CONCLUSIONS = [*sorted(PASS | SOFT | FAIL), "mystery"]
RUNNING = ["queued", "in_progress", "waiting", "requested", "pending"]

check_runs = st.builds(
    lambda name, done, conclusion, status: Check(
        name, "check_run", conclusion if done else status, done
    ),
    st.sampled_from([f"job{i}" for i in range(6)]),
    st.booleans(),
    st.sampled_from(CONCLUSIONS),
    st.sampled_from(RUNNING),
)
statuses = st.builds(
    lambda name, state: Check(name, "status", state, state != "pending"),
    st.sampled_from(["ci/a", "ci/b", "ci/c"]),
    st.sampled_from(["success", "pending", "failure", "error"]),
)


@given(
    runs=st.lists(check_runs, max_size=12),
    stats=st.lists(statuses, max_size=5),
    missing=st.integers(0, 2),
    strict=st.booleans(),
)
def test_green_means_every_check_finished_and_passed(
    runs: list[Check], stats: list[Check], missing: int, strict: bool
) -> None:
    roll = rollup(runs, len(runs) + missing, stats, len(stats), strict_skipped=strict)
    every = runs + stats
    passing = PASS if strict else PASS | SOFT
    truly_green = bool(every) and not missing and all(c.done and c.state in passing for c in every)
    assert (roll.state == "green") == truly_green
    if any(c.done and c.state not in PASS | SOFT for c in every) and not missing:
        assert roll.state == "red" and roll.reason == "check_failed"
    if not every and not missing:
        assert (roll.state, roll.reason) == ("pending", "no_ci")
    if missing:
        assert roll.reason == "incomplete_read"
    summary = roll.summary
    assert summary["check_runs"] + summary["statuses"] == len(every)
    assert summary["pending"] == sum(not c.done for c in every)


def _pull(number: int, head: str, base: str, repo: str = "lab/t") -> Pull:
    return replace(
        missing_pull(number),
        head_ref=head,
        head_repo=repo,
        base_ref=base,
        base_repo="lab/t",
        state="open",
    )


def test_stack_order_puts_parents_first_and_ignores_fork_heads() -> None:
    pulls = [
        _pull(1, "c", "b"),  # third level
        _pull(2, "b", "a"),
        _pull(3, "a", "main"),
        _pull(4, "x", "main", repo="someone/t"),  # a fork's branch named like ours
        _pull(5, "y", "x"),
    ]
    order, parents = stack_order(pulls)
    assert [p.number for p in order] == [3, 4, 5, 2, 1]
    assert {n: p.number for n, p in parents.items()} == {1: 2, 2: 3}


def test_a_cycle_of_bases_does_not_hang() -> None:
    order, parents = stack_order([_pull(1, "a", "b"), _pull(2, "b", "a")])
    assert sorted(p.number for p in order) == [1, 2] and set(parents) == {1, 2}


def test_merge_refusals() -> None:
    assert merge_refusal(405, "Base branch was modified. Review and try the merge again.") == (
        "retry"
    )
    cases = {
        (409, "Head branch was modified. Review and try the merge again."): "head_moved",
        (405, 'Required status check "gpu" is expected.'): "required_check_missing",
        (405, "At least 1 approving review is required by reviewers with write access."): (
            "review_required"
        ),
        (405, "Repository rule violations found"): "protection",
        (405, "Pull Request is not mergeable"): "not_mergeable",
        (403, "Resource not accessible by integration"): "forbidden",
    }
    for (status, message), reason in cases.items():
        verdict = merge_refusal(status, message)
        assert not isinstance(verdict, str) and verdict.reason == reason, (message, verdict)
