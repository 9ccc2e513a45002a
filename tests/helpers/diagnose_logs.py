"""Pieces of job logs the diagnose tests build their logs from."""

from __future__ import annotations

import random
from typing import Any

# forward progress: 60 training steps
STEPS = "".join(f"step {i} | loss {2 - i / 100:.4f} | lr 2e-05\n" for i in range(60))
# the head of a traceback through a training script (its exception line follows)
TB = 'Traceback (most recent call last):\n  File "/work/run/train.py", line 88, in <module>\n'
TB += "    trainer.fit(model)\n"
# a shorter one, from a script's main()
TB_MAIN = 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    main()\n'


def verdict(log: str) -> tuple[str, bool, str | None]:
    """(category, failed, catalog id) of a log's diagnosis."""
    from labctl.diagnose import diagnose_text

    d = diagnose_text(log)
    return d["category"], d["failed"], d["catalog_id"]


def why(d: dict[str, Any]) -> dict[str, str]:
    """Each also-matched entry's `why`, by catalog id."""
    return {a["catalog_id"]: a["why"] for a in d["also_matched"]}


def reasons(d: dict[str, Any], entry: str) -> list[str]:
    """The `reason` of each candidate of one catalog entry (`--why`)."""
    return [c["reason"] for c in d["candidates"] if c["catalog_id"] == entry]


def wrapped(text: str, width: int) -> str:
    """`text` as a terminal `width` columns wide shows it: long lines cut into rows."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


def chatter(seed: int, words: list[str]) -> str:
    """50 lines of `words` at random lengths: output that is neither progress nor failure."""
    rng = random.Random(seed)
    return "".join(" ".join(rng.choices(words, k=rng.randint(2, 28))) + "\n" for _ in range(50))
