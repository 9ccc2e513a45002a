"""Fails with nothing any catalog entry knows."""

import sys

print("step 1 ok", flush=True)
print("the frobnicator is out of phase; giving up", file=sys.stderr, flush=True)
sys.exit(3)
