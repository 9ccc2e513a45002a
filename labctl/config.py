"""The one TOML config file: where it is, what it says, and what wins.

Location: `--config PATH`, else `$LABCTL_CONFIG`, else `$XDG_CONFIG_HOME/labctl/config.toml`
(`~/.config/labctl/config.toml`). A missing default file is fine (every setting has a
default); a missing file the user named is an error. Precedence per setting: flag > env >
file > default, and `Config.resolved` remembers which one won and which it shadowed.
"""

from __future__ import annotations

import difflib
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.errors import ConfigError
from labctl.settings import (
    BY_KEY,
    LIST_DEFAULTS,
    LIST_SECTIONS,
    SETTINGS,
    SUBTABLES,
    Setting,
)

# Free-form sections a command validates itself (e.g. bucket rules, thresholds).
FREE_SECTIONS = frozenset({"buckets", "thresholds", "jobs", "catalog"})
_SECRETISH = ("token", "secret", "password", "passwd", "api_key", "apikey")


@dataclass(frozen=True)
class Resolved:
    value: Any
    source: str  # "flag", "env:NAME", "file", "default"
    shadowed: tuple[str, ...] = ()


@dataclass
class Config:
    path: Path
    path_source: str
    exists: bool
    data: dict[str, Any] = field(default_factory=dict)
    resolved: dict[str, Resolved] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.resolved[key].value

    def section(self, name: str) -> dict[str, Any]:
        """A free-form section of the file (empty when absent)."""
        value = self.data.get(name, {})
        return value if isinstance(value, dict) else {}

    def subtable(self, key: str) -> dict[str, dict[str, Any]]:
        """A nested table such as `[merge_green.repos."owner/name"]` (empty when absent)."""
        section, name = key.split(".", 1)
        value = self.section(section).get(name, {})
        return dict(value) if isinstance(value, dict) else {}

    def table_list(self, name: str) -> list[dict[str, Any]]:
        """An array-of-tables section such as `[[clusters]]` or `[[prune.rules]]`."""
        holder: Any = self.data
        *sections, last = name.split(".")
        for section in sections:
            holder = holder.get(section, {}) if isinstance(holder, dict) else {}
        if isinstance(holder, dict) and last in holder:
            return list(holder[last])
        return [dict(c) for c in LIST_DEFAULTS.get(name, [])]

    def secrets(self) -> dict[str, str]:
        """Every secret value the config resolved (for the redactor), labelled by key."""
        out = {}
        for key, res in self.resolved.items():
            if BY_KEY[key].secret and isinstance(res.value, str) and res.value:
                out[key] = res.value
        for name, items in self.data.items():
            if isinstance(items, list):
                for item in items:
                    if isinstance(item, dict):
                        out.update(_secretish_values(f"{name}", item))
            elif isinstance(items, dict) and name not in {s.section for s in SETTINGS}:
                out.update(_secretish_values(name, items))
        return out


def _secretish_values(prefix: str, table: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for k, v in table.items():
        if isinstance(v, str) and v and any(s in k.lower() for s in _SECRETISH):
            out[f"{prefix}.{k}"] = v
    return out


def config_path(flag: str | None, environ: Mapping[str, str]) -> tuple[Path, str]:
    if flag:
        return Path(flag).expanduser(), "flag"
    if environ.get("LABCTL_CONFIG"):
        return Path(environ["LABCTL_CONFIG"]).expanduser(), "env:LABCTL_CONFIG"
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "labctl" / "config.toml", "default"


def state_dir(config: Config, environ: Mapping[str, str]) -> Path:
    configured = config.get("paths.state_dir")
    if configured:
        return Path(configured).expanduser()
    base = environ.get("XDG_STATE_HOME") or str(Path(environ.get("HOME", "~")) / ".local" / "state")
    return Path(base).expanduser() / "labctl"


def parse_env_value(setting: Setting, raw: str) -> Any:
    kind = setting.kind
    if kind is bool:
        low = raw.strip().lower()
        if low in {"1", "true", "yes", "on"}:
            return True
        if low in {"0", "false", "no", "off", ""}:
            return False
        raise ConfigError(f"{raw!r} is not a boolean (for {setting.key})")
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"{raw!r} is not an integer (for {setting.key})") from None
    if kind is float:
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(f"{raw!r} is not a number (for {setting.key})") from None
    if kind is list:
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def _check_type(setting: Setting, value: Any, where: str) -> Any:
    kind = setting.kind
    ok = (
        (kind is bool and isinstance(value, bool))
        or (kind is int and isinstance(value, int) and not isinstance(value, bool))
        or (kind is float and isinstance(value, int | float) and not isinstance(value, bool))
        or (kind is str and isinstance(value, str))
        or (kind is list and isinstance(value, list))
    )
    if not ok:
        raise ConfigError(
            f"{where}: {setting.key} must be {kind.__name__}, not {type(value).__name__}",
            key=setting.key,
        )
    if setting.choices and value not in setting.choices:
        raise ConfigError(
            f"{where}: {setting.key} must be one of {', '.join(setting.choices)}, not {value!r}",
            key=setting.key,
        )
    return float(value) if kind is float else value


def _read_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}", path=str(path)) from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}", path=str(path)) from None


def _check_table_list(name: str, value: Any, path: Path) -> None:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{path}: [[{name}]] must be an array of tables", path=str(path))


def _validate_layout(data: dict[str, Any], path: Path) -> None:
    known_sections = {s.section for s in SETTINGS}
    for name, value in data.items():
        if name in LIST_SECTIONS:
            _check_table_list(name, value, path)
            continue
        if name in FREE_SECTIONS:
            continue
        if name not in known_sections or not isinstance(value, dict):
            options = sorted(known_sections | set(LIST_SECTIONS) | FREE_SECTIONS)
            hint = difflib.get_close_matches(name, options, n=1)
            raise ConfigError(
                f"{path}: unknown section [{name}]"
                + (f" (did you mean [{hint[0]}]?)" if hint else ""),
                path=str(path),
            )
        for key, sub in value.items():
            full = f"{name}.{key}"
            if full in SUBTABLES:
                if not isinstance(sub, dict) or not all(isinstance(v, dict) for v in sub.values()):
                    raise ConfigError(f"{path}: {full} must hold tables", path=str(path))
                continue
            if full in LIST_SECTIONS:
                _check_table_list(full, sub, path)
                continue
            if full not in BY_KEY:
                hint = difflib.get_close_matches(full, [*BY_KEY, *SUBTABLES], n=1)
                raise ConfigError(
                    f"{path}: unknown setting {full}"
                    + (f" (did you mean {hint[0]}?)" if hint else ""),
                    path=str(path),
                )


def _check_private(path: Path, config: Config) -> None:
    """Refuse a config file other users can read while it holds a secret."""
    in_file = [
        key for key in config.secrets() if key in BY_KEY and key in _file_keys(config.data)
    ] + [key for key in config.secrets() if key not in BY_KEY]
    if not in_file:
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o044:
        raise ConfigError(
            f"config {path} holds a secret ({in_file[0]}) but other users can read it "
            f"(mode {mode:04o}); run: chmod 600 {path}",
            reason="config_permissions",
            path=str(path),
        )


def _file_keys(data: Mapping[str, Any]) -> set[str]:
    keys: set[str] = set()
    for section, table in data.items():
        if isinstance(table, dict):
            keys.update(f"{section}.{k}" for k in table)
    return keys


def load_config(
    flag_path: str | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    *,
    read_file: bool = True,
) -> Config:
    env = os.environ if environ is None else environ
    path, path_source = config_path(flag_path, env)
    exists = path.is_file() and read_file
    if read_file and not exists and path_source != "default":
        raise ConfigError(f"config file {path} does not exist ({path_source})", path=str(path))
    data = _read_file(path) if exists else {}
    _validate_layout(data, path)
    config = Config(path=path, path_source=path_source, exists=exists, data=data)
    for setting in SETTINGS:
        config.resolved[setting.key] = _resolve(setting, data, env, flags or {}, path)
    if exists:
        _check_private(path, config)
    return config


def _resolve(
    setting: Setting,
    data: Mapping[str, Any],
    env: Mapping[str, str],
    flags: Mapping[str, Any],
    path: Path,
) -> Resolved:
    candidates: list[tuple[str, Any]] = []
    if flags.get(setting.key) is not None:
        candidates.append(("flag", flags[setting.key]))
    for name in setting.env:
        if env.get(name):
            candidates.append((f"env:{name}", parse_env_value(setting, env[name])))
            break
    section = data.get(setting.section, {})
    if isinstance(section, dict) and setting.name in section:
        value = section[setting.name]
        if not (setting.kind is str and value == ""):
            candidates.append(("file", _check_type(setting, value, str(path))))
    if not candidates:
        return Resolved(setting.default, "default")
    source, value = candidates[0]
    if setting.choices and value not in setting.choices:
        raise ConfigError(
            f"{setting.key} must be one of {', '.join(setting.choices)}, not {value!r} ({source})"
        )
    return Resolved(value, source, tuple(s for s, _ in candidates[1:]))


def default_document() -> dict[str, Any]:
    """The complete default config as a TOML-ready dict (secrets empty)."""
    doc: dict[str, Any] = {}
    for setting in SETTINGS:
        doc.setdefault(setting.section, {})[setting.name] = setting.default
    for name, tables in LIST_DEFAULTS.items():
        *sections, last = name.split(".")
        holder = doc
        for section in sections:
            holder = holder.setdefault(section, {})
        holder[last] = [dict(t) for t in tables]
    return doc
