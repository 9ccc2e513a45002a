"""One recognised progress line (`ProgressLine`) and the number spellings every recogniser
reads: SI suffixes (`1.18k`), nan/inf, tqdm-style `key=value` postfixes."""

from __future__ import annotations

import re
from dataclasses import dataclass

SI = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
NUM = rb"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)"
_POSTFIX_PAIR = re.compile(rb"(?P<k>[\w./@-]{1,200})=(?P<v>" + NUM + rb")(?=,|\s|$)")
MAX_METRICS = 64


@dataclass(slots=True)
class ProgressLine:
    """One recognised line. `slot` groups hits so the scanner keeps the newest per slot."""

    # tqdm | levanter | levanter_eval | verl | hf_dict | hf_eval | hf_done | regex | checkpoint
    # | done
    slot: str
    value: float | None = None
    total: float | None = None
    counter: str = "step"
    phase: str | None = None  # train | eval | startup | checkpoint | finished
    bar: str | None = None  # identity of a tqdm bar: "<desc with digits as #>|<total>"
    role: str | None = None  # for bars: train | eval | noise
    nested: bool = False  # bar drawn below another bar (tqdm moves the cursor up: ESC[A)
    lightning: bool = False
    metrics: dict[str, float] | None = None
    finished: bool = False
    seconds_per_it: float | None = None  # a tqdm bar's rate (`9.1s/it`, `2.0it/s`)


def si_number(num: bytes | str, suffix: bytes | str = "") -> float:
    """`1.18`, `k` -> 1180 (tqdm's format_sizeof, divisor 1000); integral results become int."""
    s = suffix.decode() if isinstance(suffix, bytes) else suffix
    value = round(float(num) * SI.get(s, 1), 6)
    return int(value) if value.is_integer() else value


def to_float(raw: bytes) -> float:
    """A number as the recognisers match it (`NUM`: nan and inf spellings too)."""
    return float(raw)


def postfix(post: bytes | None) -> dict[str, float]:
    """A bar's `loss=2.31, lr=1e-05` postfix as metrics (Lightning's `v_num` left out)."""
    if not post:
        return {}
    out = {m["k"].decode(): to_float(m["v"]) for m in _POSTFIX_PAIR.finditer(post)}
    out.pop("v_num", None)
    return out
