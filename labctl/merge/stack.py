"""Stacked pull requests: which PR sits on which, and what happens to a child.

A child is a PR whose base branch is the head branch of another open PR of the same repo.
Parents come first; a child waits while its parent is open. Once the parent merges (in
this run, or earlier and its branch was kept), the child is retargeted to the parent's
base with a PATCH — never merged in the run that merged its parent, and never by deleting
the parent's branch, which would close it. A later run merges it only once its checks
have run again on the new base (GitHub records the PATCH as a `base_ref_changed` event;
flow.py compares it with each check's finish time). A child GitHub already closed (its
base branch went away) is `failed`, with the steps to recover it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from labctl.backends.github import GitHubError, Pull
from labctl.merge.decide import Verdict, failed, waiting
from labctl.merge.flow import RepoRun
from labctl.merge.record import Facts


def stack_order(pulls: list[Pull]) -> tuple[list[Pull], dict[int, Pull]]:
    """Parents first; `parents` maps a stacked child's number to its open parent PR."""
    heads = {p.head_ref: p for p in pulls if p.head_repo and p.head_repo == p.base_repo}
    parents = {
        p.number: heads[p.base_ref]
        for p in pulls
        if p.base_ref in heads and heads[p.base_ref].number != p.number
    }

    def depth(number: int) -> int:
        seen = {number}
        while number in parents and parents[number].number not in seen:
            number = parents[number].number
            seen.add(number)
        return len(seen) - 1

    return sorted(pulls, key=lambda p: (depth(p.number), p.number)), parents


def stacked(rr: RepoRun, listed: Pull, parent: Pull) -> dict[str, Any]:
    """A child whose parent is still open (or merged in this very run) waits."""
    message = f"stacked on #{parent.number} (base {listed.base_ref}); it merges after it"
    if parent.number in rr.would_merge:
        message += f"; once #{parent.number} merges it would be retargeted to {parent.base_ref}"
    return rr.record(Facts(listed, stacked_on=parent.number), waiting("stacked", message))


def retarget(rr: RepoRun, listed: Pull, target: str, parent: Pull, why: str) -> dict[str, Any]:
    facts = Facts(listed, stacked_on=parent.number)
    facts.actions.append("retarget")
    if not rr.s.apply:
        verdict = waiting("retarget", f"{why}: would retarget it to {target}")
    else:
        verdict = _retarget(rr, facts, target, parent, why)
    return rr.record(facts, verdict)


def _retarget(rr: RepoRun, facts: Facts, target: str, parent: Pull, why: str) -> Verdict:
    number, old = facts.pull.number, facts.pull.base_ref
    fresh = facts.pull = rr.read(number)
    if fresh.state == "open" and fresh.base_ref == target:
        facts.actions.clear()
        return waiting("retargeted", f"{why}: GitHub already moved it to {target}")
    if fresh.state == "open":
        try:
            rr.s.pacer.write(
                lambda: rr.gh.retarget(rr.name, number, target),
                lambda: rr.read(number).base_ref == target,
            )
            facts.pull = replace(fresh, base_ref=target)
        except GitHubError as exc:
            fresh = facts.pull = rr.read(number)
            if fresh.state == "open" and fresh.base_ref != target:
                return failed("retarget_failed", f"could not retarget to {target}: {exc}")
    if facts.pull.state != "open":
        return failed(
            "child_closed",
            f"#{number} was closed when its base {old} went away. To recover: recreate "
            f"{old} at {parent.head_sha}, reopen #{number}, then retarget it to {target}",
        )
    facts.applied = True
    return waiting(
        "retargeted",
        f"{why}: now based on {target}; it merges in a later run, after CI on the new base",
    )
