"""Folding one chunk's recognised lines into the scan state: which tqdm bar is the training
bar, which format gives the counter, the latest metrics, the phase and the finished flag."""

from __future__ import annotations

from labctl.progress.line import MAX_METRICS, ProgressLine
from labctl.progress.logstate import ScanState
from labctl.progress.metrics import canonical

# When several formats show up in one log, the counter comes from the first one present.
PRIORITY = ("regex", "verl", "tqdm", "levanter", "hf_dict")
COUNTER_SLOTS = frozenset(PRIORITY)


def bar_rank(hit: ProgressLine) -> list[float]:
    return [0.0 if hit.nested else 1.0, 1.0 if hit.lightning else 0.0, float(hit.total or 0)]


def resolve_bar(
    st: ScanState, bars: dict[str, tuple[ProgressLine, int]]
) -> tuple[ProgressLine, int] | None:
    """The training bar: the known one, unless a better-ranked candidate shows up."""
    candidates = [hp for hp in bars.values() if hp[0].role == "train"]
    if not candidates and st.bar is not None:
        return bars.get(st.bar)  # keep following the bar in use (an eval job's eval bar)
    if not candidates:
        # a standalone evaluation job: its (top-level) eval bar IS its progress
        candidates = [hp for hp in bars.values() if hp[0].role == "eval" and not hp[0].nested]
    if not candidates:
        return None
    best = max(candidates, key=lambda hp: bar_rank(hp[0]))
    if st.bar is not None and best[0].bar != st.bar and bar_rank(best[0]) <= st.bar_rank:
        return bars.get(st.bar)  # the bar in use still ranks at least as high
    st.bar, st.bar_rank = best[0].bar, bar_rank(best[0])
    return best


def update_counter(st: ScanState, newest: dict[str, tuple[ProgressLine, int]]) -> bool:
    present = [s for s in PRIORITY if s in newest and newest[s][0].value is not None]
    if not present:
        return False
    best = present[0]
    if st.slot in PRIORITY and PRIORITY.index(st.slot) < PRIORITY.index(best):
        return False  # the format in use outranks everything in this chunk and is absent
    hit = newest[best][0]
    st.slot, st.counter, st.value = best, hit.counter, hit.value
    st.total = hit.total if hit.total is not None else (st.total if best == "tqdm" else None)
    return True


def update_metrics(st: ScanState, newest: dict[str, tuple[ProgressLine, int]]) -> None:
    for hit, _ in sorted(newest.values(), key=lambda hp: hp[1]):
        if hit.metrics:
            st.metrics.update(canonical(hit.metrics))
            st.metrics_raw.update(hit.metrics)
    if len(st.metrics_raw) > MAX_METRICS:
        st.metrics_raw = dict(list(st.metrics_raw.items())[-MAX_METRICS:])


def update_phase(
    st: ScanState,
    first: tuple[ProgressLine, int] | None,
    train_bar: tuple[ProgressLine, int] | None,
    newest: dict[str, tuple[ProgressLine, int]],
    seen: bool,
) -> None:
    if first is not None:
        hit = first[0]
        phase = hit.phase
        if hit.bar is not None and train_bar and hit.bar == train_bar[0].bar:
            phase = "train"  # the counter's own bar is the main work (an eval job's eval bar)
        elif hit.bar is not None and hit.role == "train" and train_bar:
            phase = "eval"  # a smaller bar beside the training bar
        st.phase = phase
    done = [h for h, _ in newest.values() if h.finished]
    if train_bar is not None and train_bar[0].finished:
        done.append(train_bar[0])
    if done and not st.finished:
        st.finished, st.finished_value = True, st.value
    elif st.finished and seen and st.finished_value is not None and st.value != st.finished_value:
        st.finished, st.finished_value = False, None  # trained on (or restarted) after the end
    if st.finished and st.phase == "train":
        st.phase = "finished"
