"""No kernel image for this GPU, unless the GPUs are hidden (then it runs on the CPU)."""

import os
import sys

if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
    print("no GPU visible: running on the CPU", flush=True)
    sys.exit(0)
print("RuntimeError: CUDA error: no kernel image is available for execution on the device")
sys.exit(1)
