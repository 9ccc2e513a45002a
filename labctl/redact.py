"""The one redaction step: every record, error message and file labctl writes passes here.

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
import itertools
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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

# a Basic-auth token, not the word after 'Basic': past its first character, not all a-z
_BASIC = r"(?i:\bbasic)\s+([A-Za-z0-9+/=](?=[a-z]*[A-Z0-9+/=])[A-Za-z0-9+/=]{7,})"
# (label, pattern, group to replace: 0 = whole match, triggers). A pattern matches only a string
# holding a trigger (case-folded for `(?i)`): without one its pass is skipped; passes run in order.
_SHAPES: list[tuple[str, str, int, tuple[str, ...]]] = [
    (
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*\Z)",
        0,
        ("-----BEGIN ",),
    ),
    (
        "github_token",
        r"\bgh[pousr]_[A-Za-z0-9]{20,255}",
        0,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    ("github_token", r"\bgithub_pat_[A-Za-z0-9_]{20,255}", 0, ("github_pat_",)),
    ("hf_token", r"\bhf_[A-Za-z0-9]{20,}", 0, ("hf_",)),
    (
        "wandb_key",
        r"(?i)wandb[^\n]{0,60}?(?<![0-9a-f])((?:local-)?[0-9a-f]{40})(?![0-9a-f])",
        1,
        ("wandb",),
    ),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0, ("eyJ",)),
    ("supabase_key", r"\bsb_secret_[A-Za-z0-9_-]{10,}", 0, ("sb_secret_",)),
    ("api_key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", 0, ("sk-",)),
    ("aws_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0, ("AKIA", "ASIA")),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0, ("xox",)),
    ("bearer", r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{6,})", 1, ("bearer",)),
    ("basic_auth", _BASIC, 1, ("basic",)),
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@", 1, ("://",)),
    (
        "password",
        r"(?i)\b(?:password|passwd|pwd|secret|client_secret)\b[\"']?\s*[=:]\s*[\"']?([^\s\"',;&}]{3,})",
        1,
        ("passw", "pwd", "secret"),
    ),
    (
        "env_secret",
        r"\b[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)\s*[=:]\s*[\"']?([^\s\"',;&}]{4,})",
        1,
        ("TOKEN", "SECRET", "PASSWORD", "API_KEY", "ACCESS_KEY"),
    ),
]


@dataclass(frozen=True)
class _Shape:
    label: str
    rx: re.Pattern[str]
    group: int
    triggers: tuple[str, ...]
    # `(?i)` shapes look for their triggers with the regex engine's own case rules (str
    # case folding differs for a few characters, e.g. U+0130 matches `i` under re.I)
    folded: re.Pattern[str] | None

    def may_match(self, s: str) -> bool:
        if self.folded is not None:
            return self.folded.search(s) is not None
        return any(t in s for t in self.triggers)

    def sub(self, s: str) -> str:
        if self.group == 0:
            return self.rx.sub(mask(self.label), s)
        return self.rx.sub(functools.partial(_replace_group, group=self.group, label=self.label), s)


def _shape(label: str, pat: str, group: int, triggers: tuple[str, ...]) -> _Shape:
    folded = None
    if pat.startswith("(?i"):  # `(?i)` or a scoped `(?i:...)`
        folded = re.compile("|".join(map(re.escape, triggers)), re.IGNORECASE)
    return _Shape(label, re.compile(pat, re.DOTALL), group, triggers, folded)


_COMPILED = tuple(_shape(*spec) for spec in _SHAPES)
# One search says whether any shape could match at all: most strings in a record (numbers
# as text, verdict words, paths, names) hold no trigger and cost one C-level scan. An ASCII
# string is lower-cased (exact for ASCII) and searched case-sensitively, which is several
# times faster than a case-insensitive search; any other string takes the regex engine's
# own case-insensitive rules.
_TRIGGERS = sorted({t for shape in _COMPILED for t in shape.triggers})
_ANY_TRIGGER = re.compile("|".join(map(re.escape, _TRIGGERS)), re.IGNORECASE)
_ANY_TRIGGER_LOWER = re.compile("|".join(sorted({re.escape(t.lower()) for t in _TRIGGERS})))


def _may_hold_shape(s: str) -> bool:
    if s.isascii():
        return _ANY_TRIGGER_LOWER.search(s.lower()) is not None
    return _ANY_TRIGGER.search(s) is not None


@functools.cache
def _line_triggers() -> Any:
    """Every trigger in one case-insensitive alternation for ASCII lines (exact for ASCII):
    RE2 when installed (one linear pass over a 2 KB line: ~4 us where `re` takes ~20),
    else `re` on the lower-cased line."""
    try:
        import re2
    except ImportError:  # pragma: no cover - google-re2 is a dependency

        class _Lower:
            def search(self, s: str) -> Any:
                return _ANY_TRIGGER_LOWER.search(s.lower())

        return _Lower()
    return re2.compile("(?i)" + "|".join(map(re.escape, _TRIGGERS)))


_SHORTEST_SHAPE = 7  # `pwd=abc`: no shape matches a shorter string
_UNCHANGED: Any = object()  # cached for a string redaction leaves as it is
_CACHE_MAX = 65536  # distinct strings remembered per redactor (values repeat across records)
_CACHE_LEN = 512  # only strings up to this long are remembered


def mask(label: str) -> str:
    return f"[REDACTED:{label}]"


class Redactor:
    """Removes known secret values and token shapes from text and from records. `text` and
    `value` return their argument itself when nothing in it is a secret ("untouched")."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        # longest first, so a secret containing another is removed whole
        items = sorted(
            ((v, k) for k, v in (secrets or {}).items() if v), key=lambda kv: -len(kv[0])
        )
        self._labels = {value: label for value, label in items}
        self._literal = re.compile("|".join(re.escape(v) for v, _ in items)) if items else None
        # a secret inside a JSON line as `json.dumps(..., ensure_ascii=False)` writes it
        forms = sorted({f for v, _ in items for f in (v, _json_escaped(v))}, key=lambda f: -len(f))
        self._in_line = re.compile("|".join(map(re.escape, forms))) if forms else None
        self._min_len = min([_SHORTEST_SHAPE, *(len(v) for v, _ in items)])
        self._seen: dict[str, str] = {}

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
        if len(s) < self._min_len:
            return s
        if len(s) > _CACHE_LEN:
            return self._redact(s)
        done = self._seen.get(s)
        if done is None:
            if len(self._seen) >= _CACHE_MAX:
                self._seen.clear()
            done = self._redact(s)
            # remembered as "unchanged": an equal string met later is returned as itself
            self._seen[s] = _UNCHANGED if done is s else done
            return done
        return s if done is _UNCHANGED else done

    def may_hold(self, line: str) -> bool:
        """Whether a JSON line could hold a secret `value` would remove: False means no string
        in it (keys and shadowed duplicates too) holds a configured secret or a shape's trigger,
        or -- without backslash escapes, where each string stands as it is between quotes, the
        edge `\\b` and lookarounds see -- a shape's match. Sound for `json.dumps(ensure_ascii=
        False)` lines (escapes hold no trigger); a foreign line only without escapes."""
        if self._in_line is not None and self._in_line.search(line) is not None:
            return True
        if line.isascii():  # a whole record's line: RE2 scans it once, in linear time
            if _line_triggers().search(line) is None:
                return False
        elif _ANY_TRIGGER.search(line) is None:
            return False
        if "\\" in line:
            return True
        # a trigger is there ("://" of any URL, "token" in a comment): does a shape match?
        return any(sh.may_match(line) and sh.rx.search(line) is not None for sh in _COMPILED)

    def _redact(self, s: str) -> str:
        out = s
        if self._literal is not None and self._literal.search(out) is not None:
            out = self._literal.sub(lambda m: mask(self._labels[m.group(0)]), out)
        if not _may_hold_shape(out):
            return s if out == s else out
        for shape in _COMPILED:
            if shape.may_match(out):
                out = shape.sub(out)
        return s if out == s else out

    def value(self, obj: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys included).

        Returns `obj` itself when nothing in it changed (tuples become lists, as always).
        """
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return self._dict(obj)
        if isinstance(obj, list | tuple):
            return self._list(obj)
        return obj

    def _item(self, v: Any) -> Any:
        kind = type(v)
        if kind is str:
            done = self._seen.get(v)
            if done is None:
                return self.text(v)
            return v if done is _UNCHANGED else done
        if v is None or kind is int or kind is float or kind is bool:
            return v
        return self.value(v)

    def _dict(self, obj: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] | None = None
        item = self._item
        for i, (k, v) in enumerate(obj.items()):
            nk = item(k)
            nv = item(v)
            if out is None and (nk is not k or nv is not v):
                out = dict(itertools.islice(obj.items(), i))
            if out is not None:
                out[nk] = nv
        return obj if out is None else out

    def _list(self, obj: list[Any] | tuple[Any, ...]) -> list[Any]:
        items = [self._item(v) for v in obj]
        if isinstance(obj, list) and all(a is b for a, b in zip(items, obj, strict=True)):
            return obj
        return items


def _json_escaped(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]


def _replace_group(m: re.Match[str], group: int, label: str) -> str:
    if m.group(group).startswith("[REDACTED"):
        return m.group(0)
    start, end = m.span(group)
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + mask(label) + whole[end - base :]


_default: Redactor | None = None


def default_redactor() -> Redactor:
    """The process-wide redactor (environment secrets + shapes); config adds to it."""
    global _default
    if _default is None:
        _default = Redactor.from_environ()
    return _default


def set_default_redactor(redactor: Redactor) -> None:
    global _default
    _default = redactor


def redact(obj: Any) -> Any:
    return default_redactor().value(obj)
