"""Validate records against the schema of the command that emitted them.

Every test that runs a command can call `assert_valid(command, records)`; the contract
test runs each registered command on sample inputs and checks every record it emits.
"""

from __future__ import annotations

import importlib
from typing import Any

from jsonschema import Draft202012Validator

from labctl.registry import BY_NAME


def schemas_for(command: str) -> dict[str, dict[str, Any]]:
    return importlib.import_module(BY_NAME[command].module).SCHEMAS  # type: ignore[no-any-return]


def assert_valid(command: str, records: list[dict[str, Any]]) -> None:
    schemas = schemas_for(command)
    passthrough = BY_NAME[command].reads_records
    for rec in records:
        kind = rec.get("kind")
        schema = schemas.get(str(kind))
        if schema is None:
            assert passthrough, f"{command} emitted kind {kind!r}, which its SCHEMAS lacks"
            continue
        errors = sorted(Draft202012Validator(schema).iter_errors(rec), key=str)
        assert not errors, f"{command} {kind} record invalid: {errors[0].message}\n{rec}"
