"""The transport that reaches a configured cluster, by name (shared by poll and diagnose)."""

from __future__ import annotations

from typing import Any

from labctl.backends.transport import Transport


def transport_for(config: Any, cluster: str | None) -> Transport | None:
    """The cluster's Transport, or None when the name is not configured (logs are local)."""
    if not cluster:
        return None
    for table in config.table_list("clusters"):
        if table.get("name") == cluster:
            env = {}
            if table.get("path_prepend"):
                env["PATH"] = ":".join([*table["path_prepend"], "/usr/local/bin:/usr/bin:/bin"])
            return Transport(
                host=str(table.get("host") or "local"),
                ssh_options=tuple(table.get("ssh_options") or ()),
                env=env,
            )
    return None
