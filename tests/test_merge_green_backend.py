"""merge-green against GitHub's rough edges: Enterprise paths, 429, 5xx, pagination, an
unreachable repo in a batch, a refused token, and the token never in any output."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.github import TOKEN, FakeGitHub
from helpers.merge_support import merge_green

TRAINER, EVALS = "lab/trainer", "lab/evals"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def test_enterprise_base_path(tmp_path: Path) -> None:
    with FakeGitHub(prefix="/api/v3") as gh:
        repo = gh.repo(TRAINER)
        pr = repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
        out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    assert gh.url.endswith("/api/v3")
    assert out.pr(1)["decision"] == "merged"
    rest = [r.path for r in gh.log if r.method != "POST" or "/reviews" in r.path]
    assert rest and all(p.startswith("/api/v3/repos/lab/trainer") for p in rest)
    graphql = [r.path for r in gh.log if r.method == "POST" and "/reviews" not in r.path]
    assert graphql == ["/api/graphql"]
    assert [r.body["sha"] for r in gh.calls("PUT", "/merge$")] == [pr.sha]


def test_429_with_retry_after_is_waited_out(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.fail("GET", r"/check-runs$", 429, "Too Many Requests", headers={"Retry-After": "2"})
    gh.fail("PUT", r"/merge$", 429, "Too Many Requests", headers={"Retry-After": "3"})
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged"
    assert out.sleeps == [2.0, 3.0]  # labctl's own waits: urllib3 did not retry a 429
    assert len(gh.calls("GET", "/check-runs$")) == 2 and len(gh.calls("PUT")) == 2


def test_a_502_on_a_read_is_retried_by_the_client(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.fail("GET", r"/pulls/1$", 502, "Bad Gateway")
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["decision"] == "merged" and out.sleeps == []
    assert len(gh.calls("GET", "/pulls/1$")) == 2


def test_150_check_runs_on_two_pages(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.pr(1)
    repo.checks(pr.sha, *[(f"shard-{i}", "completed", "success") for i in range(150)])
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert rec["decision"] == "merged" and rec["checks"]["check_runs"] == 150
    pages = gh.calls("GET", "/check-runs$")
    assert [(r.query.get("per_page"), r.query.get("page")) for r in pages] == [
        ("100", None),
        ("100", "2"),
    ]


def test_many_statuses_are_read_on_every_page(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    pr = repo.green(repo.pr(1))
    contexts = [(f"ci/{i}", "success") for i in range(130)]
    contexts[120] = ("ci/120", "failure")
    repo.status(pr.sha, *contexts)
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["message"] == "check failed: ci/120"
    assert len(gh.calls("GET", "/status$")) == 2 and gh.writes() == []


def test_two_repos_one_unreachable(gh: FakeGitHub, tmp_path: Path) -> None:
    trainer, evals = gh.repo(TRAINER), gh.repo(EVALS)
    evals.green(evals.pr(3))
    trainer.green(trainer.pr(1))
    gh.down.add(EVALS)
    out = merge_green(gh, tmp_path, allowlist=[EVALS, TRAINER], apply=True)
    [err] = out.kinds("error")
    assert err["reason"] == "unreachable" and err["repo"] == EVALS and "503" in err["message"]
    assert out.pr(1, TRAINER)["decision"] == "merged"
    assert out.code == 3
    assert len(gh.calls("GET", "/repos/lab/evals$")) == 3  # the client's two GET retries


def test_a_repo_that_goes_away_mid_run_reports_its_unfinished_prs(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    trainer, evals = gh.repo(TRAINER), gh.repo(EVALS)
    trainer.green(trainer.pr(1))
    trainer.green(trainer.pr(2))
    evals.green(evals.pr(3))
    gh.fail("GET", r"lab/trainer/commits/.*/check-runs$", 503, "down", times=99)
    out = merge_green(gh, tmp_path, allowlist=[TRAINER, EVALS], apply=True)
    for n in (1, 2):
        assert (out.pr(n)["decision"], out.pr(n)["reason"]) == ("failed", "unreachable")
    assert out.kinds("error")[0]["repo"] == TRAINER
    assert out.pr(3)["decision"] == "merged" and out.code == 3


def test_nothing_listening_is_unreachable(tmp_path: Path) -> None:
    gh = FakeGitHub()
    gh.server.server_close()  # the port is closed: connection refused
    out = merge_green(gh, tmp_path, apply=True)
    [err] = out.records
    assert err["reason"] == "unreachable" and err["repo"] == TRAINER and out.code == 3


def test_a_refused_token_stops_the_run(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.repo(TRAINER)
    gh.repo(EVALS)
    out = merge_green(gh, tmp_path, allowlist=[TRAINER, EVALS], apply=True, token="ghp_wrong1")
    assert [(e["reason"], e["repo"]) for e in out.records] == [("auth", TRAINER), ("auth", EVALS)]
    assert "Bad credentials" in out.records[0]["message"] and out.code == 3


def test_the_token_never_appears_in_any_output(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    for n in (1, 2, 3):
        repo.green(repo.pr(n, title=f"leak {TOKEN}" if n == 1 else f"PR {n}"))
    gh.fail("PUT", r"/pulls/1/merge$", 405, f"Pull Request is not mergeable (token {TOKEN})")
    gh.fail("PUT", r"/pulls/2/merge$", 422, f"Invalid request for {TOKEN}")
    gh.fail("GET", r"/pulls/3$", 401, "Bad credentials")
    out = merge_green(gh, tmp_path, apply=True)
    assert {r.get("reason") for r in out.records} >= {"not_mergeable", "merge_rejected", "auth"}
    text = out.stdout + out.stderr
    assert TOKEN not in text and TOKEN[4:20] not in text
    assert "[REDACTED:" in text  # the planted copies were there, and were masked


def test_a_concurrent_apply_run_is_refused_before_any_request(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    from labctl.fsops import state_lock

    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    state = tmp_path / ".local" / "state" / "labctl"
    with state_lock(state, "merge-green"):
        out = merge_green(gh, tmp_path, apply=True, extra="lock_wait_s = 0.2\n")
        dry = merge_green(gh, tmp_path)  # a dry run writes nothing: it needs no lock
    [err] = out.records
    assert err["reason"] == "locked" and out.code == 3
    assert dry.pr(1)["decision"] == "would_merge" and gh.writes() == []


def test_a_pr_merged_meanwhile_by_someone_else(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.fail("PUT", r"/merge$", 405, "Pull Request is not mergeable", then_apply=True)
    out = merge_green(gh, tmp_path, apply=True)
    rec = out.pr(1)
    assert (rec["decision"], rec["reason"]) == ("skipped", "not_open")
    assert "merged meanwhile" in rec["message"] and len(gh.calls("PUT")) == 1


def test_an_approval_without_an_answer_is_checked_not_resent(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    gh.fail("POST", r"/reviews$", 502, "Bad Gateway", then_apply=True)
    out = merge_green(gh, tmp_path, apply=True, extra="approve = true\n")
    assert out.pr(1)["decision"] == "merged" and len(gh.calls("POST", "/reviews$")) == 1


def test_a_secondary_limit_that_names_no_wait_waits_a_minute(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1))
    gh.fail("GET", r"/pulls$", 403, "You have exceeded a secondary rate limit.")
    out = merge_green(gh, tmp_path, apply=True)
    assert out.sleeps == [60.0] and out.pr(1)["decision"] == "merged"


def test_a_rate_limited_graphql_answer_is_waited_out(gh: FakeGitHub, tmp_path: Path) -> None:
    import time

    repo = gh.repo(TRAINER)
    repo.green(repo.pr(1, mergeable_state="blocked", review_decision="REVIEW_REQUIRED"))
    limited = {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]}
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 5)}
    gh.fail("POST", "graphql$", 200, body=limited, headers=headers)
    out = merge_green(gh, tmp_path, apply=True)
    assert out.pr(1)["reason"] == "review_required" and len(out.sleeps) == 1
    assert 3 <= out.sleeps[0] <= 7 and len(gh.calls("POST", "graphql$")) == 2
