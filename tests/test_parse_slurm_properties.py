"""Property tests: hostile job names, random array specs, durations, times, log patterns."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from helpers.verdicts import with_verdicts
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.parse.slurm import (
    FIELD_DELIMITER,
    SACCT_FIELDS,
    LogJob,
    expand_log_path,
    format_array_spec,
    format_duration,
    parse_array_spec,
    parse_duration,
    parse_job_id,
    parse_sacct,
    parse_scontrol_line,
    parse_squeue,
    parse_time,
    sacct_jobs,
    scontrol_jobs,
)

FIX = Path(__file__).parent / "fixtures" / "slurm"

# Job names a user can type: the delimiters and their neighbours, `=`, spaces, unicode.
# Newline and CR are excluded (one row per line); NUL cannot reach argv.
NAME_CHARS = st.one_of(
    st.sampled_from(["|", "\x1f", "\x1e", "\x1d", "\x20", "=", " UserId=", "^|^", "%", "\t"]),
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"),
)
names = st.lists(NAME_CHARS, max_size=12).map("".join)
delimiters = st.sampled_from(["|", FIELD_DELIMITER])


def _sacct_line(fields: tuple[str, ...], cells: dict[str, str], delimiter: str) -> str:
    return delimiter.join(cells[f] for f in fields)


def _cells(name: str, job_id: int) -> dict[str, str]:
    cells = dict.fromkeys(SACCT_FIELDS, "")
    cells.update(
        JobIDRaw=str(job_id),
        JobID=str(job_id),
        State="COMPLETED",
        ExitCode="0:0",
        DerivedExitCode="0:0",
        Reason="None",
        Submit="1796063078",
        Eligible="1796063078",
        Start="1796063079",
        End="1796063082",
        ElapsedRaw="3",
        Timelimit="UNLIMITED",
        TimelimitRaw="UNLIMITED",
        Suspended="00:00:00",
        NodeList="vm",
        NNodes="1",
        Partition="debug",
        User="root",
        UID="0",
        Account="root",
        WorkDir="/tmp/w",
        SubmitLine="sbatch x.sh",
        JobName=name,
    )
    return cells


@given(st.lists(names, min_size=1, max_size=5), delimiters)
def test_sacct_job_names_survive_with_name_last(batch: list[str], delimiter: str) -> None:
    text = "\n".join(
        _sacct_line(SACCT_FIELDS, _cells(n, i + 1), delimiter) for i, n in enumerate(batch)
    )
    jobs = with_verdicts(sacct_jobs(text, SACCT_FIELDS, delimiter))
    assert [j["name"] or "" for j in jobs] == batch
    assert [j["job_id_raw"] for j in jobs] == list(range(1, len(batch) + 1))
    assert all(j["verdict"] == "completed" and j["work_dir"] == "/tmp/w" for j in jobs)


@given(names, delimiters)
def test_sacct_name_in_the_middle_is_rejoined(name: str, delimiter: str) -> None:
    """The 10-field fixture format puts JobName second: the overflow still goes to it."""
    fields = ("JobID", "JobName", "State", "ExitCode", "Elapsed", "Start", "End", "User")
    cells = {
        "JobID": "16",
        "JobName": name,
        "State": "COMPLETED",
        "ExitCode": "0:0",
        "Elapsed": "00:00:03",
        "Start": "2026-11-30T18:24:44",
        "End": "2026-11-30T18:24:47",
        "User": "root",
    }
    (row,) = parse_sacct(_sacct_line(fields, cells, delimiter), fields, delimiter)
    assert row == cells


@given(names, names)
def test_sacct_parsable_trailing_delimiter_is_dropped(a: str, b: str) -> None:
    fields = ("JobID", "State", "JobName")
    text = f"1|COMPLETED|{a}|\n2|FAILED|{b}|\n"
    rows = parse_sacct(text, fields, "|", trailing_delimiter=True)
    assert [r["JobName"] for r in rows] == [a, b]


@given(st.lists(st.text(st.characters(blacklist_characters="\n\r\x1f"), min_size=1), max_size=3))
def test_sacct_name_with_newlines_continues_the_last_field(parts: list[str]) -> None:
    parts = [p for p in parts if p.strip()]
    name = "\n".join(["first", *parts])
    text = _sacct_line(SACCT_FIELDS, _cells(name, 7), FIELD_DELIMITER)
    (job,) = sacct_jobs(text)
    assert job["name"] == name


@given(names)
def test_squeue_name_last_survives(name: str) -> None:
    fields = ("JobID", "State", "WorkDir", "Name")
    line = FIELD_DELIMITER.join(["9", "RUNNING", "/tmp/a b", name])
    (row,) = parse_squeue(line + "\n", fields, FIELD_DELIMITER)
    assert row["Name"] == name and row["WorkDir"] == "/tmp/a b"


# ------------------------------------------------------------------------- scontrol

SC_LINE = (FIX / "scontrol-show-job-o-pipe-and-space-in-name.txt").read_text().strip("\n")
# free text scontrol prints verbatim: no newline; a path does not start with a space
texts = names.filter(lambda s: "\t" not in s)
# Absolute paths (scontrol prints them expanded) with spaces, `=`, and other keys inside.
# Not generated: a fake ` StdErr=` followed by `/`, which is ambiguous even to a person.
paths = st.lists(
    st.one_of(
        st.sampled_from([" ", "=", "a=b", " StdErr=", " Power=", " JobName=", "é", "|"]),
        st.text(alphabet="abc xyz=.-_", max_size=4),
    ),
    max_size=6,
).map(lambda xs: "/tmp/" + "".join(xs))


@settings(max_examples=300)
@given(texts, paths, paths, st.text(alphabet="ab =xyz/.", max_size=20))
def test_scontrol_free_text_values_round_trip(
    name: str, workdir: str, stdout: str, args: str
) -> None:
    line = (
        SC_LINE.replace("JobName=lr=3e-4|bs=64 run ", f"JobName={name} ")
        .replace("WorkDir=/tmp/labctl-slurm-fixtures ", f"WorkDir={workdir} ")
        .replace("StdOut=/tmp/labctl-slurm-fixtures/logs/pipe-name-16.out ", f"StdOut={stdout} ")
        .replace("Command=/tmp/labctl-slurm-fixtures/ok.sh ", f"Command=/x/ok.sh {args} ")
    )
    d = parse_scontrol_line(line)
    assert d["JobName"] == name
    assert d["WorkDir"] == workdir
    assert d["StdOut"] == stdout
    assert d["Command"] == f"/x/ok.sh {args}"
    assert d["UserId"] == "root(0)" and d["JobState"] == "COMPLETED" and d["Power"] == ""
    (rec,) = with_verdicts(scontrol_jobs(line))
    assert rec["name"] == (name or None) and rec["verdict"] == "completed"


# ------------------------------------------------------------------------- arrays


@given(
    st.sets(st.integers(0, 5000), min_size=1, max_size=60),
    st.one_of(st.none(), st.integers(1, 64)),
    st.integers(1, 10**7),
)
def test_array_specs_round_trip(tasks: set[int], throttle: int | None, job: int) -> None:
    spec = format_array_spec(tasks, throttle)
    parsed = parse_array_spec(spec)
    assert set(parsed.tasks()) == tasks and parsed.count == len(tasks)
    assert parsed.throttle == throttle
    jid = parse_job_id(f"{job}_[{spec}]")
    assert (jid.job_id, jid.array_tasks, jid.array_task_id) == (job, spec, None)
    assert parse_array_spec(jid.array_tasks or "").throttle == throttle


@given(st.integers(1, 10**7), st.integers(0, 10**6), st.sampled_from(["batch", "extern", "0"]))
def test_array_task_step_ids(job: int, task: int, step: str) -> None:
    jid = parse_job_id(f"{job}_{task}.{step}")
    assert (jid.job_id, jid.array_task_id, jid.step, jid.job) == (job, task, step, f"{job}_{task}")


# ------------------------------------------------------------------------- durations, times


@given(st.integers(0, 400 * 86400), st.booleans())
def test_durations_round_trip(seconds: int, squeue_style: bool) -> None:
    assert parse_duration(format_duration(seconds, squeue=squeue_style)) == seconds


@given(
    st.integers(10**9, 2 * 10**9),
    st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata"]),
)
def test_iso_times_in_the_printing_zone_round_trip(epoch: int, zone: str) -> None:
    tz = ZoneInfo(zone)
    local = datetime.fromtimestamp(epoch, tz)
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    got = parse_time(text, tz)
    # a wall-clock time repeated by a DST fall-back is ambiguous without an offset
    assert got == epoch or abs((got or 0) - epoch) == 3600
    assert parse_time(str(epoch)) == epoch
    assert parse_time(datetime.fromtimestamp(epoch, UTC).isoformat()) == epoch


# ------------------------------------------------------------------------- log patterns

literal = st.text(
    st.characters(blacklist_characters="%\\\x00", blacklist_categories=("Cs",)), max_size=30
)


@given(literal)
def test_log_pattern_without_percent_is_literal(text: str) -> None:
    job = LogJob(job_id=5, name="n", user="u", node="vm", work_dir="/w")
    assert expand_log_path("/" + text, job) == "/" + text


@given(literal, st.integers(0, 12), st.integers(1, 10**6), literal)
def test_log_pattern_percent_escape_and_padding(a: str, width: int, job_id: int, b: str) -> None:
    job = LogJob(job_id=job_id, work_dir="/w")
    out = expand_log_path(f"/{a}%%{b}%{width}j", job)
    assert out == f"/{a}%{b}{job_id:0{min(width, 10)}d}"
