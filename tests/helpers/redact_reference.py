"""The redactor as it was before issue 21 (one re.sub pass per shape per string), kept
verbatim as the reference the differential test compares the fast redactor against.

The one redaction step: every record, error message and file labctl writes passes here.

Two kinds of secret are removed:
- the values of secret environment variables (a default list, every variable whose name
  ends in TOKEN/SECRET/PASSWORD/API_KEY, and any the config names) and secrets held in
  the config file;
- well-known token shapes, wherever they come from (a log line, a config comment):
  GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, Hugging Face `hf_`, W&B 40-hex
  keys near "wandb", JWTs (Supabase keys), `sb_secret_`, `Bearer …`, `Basic …`,
  `password=…`, `NAME_TOKEN=…`, URL credentials, OpenAI/Anthropic `sk-`, AWS `AKIA`, Slack
  `xox?-`, and PEM private-key blocks (also a truncated one).

A redacted value reads `[REDACTED:<label>]` where the label names the variable or the shape,
never the value.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_SECRET_ENV = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "WANDB_API_KEY",
    "SUPABASE_KEY",
    "SUPABASE_SERVICE_ROLE_KEY",
    "DATABASE_URL",
    "PGPASSWORD",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)
_SECRET_NAME = re.compile(r"(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY)$")
MIN_NAMED_LEN = 4  # a variable the user or the default list calls secret
MIN_GUESSED_LEN = 8  # a variable we only guess is secret from its name

# (label, pattern, group to replace: 0 = whole match)
_SHAPES: list[tuple[str, str, int]] = [
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*\Z)",
        0,
    ),
    ("github_token", r"\bgh[pousr]_[A-Za-z0-9]{20,255}", 0),
    ("github_token", r"\bgithub_pat_[A-Za-z0-9_]{20,255}", 0),
    ("hf_token", r"\bhf_[A-Za-z0-9]{20,}", 0),
    ("wandb_key", r"(?i)wandb[^\n]{0,60}?(?<![0-9a-f])((?:local-)?[0-9a-f]{40})(?![0-9a-f])", 1),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0),
    ("supabase_key", r"\bsb_secret_[A-Za-z0-9_-]{10,}", 0),
    ("api_key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", 0),
    ("aws_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
    ("bearer", r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{6,})", 1),
    ("basic_auth", r"(?i:\bbasic)\s+([A-Za-z0-9+/=](?=[a-z]*[A-Z0-9+/=])[A-Za-z0-9+/=]{7,})", 1),
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@", 1),
    (
        "password",
        r"(?i)\b(?:password|passwd|pwd|secret|client_secret)\b[\"']?\s*[=:]\s*[\"']?([^\s\"',;&}]{3,})",
        1,
    ),
    (
        "env_secret",
        r"\b[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)\s*[=:]\s*[\"']?([^\s\"',;&}]{4,})",
        1,
    ),
]
_COMPILED = [(label, re.compile(pat, re.DOTALL), group) for label, pat, group in _SHAPES]


def mask(label: str) -> str:
    return f"[REDACTED:{label}]"


class Redactor:
    """Removes known secret values and token shapes from text and from records."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        # longest first, so a secret containing another is removed whole
        items = sorted(
            ((v, k) for k, v in (secrets or {}).items() if v), key=lambda kv: -len(kv[0])
        )
        self._labels = {value: label for value, label in items}
        self._literal = re.compile("|".join(re.escape(v) for v, _ in items)) if items else None

    @classmethod
    def from_environ(
        cls,
        environ: Mapping[str, str] | None = None,
        extra_names: Iterable[str] = (),
        extra_secrets: Mapping[str, str] | None = None,
    ) -> Redactor:
        env = os.environ if environ is None else environ
        named = set(DEFAULT_SECRET_ENV) | set(extra_names)
        secrets: dict[str, str] = {}
        for name, value in env.items():
            guessed = _SECRET_NAME.search(name) and len(value) >= MIN_GUESSED_LEN
            if (name in named and len(value) >= MIN_NAMED_LEN) or guessed:
                secrets[name] = value
        for name, value in (extra_secrets or {}).items():
            if value and len(value) >= MIN_NAMED_LEN:
                secrets[name] = value
        return cls(secrets)

    def text(self, s: str) -> str:
        if self._literal is not None:
            s = self._literal.sub(lambda m: mask(self._labels[m.group(0)]), s)
        for label, rx, group in _COMPILED:
            if group == 0:
                s = rx.sub(mask(label), s)
            else:
                s = rx.sub(functools.partial(_replace_group, group=group, label=label), s)
        return s

    def value(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys included)."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in obj.items()
            }
        if isinstance(obj, list | tuple):
            return [self.value(v) for v in obj]
        return obj


def _replace_group(m: re.Match[str], group: int, label: str) -> str:
    if m.group(group).startswith("[REDACTED"):
        return m.group(0)
    start, end = m.span(group)
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + mask(label) + whole[end - base :]
