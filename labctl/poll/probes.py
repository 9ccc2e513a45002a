"""The shell probes that read running jobs' progress sources on the cluster (see
`labctl.poll.running` for what each section holds), and collecting their answers."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.poll.running import ProgressSettings

TOTAL_READ_BUDGET = 32 << 20  # bytes of log read per cluster per poll, over all jobs
MIN_READ = 64 << 10

DEFS = r"""
_rr() {
  local s st
  s=$(stat -L -c %s -- "$2" 2>/dev/null) || { _m "$1" meta; echo "-1 0"; return 0; }
  if [ "$3" -lt 0 ] || [ "$s" -lt "$3" ]; then st=$(( s > $4 ? s - $4 : 0 ))
  elif [ $(( s - $3 )) -gt "$5" ]; then st=$(( s - $5 ))
  else st=$3; fi
  _m "$1" meta; echo "$s $st"
  _m "$1" out
  [ "$s" -gt "$st" ] && tail -c +$(( st + 1 )) -- "$2" 2>/dev/null | head -c $(( s - st ))
  return 0
}
_wbf() {
  local sm st
  sm=$(stat -L -c '%s %Y' -- "$2" 2>/dev/null) || return 0
  st=${sm%% *}; st=$(( st > $4 ? (st - $4) / 32768 * 32768 : 0 ))
  _m "$1" path; printf %s "$2"
  _m "$1" meta; echo "$sm $st"
  [ "$3" -gt 0 ] && { _m "$1" head; head -c "$3" -- "$2" 2>/dev/null; }
  _m "$1" tail; tail -c +$(( st + 1 )) -- "$2" 2>/dev/null
  return 0
}
_wb() {
  local k=0 m f
  if [ -n "$4" ]; then _wbf "$1.0" "$4" 0 "$6"; return 0; fi
  for f in "$2"/wandb/*run-*/run-*.wandb "$2"/*/wandb/*run-*/run-*.wandb; do
    [ -f "$f" ] || continue
    m=$(stat -L -c %Y -- "$f" 2>/dev/null) || continue
    [ "$m" -ge "$3" ] && printf '%s\t%s\n' "$m" "$f"
  done | sort -rn | head -n 3 | while IFS=$'\t' read -r m f; do
    _wbf "$1.$k" "$f" "$5" "$6"; k=$(( k + 1 ))
  done
  return 0
}
"""


@dataclass
class Probe:
    """What to look at for one running job, and where its answers come back."""

    index: int
    logs: dict[str, str] = field(default_factory=dict)  # "o"/"e" -> path


def _offset(prev: Mapping[str, Any] | None, which: str, path: str) -> int:
    scan = ((prev or {}).get("logs") or {}).get(which) or {}
    if scan.get("path") != path or scan.get("state") is None:
        return -1
    return int(scan["state"].get("offset", -1))


def probes_for(
    jobs: Sequence[dict[str, Any]],
    stored: Mapping[Any, Any],
    settings: ProgressSettings,
    *,
    results: Sequence[str] = (),
    key: Any = None,
) -> list[str]:
    """Shell probes for these running jobs (marks each with `progress_probe`)."""
    from labctl.progress.results import find_command

    running = list(jobs)
    per_job = max(MIN_READ, min(settings.max_read, TOTAL_READ_BUDGET // max(1, len(running))))
    first = min(settings.first_tail, per_job)
    code: list[str] = []
    for i, job in enumerate(running):
        prev_row = stored.get(key(job)) if key is not None else None
        prev = prev_row.progress if prev_row is not None else None
        probe = Probe(i)
        job["progress_probe"] = probe
        out, err = job.get("stdout"), job.get("stderr")
        for which, path in (("o", out), ("e", err if err != out else None)):
            if path:
                probe.logs[which] = path
                off = _offset(prev, which, path)
                code.append(f"_rr p{i}.{which} {shlex.quote(path)} {off} {first} {per_job}")
        wd = job.get("work_dir")
        if wd and results:
            code.append(f"_m p{i}.r out; {find_command(wd, results, settings.results_depth)}")
        if wd and settings.wandb_files:
            known = (prev or {}).get("wandb_path") or ""
            since = int(job.get("start_epoch") or 0) - 120
            code.append(
                f"_wb p{i}.w {shlex.quote(wd)} {since} {shlex.quote(known)} "
                f"{settings.wandb_head} {settings.wandb_tail}"
            )
    return code


def collect(jobs: Sequence[dict[str, Any]], sections: Mapping[str, Any]) -> None:
    """Attach each probed job's raw answers (`progress_raw`) from the script's sections."""
    for job in jobs:
        probe: Probe | None = job.pop("progress_probe", None)
        if probe is None:
            continue
        raw: dict[str, Any] = {"logs": {}, "results": None, "wandb": []}
        for which, path in probe.logs.items():
            sec = sections.get(f"p{probe.index}.{which}")
            meta = sec.parts.get("meta", b"-1 0").split() if sec is not None else [b"-1", b"0"]
            size, start = int(meta[0]), int(meta[1])
            raw["logs"][which] = {"path": path, "size": size, "start": start,
                                  "data": sec.out if sec is not None else b""}  # fmt: skip
        if f"p{probe.index}.r" in sections:
            raw["results"] = sections[f"p{probe.index}.r"].out
        k = 0
        while (sec := sections.get(f"p{probe.index}.w.{k}")) is not None:
            raw["wandb"].append(sec.parts)
            k += 1
        job["progress_raw"] = raw
