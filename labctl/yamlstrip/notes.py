"""Markdown notes for `--move-to`: the removed comments, where they sat, redacted.

A block per file:

    ## `configs/rl/ppo.yaml`

    Comments moved out by `labctl strip-yaml-comments` on 2026-11-30T18:24:39Z.

    - line 3, `.train.lr`: tuned on 8 GPUs, see the 11-02 log
    - line 9, `.env.seed`: [REDACTED:hf_token] only for the gated model

Comments that hold nothing (`#`, `# -----`, `#######`) are not copied; they are still
listed in the `file` record. Call `append_notes` before rewriting the YAML, so a crash in
between loses no knowledge (at worst the notes hold a comment the YAML still has).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from labctl.fsops import atomic_write_bytes
from labctl.redact import redact
from labctl.yamlstrip.model import Comment, StripResult

_DECORATION = re.compile(r"[\s#\-=*~_+.:|/\\<>]*\Z")


def comment_body(text: str) -> str:
    """`#  tuned on 8 GPUs ` -> `tuned on 8 GPUs`; empty for rules and bare `#`."""
    body = text.lstrip("#").strip()
    return "" if _DECORATION.match(body) else body


def code_span(text: str) -> str:
    """`text` as a Markdown code span, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _item(comment: Comment) -> str | None:
    body = comment_body(comment.text)
    if not body:
        return None
    where = f"line {comment.line}"
    if comment.key_path is not None:
        where += f", {code_span(comment.key_path)}"
    return f"- {where}: {body}"


def notes_block(result: StripResult, path: str | None = None, *, when: str | None = None) -> str:
    """The Markdown block for one file, redacted; "" when there is nothing to move."""
    if not result.verified:
        return ""
    items = [item for item in map(_item, result.comments) if item is not None]
    if not items:
        return ""
    lines = [f"## {code_span(result.source if path is None else path)}", ""]
    if when is not None:
        lines += [f"Comments moved out by `labctl strip-yaml-comments` on {when}.", ""]
    lines += items
    text: str = redact("\n".join(lines) + "\n")
    return text


def append_notes(notes_path: str | os.PathLike[str], blocks: Iterable[str]) -> Path | None:
    """Append the blocks to the notes file atomically; None when there was nothing to add.

    The existing bytes are kept exactly; a blank line separates them from the new blocks.
    The new text passes through `redact`. A symlinked notes file is written through.
    """
    new = [block for block in blocks if block]
    if not new:
        return None
    try:
        existing = Path(notes_path).read_bytes()
    except FileNotFoundError:
        existing = b""
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"
    if existing and not existing.endswith(b"\n\n"):
        existing += b"\n"
    text: str = redact("\n".join(block.rstrip("\n") + "\n" for block in new))
    return atomic_write_bytes(notes_path, existing + text.encode("utf-8"))
