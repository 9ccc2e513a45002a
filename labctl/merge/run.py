"""merge-green over repos: the allowlist gate, stack order, and a clean stop.

A repo is visited only when its name is in the allowlist exactly as written, and GitHub's
canonical `full_name` for it is that same name (a rename or a case variant is refused with
zero writes, and its PRs are not even listed). Within a repo, parents come before their
stacked children; a child whose parent merged in this run is retargeted, never merged.

A repo GitHub does not answer for gets an `error` record and the next repo is visited. A
rate limit that outlasts the run's wait budget, or a refused token, ends the run: every
PR not finished is still reported (`failed`), and every repo not visited gets an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from labctl.backends.github import AuthFailed, GitHub, GitHubError, Pull, RepoInfo, Unreachable
from labctl.merge.decide import failed, skip_reason, skipped
from labctl.merge.flow import RepoRun, Session
from labctl.merge.pacing import Pacer, RateLimitStop
from labctl.merge.policy import Settings, Target
from labctl.merge.record import Facts, missing_pull, pr_record, repo_record
from labctl.merge.stack import retarget, stack_order, stacked
from labctl.records import error_record

Record = dict[str, Any]


def _reason(exc: Exception) -> str:
    if isinstance(exc, RateLimitStop):
        return "rate_limited"
    return "auth" if isinstance(exc, AuthFailed) else "unreachable"


def run(
    gh: GitHub,
    settings: Settings,
    targets: list[Target],
    *,
    apply: bool,
    sleep: Callable[[float], None],
) -> Iterator[Record]:
    session = Session(gh, Pacer(sleep, settings.max_wait_s), sleep, settings, apply)
    for i, target in enumerate(targets):
        try:
            yield from visit(session, target)
        except Unreachable as exc:
            yield error_record("unreachable", exc.message, repo=target.repo)
        except (RateLimitStop, AuthFailed) as exc:
            reason = _reason(exc)
            yield error_record(reason, f"{exc.message}; the run stopped", repo=target.repo)
            for rest in targets[i + 1 :]:
                yield error_record(reason, f"{rest.repo}: not visited", repo=rest.repo)
            return
        except GitHubError as exc:
            if exc.status == 404:
                message = f"{target.repo}: no such repo, or the token cannot see it"
                yield error_record("not_found", message, repo=target.repo)
            else:
                message = f"{target.repo}: GitHub answered {exc.status}: {exc.message}"
                yield error_record("github_error", message, repo=target.repo)


def visit(session: Session, target: Target) -> Iterator[Record]:
    dry_run = not session.apply
    if target.repo not in session.settings.allowlist:
        yield repo_record(
            target.repo,
            "not_allowlisted",
            "not in merge_green.allowlist: nothing was read or written",
            canonical=None,
            dry_run=dry_run,
        )
        return
    info = session.pacer.read(session.gh.repo, target.repo)
    if info.full_name != target.repo:
        yield repo_record(
            target.repo,
            "renamed",
            f"GitHub calls it {info.full_name}; the allowlist must name it exactly so",
            canonical=info.full_name,
            dry_run=dry_run,
        )
        return
    if info.archived:
        yield repo_record(
            target.repo, "archived", "archived", canonical=info.full_name, dry_run=dry_run
        )
        return
    pulls = session.pacer.read(session.gh.open_pulls, info.full_name)
    yield from walk(RepoRun(session, info), info, pulls, target.numbers)


def walk(
    rr: RepoRun, info: RepoInfo, pulls: list[Pull], numbers: tuple[int, ...]
) -> Iterator[Record]:
    order, parents = stack_order(pulls)
    if numbers:
        found = {p.number for p in pulls}
        for number in numbers:
            if number not in found:
                verdict = skipped("not_open", f"#{number} is not an open PR of {info.full_name}")
                yield rr.record(Facts(missing_pull(number)), verdict)
        order = [p for p in order if p.number in numbers]
    for i, pull in enumerate(order):
        try:
            yield one(rr, info, pull, parents)
        except (RateLimitStop, Unreachable, AuthFailed) as exc:
            reason = _reason(exc)
            for rest in order[i:]:
                why = (
                    "not finished"
                    if rest is pull
                    else f"not read: the run stopped at #{pull.number}"
                )
                verdict = failed(reason, f"{why}: {exc.message}")
                yield pr_record(info.full_name, Facts(rest), verdict, dry_run=not rr.s.apply)
            raise
        except GitHubError as exc:
            verdict = failed("github_error", f"GitHub answered {exc.status}: {exc.message}")
            yield rr.record(Facts(pull), verdict)


def one(rr: RepoRun, info: RepoInfo, pull: Pull, parents: dict[int, Pull]) -> Record:
    skip = skip_reason(pull, rr.policy, info.full_name)
    if skip is not None:
        return rr.record(Facts(pull), skip)
    parent = parents.get(pull.number)
    if parent is not None:
        if parent.number in rr.merged:
            return retarget(rr, pull, parent.base_ref, parent, f"#{parent.number} merged")
        return stacked(rr, pull, parent)
    if pull.base_ref != info.default_branch:
        owner = info.full_name.split("/", 1)[0]
        former = rr.s.pacer.read(rr.gh.merged_pull_with_head, info.full_name, owner, pull.base_ref)
        if former is not None:
            why = f"its base {pull.base_ref} was the head of #{former.number}, merged already"
            return retarget(rr, pull, former.base_ref, former, why)
    return rr.evaluate(pull)
