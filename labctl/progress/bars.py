"""Progress bars: tqdm frames (HF Trainer, PyTorch Lightning, verl's "Training Progress",
any other bar) and Levanter's tqdm-loggable `Progress on:` lines. A bar's description
says what it counts: training, an evaluation, or noise (data loading, checkpoint I/O,
rollout generation …)."""

from __future__ import annotations

import re

from labctl.progress.line import SI, ProgressLine, postfix, si_number

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
_EPOCH_DESC = re.compile(r"^Epoch (\d+)(?:/\d+)?$")

# A bar whose description has a word starting so is not training progress (data loading and
# preparation, checkpoint I/O, rollout generation) or is an evaluation.
_NOISE = re.compile(
    r"\b(?:map|filter|load|download|generat|tokeniz|fetch|processed prompts|adding requests"
    r"|captur|sav|upload|resolv|shard|extract|preproc|compil|comput|writ|read|render|sampl"
    r"|creat|sanity)",
    re.IGNORECASE,
)
_EVAL = re.compile(r"\b(?:eval|valid|test|predict|inference)", re.IGNORECASE)
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
    post = postfix(m["post"])
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
    hit.metrics = postfix(m["post"]) or None
    hit.finished = not is_eval and total is not None and n >= total > 0
    return hit
