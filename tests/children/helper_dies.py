"""Starts a helper process (which keeps running and holds stdout) and dies."""

import subprocess
import sys

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
print("helper started", flush=True)
raise RuntimeError("the data worker crashed")
