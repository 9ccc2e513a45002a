"""The decisive check when the event streams of a text and its stripped copy differ.

`safe_load_all` of both must be strictly equal (or, when `safe_load` cannot build the
data, the composed node trees); the answer says where the first difference is. Only the
pure parser makes this check (the reference), and only when the cheap one — equal events
(`scan.Walker.run` with a reference) — failed.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import Node

from labctl.yamlstrip import model
from labctl.yamlstrip.engine import Engine, summary
from labctl.yamlstrip.verify import first_difference, first_node_difference


def _roots(engine: Engine, source: str | bytes) -> list[Node]:
    return [root for root in yaml.compose_all(source, Loader=engine.loader) if root is not None]


def _construct(roots: list[Node]) -> tuple[list[Any] | None, str | None]:
    """Build like safe_load_all; (None, why) when safe_load cannot (unknown tag, ...)."""
    loader = yaml.SafeLoader("")
    try:
        return [loader.construct_document(root) for root in roots], None
    except Exception as exc:  # ConstructorError, and ValueError from e.g. `!!int x`
        return None, summary(exc)
    finally:
        loader.dispose()


def invalid_after_strip(exc: Exception) -> tuple[str, str, int | None]:
    """The refusal of a stripped text the parser rejects: (reason, message, line)."""
    mark = getattr(exc, "problem_mark", None)
    return (
        model.INVALID_AFTER_STRIP,
        f"removing the comments would make the YAML invalid ({summary(exc)}); nothing was changed",
        None if mark is None else mark.line + 1,
    )


def compare_data(
    engine: Engine, before: str | bytes, after: str | bytes
) -> tuple[str, str, int | None] | str:
    """`model.WITH_SAFE_LOAD`/`WITH_NODES` when the data is strictly equal, else
    (`data_changed`, where it changed, the line of its document)."""
    roots_before = _roots(engine, before)
    try:
        roots_after = _roots(engine, after)
    except yaml.YAMLError as exc:  # the events differed early; the rest does not even parse
        return invalid_after_strip(exc)
    lines = [root.start_mark.line + 1 for root in roots_before]
    if len(roots_after) != len(roots_before):
        return (
            model.DATA_CHANGED,
            f"removing the comments would turn {len(roots_before)} documents"
            f" into {len(roots_after)}; nothing was changed",
            None,
        )
    data_before, _ = _construct(roots_before)
    data_after, why_after = _construct(roots_after) if data_before is not None else (None, None)
    for number, line in enumerate(lines, start=1):
        if data_before is None:
            diff = first_node_difference(roots_before[number - 1], roots_after[number - 1])
        elif data_after is None:
            diff = f"it no longer loads with safe_load: {why_after}"
        else:
            diff = first_difference(data_before[number - 1], data_after[number - 1])
        if diff is not None:
            where = f"document {number}, " if len(lines) > 1 else ""
            return (
                model.DATA_CHANGED,
                f"removing the comments would change the data ({where}{diff}); nothing was changed",
                line,
            )
    return model.WITH_SAFE_LOAD if data_before is not None else model.WITH_NODES
