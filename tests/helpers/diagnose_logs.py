"""Pieces of job logs the diagnose tests build their logs from."""

from __future__ import annotations

# forward progress: 60 training steps
STEPS = "".join(f"step {i} | loss {2 - i / 100:.4f} | lr 2e-05\n" for i in range(60))
# the head of a traceback through a training script (its exception line follows)
TB = 'Traceback (most recent call last):\n  File "/work/run/train.py", line 88, in <module>\n'
TB += "    trainer.fit(model)\n"
# a shorter one, from a script's main()
TB_MAIN = 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    main()\n'
