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
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

SI = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_NUM = rb"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)"
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
_TQDM = re.compile(
    rb"(?:(?P<pct>\d{1,3})%\|[^|]*\|\s*)?(?P<n>\d+(?:\.\d+)?)(?P<ns>[kMGTP]?)"
    rb"(?:/(?P<t>\d+(?:\.\d+)?)(?P<ts>[kMGTP]?)|(?P<unit>[A-Za-z]+))"
    rb"\s*\[(?P<el>[\d:]+)(?:<[\d:?]+)?(?:,\s*(?P<rate>[^,\]]*))?(?:,\s*(?P<post>[^\]]*))?\]"
)
_LEVANTER = re.compile(
    rb"Progress on:(?P<desc>.*?) ?(?P<n>-|\d+(?:\.\d+)?)(?P<ns>[kMGTP]?)[A-Za-z]*/"
    rb"(?P<t>-|None|\d+(?:\.\d+)?)(?P<ts>[kMGTP]?)[A-Za-z]* rate:.*?(?:postfix:(?P<post>.*))?$"
)
_VERL = re.compile(rb"(?:^|[\s)\]])step:(?P<step>\d+) - (?P<rest>.*)$")
# a number, a numpy/torch repr of one, or a number in quotes (SkyRL's console logger
# formats every float as a string: {'policy/grad_norm': '0.1234'})
_DICT_PAIR = re.compile(
    rb"'(?P<k>[^'\\]{1,200})':\s*(?:'(?P<q>" + _NUM + rb")'"
    rb"|(?:np\.float\d*\(|tensor\(|np\.int\d*\()?(?P<v>" + _NUM + rb"))"
)
_POSTFIX_PAIR = re.compile(rb"(?P<k>[\w./@-]{1,200})=(?P<v>" + _NUM + rb")(?=,|\s|$)")
_EPOCH_DESC = re.compile(r"^Epoch (\d+)(?:/\d+)?$")
_CHECKPOINT = re.compile(
    rb"(?i)sav(?:ing|ed) (?:model )?checkpoint|checkpoint saved|saving model to"
    rb"|local_global_step_folder|saving checkpoint"
)
_LIGHTNING_DONE = b"`Trainer.fit` stopped"
DICT_MAX = 16384
MAX_METRICS = 64

# A bar whose description has a word starting so is not training progress (data loading and
# preparation, checkpoint I/O, rollout generation) or is an evaluation.
_NOISE = re.compile(
    r"\b(?:map|filter|load|download|generat|tokeniz|fetch|processed prompts|adding requests"
    r"|captur|sav|upload|resolv|shard|extract|preproc|compil|comput|writ|read|render|sampl"
    r"|creat|sanity)",
    re.IGNORECASE,
)
_EVAL = re.compile(r"\b(?:eval|valid|test|predict|inference)", re.IGNORECASE)


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


def _num(raw: bytes) -> float:
    return float(raw)  # float() accepts nan/inf spellings


def _postfix(post: bytes | None) -> dict[str, float]:
    if not post:
        return {}
    out = {m["k"].decode(): _num(m["v"]) for m in _POSTFIX_PAIR.finditer(post)}
    out.pop("v_num", None)
    return out


_RATE = re.compile(rb"^\s*(?P<n>\d+(?:\.\d+)?)(?P<si>[kMG]?)(?P<u>it/s|s/it)\s*$")


def _seconds_per_it(raw: bytes | None) -> float | None:
    """tqdm's rate cell as seconds per iteration (`9.10s/it`, `1.5it/s`, `2.1kit/s`)."""
    m = _RATE.match(raw) if raw else None
    if m is None:
        return None
    value = float(m["n"]) * SI[m["si"].decode()]
    if m["u"] == b"s/it":
        return value
    return 1.0 / value if value > 0 else None


def _role(desc: str) -> str:
    if desc.lower().startswith("sanity"):
        return "noise"  # Lightning's sanity check runs validation batches before training
    if _EVAL.search(desc):
        return "eval"
    if _NOISE.search(desc):
        return "noise"
    return "train"


def _last_frame(line: bytes) -> tuple[re.Match[bytes] | None, int]:
    """The newest frame of a line and where its description starts. Captured logs often
    hold many frames on one line (the `\\r` between them was dropped): the last is newest."""
    m = _TQDM.search(line)
    start = 0
    if m is None or line.count(b"%|", m.end()) == 0:
        return m, start
    for later in _TQDM.finditer(line, m.end()):
        start, m = m.end(), later
    return m, start


def parse_tqdm(line: bytes) -> ProgressLine | None:
    """A tqdm frame (HF Trainer, Lightning, verl's "Training Progress", any other bar)."""
    nested = False
    if b"\x1b" in line:
        nested = b"\x1b[A" in line
        line = _ANSI.sub(b"", line)
    m, start = _last_frame(line)
    if m is None or (m["t"] is None and m["pct"] is not None):
        return None
    desc = line[start : m.start()].decode("utf-8", "replace").strip().rstrip(":").strip()
    n = si_number(m["n"], m["ns"])
    total = si_number(m["t"], m["ts"]) if m["t"] is not None else None
    post = _postfix(m["post"])
    role = _role(desc) if desc else "train"
    if nested and role == "train":
        role = "eval"  # HF Trainer's prediction bar sits below the training bar
    epoch = _EPOCH_DESC.match(desc)
    hit = ProgressLine("tqdm", value=n, total=total, role=role, nested=nested, metrics=post or None)
    hit.seconds_per_it = _seconds_per_it(m["rate"])
    hit.bar = re.sub(r"\d+", "#", desc) + "|" + ("" if epoch else str(total)) + "^" * nested
    if epoch is not None:
        hit.lightning = True
        if "global_step" in post or "step" in post:
            hit.value = int(post.get("global_step", post.get("step", 0)))
        elif total:
            hit.counter = "epoch_step"
            hit.value = int(epoch.group(1)) * int(total) + int(n)
        else:
            hit.counter = "epoch_step"
    elif total is not None and role == "train" and n >= total > 0:
        hit.finished = True
    hit.phase = {"train": "train", "eval": "eval"}.get(role, "startup")
    return hit


def parse_levanter(line: bytes) -> ProgressLine | None:
    m = _LEVANTER.search(line)
    if m is None or (m["n"] == b"-" and m["t"] in (b"-", b"None")):
        return None
    desc = m["desc"].decode("utf-8", "replace").strip()
    n = 0 if m["n"] == b"-" else si_number(m["n"], m["ns"])
    total = None if m["t"] in (b"-", b"None") else si_number(m["t"], m["ts"])
    is_eval = _role(desc) == "eval"
    hit = ProgressLine("levanter_eval" if is_eval else "levanter", value=n, total=total)
    hit.phase = "eval" if is_eval else "train"
    hit.metrics = _postfix(m["post"]) or None
    hit.finished = not is_eval and total is not None and n >= total > 0
    return hit


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
            metrics[key.decode("utf-8", "replace")] = _num(val)
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
        metrics = {p["k"].decode("utf-8", "replace"): _num(p["v"] or p["q"]) for p in pairs}
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
