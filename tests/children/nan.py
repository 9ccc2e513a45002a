"""A training loop whose loss turns NaN unless a gradient-clipping flag is given (with
NAN_ALWAYS set, whatever the flags)."""

from __future__ import annotations

import os
import sys

from common import arg, steps

steps(2)
if arg("clip") is None or os.environ.get("NAN_ALWAYS"):
    for step in range(3, 8):
        print(f"{{'loss': nan, 'grad_norm': nan, 'learning_rate': 2e-05, 'step': {step}}}")
    print("stopping: the loss is not finite", flush=True)
    sys.exit(1)
steps(5, start=3)
print("training finished", flush=True)
