"""No secret value ever appears in any output: property tests over token shapes."""

from __future__ import annotations

import json
import re
import string

import pytest
from helpers.cli import run_labctl
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.redact import Redactor

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _tok(prefix: str, alphabet: str, n: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=n, max_size=n).map(lambda s: prefix + s)


TOKENS = st.one_of(
    _tok("ghp_", ALNUM, 36),
    _tok("gho_", ALNUM, 36),
    _tok("github_pat_", ALNUM + "_", 82),
    _tok("hf_", ALNUM, 34),
    _tok("sk-", ALNUM, 48),
    _tok("sk-ant-", ALNUM + "-_", 60),
    _tok("AKIA", string.ascii_uppercase + string.digits, 16),
    _tok("xoxb-", ALNUM + "-", 40),
    _tok("sb_secret_", ALNUM, 32),
    st.tuples(
        _tok("eyJ", ALNUM + "-_", 20),
        _tok("eyJ", ALNUM + "-_", 40),
        st.text(ALNUM, min_size=20, max_size=40),
    ).map(".".join),
)
# text around a secret: anything printable, but not glued to the secret with characters
# that would make it a different, longer token (\b boundaries)
FILLER = st.text(string.printable.replace("\x0b", "").replace("\x0c", ""), max_size=40).map(
    lambda s: s + " "
)
CONTEXTS = st.sampled_from(
    [
        "{}",
        "token={}",
        "Authorization: Bearer {}",
        "export HF_TOKEN={}",
        "see https://x.example/?k={}&y=1",
        '{{"token": "{}"}}',
        "line1\n  {}\nline3",
        "push failed for {}: 401",
    ]
)


@settings(max_examples=300, deadline=None)
@given(TOKENS, CONTEXTS, FILLER, FILLER)
def test_known_token_shapes_never_survive(token: str, context: str, pre: str, post: str) -> None:
    text = pre + context.format(token) + " " + post
    out = Redactor({}).text(text)
    assert token not in out


@settings(max_examples=200, deadline=None)
@given(
    st.text(ALNUM + "-_.~+/=!@#$%^&*()[]{}", min_size=8, max_size=64).filter(
        lambda s: s.strip() == s and any(c.isalnum() for c in s)
    ),
    FILLER,
    FILLER,
    st.sampled_from(["GITHUB_TOKEN", "WANDB_API_KEY", "SUPABASE_KEY", "MY_SERVICE_TOKEN"]),
)
def test_environment_secret_values_never_survive(
    secret: str, pre: str, post: str, name: str
) -> None:
    redactor = Redactor.from_environ({name: secret})
    rec = {"kind": "x", "message": pre + secret + post, "nested": [{"k": secret}], secret: 1}
    out = json.dumps(redactor.value(rec))
    # the marker names the variable: a "secret" like SUPABASE is in "[REDACTED:SUPABASE_KEY]"
    assert secret not in re.sub(r"\[REDACTED:[A-Z_]+\]", "", out)
    assert out.count(f"[REDACTED:{name}]") >= 3
    assert json.dumps(secret)[1:-1] not in re.sub(r"\[REDACTED:[A-Z_]+\]", "", out)


def test_wandb_key_private_key_url_password_and_password_assignments() -> None:
    r = Redactor({})
    hexkey = "0123456789abcdef0123456789abcdef01234567"
    assert hexkey not in r.text(f"wandb: Appending key for api.wandb.ai: {hexkey}")
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"
    assert "b3BlbnNzaC1rZXk" not in r.text("key:\n" + pem)
    assert "b3Blbn" not in r.text("-----BEGIN RSA PRIVATE KEY-----\nb3Blbnxxxx (truncated")
    assert "hunter2" not in r.text("postgres://lab:hunter2@db.internal/runs")
    assert "hunter22" not in r.text("password=hunter22 user=x")
    # and ordinary text is left alone
    plain = "step 1200 loss 0.42 grad_norm 1.3 at /scratch/run-3/checkpoint-1200"
    assert r.text(plain) == plain


def test_secret_in_environment_and_record_never_reaches_any_output() -> None:
    secret = "s3cr3t-Value-9f8e7d6c"
    env = {"GITHUB_TOKEN": secret}
    rec = json.dumps({"kind": "x", "note": f"token {secret} leaked", "name": "ok"}) + "\n"
    bad = f"not json {secret}\n"
    for fmt in ("jsonl", "json", "table"):
        res = run_labctl("table", "-f", fmt, input=rec + bad, env=env)
        assert secret not in res.stdout + res.stderr
        assert "REDACTED" in res.stdout
    shown = run_labctl("config", "show", env=env)
    assert secret not in shown.stdout + shown.stderr
    token = next(r for r in shown.records if r["key"] == "github.token")
    assert token["source"] == "env:GITHUB_TOKEN" and token["value"].startswith("[REDACTED")


@pytest.mark.parametrize(
    "prose",
    [
        "# Basic dependabot.yml file with",  # GitHub's own dependabot.yml sample comment
        "# Basic Configuration",
        "basic settings for the sweep",
    ],
)
def test_the_word_basic_in_prose_is_not_a_credential(prose: str) -> None:
    assert Redactor().text(prose) == prose


@pytest.mark.parametrize(
    "header",
    [
        "Authorization: Basic dXNlcjpwYXNz",
        "basic dXNlcjpwYXNzd29yZA==",
        "BASIC QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
        "Basic abcdefgh1",
    ],
)
def test_a_basic_auth_token_is_still_redacted(header: str) -> None:
    out = Redactor().text(header)
    assert "[REDACTED:basic_auth]" in out
    assert header.rsplit(maxsplit=1)[-1] not in out
