"""[[prune.rules]] read once: where the Hugging Face cache is, what a rule may name."""

from __future__ import annotations

import pytest

from labctl.disk.rules import hf_hub_cache, hf_token_paths, parse_rules
from labctl.errors import ConfigError

HOME = {"HOME": "/home/sup"}


@pytest.mark.parametrize(
    "env,cache",
    [
        ({}, "/home/sup/.cache/huggingface/hub"),
        ({"XDG_CACHE_HOME": "/xdg"}, "/xdg/huggingface/hub"),
        ({"HF_HOME": "~/hf"}, "/home/sup/hf/hub"),
        ({"HF_HOME": "/data/hf", "HF_HUB_CACHE": "/fast/hub"}, "/fast/hub"),
    ],
)
def test_the_hub_cache_is_where_huggingface_hub_puts_it(env: dict[str, str], cache: str) -> None:
    assert hf_hub_cache({**HOME, **env}) == cache
    rule = parse_rules([{"kind": "hf_cache"}], {**HOME, **env}, 2.0)[0]
    assert rule.root == cache and rule.min_age_s == 2 * 86400


def test_token_paths_follow_hf_home_and_overrides() -> None:
    assert hf_token_paths({**HOME, "HF_HOME": "/data/hf"}) == [
        "/data/hf/token",
        "/data/hf/stored_tokens",
    ]
    assert hf_token_paths({**HOME, "HF_TOKEN_PATH": "/secrets/hf"})[0] == "/secrets/hf"


def test_defaults_tools_and_names() -> None:
    rules = parse_rules(
        [
            {"kind": "traces"},
            {"kind": "cache_dir", "root": "~/.cache/uv", "keep": 2, "min_age_days": 0},
            {"kind": "cache_dir", "root": "/scratch/cache", "name": "scratch"},
        ],
        HOME,
        2.0,
    )
    assert rules[0].root == "/home/sup/experiments/traces"
    assert rules[0].path_in_repo == "traces/{experiment}" and rules[0].repo_type == "dataset"
    assert (rules[1].tool, rules[1].keep, rules[1].min_age_s) == ("uv", 2, 0.0)
    assert (rules[2].tool, rules[2].name) == ("other", "scratch")


def test_two_rules_with_one_name_are_refused() -> None:
    with pytest.raises(ConfigError, match="two rules named"):
        parse_rules(
            [{"kind": "glob", "root": "/a", "pattern": "*"}] * 2,
            HOME,
            2.0,
        )
