"""Benchmark `labctl mcp`: what a tool call costs an agent against shelling out to labctl.

    .venv/bin/python benchmarks/mcp_server.py [--calls 20]

1. Server start-up: spawn `labctl mcp` (stdio) with the real SDK client, initialise, list
   the tools; wall seconds to the first tool list.
2. Per call (median and p90 over N calls, each after a warm-up): a refused call (no
   command: the protocol's own round trip), `schema table` (tiny
   output) and `diagnose <200 KB log>` through the server, against the reference an agent
   uses today: `labctl <command> ...` as a subprocess from the same process, output read
   and parsed as JSON Lines. The ratio is MCP / direct.
3. What in-process would have saved: the same diagnose run in this process through
   `labctl.cli.main` (no interpreter start-up), for the subprocess-per-call decision.
4. Peak RSS (VmHWM) of the server process after all calls: the server does not grow with
   calls because every command runs in its own child.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FAILED_LOG = ROOT / "tests" / "fixtures" / "contract" / "failed.log"


def make_log(where: Path) -> Path:
    lines = [
        f"{{'loss': {1.0 / (i + 1):.4f}, 'learning_rate': 3e-05, 'step': {i}}}\n"
        for i in range(3000)
    ]
    log = where / "job.log"
    log.write_text("".join(lines) + FAILED_LOG.read_text())
    return log


def server_pid() -> int | None:
    """The `labctl mcp` child of this process (the SDK client spawned it)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == os.getpid() and b"mcp" in cmd:
            return int(entry)
    return None


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def direct(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "labctl", *argv], capture_output=True, env=env, check=False
    ).stdout
    [json.loads(line) for line in out.splitlines() if line.strip()]
    return time.perf_counter() - started


def in_process(argv: list[str]) -> float:
    from labctl.cli import main

    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        main(argv)
    return time.perf_counter() - started


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(len(xs) * 0.9))]
    return f"median {statistics.median(xs) * 1000:7.1f} ms  p90 {p90 * 1000:7.1f} ms"


def argv_of(tool: str, targs: dict[str, Any]) -> list[str]:
    return [tool, "--format=jsonl", *targs.get("commands", []), *targs.get("paths", [])]


def through_server(
    calls: int, env: dict[str, str], cases: dict[str, tuple[str, dict[str, Any]]]
) -> dict[str, Any]:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "labctl", "mcp"], env=env)

    async def main() -> dict[str, Any]:
        started = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            out: dict[str, Any] = {"startup": time.perf_counter() - started}
            for label, (tool, args) in cases.items():
                await client.call_tool(tool, args)  # warm-up
                times, ref = [], []
                for _ in range(calls):  # alternate, so both see the same machine load
                    t0 = time.perf_counter()
                    res = await client.call_tool(tool, args)
                    times.append(time.perf_counter() - t0)
                    assert res.is_error == (tool == "no-such-tool"), res
                    if tool != "no-such-tool":
                        ref.append(direct(argv_of(tool, args), env))
                out[label] = (times, ref)
            pid = server_pid()
            out["rss_kib"] = vm_hwm_kib(pid) if pid else 0
            return out

    return anyio.run(main)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        log = make_log(work)
        config = work / "config.toml"
        config.write_text(f'[mcp]\nroots = ["{work}"]\n')
        env = {**os.environ, "LABCTL_CONFIG": str(config)}
        cases = {
            "refused call": ("no-such-tool", {}),
            "schema table": ("schema", {"commands": ["table"]}),
            "diagnose 200 KB log": ("diagnose", {"paths": [str(log)]}),
        }
        res = through_server(args.calls, env, cases)
        print(f"labctl mcp (stdio) start-up to first tool list: {res['startup']:.2f} s")
        print(f"{'refused call':22s} via MCP: {stats(res['refused call'][0])}   (protocol only)")
        for label in list(cases)[1:]:
            mcp, ref = res[label]
            ratio = statistics.median(mcp) / statistics.median(ref)
            print(f"{label:22s} via MCP: {stats(mcp)}")
            print(f"{label:22s} direct : {stats(ref)}   MCP/direct {ratio:.2f}x")
        inproc = [in_process(["diagnose", "--format=jsonl", str(log)]) for _ in range(args.calls)]
        print(f"diagnose in-process (what a subprocess per call costs): {stats(inproc)}")
        calls = len(cases) * (args.calls + 1)
        print(f"server peak RSS (VmHWM) after {calls} calls: {res['rss_kib'] / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
