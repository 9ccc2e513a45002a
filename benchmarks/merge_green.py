"""Benchmark `labctl merge-green` against the obvious PyGithub script, on one fake GitHub.

    .venv/bin/python benchmarks/merge_green.py [--repos 4] [--prs 30] [--runs 40] [--repeat 3]

Builds a lab on the fake GitHub of the tests (tests/fakes, 127.0.0.1): REPOS repos of PRS
open PRs each, a realistic mix — green, CI still running, a failure on the last page,
stacked pairs, drafts, blocked for a review — with RUNS check runs per head (every fifth
PR: 150, two pages). Then, in the same run, each tool as a fresh child process (the lab
is rebuilt before every run, since --apply changes it):

- labctl merge-green (dry run) and labctl merge-green --apply (pacing set to 0, as for
  the reference);
- reference: the script a supervisor would write with PyGithub's defaults — for each
  open non-draft PR, read the check runs and the combined status, merge when they pass
  and `mergeable` is true.

It prints the median wall time, the requests the server saw (and the writes), the peak
RSS (VmHWM) of the child, ratios to the reference, and what each merged: the reference
also merges a stacked child into its parent's branch in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes.github import TOKEN, FakeGitHub  # noqa: E402

CHILD = """
import json, os, sys, time
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
t0 = time.perf_counter()
if sys.argv[1] == "labctl":
    import contextlib, io
    from labctl.cli import main
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = main(sys.argv[2:])
    lines = out.getvalue().splitlines()
else:
    rc, lines = reference(sys.argv[2:]), []
print(json.dumps({"wall": time.perf_counter() - t0, "rc": rc, "rss_kb": hwm(),
                  "records": len(lines)}))
"""
REFERENCE = """
def reference(repos):
    from github import Auth, Github, GithubException
    g = Github(auth=Auth.Token(os.environ["GITHUB_TOKEN"]), base_url=os.environ["GITHUB_API_URL"],
               per_page=100, seconds_between_requests=0, seconds_between_writes=0)
    for name in repos:
        repo = g.get_repo(name)
        for pr in repo.get_pulls(state="open"):
            if pr.draft:
                continue
            commit = repo.get_commit(pr.head.sha)
            runs = list(commit.get_check_runs())
            status = commit.get_combined_status()
            ok = runs and status.state != "failure" and all(
                r.status == "completed" and r.conclusion in ("success", "skipped", "neutral")
                for r in runs)
            if ok and pr.mergeable:
                try:
                    pr.merge(sha=pr.head.sha, merge_method="squash")
                except GithubException:
                    pass
    return 0
"""


def build(gh: FakeGitHub, repos: int, prs: int, runs: int) -> list[str]:
    names = []
    for r in range(repos):
        repo = gh.repo(f"lab/repo{r}")
        names.append(repo.full_name)
        for n in range(1, prs + 1):
            kind = n % 10
            width = 150 if n % 5 == 0 else runs
            base = f"feature-{n - 1}" if kind == 4 else "main"  # #n stacked on #n-1
            pr = repo.pr(n, base=base, draft=kind == 9)
            checks = [(f"job{i}", "completed", "success") for i in range(width)]
            if kind == 1:
                checks[-1] = (f"job{width - 1}", "in_progress", None)
            if kind == 2:
                checks[-1] = (f"job{width - 1}", "completed", "failure")
            if kind == 6:
                pr.mergeable_state, pr.review_decision = "blocked", "REVIEW_REQUIRED"
            repo.checks(pr.sha, *checks)
    return names


def one_run(tool: str, args: argparse.Namespace, home: Path) -> dict:
    with FakeGitHub() as gh:
        names = build(gh, args.repos, args.prs, args.runs)
        config = home / "config.toml"
        config.write_text(
            f"[merge_green]\nallowlist = {json.dumps(names)}\n"
            "request_interval_s = 0.0\nwrite_interval_s = 0.0\n"
        )
        config.chmod(0o600)
        env = dict(os.environ, HOME=str(home), LABCTL_CONFIG=str(config))
        env.update(GITHUB_TOKEN=TOKEN, GITHUB_API_URL=gh.url)
        argv = {
            "labctl dry run": ["labctl", "merge-green", "-f", "jsonl"],
            "labctl --apply": ["labctl", "merge-green", "--apply", "-f", "jsonl"],
            "reference script": ["reference", *names],
        }[tool]
        code = REFERENCE + CHILD
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            raise SystemExit(f"{tool} failed: {proc.stderr[-2000:]}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        merged = [(r.full_name, p) for r in gh.repos.values() for p in r.pulls.values() if p.merged]
        out.update(
            requests=len(gh.log),
            writes=len(gh.writes()),
            merged=len(merged),
            merged_into_a_branch=sum(p.base != "main" for _, p in merged),
        )
        return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=4)
    parser.add_argument("--prs", type=int, default=30)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tools = ["reference script", "labctl dry run", "labctl --apply"]
    results: dict[str, list[dict]] = {t: [] for t in tools}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):  # interleaved, so machine noise hits all alike
            for tool in tools:
                results[tool].append(one_run(tool, args, Path(tmp)))
    total = args.repos * args.prs
    print(f"{args.repos} repos x {args.prs} PRs = {total} PRs; {args.runs} check runs per head")
    print(f"(every fifth: 150); median of {args.repeat} runs; {time.strftime('%Y-%m-%d')}")
    ref = results["reference script"]
    ref_wall = statistics.median(r["wall"] for r in ref)
    ref_rss = statistics.median(r["rss_kb"] for r in ref)
    head = f"{'tool':18} {'wall s':>7} {'x ref':>6} {'requests':>9} {'writes':>7}"
    print(head + f" {'RSS MB':>7} {'x ref':>6} {'merged':>7} {'into a branch':>14}")
    for tool in tools:
        rs = results[tool]
        wall = statistics.median(r["wall"] for r in rs)
        rss = statistics.median(r["rss_kb"] for r in rs)
        last = rs[-1]
        print(
            f"{tool:18} {wall:7.2f} {wall / ref_wall:6.2f} {last['requests']:9d} "
            f"{last['writes']:7d} {rss / 1024:7.1f} {rss / ref_rss:6.2f} {last['merged']:7d} "
            f"{last['merged_into_a_branch']:14d}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
