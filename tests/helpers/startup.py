"""What start-up loads: the backend libraries the CLI entry must not import, and the
top-level modules a fresh interpreter holds after running some code."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "github",
    "supabase",
    "postgrest",
    "wandb",
    "huggingface_hub",
    "plumbum",
    "psycopg",
    "ruamel",
    "rich",
    "pydantic",
    "yaml",
    "re2",
    "jsonschema",
    # the MCP SDK and what it brings: only `labctl mcp` serving may import them
    "mcp",
    "mcp_types",
    "anyio",
    "sniffio",
    "starlette",
    "uvicorn",
    "sse_starlette",
    "httpx",
    "httpx2",
    "opentelemetry",
    "jwt",
    "python_multipart",
)


def modules_after(code: str) -> set[str]:
    """The top-level modules loaded after a fresh interpreter runs `code`."""
    out = (
        subprocess.run(
            [
                sys.executable,
                "-c",
                code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .splitlines()[-1]
    )
    return {m.split(".")[0] for m in json.loads(out)}
