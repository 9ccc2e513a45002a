"""gate's pure core: metric paths, config validation, verdict rules, the streak."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labctl.errors import ConfigError
from labctl.gate.metric import Path, parse_path
from labctl.gate.query import build_query
from labctl.gate.spec import StreakGate, compile_cycle, parse_gates
from labctl.gate.streak import run_streak
from labctl.gate.verdict import as_score, evaluate

GATE = {
    "name": "g",
    "table": "jobs",
    "time_column": "t",
    "require": [
        {"benchmark": "he", "metric": "stats->'metrics'->>'pass@1'", "threshold": 0.5},
        {"benchmark": "tox", "metric": "score", "threshold": 0.1, "direction": "lower"},
    ],
}


def gate(**over: Any) -> Any:
    return parse_gates([{**GATE, **over}], "alice", "postgres")["g"]


# -- metric paths --------------------------------------------------------------------------
def test_both_spellings_of_a_json_path_are_one_path() -> None:
    want = Path("stats", ("metrics", "pass@1"))
    assert parse_path("stats->'metrics'->>'pass@1'", "x") == want
    assert parse_path("stats->metrics->>pass@1", "x") == want
    assert parse_path('stats -> metrics ->> "pass@1"', "x") == want
    assert want.postgrest() == 'stats->metrics->>"pass@1"'
    assert want.sql_text() == "stats->'metrics'->>'pass@1'"
    assert parse_path("score", "x") == Path("score")


@pytest.mark.parametrize(
    "text", ["", "1col", "stats->", "stats->>'a", "stats=>a", 'stats->"a"b"', "a b"]
)
def test_bad_metric_paths_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_path(text, "metric")


_KEY = st.text(
    st.characters(blacklist_characters='"\x00', blacklist_categories=("Cs",)), min_size=1
)


@given(
    column=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
    keys=st.lists(_KEY.filter(lambda k: k.strip() == k and "->" not in k), max_size=4),
)
def test_paths_round_trip_through_both_spellings(column: str, keys: list[str]) -> None:
    path = Path(column, tuple(keys))
    assert parse_path(path.sql_text(), "x") == path
    if all("'" not in k for k in keys):
        assert parse_path(path.postgrest(), "x") == path


def test_extract_follows_the_path_in_a_row_held_in_memory() -> None:
    path = Path("stats", ("metrics", "pass@1"))
    assert path.extract({"stats": {"metrics": {"pass@1": 0.5}}}) == "0.5"
    assert path.extract({"stats": '{"metrics": {"pass@1": "N/A"}}'}) == "N/A"
    assert path.extract({"stats": {"metrics": None}}) is None
    assert path.extract({}) is None


# -- config -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "over,needle",
    [
        ({"treshold": 1}, "did you mean 'threshold'"),
        ({"require": []}, "[[gates.require]]"),
        ({"combine": "max"}, "combine must be one of latest, mean_last_n"),
        ({"table": "jobs; drop table x"}, "not a table name"),
        ({"model_column": "model name"}, "not a column name"),
        ({"require": [{"benchmark": "he", "metric": "s", "threshold": "high"}]}, "threshold"),
        (
            {"require": [{"benchmark": "he", "metric": "s", "threshold": 1, "direction": "up"}]},
            "direction",
        ),
        ({"combine": "mean_last_n", "last_n": 0}, "last_n"),
        ({"source": "mysql"}, "source must be one of"),
    ],
)
def test_config_errors_name_the_gate_and_the_key(over: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        gate(**over)
    assert "[[gates]] g" in err.value.message
    assert needle in err.value.message


def test_streak_config_errors() -> None:
    with pytest.raises(ConfigError, match="capture group"):
        parse_gates([{"name": "s", "kind": "streak", "cycle_pattern": "c\\d+"}], "u", "-")
    with pytest.raises(ConfigError, match="not a valid regex"):
        compile_cycle("c(", "x")
    with pytest.raises(ConfigError, match="two gates"):
        parse_gates([{"name": "s", "kind": "streak"}] * 2, "u", "-")


def test_query_names_only_needed_columns_and_every_filter() -> None:
    q = build_query(gate(partial="stats->>partial"), ["m1", "m2"])
    names = [c.postgrest() for c in q.columns]
    assert names == [
        "id",
        "model",
        "benchmark",
        "t",
        "partial:stats->>partial",
        'm0:stats->metrics->>"pass@1"',
        "score",
    ]
    assert {(f.column, f.values) for f in q.filters} == {
        ("status", ("finished",)),
        ("owner", ("alice",)),
        ("benchmark", ("he", "tox")),
        ("model", ("m1", "m2")),
    }


# -- verdict rules --------------------------------------------------------------------------
def rows(*specs: tuple[str, str, Any, float, int]) -> list[dict[str, Any]]:
    return [
        {"id": i, "model": m, "benchmark": b, "m0": v, "score": v, "t": t}
        for m, b, v, t, i in specs
    ]


def verdicts(g: Any, data: list[dict[str, Any]], models: tuple[str, ...] = ()) -> dict[Any, Any]:
    out = {}
    for rec in evaluate(g, build_query(g), data, models):
        out[(rec["kind"], rec["model"], rec.get("benchmark"))] = rec
    return out


def test_latest_run_by_time_then_id_counts_never_the_max() -> None:
    g = gate()
    data = rows(
        ("a", "he", "0.9", 10.0, 1),
        ("a", "he", "0.3", 20.0, 2),
        ("a", "tox", 0.0, 5.0, 3),
        ("b", "he", "0.9", 10.0, 5),
        ("b", "he", "0.2", 10.0, 4),
        ("b", "tox", 0.0, 1.0, 6),
    )
    v = verdicts(g, data)
    assert (v["verdict", "a", "he"]["run_ids"], v["verdict", "a", "he"]["reason"]) == ([2], "below")
    # same time: the higher id is the later run
    assert v["verdict", "b", "he"]["run_ids"] == [5] and v["verdict", "b", "he"]["passed"]
    assert not v["gate", "a", None]["passed"] and v["gate", "b", None]["passed"]


def test_mean_last_n_averages_the_newest_n() -> None:
    g = gate(combine="mean_last_n", last_n=2)
    data = rows(
        ("a", "he", 0.1, 1.0, 1),
        ("a", "he", 0.9, 2.0, 2),
        ("a", "he", 0.3, 3.0, 3),
        ("a", "tox", 0.0, 1.0, 4),
    )
    he = verdicts(g, data)["verdict", "a", "he"]
    assert he["run_ids"] == [3, 2]
    assert he["score"] == pytest.approx(0.6) and he["passed"]


@given(
    raw=st.one_of(
        st.none(),
        st.text(),
        st.booleans(),
        st.just(float("nan")),
        st.just(math.inf),
        st.just(-math.inf),
        st.dictionaries(st.text(), st.integers()),
    ),
    threshold=st.floats(-1e6, 1e6),
)
def test_a_missing_null_or_non_numeric_score_never_passes(raw: Any, threshold: float) -> None:
    score, problem = as_score(raw)
    if problem is None:  # a numeric string such as "1e3" is a number
        assert score is not None and math.isfinite(score)
        return
    g = gate(require=[{"benchmark": "he", "metric": "m0", "threshold": threshold}])
    v = verdicts(g, rows(("a", "he", raw, 1.0, 1)))
    assert v["verdict", "a", "he"]["passed"] is False
    assert v["verdict", "a", "he"]["reason"] in ("null_score", "non_numeric")


@given(score=st.floats(-10, 10), threshold=st.floats(-10, 10), higher=st.booleans())
def test_ties_pass_and_direction_decides(score: float, threshold: float, higher: bool) -> None:
    direction = "higher" if higher else "lower"
    g = gate(
        require=[
            {"benchmark": "he", "metric": "m0", "threshold": threshold, "direction": direction}
        ]
    )
    rec = verdicts(g, rows(("a", "he", score, 1.0, 1)))["verdict", "a", "he"]
    assert rec["passed"] == (score >= threshold if higher else score <= threshold)


def test_named_model_without_rows_fails_missing_and_no_rows_at_all_is_an_error() -> None:
    g = gate()
    v = verdicts(g, [], ("ghost",))
    assert v["verdict", "ghost", "he"]["reason"] == "missing"
    assert not v["gate", "ghost", None]["passed"]
    (err,) = list(evaluate(g, build_query(g), []))
    assert err["kind"] == "error" and err["reason"] == "no_results"


# -- streak ----------------------------------------------------------------------------------
def job(name: str, verdict: str, jid: str, submit: str, **kw: Any) -> dict[str, Any]:
    return {
        "kind": "job",
        "cluster": "c1",
        "job_id": jid,
        "name": name,
        "verdict": verdict,
        "submit_time": submit,
        **kw,
    }


def test_streak_counts_clean_cycles_since_the_last_failure() -> None:
    g = StreakGate(
        "s",
        required=2,
        cycle_pattern=compile_cycle(r"m-c(\d+)-", "x"),
        research_exit_codes=frozenset({42}),
    )
    stream = [
        job("m-c1-a", "failed", "1", "2026-01-01T00:00:00Z", exit_code=1),
        job("m-c2-a", "completed", "2", "2026-01-02T00:00:00Z"),
        job("m-c3-a", "failed", "3", "2026-01-03T00:00:00Z", exit_code=42),
        job("m-c4-a", "running", "4", "2026-01-04T00:00:00Z"),
        job("other", "failed", "9", "2026-01-04T00:00:00Z"),
    ]
    out = list(run_streak(g, stream))
    assert out[0]["name"] == "other"  # belongs to no cycle: passed through first, untouched
    streak = out[-1]
    assert (streak["streak"], streak["passed"], streak["last_failure_cycle"]) == (2, True, "1")
    assert [c["state"] for c in out if c["kind"] == "cycle"] == [
        "failed",
        "clean",
        "clean",
        "in_progress",
    ]
    assert [f["job_id"] for f in streak["failures"]] == ["1"]
