"""Shared test fixtures: every test runs with its own config and state directories.

`labctl` subprocesses get a scrubbed environment (no real tokens, no user config), so
tests see exactly what a fresh install sees.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_labctl
from hypothesis import settings

# Property tests: CI (scripts/test) runs a fixed, derandomised set of examples so `main`
# stays green on a clean clone; `HYPOTHESIS_PROFILE=explore` draws fresh examples every run
# (run it when changing a parser). Loaded here, before any test module builds its settings.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "explore"))

SECRET_ENV = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "HF_TOKEN",
    "WANDB_API_KEY",
    "SUPABASE_KEY",
    "SUPABASE_URL",
    "DATABASE_URL",
    "LABCTL_CONFIG",
    "LABCTL_FORMAT",
    "LABCTL_STATE_DIR",
    "LABCTL_LOG_DIR",
    "NO_COLOR",
    "COLUMNS",
)


@pytest.fixture(autouse=True)
def isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    for name in SECRET_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    yield home


@pytest.fixture
def wandb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An offline W&B environment under tmp_path (runs written by the real client)."""
    for name, sub in (
        ("WANDB_DIR", "."),
        ("WANDB_CACHE_DIR", "cache"),
        ("WANDB_CONFIG_DIR", "config"),
        ("WANDB_DATA_DIR", "data"),
    ):
        (tmp_path / sub).mkdir(exist_ok=True)
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    return tmp_path


@pytest.fixture
def labctl() -> Any:
    return run_labctl
