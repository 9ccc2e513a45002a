"""The job view people read: one box-drawing table per bucket (RL, SFT, Datagen, Eval,
Other) across all clusters. Red flags are coloured AND marked with a symbol, so they
survive NO_COLOR, a pipe into a chat message, or a log file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.records import parse_rfc3339
from labctl.render.buckets import (
    BUCKETS,
    bucket_of,
    flags,
    number,
    rl_signals,
    rules_from_config,
    thresholds_from_config,
)
from labctl.render.diagnoses import render_why
from labctl.render.rlhealth import label as rl_label
from labctl.render.rlhealth import reason as rl_reason
from labctl.render.tables import cell, new_table
from labctl.verdicts import CUT_SHORT, Verdict

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context

VERDICT_MARKS: dict[str, tuple[str, str]] = {
    Verdict.PROGRESSING: ("▲", "green"),
    Verdict.RUNNING: ("▶", ""),
    Verdict.UNVERIFIED: ("?", "yellow"),
    Verdict.STALLED: ("⚠", "bold red"),
    Verdict.PENDING: ("…", ""),
    Verdict.COMPLETED: ("✓", "green"),
    Verdict.CANCELLED: ("⊘", ""),
    Verdict.PREEMPTED: ("↻", "yellow"),
}
FAILED = ("✗", "bold red")  # failed, timeout, out_of_memory, node_fail, unknown
# verdicts whose cell says why (the cause, or the diagnosis) when nothing else does
_QUIET = frozenset({Verdict.PROGRESSING, Verdict.COMPLETED, Verdict.PENDING, Verdict.RUNNING})


def human_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600:02d}h"


def _age(rec: dict[str, Any], now: float) -> float | None:
    if rec.get("elapsed_s") is not None and rec.get("verdict") != Verdict.PENDING:
        return float(rec["elapsed_s"])
    start = parse_rfc3339(rec.get("start_time")) or parse_rfc3339(rec.get("submit_time"))
    return None if start is None else now - start


def _progress(rec: dict[str, Any], now: float) -> tuple[str, str]:
    p = rec.get("progress") or {}
    value = p.get("value")
    if value is None:
        return "—", "—"
    counter = p.get("counter") or p.get("counter_key") or "step"
    text = f"{counter} {_num(value)}"
    if p.get("total"):
        text += f"/{_num(p['total'])}"
    rate = number(p.get("rate_per_h"))
    if rate:
        text += f" · {rate:,.0f}/h" if rate >= 10 else f" · {rate:.2g}/h"
    changed = parse_rfc3339(p.get("last_change") or p.get("last_advance_at"))
    return text, ("—" if changed is None else human_duration(now - changed) + " ago")


def _num(value: Any) -> str:
    n = number(value)
    if n is None:
        return str(value)
    return str(int(n)) if n.is_integer() else f"{n:.4g}"


def _metric(value: float | None, red: bool, up: bool) -> tuple[str, str]:
    if value is None:
        return "—", ""
    text = f"{value:.3g}"
    return (("↑ " if up else "↓ ") + text, "bold red") if red else (text, "")


def _verdict(rec: dict[str, Any]) -> tuple[str, str]:
    verdict = str(rec.get("verdict") or Verdict.UNKNOWN)
    mark, style = VERDICT_MARKS.get(verdict, FAILED)
    text = f"{mark} {verdict.removeprefix('running-')}"
    restarts = rec.get("restarts")
    if isinstance(restarts, int) and restarts > 0:  # requeued (preempted, node failure …)
        ended = rec.get("previous_verdict")
        text += f" ↻{restarts}" + (f" after {ended}" if ended in CUT_SHORT else "")
    return text, style


def render(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    now = ctx.clock()
    rules = rules_from_config(ctx.config.section("buckets"))
    limits = thresholds_from_config(ctx.config.section("thresholds"))
    groups: dict[str, list[dict[str, Any]]] = {b: [] for b in BUCKETS}
    for rec in records:
        groups[bucket_of(rec, rules)].append(rec)
    for bucket in BUCKETS:
        if groups[bucket]:
            console.print(_table(bucket, groups[bucket], console, now, limits))
    if ctx.detail:  # diagnose --why: each diagnosed job's candidates and their fates
        diagnosed = [
            (f"{r.get('cluster')} {r.get('job_id')}", r["diagnosis"])
            for r in records
            if isinstance(r.get("diagnosis"), dict)
        ]
        render_why(diagnosed, console)


def _table(
    bucket: str, recs: list[dict[str, Any]], console: Console, now: float, limits: dict[str, float]
) -> Any:
    """One bucket's table: a row per job, the RL columns for RL, a why / fix column when a
    row has something to say there."""
    from rich.text import Text

    table = new_table(_title(bucket, recs), console)
    columns = ["cluster", "job", "verdict", "age", "progress", "changed"]
    if bucket == "RL":
        columns += ["entropy", "grad_norm", "IS log-ratio"]
        if any(r.get("rl_health") for r in recs):
            columns.append("rl-health")
    whys = [_why(r) for r in recs]
    if any(whys):
        columns.append("why / fix")
    widest_job = max(len(f"{r.get('job_id')} {r.get('name') or ''}") for r in recs)
    for col in columns:
        minimum = {"job": min(widest_job, 24)}.get(col)
        table.add_column(col, overflow="fold", min_width=minimum)
    for rec, why in zip(recs, whys, strict=True):
        row = _cells(rec, now)
        if bucket == "RL":
            row += _rl_cells(rec, limits, with_health="rl-health" in columns)
        if any(whys):
            row.append((cell(why, 90), ""))
        table.add_row(*(Text(text, style=style) for text, style in row))
    return table


def _title(bucket: str, recs: list[dict[str, Any]]) -> str:
    attention = sum(
        1
        for r in recs
        if _verdict(r)[1] == "bold red"
        or (r.get("rl_health") or {}).get("recommendation") == "KILL"
    )
    return f"{bucket} — {len(recs)} job(s)" + (f", {attention} need a person" if attention else "")


def _cells(rec: dict[str, Any], now: float) -> list[tuple[str, str]]:
    """(text, style) of every bucket's columns: cluster, job, verdict, age, progress, changed."""
    verdict, vstyle = _verdict(rec)
    progress, changed = _progress(rec, now)
    job = f"{rec.get('job_id')} {rec.get('name') or ''}".strip()
    return [
        (cell(rec.get("cluster")), ""),
        (cell(job, 40), ""),
        (verdict, vstyle),
        (human_duration(_age(rec, now)), ""),
        (cell(progress, 40), ""),
        (changed, "bold red" if rec.get("verdict") == Verdict.STALLED else ""),
    ]


def _rl_cells(
    rec: dict[str, Any], limits: dict[str, float], *, with_health: bool
) -> list[tuple[str, str]]:
    """The RL bucket's columns: entropy, grad_norm, IS log-ratio (red past the thresholds),
    and rl-health's recommendation when the table has that column."""
    sig = rl_signals(rec)
    red = flags(sig, limits)
    out = [
        _metric(sig["entropy"], "entropy" in red, up=False),
        _metric(sig["grad_norm"], "grad_norm" in red, up=True),
        _metric(sig["log_ratio"], "log_ratio" in red, up=True),
    ]
    if with_health:
        out.append(rl_label(rec.get("rl_health")))
    return out


def _why(rec: dict[str, Any]) -> str:
    health = rl_reason(rec.get("rl_health"))
    base = _why_job(rec)
    return "; ".join(x for x in (base, health) if x)


def _why_job(rec: dict[str, Any]) -> str:
    diag = rec.get("diagnosis") or {}
    if rec.get("verdict") == Verdict.CANCELLED and diag.get("category") in (None, "cancelled"):
        return str(rec.get("cause") or "cancelled")  # user_cancel / admin_cancel: no fix
    if diag.get("category") and diag.get("category") != "healthy":
        fix = diag.get("fix") or ""
        return f"{diag['category']}: {fix}".strip().rstrip(":")
    if rec.get("verdict") not in _QUIET:
        return str(rec.get("cause") or rec.get("reason") or "")
    return ""
