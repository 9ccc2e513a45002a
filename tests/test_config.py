"""Config: location, precedence flag > env > file > default, init, show, refusals."""

from __future__ import annotations

import tomllib
from pathlib import Path

from helpers.cli import run_labctl


def _setting(res, key):
    return next(r for r in res.records if r["key"] == key)


def test_fresh_install_runs_on_defaults(isolated_env: Path) -> None:
    res = run_labctl("config", "show")
    assert res.code == 0
    fmt = _setting(res, "output.format")
    assert fmt["source"] == "default" and fmt["value"] == "auto"
    path = run_labctl("config", "path").records[0]
    assert path["path"] == str(isolated_env / ".config" / "labctl" / "config.toml")
    assert path["exists"] is False


def test_init_writes_a_complete_private_file_and_refuses_to_overwrite(isolated_env: Path) -> None:
    res = run_labctl("config", "init")
    assert res.code == 0
    path = Path(res.records[0]["path"])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    data = tomllib.loads(path.read_text())
    from labctl.settings import SETTINGS

    for s in SETTINGS:
        assert s.name in data[s.section], s.key
    assert data["clusters"][0]["name"] == "local"
    before = path.read_text()
    again = run_labctl("config", "init")
    assert again.code == 2 and again.records[0]["reason"] == "exists"
    assert path.read_text() == before
    assert run_labctl("config", "init", "--force").code == 0
    # the written file is itself a valid config
    assert run_labctl("config", "show").code == 0


def test_precedence_flag_over_env_over_file_over_default(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[output]\nformat = "json"\n[github]\napi_url = "http://127.0.0.1:1/file"\n')
    env = {"LABCTL_CONFIG": str(cfg)}
    res = run_labctl("config", "show", "-f", "jsonl", env=env)
    fmt = _setting(res, "output.format")
    assert fmt["value"] == "jsonl" and fmt["source"] == "flag" and fmt["shadowed"] == ["file"]
    api = _setting(res, "github.api_url")
    assert api["source"] == "file"
    env["GITHUB_API_URL"] = "http://127.0.0.1:2/env"
    res = run_labctl("config", "show", "-f", "jsonl", env=env)
    api = _setting(res, "github.api_url")
    assert api == {
        **api,
        "value": "http://127.0.0.1:2/env",
        "source": "env:GITHUB_API_URL",
        "shadowed": ["file"],
    }
    # the file's format applies when no flag is given
    res = run_labctl("config", "show", env={"LABCTL_CONFIG": str(cfg)})
    assert res.stdout.startswith("[")


def test_config_flag_beats_environment_path(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("[output]\nsummary = true\n")
    b.write_text("[output]\nsummary = false\n")
    res = run_labctl("--config", str(b), "config", "show", env={"LABCTL_CONFIG": str(a)})
    assert _setting(res, "output.summary")["value"] is False


def test_bad_configs_are_one_line_errors_with_exit_2(tmp_path: Path) -> None:
    cases = {
        "[output\nformat=1": "not valid TOML",
        '[output]\nformat = "yaml"\n': "must be one of",
        "[output]\nsumary = true\n": "did you mean output.summary",
        "[poll_typo]\nx = 1\n": "unknown section",
        "[output]\nsummary = 3\n": "must be bool",
    }
    for text, expected in cases.items():
        path = tmp_path / "bad.toml"
        path.write_text(text)
        res = run_labctl("config", "show", env={"LABCTL_CONFIG": str(path)})
        assert res.code == 2, text
        assert len(res.records) == 1 and expected in res.records[0]["message"], res.stdout
        assert "Traceback" not in res.stderr
    missing = run_labctl("--config", str(tmp_path / "nope.toml"), "config", "show")
    assert missing.code == 2 and "does not exist" in missing.records[0]["message"]


def test_world_readable_config_holding_a_secret_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    secret = "hf_" + "A1b2C3d4" * 4
    path.write_text(f'[hf]\ntoken = "{secret}"\n')
    path.chmod(0o644)
    res = run_labctl("config", "show", env={"LABCTL_CONFIG": str(path)})
    assert res.code == 2
    assert res.records[0]["reason"] == "config_permissions"
    assert "chmod 600" in res.records[0]["message"]
    assert secret not in res.stdout + res.stderr
    path.chmod(0o600)
    res = run_labctl("config", "show", env={"LABCTL_CONFIG": str(path)})
    assert res.code == 0 and secret not in res.stdout
    # a secret in a cluster table counts too
    path.write_text('[[clusters]]\nname = "c"\nhost = "local"\npassword = "hunter2hunter2"\n')
    path.chmod(0o640)
    assert run_labctl("config", "show", env={"LABCTL_CONFIG": str(path)}).code == 2


def test_prune_rules_are_an_array_of_tables_in_their_section(isolated_env: Path) -> None:
    res = run_labctl("config", "init")
    path = Path(res.records[0]["path"])
    data = tomllib.loads(path.read_text())
    assert [r["kind"] for r in data["prune"]["rules"]] == ["hf_cache", "traces"]
    show = run_labctl("config", "show")
    assert show.code == 0  # the file config init wrote loads again
    rule = _setting(show, "prune.rules[1]")
    assert rule["value"]["root"] == "~/experiments/traces"
    path.write_text('[prune]\nmin_free_gb = 50\n[[prune.rules]]\nkind = "glob"\nroot = "/x"\n')
    show = run_labctl("config", "show")
    assert _setting(show, "prune.rules[0]")["value"]["kind"] == "glob"
    assert _setting(show, "prune.rules[0]")["source"] == "file"
    path.write_text("[prune]\nrules = 3\n")
    bad = run_labctl("config", "show")
    assert (
        bad.code == 2 and "[[prune.rules]] must be an array of tables" in bad.records[0]["message"]
    )
