"""The metric history of one job: training points in the order they were logged.

A point is one logged step: its step number (None when the format has none), where it came
from (a byte offset in the log, or a W&B history row), an optional wall-clock timestamp
(W&B `_timestamp`), and its canonical metrics with the raw key each came from. Points are
kept in log order; a step that goes back (a resumed run logging steps again) drops the
superseded points, so a restart never looks like a collapse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from labctl.rlhealth.keys import canonicalise


@dataclass(slots=True)
class Point:
    seq: int  # position in log order (offset for logs, row order for W&B)
    step: int | None
    metrics: dict[str, float]
    keys: dict[str, str]  # canonical -> raw key
    offset: int | None = None  # byte offset of the line in the log
    time: float | None = None  # wall clock (W&B `_timestamp`)
    epoch: float | None = None
    inferred: bool = False  # the step was taken from the progress bar, not the line


@dataclass
class Series:
    """One canonical metric over the history: values with the points they came from."""

    name: str
    values: list[float]
    points: list[Point]

    def __len__(self) -> int:
        return len(self.values)

    def key(self) -> str:
        return self.points[-1].keys.get(self.name, self.name) if self.points else self.name


@dataclass
class History:
    source: str  # "log", "wandb_file" or "wandb_api"
    points: list[Point] = field(default_factory=list)
    restarts: int = 0  # times the step went back (a resumed run)
    dropped: int = 0  # points superseded by a restart
    read: dict[str, Any] = field(default_factory=dict)  # what was read: bytes, regions
    boundaries: list[int] = field(default_factory=list)  # seqs where a training run finished

    def add(
        self,
        seq: int,
        step: int | None,
        raw: dict[str, float],
        *,
        offset: int | None = None,
        time: float | None = None,
        epoch: float | None = None,
        inferred: bool = False,
    ) -> Point | None:
        canon = canonicalise(raw)
        if not canon:
            return None
        point = Point(
            seq, step, {c: v for c, (v, _) in canon.items()}, {c: k for c, (_, k) in canon.items()},
            offset, time, epoch, inferred,
        )  # fmt: skip
        self.points.append(point)
        return point

    def add_boundary(self, seq: int) -> None:
        """A training run finished here (HF `train_runtime`): points before it belong to an
        earlier phase (an SFT stage before the RL one) when more points follow."""
        self.boundaries.append(seq)

    def finish(self) -> History:
        """Sort into log order, drop an earlier finished phase and points a restart
        superseded."""
        self.points.sort(key=lambda p: p.seq)
        later = [b for b in self.boundaries if any(p.seq > b for p in self.points)]
        if later:
            cut = max(later)
            self.dropped += sum(1 for p in self.points if p.seq < cut)
            self.points = [p for p in self.points if p.seq > cut]
        self._distrust_inferred_steps()
        kept: list[Point] = []
        for p in self.points:
            if (
                p.step is not None
                and kept
                and kept[-1].step is not None
                and p.step <= kept[-1].step
            ):
                if p.step == kept[-1].step:  # the same step logged twice: the later wins
                    kept.pop()
                    self.dropped += 1
                else:
                    cut = len(kept)
                    while cut and kept[cut - 1].step is not None and kept[cut - 1].step >= p.step:  # type: ignore[operator]
                        cut -= 1
                    self.dropped += len(kept) - cut
                    self.restarts += 1
                    del kept[cut:]
            kept.append(p)
        self.points = kept
        return self

    def _distrust_inferred_steps(self) -> None:
        """Steps taken from the progress bar are only kept when they rise strictly: stdout
        (metric dicts) is block-buffered when piped and stderr (the bar) is not, so in
        many logs a dict lands hundreds of bar frames after it was written."""
        steps = [p.step for p in self.points if p.inferred]
        if any(b is None or a is None or b <= a for a, b in pairwise(steps)):
            for p in self.points:
                if p.inferred:
                    p.step = None

    def series(self, name: str, *, finite: bool = True) -> Series:
        pts = [p for p in self.points if name in p.metrics]
        if finite:
            pts = [p for p in pts if math.isfinite(p.metrics[name])]
        return Series(name, [p.metrics[name] for p in pts], pts)

    def present(self) -> set[str]:
        out: set[str] = set()
        for p in self.points:
            out.update(p.metrics)
        return out

    @property
    def steps(self) -> int:
        """Training points seen (the step count when the log numbers its steps)."""
        return len(self.points)

    def step_range(self) -> tuple[int | None, int | None]:
        steps = [p.step for p in self.points if p.step is not None]
        return (steps[0], steps[-1]) if steps else (None, None)

    def last_step(self) -> int | None:
        return self.step_range()[1]

    def total_steps_estimate(self) -> int:
        """Steps the run has logged, counting the ones a sampled read skipped."""
        first, last = self.step_range()
        if first is None or last is None:
            return self.steps
        return max(self.steps, last - first + 1)


def merge(histories: list[History]) -> History:
    """The richest history: the one with most points (log and W&B are not interleaved;
    they describe the same run, so the better-sampled one is used)."""
    usable = [h for h in histories if h.points]
    if not usable:
        return histories[0] if histories else History("log")
    return max(usable, key=lambda h: (len(h.points), len(h.present())))
