"""labctl.progress.logscan: counters, metrics and death markers from training logs.

Fixtures in tests/fixtures/progress/ were written by the real tqdm
(tests/fixtures/progress/make_fixtures.py), so they carry tqdm's `\\r` redraws and the ESC[A
cursor moves of nested bars exactly as a Slurm log file gets them.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
from pathlib import Path

import pytest

from labctl.progress.formats import parse_hf_dict, si_number
from labctl.progress.logscan import (
    ReadPlan,
    ScanConfig,
    ScanResult,
    ScanState,
    plan_read,
    scan_chunk,
    scan_file,
)

FIX = Path(__file__).resolve().parent / "fixtures" / "progress"


def fixture(name: str) -> bytes:
    return (FIX / name).read_bytes()


def feed(data: bytes, cuts: list[int], config: ScanConfig | None = None) -> ScanResult:
    """Scan `data` as contiguous chunks split at `cuts` (what successive polls see)."""
    cfg = config or ScanConfig()
    state: ScanState | None = None
    result = None
    bounds = [0, *sorted(set(cuts)), len(data)]
    for lo, hi in itertools.pairwise(bounds):
        result = scan_chunk(data[lo:hi], state, start=lo, size=hi, config=cfg)
        state = result.state
    assert result is not None
    return result


def summary(r: ScanResult) -> tuple[object, ...]:
    return (r.counter, r.value, r.total, r.source, r.phase, r.finished, r.counter_key)


# --- formats --------------------------------------------------------------------------


def test_hf_trainer_tqdm_and_metric_dicts() -> None:
    r = scan_chunk(fixture("hf_trainer_running.log"))
    assert (r.counter, r.value, r.total, r.source) == ("step", 45, 60, "log:tqdm")
    assert r.phase == "train" and not r.finished
    assert r.metrics["loss"] == 0.5 and r.metrics["grad_norm"] == 1.25
    assert r.metrics["eval_loss"] == 0.5123 and r.metrics["epoch"] == 2.0
    assert r.metrics_raw["learning_rate"] == pytest.approx(1.6666666666666667e-06)
    assert r.markers == []


def test_hf_trainer_finished_run() -> None:
    r = scan_chunk(fixture("hf_trainer_finished.log"))
    assert (r.value, r.total, r.finished, r.phase) == (60, 60, True, "finished")
    assert r.metrics["loss"] == 0.4  # the latest loss, not the summary's average train_loss
    assert r.metrics_raw["train_runtime"] == 611.2


def test_carriage_return_only_output() -> None:
    frames = b"".join(
        f"\r{i * 100 // 500:3d}%|#         | {i}/500 [00:{i % 60:02d}<07:00,  1.2it/s]".encode()
        for i in range(1, 138)
    )
    assert b"\n" not in frames
    r = scan_chunk(frames)
    assert (r.value, r.total, r.phase) == (137, 500, "train")


def test_eval_bar_is_not_training_progress() -> None:
    data = fixture("hf_trainer_running.log")
    eval_start = data.index(b"0/8 [")
    in_eval = data.index(b"5/8 [", eval_start) + 40  # stop mid-eval, newest frames are eval
    r = scan_chunk(data[:in_eval])
    assert (r.value, r.total, r.phase) == (30, 60, "eval")
    # first sight of a tail holding only eval frames: no counter rather than the eval's n
    tail = data[eval_start - 2 : in_eval]
    r = scan_chunk(tail, None, start=eval_start - 2, size=in_eval)
    assert r.value is None and r.phase == "eval"


def test_eval_frame_cut_before_its_cursor_move() -> None:
    """A nested frame gets ESC[A after it; cut before that it looks like a top-level bar."""
    data = fixture("hf_trainer_running.log")
    esc = data.index(b"\x1b[A", data.index(b"3/8 ["))
    assert summary(scan_chunk(data[:esc]))[:3] == ("step", 30, 60)
    assert summary(feed(data[: esc + 200], [esc])) == summary(scan_chunk(data[: esc + 200]))
    lone = b"\x1b[A\n\r 38%|###8      | 3/8 [00:00<00:00,  9.1it/s]"
    assert scan_chunk(lone).value is None  # a bar never seen complete: wait for the next poll
    assert scan_chunk(lone + b"\r 50%|#####     | 4/8 [00:00<00:00,  9.1it/s]").value == 4


def test_noise_bars_are_not_training_progress() -> None:
    data = (
        b"\rLoading checkpoint shards: 100%|##########| 4/4 [00:09<00:00,  2.4s/it]\n"
        b"\rMap: 100%|##########| 50000/50000 [00:03<00:00, 15243.11 examples/s]\n"
        b"\r  3%|2         | 8/300 [00:19<11:24,  2.35s/it]"
        b"\r  3%|3         | 9/300 [00:21<11:22,  2.35s/it]"
    )
    r = scan_chunk(data)
    assert (r.value, r.total, r.source) == (9, 300, "log:tqdm")
    only_noise = scan_chunk(data[: data.index(b"\r  3%")])
    assert only_noise.value is None and only_noise.phase == "startup"


def test_descriptive_eval_bar() -> None:
    data = (
        b"\rTraining: 42%|####2     | 420/1000 [07:00<09:40,  1.00it/s]\n"
        b"\rEvaluating: 49%|####9     | 59/120 [00:29<00:31,  2.00it/s]"
        b"\rEvaluating: 50%|#####     | 60/120 [00:30<00:30,  2.00it/s]"
    )
    r = scan_chunk(data)
    assert (r.value, r.total, r.phase) == (420, 1000, "eval")


def test_lightning_epoch_step() -> None:
    r = scan_chunk(fixture("lightning.log"))
    assert (r.counter, r.value, r.total, r.source) == ("epoch_step", 240, 100, "log:lightning")
    assert r.metrics["loss"] == 0.661 and r.phase == "train"
    frame = b"\rEpoch 3: 100%|#####| 1000/1000 [01:40<00:00, 10.0it/s, v_num=1, train_loss=0.5]\n"
    r = scan_chunk(frame)
    assert (r.counter, r.value) == ("epoch_step", 4000)
    with_step = (
        b"\rEpoch 3:  45%|####5     | 450/1000 [00:45<00:55, 10.0it/s, global_step=3450.0]\n"
    )
    assert (scan_chunk(with_step).counter, scan_chunk(with_step).value) == ("step", 3450)


def test_lightning_validation_and_sanity_bars() -> None:
    data = fixture("lightning.log")
    val = data.index(b"Validation DataLoader 0:  50%")
    r = scan_chunk(data[: val + 60])
    assert r.phase == "eval" and r.value == 100  # epoch 0 done, validation running
    sanity = scan_chunk(data[: data.index(b"Epoch 0")])
    assert sanity.value is None and sanity.phase == "startup"
    done = scan_chunk(b"`Trainer.fit` stopped: `max_epochs=3` reached.\n")
    assert done.finished


def test_levanter_si_counts() -> None:
    r = scan_chunk(fixture("levanter.log"))
    assert (r.counter, r.value, r.total, r.source) == ("step", 1180, 5000, "log:levanter")
    assert r.phase == "eval" and r.metrics["loss"] == 2.31
    old_style = (
        b"Progress on:Sample progress 1000.000000/60000.000000 rate:None it/s "
        b"elapsed:0.0000 postfix:None\n"
    )
    assert scan_chunk(old_style).value == 1000
    assert si_number("4.56", "k") == 4560 and si_number("1.18", "M") == 1_180_000
    assert si_number("12", "") == 12 and si_number("0.5") == 0.5


def test_verl_step_and_collapse_signals() -> None:
    r = scan_chunk(fixture("verl.log"))
    assert (r.counter, r.value, r.source) == ("step", 7, "log:verl")
    m = r.metrics
    assert m["entropy"] == 0.38 and m["grad_norm"] == 0.22 and m["kl"] == 0.003
    assert m["rollout_kl"] == 0.001 and m["is_log_ratio"] == -0.001 and m["is_mean"] == 0.999
    assert m["clipfrac"] == 0.002 and m["probs_diff"] == 0.003 and m["reward"] == 0.45
    assert r.metrics_raw["actor/ppo_kl"] == 0.003
    nan = scan_chunk(b"step:8 - actor/entropy:0.000 - actor/grad_norm:nan - actor/ppo_kl:inf\n")
    assert math.isnan(nan.metrics["grad_norm"]) and nan.value == 8
    assert json.loads(json.dumps(nan.to_dict(), allow_nan=False))["metrics"]["grad_norm"] == "nan"


def test_custom_regex() -> None:
    cfg = ScanConfig(progress_regex=r"iter (?P<step>\d+)/(?P<total>\d+)", regex_counter="iter")
    data = b"| iter 118/5000 | loss 2.1\n| iter 119/5000 | loss 2.0\n"
    r = scan_chunk(data, config=cfg)
    assert (r.counter, r.value, r.total, r.source) == ("iter", 119, 5000, "log:regex")
    with pytest.raises(ValueError, match="step"):
        ScanConfig(progress_regex=r"iter (\d+)")
    with pytest.raises(ValueError, match="compile"):
        ScanConfig(progress_regex=r"iter (?P<step>\d+")


def test_dict_lines_are_guarded() -> None:
    assert parse_hf_dict(b"{'model': 'llama', 'lr': 1e-05}") is None  # a config dump
    assert parse_hf_dict(b"{'loss': 0.5, 'nested': {'a': 1}}") is None
    assert parse_hf_dict(b"{'loss': True}") is None
    assert parse_hf_dict(b"{'loss': " + b"1" * 20000 + b"}") is None  # size cap
    hit = parse_hf_dict(b"{'loss': nan, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.1}")
    assert hit is not None and hit.metrics is not None and math.isnan(hit.metrics["loss"])
    hit = parse_hf_dict(b"{'loss': 0.7, 'grad_norm': tensor(2.5, device='cuda:0'), 'epoch': 0.2}")
    assert hit is not None and hit.metrics == {"loss": 0.7, "grad_norm": 2.5, "epoch": 0.2}
    r = scan_chunk(b"{'loss': 0.69, 'learning_rate': 5e-06, 'epoch': 0.24}\n")
    assert (r.counter, r.value, r.source) == ("epoch", 0.24, "log:hf_dict")


# --- death markers ---------------------------------------------------------------------

PROGRESS = b"\r 40%|####      | 200/500 [10:00<15:00,  3.00s/it]\n"


STEPD = b"slurmstepd: error: *** "
DEATHS = [
    (STEPD + b"JOB 4812345 ON gpu012 CANCELLED AT 2025-06-01T12:30:05 DUE TO TIME LIMIT ***",
     "slurm_cancel", "time_limit"),
    (STEPD + b"JOB 4812345 ON gpu012 CANCELLED AT 2025-06-01T12:30:05 DUE TO PREEMPTION ***",
     "slurm_cancel", "preemption"),
    (STEPD + b"JOB 77 ON n3 CANCELLED AT 2025-06-01T12:30:05 DUE TO NODE FAILURE, "
     b"SEE SLURMCTLD LOG FOR DETAILS ***", "slurm_cancel", "node_fail"),
    (STEPD + b"JOB 77 ON n3 CANCELLED AT 2025-06-01T12:30:05 DUE TO JOB REQUEUE ***",
     "slurm_cancel", "requeue"),
    (STEPD + b"STEP 4812345.0 ON gpu012 CANCELLED AT 2025-06-01T12:30:05 ***",
     "slurm_cancel", "user_cancel"),
    (STEPD + b"JOB 12 CANCELLED AT 2019-01-01T00:00:00 DUE TO TIME LIMIT ***",
     "slurm_cancel", "time_limit"),
    (STEPD + b"JOB 12 ON n1 FAILED (non-zero exit code or other failure mode) ***",
     "slurm_failed", "user_code"),
    (b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4812345.batch. Some of your "
     b"processes may have been killed by the cgroup out-of-memory handler.", "oom_kill", "oom"),
    (b"[rank3]:[E601 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
     b"collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, NumelIn=1, "
     b"NumelOut=1, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.",
     "nccl_timeout", "nccl_timeout"),
    (b"srun: error: gpu012: task 3: Out Of Memory", "srun_task", "user_code"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "kind", "cause"), DEATHS)
def test_death_markers(line: bytes, kind: str, cause: str) -> None:
    r = scan_chunk(PROGRESS + line + b"\n")
    assert [(m.kind, m.cause, m.final) for m in r.markers] == [(kind, cause, True)]
    assert r.markers[0].line == line.decode().strip()
    assert r.markers[0].offset == len(PROGRESS)
    assert r.value == 200  # the counter is still read


def test_marker_followed_by_progress_is_not_final() -> None:
    oom = b"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1.0.\n"
    r = scan_chunk(oom + PROGRESS + b"\r 41%|####1     | 201/500 [10:03<14:57,  3.00s/it]")
    assert [(m.kind, m.final) for m in r.markers] == [("oom_kill", False)]


def test_final_traceback_reports_exception_line() -> None:
    tb = (
        b"[rank0]: Traceback (most recent call last):\n"
        b'[rank0]:   File "/opt/train.py", line 88, in <module>\n'
        b"[rank0]:     trainer.train()\n"
        b"[rank0]:     ~~~~~~~~~~~~~^^\n"
        b"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    )
    r = scan_chunk(PROGRESS + tb)
    kinds = {m.kind: m for m in r.markers}
    exc = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert kinds["traceback"].detail == exc
    assert kinds["traceback"].final and kinds["traceback"].severity == "soft"
    assert kinds["cuda_oom"].cause == "oom"
    # a traceback the job survived (progress follows) is not reported
    survived = scan_chunk(tb + PROGRESS)
    assert "traceback" not in {m.kind for m in survived.markers}


def test_warnings_with_error_words_are_not_markers() -> None:
    noise = (
        b"/usr/lib/python3/site-packages/torch/cuda/amp/grad_scaler.py:120: FutureWarning: "
        b"`torch.cuda.amp.GradScaler(args...)` is deprecated; raising an error in future.\n"
        b"UserWarning: error_if_nonfinite is deprecated and will be removed\n"
        b"wandb: WARNING Step must only increase in log calls. Error logging step 3.\n"
        b"NCCL INFO NET/IB : No device found, error ignored\n"
        b"INFO: a job can be CANCELLED by its user; this line only talks about it\n"
    )
    r = scan_chunk(PROGRESS + noise)
    assert r.markers == [] and r.value == 200


# --- incremental reading ---------------------------------------------------------------


def test_incremental_reads_only_new_bytes(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    big = b"".join(f"line {i} of setup noise\n".encode() for i in range(40000))  # ~900 KB
    frame = b"\r  1%%|1         | %d/500 [00:0%d<08:15,  1.00it/s]"
    log.write_bytes(big + frame % (4, 4) + frame % (5, 5))
    cfg = ScanConfig(first_tail=64 * 1024, max_read=128 * 1024)
    r1 = scan_file(log, None, cfg)
    assert r1.bytes_read <= 64 * 1024 and r1.value == 5 and r1.offset == log.stat().st_size
    with log.open("ab") as fh:  # the frame continues mid-line
        fh.write(frame % (6, 6))
    r2 = scan_file(log, r1.state, cfg)
    assert r2.bytes_read == len(frame % (6, 6)) and r2.value == 6 and not r2.reset
    with log.open("ab") as fh:  # more new bytes than the cap: the newest cap bytes are read
        fh.write(b"x" * 300_000 + b"\n\r  2%|2         | 11/500 [00:11<08:09,  1.00it/s]")
    r3 = scan_file(log, r2.state, cfg)
    assert r3.bytes_read == 128 * 1024 and r3.skipped_bytes > 0 and r3.value == 11
    r4 = scan_file(log, r3.state, cfg)
    assert r4.bytes_read == 0 and r4.value == 11 and not r4.seen


def test_truncation_resets(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(b"\r 50%|#####     | 250/500 [05:00<05:00,  1.00s/it]" * 50)
    r1 = scan_file(log)
    frame = b"\r  0%%|          | %d/500 [00:02<08:18,  1.00s/it]"
    log.write_bytes(frame % 1 + frame % 2)  # sbatch reopened it
    r2 = scan_file(log, r1.state)
    assert r2.reset and r2.state.resets == 1 and r2.value == 2


def test_state_round_trips_through_json() -> None:
    r = scan_chunk(fixture("verl.log") + b"step:8 - actor/grad_norm:nan\n")
    text = json.dumps(r.state.to_dict(), allow_nan=False)
    back = ScanState.from_dict(json.loads(text))
    assert math.isnan(back.metrics_raw["actor/grad_norm"])
    back.metrics_raw["actor/grad_norm"] = r.state.metrics_raw["actor/grad_norm"] = 0.0
    back.metrics["grad_norm"] = r.state.metrics["grad_norm"] = 0.0
    assert back == r.state
    json.dumps(r.to_dict(), allow_nan=False)


def test_plan_and_shell_command_read_the_same_bytes(tmp_path: Path) -> None:
    log = tmp_path / "we ird's.log"
    data = bytes(range(256)) * 40
    log.write_bytes(data)
    state = ScanState(offset=1000, size=1000)
    plan = plan_read(state, len(data), ScanConfig(max_read=4096))
    assert plan == ReadPlan(len(data) - 4096, 4096, False, len(data) - 1000 - 4096)
    out = subprocess.run(["sh", "-c", plan.shell(str(log))], capture_output=True, check=True)
    assert out.stdout == data[plan.start : plan.start + plan.length]
    assert plan_read(None, 10).start == 0 and plan_read(state, 10).reset


def test_chunk_boundary_anywhere_in_a_line() -> None:
    data = fixture("hf_trainer_running.log")
    whole = summary(scan_chunk(data))
    for cut in range(1, len(data)):
        assert summary(feed(data, [cut])) == whole, cut


def test_a_standalone_eval_job_counts_its_eval_bar() -> None:
    """An evaluation job has no training bar: its eval bar is its progress."""
    frames = b"".join(
        b"\rEvaluating:   3%%|          | %d/500 [00:18<05:00,  1.60it/s]" % i for i in range(1, 21)
    )
    res = scan_chunk(frames).to_dict()
    assert (res["counter"], res["value"], res["total"]) == ("step", 20, 500)
    assert res["phase"] == "train"  # no eval allowance: the evaluation is the job's work
    # read incrementally, chunk by chunk, the eval bar keeps counting
    first = scan_chunk(frames[:300])
    later = scan_chunk(frames[300:], first.state).to_dict()
    assert (later["value"], later["phase"]) == (20, "train")
    # ...but beside a training bar the eval bar never becomes the counter
    train = b"".join(b"\r 10%%|#  | %d/100 [00:01<00:09, 10it/s]" % i for i in range(1, 11))
    nested = b"".join(b"\rEvaluating: %d/50 [00:01<00:09, 10it/s]\x1b[A" % i for i in range(1, 5))
    res = scan_chunk(train + b"\n" + nested).to_dict()
    assert (res["value"], res["total"]) == (10, 100)
