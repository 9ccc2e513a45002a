"""Run rl-health's core on the evaluation corpus (real logs and generated traces).

A generated trace is judged as poll would hand it over: a running `job` record whose
stdout is the trace and whose log was last written `age_s` ago. A real log is judged as a
file argument (whether its process is alive is unknown).
"""

from __future__ import annotations

import gzip
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from helpers import rl_corpus
from helpers.rl_traces import Trace
from labctl.records import rfc3339
from labctl.rlhealth.config import Config
from labctl.rlhealth.jobs import assess_job
from labctl.rlhealth.run import Options, assess_path

NOW = 1_900_000_000.0


def options(cfg: Config | None = None) -> Options:
    return Options(cfg=cfg or Config(), now=NOW, wandb=False)


def judge_trace(trace: Trace, tmp: Path, cfg: Config | None = None) -> dict[str, Any]:
    path = tmp / f"{trace.name}.log"
    path.write_text(trace.text())
    os.utime(path, (NOW - trace.age_s, NOW - trace.age_s))
    job = {
        "kind": "job", "cluster": None, "job_id": trace.name, "name": f"rl-{trace.name}",
        "verdict": "running-progressing" if trace.alive else "unknown", "state": "RUNNING",
        "stdout": str(path), "observed_at": rfc3339(NOW), "log_age_s": trace.age_s,
    }  # fmt: skip
    out, errors = assess_job(job, options(cfg), "test")
    assert out is not None and not errors, errors
    return out


def judge_real(case: dict[str, Any], tmp: Path, cfg: Config | None = None) -> dict[str, Any]:
    src: Path = case["local"]
    if src.suffix == ".gz":
        path = tmp / src.stem
        path.write_bytes(gzip.decompress(src.read_bytes()))
    else:
        path = src
    return assess_path(str(path), options(cfg))


def score(rows: list[tuple[str, set[str], dict[str, Any]]]) -> dict[str, Any]:
    """rows: (expected, families a KILL should name, record) -> accuracy figures."""
    confusion: Counter[tuple[str, str]] = Counter()
    named = 0
    for expected, families, rec in rows:
        got = rec["recommendation"]
        confusion[(expected, got)] += 1
        if expected == got == "KILL" and families & set(rec["families"]):
            named += 1
    total = sum(confusion.values())
    right = sum(n for (e, g), n in confusion.items() if e == g)
    kills = sum(n for (e, g), n in confusion.items() if e == g == "KILL")
    return {
        "total": total,
        "correct": right,
        "accuracy": right / total if total else 0.0,
        "wrong_kill_on_healthy": confusion[("NO-KILL", "KILL")] + confusion[("WATCH", "KILL")],
        "kill_named": f"{named}/{kills}",
        "confusion": {f"{e}->{g}": n for (e, g), n in sorted(confusion.items())},
    }


def evaluate(
    split: str, tmp: Path, cfg: Config | None = None, corpora: Path = rl_corpus.CORPORA
) -> dict[str, Any]:
    """Score one half: generated traces and the real cases present (`missing`: the others)."""
    started = time.monotonic()
    gen = [
        (t.expected, t.families, judge_trace(t, tmp, cfg))
        for t, s in rl_corpus.generated_traces()
        if s == split
    ]
    cases = [c for c in rl_corpus.real_cases(corpora) if c["split"] == split]
    judged = [(c, judge_real(c, tmp, cfg)) for c in cases if c["present"]]
    real = [(c["expected"], set(c.get("families", [])), rec) for c, rec in judged]
    return {
        "generated": score(gen),
        "real": score(real),
        "rows": gen + real,
        "real_cases": judged,
        "missing": [c["file"] for c in cases if not c["present"]],
        "seconds": round(time.monotonic() - started, 2),
    }
