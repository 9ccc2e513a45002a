"""Shared by the test children: find an argument in any spelling, print training steps."""

from __future__ import annotations

import os
import random
import sys

ALIASES = {
    "batch": ("batch_size", "per_device_train_batch_size", "train_batch_size", "mbs"),
    "clip": ("max_grad_norm", "grad_clip", "gradient_clip_val"),
    "steps": ("max_steps",),
}


def _norm(name: str) -> str:
    return name.lstrip("-+").replace("-", "_").lower().rsplit(".", 1)[-1]


def arg(kind: str, argv: list[str] | None = None) -> str | None:
    """The value of an argument in any spelling: --a-b V, --a_b=V, x.a_b=V; '' for a flag."""
    names = ALIASES[kind]
    argv = sys.argv[1:] if argv is None else argv
    for i, tok in enumerate(argv):
        name, eq, value = tok.partition("=")
        if _norm(name) not in names:
            continue
        if eq:
            return value
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            return argv[i + 1]
        return ""
    return None


def steps(n: int, start: int = 1) -> None:
    for step in range(start, start + n):
        loss = 2.5 / step + random.random() / 100
        print(f"{{'loss': {loss:.4f}, 'grad_norm': 0.81, 'learning_rate': 2e-05, 'step': {step}}}")
    sys.stdout.flush()


def pid() -> int:
    return os.getpid()
