"""Write a labctl config file for a test: settings sections and `[[clusters]]` tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def write_config(
    tmp: Path,
    clusters: list[dict[str, Any]],
    poll: dict[str, Any] | None = None,
    extra: dict[str, dict[str, Any]] | None = None,
) -> Path:
    lines = []
    for section, values in ({"poll": poll or {}} | (extra or {})).items():
        if values:
            lines.append(f"[{section}]")
            lines += [f"{k} = {toml_value(v)}" for k, v in values.items()]
    for c in clusters:
        lines.append("[[clusters]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in c.items()]
    path = tmp / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
