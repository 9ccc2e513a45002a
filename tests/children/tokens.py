"""Prints secrets the way real jobs do (config dumps, push URLs, a key block, a token cut
across two writes), then fails with nothing a catalog knows (--wait: waits to be killed)."""

from __future__ import annotations

import os
import sys
import time

gh = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
print(f"config: {{'hub_token': 'hf_{'Zy' * 17}', 'wandb_key': '{os.environ['WANDB_API_KEY']}'}}")
print(f"pushing to https://lab:{os.environ['LAB_PUSH_PASSWORD']}@git.example.org/lab/runs.git")
sys.stdout.write(f"env GITHUB_TOKEN={gh[:10]}")
sys.stdout.flush()
time.sleep(0.2)  # the token arrives in two reads
sys.stdout.write(f"{gh[10:]} done\n")
sys.stdout.write(
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
)
sys.stdout.flush()
time.sleep(0.2)  # the key block arrives in two reads
sys.stdout.write("SECRETKEYBODYLINETWO0123456789abcdefghijklmnop\n-----END PRIVATE KEY-----\n")
sys.stdout.flush()
if "--wait" in sys.argv:
    print("tokens printed; waiting", flush=True)
    time.sleep(120)
print("the frobnicator is out of phase", file=sys.stderr)
sys.exit(3)
