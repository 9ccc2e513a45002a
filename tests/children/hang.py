"""Prints a few steps, starts a grandchild that holds stdout open, then hangs.

--ignore-term: the child and the grandchild ignore SIGTERM (only SIGKILL ends them).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from common import arg, steps

ignore = "--ignore-term" in sys.argv
print(f"max steps {arg('steps')}", flush=True)
steps(3)
code = "import time\n"
if ignore:
    code += "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
subprocess.Popen([sys.executable, "-c", code + "time.sleep(3600)"])
if ignore:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(3600)
