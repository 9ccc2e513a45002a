"""Records a stage passes through untouched go out as the bytes they came in as."""

from __future__ import annotations

import json

from helpers.cli import run_labctl

from labctl.stream import RawRecord, parse_lines

ODD = '{"kind": "x",  "a": 1.50, "path": "/r/\\u00e9t\\u00e9", "n": [1, 2 ]}'


def test_table_and_diagnose_pass_untouched_lines_through_byte_for_byte() -> None:
    for command, args in (("table", ["-f", "jsonl"]), ("diagnose", [])):
        res = run_labctl(command, *args, input=ODD + "\n")
        assert ODD in res.stdout.splitlines(), (command, res.stdout, res.stderr)


def test_a_passed_through_record_holding_a_secret_is_redacted_not_copied() -> None:
    secret = "ghp_" + "A" * 36
    line = json.dumps({"kind": "x", "note": f"pushed with {secret}"}, indent=None)
    res = run_labctl("table", "-f", "jsonl", input=line + "\n")
    assert secret not in res.stdout
    assert res.records == [{"kind": "x", "note": "pushed with [REDACTED:github_token]"}]


def test_nan_in_an_input_line_comes_out_as_valid_json() -> None:
    res = run_labctl("table", "-f", "jsonl", input='{"kind": "x", "loss": NaN}\n')
    assert res.stdout.strip() == '{"kind":"x","loss":"NaN"}'


def test_changing_a_record_in_place_drops_its_bytes() -> None:
    for change in (
        lambda r: r.__setitem__("a", 2),
        lambda r: r.update(a=2),
        lambda r: r.pop("a"),
        lambda r: r.setdefault("b", 1),
        lambda r: r.__delitem__("a"),
    ):
        [rec] = list(parse_lines([b'{"kind": "x", "a": 1}\n'], "t"))
        assert isinstance(rec, RawRecord) and rec.raw == '{"kind": "x", "a": 1}'
        change(rec)
        assert rec.raw is None
