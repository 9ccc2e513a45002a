"""The shipped catalog: every example matches its entry, no near-miss does (auto-parametrised
from the TOML, so adding an entry adds tests); loading, merging and validating user catalogs."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from labctl.diagnose import (
    catalog_records,
    default_catalog,
    diagnose_text,
    explain,
    load_catalog,
    self_check,
)
from labctl.diagnose.check import entry_matches
from labctl.diagnose.load import shipped_text
from labctl.errors import ConfigError, UsageError

RAW = tomllib.loads(shipped_text())["entry"]
EXAMPLES = [(e["id"], x) for e in RAW for x in e.get("examples", [])]
NEAR_MISSES = [(e["id"], x) for e in RAW for x in e.get("near_misses", [])]
COVERAGE = {
    "cuda_oom", "host_oom", "nan_loss", "module_not_found", "cuda_driver_mismatch", "disk_full",
    "dataloader_worker_killed", "cudnn_error", "checkpoint_load_error", "nccl_error",
    "nccl_timeout", "slurm_time_limit", "preemption", "node_failure", "requeue", "segfault",
    "hf_hub_error", "permission_denied", "code_error", "cancelled", "hung_no_output", "unknown",
}  # fmt: skip


def _short(s: str) -> str:
    return s.splitlines()[0][:60]


@pytest.mark.parametrize(("ident", "line"), EXAMPLES, ids=[f"{i}:{_short(x)}" for i, x in EXAMPLES])
def test_example_matches_its_entry(ident: str, line: str) -> None:
    assert entry_matches(default_catalog(), ident, line)


@pytest.mark.parametrize(
    ("ident", "line"), NEAR_MISSES, ids=[f"{i}:{_short(x)}" for i, x in NEAR_MISSES]
)
def test_near_miss_does_not_match(ident: str, line: str) -> None:
    assert not entry_matches(default_catalog(), ident, line)


@pytest.mark.parametrize(("ident", "line"), EXAMPLES, ids=[f"{i}:{_short(x)}" for i, x in EXAMPLES])
def test_example_alone_diagnoses_to_its_category(ident: str, line: str) -> None:
    entry = default_catalog().entry(ident)
    d = diagnose_text(line)
    if entry.role == "event":
        assert d["category"] == "healthy" and d["requeued"]
    elif entry.role == "exit":  # a report's code or signal goes through the exit-code map
        mapped = {e.category for e in default_catalog().entries if e.exit_codes}
        assert d["failed"] and d["category"] in mapped | {entry.category}, d["catalog_id"]
    else:
        assert d["category"] == entry.category, d["catalog_id"]


def test_self_check_is_clean_and_covers_the_issue() -> None:
    assert self_check() == []
    cat = default_catalog()
    assert {e.category for e in cat.entries} >= COVERAGE
    for e in cat.entries:
        assert e.role == "meta" or e.examples, f"{e.id} has no examples"
        assert e.fix and e.action["type"]


def test_python_re_fallback_agrees_with_re2() -> None:
    plain = load_catalog(use_re2=False)
    assert not plain.use_re2
    assert self_check(plain) == []
    for _ident, line in EXAMPLES[::3]:
        a, b = diagnose_text(line), diagnose_text(line, catalog=plain)
        assert (a["catalog_id"], a["fingerprint"]) == (b["catalog_id"], b["fingerprint"])


def test_catalog_records_and_explain() -> None:
    recs = catalog_records()
    assert {r["kind"] for r in recs} == {"catalog_entry"}
    one = explain("cuda_oom")
    assert one["category"] == "cuda_oom" and one["patterns"]["any"]
    assert one["action"]["type"] == "scale_arg"
    with pytest.raises(UsageError, match="did you mean cuda_oom"):
        explain("cuda_om")


# -- user catalogs ------------------------------------------------------------------------------
def _write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_user_entry_added_and_wins_on_its_line(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """
[[entry]]
id = "tokenizer_mismatch"
title = "Tokenizer does not match the model"
category = "code_error"
specificity = 95
fix = "use the model's tokenizer"
any = ['vocab size mismatch: tokenizer has \\d+']
examples = ["RuntimeError: vocab size mismatch: tokenizer has 32000 tokens"]
""",
    )
    cat = load_catalog([p])
    d = diagnose_text("RuntimeError: vocab size mismatch: tokenizer has 32000 tokens", catalog=cat)
    assert d["catalog_id"] == "tokenizer_mismatch"
    assert cat.entry("tokenizer_mismatch").source == str(p)
    assert self_check(cat) == []


def test_user_entry_extends_replaces_and_disables(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """
[[entry]]
id = "cuda_oom"
any = ['GPU memory exhausted on device \\d+']
retryable = true

[[entry]]
id = "disk_quota"
merge = "replace"
title = "Quota"
category = "disk_full"
fix = "ask for more quota"
any = ['over quota']

[[entry]]
id = "nan_loss_logged"
disabled = true
""",
    )
    cat = load_catalog([p])
    oom = cat.entry("cuda_oom")
    assert oom.retryable and "GPU memory exhausted on device \\d+" in oom.any
    assert "(?i)CUDA out of memory" in oom.any  # extended, not replaced
    assert diagnose_text("GPU memory exhausted on device 3", catalog=cat)["category"] == "cuda_oom"
    assert cat.entry("disk_quota").any == ("over quota",)
    assert "nan_loss_logged" not in cat.by_id


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("any = ['(unclosed']", "entry bad: field 'any': pattern '(unclosed': invalid regex"),
        ("any = ['(?<=x)y']", "entry bad: field 'any': pattern '(?<=x)y'"),
        ("any = ['a(?i)b']", "at the start"),
        ("any = ['x']\ncolour = 'red'", "entry bad: unknown field(s) colour"),
        ("any = ['x']\naction = {type = 'reboot'}", "action type 'reboot' is not one of"),
        ("any = ['x']\naction = {type = 'scale_arg'}", "action 'scale_arg' needs arg, factor"),
        ("any = ['x']\nexplains = ['nope']", "explains unknown id or category 'nope'"),
        ("any = ['x']\naction = {type = 'add_arg', arg = 'a', once = 1}", "once must be true"),
        (
            "any = ['x']\naction = {type = 'scale_arg', arg = 'a', factor = 0}",
            "factor must be positive",
        ),
        ("any = ['x']\naction = {type = 'set_env', name = 'A'}", "needs a value, or unset"),
        (
            "any = ['x']\naction = {type = 'reduce_scope', arg = 'a', factor = '1/2'}",
            "factor must be a number",
        ),
        ("any = 'x'", "field 'any' must be a list"),
        ("any = ['x']\nrole = 'boss'", "role must be one of"),
        ("", "needs at least one pattern"),
        # a regex in a TOML basic string: "\\b" is a backspace there, not a word boundary
        ('any = ["\\bOOM\\b"]', "holds a control character; write regexes as TOML literal"),
    ],
)
def test_bad_user_catalog_names_file_entry_field(tmp_path: Path, body: str, message: str) -> None:
    p = _write(
        tmp_path,
        f'[[entry]]\nid = "bad"\ntitle = "t"\ncategory = "code_error"\nfix = "f"\n{body}\n',
    )
    with pytest.raises(ConfigError) as err:
        load_catalog([p])
    assert str(p) in str(err.value) and message in str(err.value)
    assert err.value.reason == "bad_config"


def test_unreadable_or_invalid_toml_user_catalog(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_catalog([tmp_path / "missing.toml"])
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_catalog([_write(tmp_path, "[[entry]\n")])
    with pytest.raises(ConfigError, match="required entry is missing"):
        load_catalog([_write(tmp_path, '[[entry]]\nid = "unknown"\ndisabled = true\n', "d.toml")])


def test_near_all_not_if_and_min_hits_semantics(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        """
[[entry]]
id = "flaky_fs"
title = "Flaky file system"
category = "node_failure"
specificity = 90
fix = "move off the flaky mount"
any = ['Read timed out']
all = ['(?i)lustre']
not_if = ['retrying']
near = ['mount point']
near_lines = 2
min_hits = 2
examples = [\"\"\"lustre: Read timed out on ost12
see mount point /lustre
lustre: Read timed out on ost13\"\"\"]
""",
    )
    cat = load_catalog([p])
    assert self_check(cat) == []
    ok = "lustre: Read timed out on ost12\nmount point /lustre\nlustre: Read timed out on ost13\n"
    assert diagnose_text(ok, catalog=cat)["catalog_id"] == "flaky_fs"
    far = (
        "lustre: Read timed out\n"
        + "x\n" * 5
        + "mount point\n"
        + "x\n" * 5
        + "lustre: Read timed out"
    )
    assert not entry_matches(cat, "flaky_fs", far)  # near: too far from the first hit
    assert not entry_matches(cat, "flaky_fs", "nfs: Read timed out\nmount point\n" * 2)  # all
    assert not entry_matches(cat, "flaky_fs", "lustre: Read timed out, retrying\nmount point\n" * 2)
    assert not entry_matches(cat, "flaky_fs", "lustre: Read timed out\nmount point\n")  # min_hits


def test_arg_families_merge_and_validate(tmp_path: Path) -> None:
    """supervise's argument spellings are catalog data: a user file adds spellings."""
    shipped = default_catalog().arg_families
    assert "per_device_train_batch_size" in shipped["batch_size"]
    assert "max_grad_norm" in shipped["grad_clip"]
    p = _write(tmp_path, '[arg_families]\nbatch_size = ["mbs"]\nlr = ["learning_rate", "lr"]\n')
    fams = load_catalog([p]).arg_families
    assert fams["batch_size"][: len(shipped["batch_size"])] == shipped["batch_size"]
    assert fams["batch_size"][-1] == "mbs" and fams["lr"] == ("learning_rate", "lr")
    for bad in ('[arg_families]\nbs = "x"\n', '[arg_families]\nBad-Name = ["x"]\n'):
        with pytest.raises(ConfigError, match="arg_families"):
            load_catalog([_write(tmp_path, bad, "bad.toml")])


def test_actions_carry_what_supervise_needs() -> None:
    cat = default_catalog()
    assert cat.entry("cuda_oom").action["min"] == 1
    hung = cat.entry("hung_no_output").action
    assert hung["type"] == "reduce_scope" and hung["once"] is True
    assert cat.entry("nan_loss_logged").action == {
        "type": "add_arg", "arg": "max_grad_norm", "value": 1.0, "once": True,
    }  # fmt: skip
    assert cat.entry("cuda_driver_mismatch").action["value"] == ""
