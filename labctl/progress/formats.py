"""Recognisers for progress lines in training logs: one small function per format.

Every recogniser takes one log line as bytes (already split on `\\r` and `\\n`) and returns a
`ProgressLine` or None. They are pure and cheap: a substring pre-check guards each regex, so the
scanner can offer them every line. Formats:

- tqdm bars (HF Trainer and anything else): `  12%|█▏        | 60/500 [00:30<03:40,  2.0it/s]`
- PyTorch Lightning: `Epoch 3:  45%|████▌     | 450/1000 [00:45<00:55, 10.0it/s, v_num=1]`
- HF Trainer metric dicts: `{'loss': 0.69, 'grad_norm': 1.2, 'learning_rate': 5e-06, 'epoch': 0.24}`
- Levanter (tqdm-loggable): `Progress on:train 1.18kit/5.00kit rate:1.2it/s … postfix:loss=2.31`
- verl console: `step:123 - actor/entropy:0.412 - actor/grad_norm:0.153 - actor/ppo_kl:0.002`
- a user regex with a named group `step` (and optional `total`).

The bars (tqdm, Lightning, Levanter) are read in `labctl.progress.bars`; `ProgressLine` and
the number spellings are `labctl.progress.line`.
"""

from __future__ import annotations

import ast
import math
import re

from labctl.progress.bars import parse_levanter, parse_tqdm
from labctl.progress.line import MAX_METRICS, NUM, ProgressLine, si_number, to_float

_VERL = re.compile(rb"(?:^|[\s)\]])step:(?P<step>\d+) - (?P<rest>.*)$")
# a number, a numpy/torch repr of one, or a number in quotes (SkyRL's console logger
# formats every float as a string: {'policy/grad_norm': '0.1234'})
_DICT_PAIR = re.compile(
    rb"'(?P<k>[^'\\]{1,200})':\s*(?:'(?P<q>" + NUM + rb")'"
    rb"|(?:np\.float\d*\(|tensor\(|np\.int\d*\()?(?P<v>" + NUM + rb"))"
)
_CHECKPOINT = re.compile(
    rb"(?i)sav(?:ing|ed) (?:model )?checkpoint|checkpoint saved|saving model to"
    rb"|local_global_step_folder|saving checkpoint"
)
_LIGHTNING_DONE = b"`Trainer.fit` stopped"
DICT_MAX = 16384


def parse_verl(line: bytes) -> ProgressLine | None:
    m = _VERL.search(line)
    if m is None:
        return None
    metrics: dict[str, float] = {}
    for part in m["rest"].split(b" - "):
        key, sep, val = part.strip().rpartition(b":")
        if not sep or not key:
            continue
        try:
            metrics[key.decode("utf-8", "replace")] = to_float(val)
        except ValueError:
            continue
        if len(metrics) >= 4 * MAX_METRICS:
            break
    if not metrics:
        return None
    return ProgressLine("verl", value=int(m["step"]), phase="train", metrics=metrics)


def _literal_dict(text: str) -> dict[str, float] | None:
    try:
        obj = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(obj, dict) or not obj:
        return None
    out: dict[str, float] = {}
    for k, v in obj.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int | float):
            return None  # a config dump or anything else that is not a metrics line
        out[k] = v
    return out


def parse_hf_dict(line: bytes) -> ProgressLine | None:
    """HF Trainer's `str(logs)`: a Python dict repr of str -> number (no step; epoch rises)."""
    start, end = line.find(b"{'"), line.rfind(b"}")
    if start < 0 or end < start or end - start > DICT_MAX or line[end + 1 :].strip():
        return None
    body = line[start : end + 1]
    metrics = _literal_dict(body.decode("utf-8", "replace"))
    if metrics is None:  # nan/inf/tensor(...) reprs: fall back to the key/number pairs
        pairs = list(_DICT_PAIR.finditer(body))
        if not pairs or body.count(b"':") != len(pairs):
            return None
        metrics = {p["k"].decode("utf-8", "replace"): to_float(p["v"] or p["q"]) for p in pairs}
    keys = metrics.keys()
    if any(k.startswith(("eval_", "test_", "predict_")) for k in keys):
        hit = ProgressLine("hf_eval", phase="eval", metrics=metrics)
    elif "train_runtime" in keys:
        hit = ProgressLine("hf_done", phase="finished", metrics=metrics, finished=True)
    else:
        hit = ProgressLine("hf_dict", phase="train", metrics=metrics)
    if "epoch" in metrics and math.isfinite(metrics["epoch"]):
        hit.value, hit.counter = metrics["epoch"], "epoch"
    return hit


def parse_custom(line: bytes, pattern: re.Pattern[bytes], counter: str) -> ProgressLine | None:
    m = pattern.search(line)
    if m is None:
        return None
    groups = m.groupdict()
    try:
        value = si_number(*_split_si(groups["step"]))
        total_raw = groups.get("total")
        total = si_number(*_split_si(total_raw)) if total_raw else None
    except (ValueError, TypeError):
        return None
    return ProgressLine("regex", value=value, total=total, counter=counter, phase="train")


def _split_si(raw: bytes) -> tuple[bytes, bytes]:
    raw = raw.strip().replace(b",", b"")
    if raw[-1:] in (b"k", b"M", b"G", b"T", b"P"):
        return raw[:-1], raw[-1:]
    return raw, b""


def quick_key(line: bytes) -> tuple[bytes, ...] | None:
    """A cheap key for lines of which only the newest matters (one tqdm bar, one dict kind).

    The scanner reads lines newest first and skips a line whose key it has already satisfied,
    which keeps a full scan of a 4 MiB chunk of tqdm frames cheap.
    """
    i = line.find(b"%|")
    if i >= 0:
        j = line.find(b"|", i + 2)
        k = line.find(b" [", j)
        if j > 0 and k > 0:
            total = line[j + 1 : k].rpartition(b"/")[2]
            nested = b"n" if b"\x1b[A" in line else b""
            return (b"bar", line[:i].rstrip(b"0123456789 "), total, nested)
        return None
    if b"{'" in line:
        if b"'train_runtime'" in line:
            return (b"dict", b"done")
        return (b"dict", b"eval" if b"'eval_" in line or b"'test_" in line else b"")
    if b"step:" in line and b" - " in line:
        return (b"verl",)
    return None


def parse_progress_line(
    line: bytes, custom: re.Pattern[bytes] | None = None, counter: str = "step"
) -> ProgressLine | None:
    """The first recogniser that accepts `line`, cheapest pre-checks first."""
    if custom is not None:
        hit = parse_custom(line, custom, counter)
        if hit is not None:
            return hit
    if b"%|" in line or b"it [" in line or b"/s]" in line:
        hit = parse_tqdm(line)
        if hit is not None:
            return hit
    if b"Progress on:" in line:
        return parse_levanter(line)
    if b"step:" in line and b" - " in line:
        hit = parse_verl(line)
        if hit is not None:
            return hit
    if b"{'" in line:
        hit = parse_hf_dict(line)
        if hit is not None:
            return hit
    if _LIGHTNING_DONE in line:
        return ProgressLine("done", phase="finished", finished=True)
    if (
        (b"heckpoint" in line or b"aving model" in line or b"step_folder" in line)
        and len(line) < 4096
        and _CHECKPOINT.search(line)
    ):
        return ProgressLine("checkpoint", phase="checkpoint")
    return None
