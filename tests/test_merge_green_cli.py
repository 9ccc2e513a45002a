"""merge-green through the real CLI (a subprocess): the dry-run default, exit codes, config
refusals, a fresh install that does nothing, and no token in any output."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.github import TOKEN, FakeGitHub
from helpers.cli import ROOT, run_labctl
from helpers.cron import cron_env
from helpers.merge_support import FAST
from helpers.startup import HEAVY, modules_after
from schema_check import assert_valid


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def config(tmp_path: Path, body: str, allowlist: tuple[str, ...] = ("lab/trainer",)) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f"[merge_green]\nallowlist = {json.dumps(list(allowlist))}\n{FAST}{body}")
    path.chmod(0o600)
    return path


def env(gh: FakeGitHub, path: Path, token: str | None = TOKEN) -> dict[str, str]:
    out = {"LABCTL_CONFIG": str(path), "GITHUB_API_URL": gh.url}
    if token:
        out["GITHUB_TOKEN"] = token
    return out


def test_a_fresh_install_does_nothing_and_exits_0(isolated_env: Path) -> None:
    res = run_labctl("merge-green", "--apply", "--quiet")
    assert (res.code, res.stdout, res.stderr) == (0, "", "")
    loud = run_labctl("merge-green", "--apply")
    assert loud.code == 0 and "allowlist is empty" in loud.stderr


def test_dry_run_is_the_default_and_apply_acts(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo("lab/trainer")
    pr = repo.green(repo.pr(1, title=f"wip {TOKEN}"))
    e = env(gh, config(tmp_path, ""))
    for args in ([], ["--dry-run"]):
        res = run_labctl("merge-green", *args, env=e)
        assert res.code == 0, res.stderr
        [rec] = res.records
        assert rec["decision"] == "would_merge" and rec["dry_run"] is True
    assert gh.writes() == []
    res = run_labctl("merge-green", "--apply", "--summary", env=e)
    assert res.code == 0, res.stderr
    assert_valid("merge-green", res.records)
    assert res.records[0]["decision"] == "merged" and res.records[-1]["kind"] == "summary"
    assert [r.body for r in gh.calls("PUT")] == [{"sha": pr.sha, "merge_method": "squash"}]
    assert TOKEN not in res.stdout + res.stderr


def test_blocked_exits_1_and_renders_as_a_table(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo("lab/trainer")
    pr = repo.pr(1, title="Fix the NaN guard")
    repo.checks(pr.sha, ("gpu-tests", "completed", "failure"))
    e = env(gh, config(tmp_path, ""))
    res = run_labctl("merge-green", "--apply", env=e)
    assert res.code == 1 and res.records[0]["decision"] == "blocked"
    table = run_labctl("merge-green", "-f", "table", env=e)
    assert table.code == 1
    assert "┌" in table.stdout and "lab/trainer#1" in table.stdout
    assert "check failed: gpu-tests" in table.stdout


def test_an_archived_repo_is_reported_but_a_mistyped_one_exits_1(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    gh.repo("lab/old-evals", archived=True).green(gh.repos["lab/old-evals"].pr(4))
    repo = gh.repo("lab/trainer")
    repo.green(repo.pr(1))
    e = env(gh, config(tmp_path, "", allowlist=("lab/old-evals", "lab/trainer")))
    cron = run_labctl("merge-green", "--apply", env=e)  # what cron runs: the allowlist
    assert cron.code == 0, cron.stdout + cron.stderr
    archived, merged = cron.records
    assert (archived["kind"], archived["repo"], archived["reason"]) == (
        "repo",
        "lab/old-evals",
        "archived",
    )
    assert merged["decision"] == "merged" and not gh.calls("GET", "/old-evals/pulls")
    typo = run_labctl("merge-green", "lab/trainr", "--apply", env=e)
    assert typo.code == 1 and typo.records[0]["reason"] == "not_allowlisted"
    assert len(gh.writes()) == 1


def test_the_token_from_the_config_file_is_used_and_never_shown(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = gh.repo("lab/trainer")
    repo.green(repo.pr(1))
    gh.fail("PUT", r"/merge$", 422, f"no such head for {TOKEN}")
    path = config(tmp_path, f'[github]\ntoken = "{TOKEN}"\n')
    res = run_labctl("merge-green", "--apply", env=env(gh, path, token=None))
    assert res.code == 1 and res.records[0]["reason"] == "merge_rejected"
    assert TOKEN not in res.stdout + res.stderr and "[REDACTED:" in res.stdout


@pytest.mark.parametrize(
    "body,allowlist,needle",
    [
        ("", ("lab",), "is not owner/name"),
        ('[merge_green.repos."lab/other"]\napprove = true\n', ("lab/trainer",), "not in"),
        (
            '[merge_green.repos."lab/trainer"]\nmerge_method = "octopus"\n',
            ("lab/trainer",),
            "one of",
        ),
        ('[merge_green.repos."lab/trainer"]\nauto = true\n', ("lab/trainer",), "unknown key"),
        ('merge_method = "fast-forward"\n', ("lab/trainer",), "one of"),
        ("blocking_labels = [1]\n", ("lab/trainer",), "list of label names"),
    ],
)
def test_bad_config_exits_2_and_writes_nothing(
    gh: FakeGitHub, tmp_path: Path, body: str, allowlist: tuple[str, ...], needle: str
) -> None:
    res = run_labctl("merge-green", "--apply", env=env(gh, config(tmp_path, body, allowlist)))
    assert res.code == 2, res.stdout
    [err] = res.records
    assert err["reason"] == "config" and needle in err["message"]
    assert gh.log == []


def test_no_token_exits_2(gh: FakeGitHub, tmp_path: Path) -> None:
    res = run_labctl("merge-green", env=env(gh, config(tmp_path, ""), token=None))
    assert res.code == 2 and "GITHUB_TOKEN" in res.records[0]["message"] and gh.log == []


@pytest.mark.parametrize("arg", ["trainer", "lab/trainer#x", "lab/trainer#"])
def test_a_malformed_repo_argument_is_a_usage_error(
    gh: FakeGitHub, tmp_path: Path, arg: str
) -> None:
    res = run_labctl("merge-green", arg, env=env(gh, config(tmp_path, "")))
    assert res.code == 2 and res.records[0]["reason"] == "usage" and gh.log == []


def test_one_pr_by_number(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo("lab/trainer")
    repo.green(repo.pr(1))
    repo.green(repo.pr(2))
    res = run_labctl("merge-green", "lab/trainer#2,9", "--apply", env=env(gh, config(tmp_path, "")))
    assert [(r["number"], r["decision"]) for r in res.records] == [(9, "skipped"), (2, "merged")]
    assert len(gh.calls("PUT")) == 1 and repo.pulls[1].merged is False


def test_help_does_not_import_pygithub() -> None:
    code = (
        "import contextlib, io\nfrom labctl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['merge-green', '--help'])"
    )
    loaded = modules_after(code)
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def sweep(environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """scripts/sweep under cron: its bare environment plus the crontab's variables."""
    return subprocess.run(
        [str(ROOT / "scripts" / "sweep")],
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slurm
def test_the_sweep_merges_green_prs_and_logs_them(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = gh.repo("lab/trainer")
    pr = repo.green(repo.pr(1, title="Add eval harness"))
    home = tmp_path / "home"
    (home / ".config" / "labctl").mkdir(parents=True)
    path = home / ".config" / "labctl" / "config.toml"
    path.write_text(
        f'[merge_green]\nallowlist = ["lab/trainer"]\n{FAST}\n[poll]\nlookback_h = 0.01\n'
        '[[clusters]]\nname = "local"\nhost = "local"\nscheduler = "slurm"\n'
    )
    path.chmod(0o600)
    environ = {**cron_env(home), "GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": gh.url}
    res = sweep(environ)
    assert res.returncode in (0, 1), res.stdout + res.stderr  # others' jobs may have failed
    assert res.stderr == ""
    assert "lab/trainer#1" in res.stdout and "✓ merged" in res.stdout
    assert [r.body for r in gh.calls("PUT")] == [{"sha": pr.sha, "merge_method": "squash"}]
    [entry] = (home / ".local" / "state" / "labctl" / "log").glob("*_sweep*.md")
    text = entry.read_text()
    assert "PRs: 1 merged." in text and '"decision":"merged"' in text and TOKEN not in text
    quiet = sweep({**environ, "SWEEP_MERGE": "0"})
    assert "lab/trainer" not in quiet.stdout and len(gh.calls("PUT")) == 1


def test_a_blocked_pr_is_a_headline_of_the_log_entry(isolated_env: Path) -> None:
    rec = {
        "kind": "pr",
        "repo": "lab/trainer",
        "number": 3,
        "title": "Fix the NaN guard",
        "decision": "blocked",
        "reason": "check_failed",
        "message": "check failed: gpu-tests",
    }
    res = run_labctl("log", "-t", "merge", input=json.dumps(rec) + "\n")
    assert res.code == 1
    text = Path(res.records[-1]["path"]).read_text()
    assert "- lab/trainer#3 Fix the NaN guard: blocked — check failed: gpu-tests" in text
    assert "PRs: 1 blocked." in text


def test_config_show_lists_the_per_repo_overrides(gh: FakeGitHub, tmp_path: Path) -> None:
    body = '[merge_green.repos."lab/trainer"]\nmerge_method = "merge"\n'
    res = run_labctl("config", "show", env=env(gh, config(tmp_path, body)))
    assert res.code == 0
    [rec] = [r for r in res.records if r["key"].startswith("merge_green.repos")]
    assert rec["key"] == 'merge_green.repos."lab/trainer"'
    assert rec["value"] == {"merge_method": "merge"}
    allow = next(r for r in res.records if r["key"] == "merge_green.allowlist")
    assert allow["value"] == ["lab/trainer"] and allow["source"] == "file"
