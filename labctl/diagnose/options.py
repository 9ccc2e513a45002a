"""What a diagnose run is asked to do (built once by the command, handed to the core)."""

from __future__ import annotations

from dataclasses import dataclass

from labctl.diagnose.catalog import Catalog
from labctl.redact import Redactor


@dataclass(frozen=True)
class DiagnoseOptions:
    catalog: Catalog  # the shipped catalog with the user's catalogs merged on top
    redactor: Redactor  # every evidence line passes through it
    window: int = 4 << 20  # bytes read from a log's end first (widened when inconclusive)
    full: bool = False  # scan whole logs (streamed) instead of the end first
