"""Value normalisers: the spellings SLURM 22.05 prints, and what must be rejected."""

from __future__ import annotations

from datetime import timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from labctl.parse.slurm import (
    JobId,
    SlurmValueError,
    first_node,
    parse_array_spec,
    parse_duration,
    parse_exit_code,
    parse_job_id,
    parse_nodelist,
    parse_state,
    parse_time,
    parse_time_limit,
    parse_time_limit_raw,
    parse_user,
    parse_wait_status,
)


@pytest.mark.parametrize(
    ("text", "job_id", "task", "tasks", "het", "step", "job"),
    [
        ("123", 123, None, None, None, None, "123"),
        ("123_4", 123, 4, None, None, None, "123_4"),
        ("123_[0-3%2]", 123, None, "0-3%2", None, None, "123_[0-3%2]"),
        ("123_[1,3,5-7]", 123, None, "1,3,5-7", None, None, "123_[1,3,5-7]"),
        ("123+0", 123, None, None, 0, None, "123+0"),
        ("123+1.0", 123, None, None, 1, "0", "123+1"),
        ("123.batch", 123, None, None, None, "batch", "123"),
        ("123.extern", 123, None, None, None, "extern", "123"),
        ("123.0", 123, None, None, None, "0", "123"),
        ("123.interactive", 123, None, None, None, "interactive", "123"),
        ("123_4.batch", 123, 4, None, None, "batch", "123_4"),
        (" 6_2 ", 6, 2, None, None, None, "6_2"),
    ],
)
def test_parse_job_id_parts(
    text: str,
    job_id: int,
    task: int | None,
    tasks: str | None,
    het: int | None,
    step: str | None,
    job: str,
) -> None:
    jid = parse_job_id(text)
    assert (jid.job_id, jid.array_task_id, jid.array_tasks, jid.het_offset, jid.step) == (
        job_id,
        task,
        tasks,
        het,
        step,
    )
    assert jid.job == job
    assert jid.is_array == (task is not None or tasks is not None)
    assert jid.array_job_id == (job_id if jid.is_array else None)


@pytest.mark.parametrize("bad", ["", "abc", "12a", "_3", "12_", "12.batch.0", "12|x", "-1"])
def test_parse_job_id_rejects_garbage(bad: str) -> None:
    with pytest.raises(SlurmValueError):
        parse_job_id(bad)


def test_job_id_is_hashable_value() -> None:
    assert parse_job_id("6_2") == JobId(text="6_2", job_id=6, array_task_id=2)
    assert len({parse_job_id("6_2"), parse_job_id("6_2")}) == 1


@pytest.mark.parametrize(
    ("spec", "tasks", "throttle", "truncated"),
    [
        ("0-3", [0, 1, 2, 3], None, False),
        ("[0-3%1]", [0, 1, 2, 3], 1, False),
        ("2-3%1", [2, 3], 1, False),
        ("1,3,5-7", [1, 3, 5, 6, 7], None, False),
        ("0-15:4%2", [0, 4, 8, 12], 2, False),
        ("7", [7], None, False),
        ("1,3,5,1...", [1, 3, 5], None, True),
    ],
)
def test_parse_array_spec(
    spec: str, tasks: list[int], throttle: int | None, truncated: bool
) -> None:
    a = parse_array_spec(spec)
    assert list(a.tasks()) == tasks
    assert a.count == len(tasks)
    assert (a.throttle, a.truncated) == (throttle, truncated)


@pytest.mark.parametrize("bad", ["", "a-b", "3-1", "1,,2", "0-3%x", "0-3:0"])
def test_parse_array_spec_rejects(bad: str) -> None:
    with pytest.raises(SlurmValueError):
        parse_array_spec(bad)


@pytest.mark.parametrize(
    ("text", "state", "by"),
    [
        ("CANCELLED by 0", "CANCELLED", 0),
        ("CANCELLED by 1234", "CANCELLED", 1234),
        ("CANCELLED", "CANCELLED", None),
        ("CANCELLED+", "CANCELLED", None),  # fixed-width cut
        ("RUNNING", "RUNNING", None),
        ("OUT_OF_MEMORY", "OUT_OF_MEMORY", None),
        ("PD", "PENDING", None),  # squeue compact codes
        ("CG", "COMPLETING", None),
        ("S", "SUSPENDED", None),
        ("", None, None),
    ],
)
def test_parse_state(text: str, state: str | None, by: int | None) -> None:
    assert parse_state(text) == (state, by)


def test_exit_codes() -> None:
    assert parse_exit_code("3:0") == (3, 0)
    assert parse_exit_code("0:15") == (0, 15)
    assert parse_exit_code("0:125") == (0, 125)
    assert parse_exit_code("") == (None, None)  # NODE_FAIL steps
    for bad in ("3", "a:b", "3:", ":0"):
        with pytest.raises(SlurmValueError):
            parse_exit_code(bad)
    assert parse_wait_status("768") == (3, 0)
    assert parse_wait_status(9) == (0, 9)
    assert parse_wait_status("0") == (0, 0)
    assert parse_wait_status("4294967294") == (None, None)
    assert parse_wait_status("N/A") == (None, None)


def test_times() -> None:
    assert parse_time("1796063079") == 1796063079
    assert parse_time("2026-11-30T18:24:39") == 1796063079
    assert parse_time("2026-11-30T13:24:39", ZoneInfo("America/New_York")) == 1796063079
    assert parse_time("2026-11-30T19:24:39", timezone(timedelta(hours=1))) == 1796063079
    # an explicit offset (squeue/scontrol with %z) wins over tz
    assert parse_time("2026-11-30T18:24:39+0000", ZoneInfo("Asia/Tokyo")) == 1796063079
    for null in ("Unknown", "None", "N/A", "NONE", "", "0"):
        assert parse_time(null) is None
    with pytest.raises(SlurmValueError):
        parse_time("yesterday")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:01:20", 80),
        ("1:00", 60),  # squeue M:SS
        ("0:13", 13),
        ("1:00:00", 3600),
        ("1-02:03:04", 93784),
        ("2-00:00:00", 172800),
        ("1-02", 93600),  # days-hours
        ("1-02:30", 95400),  # days-hours:minutes
        ("05:02.500", 302.5),  # TotalCPU MM:SS.mmm
        ("42", 42),
        ("UNLIMITED", None),
        ("INVALID", None),
        ("", None),
    ],
)
def test_durations(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["1:2:3:4", "a:00", "-1", "1-2-3", "1:xx"])
def test_duration_rejects(bad: str) -> None:
    with pytest.raises(SlurmValueError):
        parse_duration(bad)


def test_time_limits() -> None:
    assert parse_time_limit("00:01:00") == 60
    assert parse_time_limit("1:00") == 60
    assert parse_time_limit("7-00:00:00") == 604800
    for none in ("UNLIMITED", "Partition_Limit", "NOT_SET", "INVALID", "N/A", ""):
        assert parse_time_limit(none) is None
    assert parse_time_limit_raw("60") == 3600
    assert parse_time_limit_raw("UNLIMITED") is None
    assert parse_time_limit_raw("4294967295") is None


def test_nodelists_and_users() -> None:
    assert parse_nodelist("None assigned") is None
    assert parse_nodelist("") is None
    assert parse_nodelist("gpu[012-013]") == "gpu[012-013]"
    assert first_node("gpu[012-013,020],cpu1") == "gpu012"
    assert first_node("vm") == "vm"
    assert first_node("a,b") == "a"
    assert first_node("rack[1-2]-n[3-4]") == "rack1-n3"
    assert first_node(None) is None
    assert parse_user("root(0)") == ("root", 0)
    assert parse_user("nobody(65534)") == ("nobody", 65534)
    assert parse_user("nobody") == ("nobody", None)
    assert parse_user("") == (None, None)
