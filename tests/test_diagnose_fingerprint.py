"""Fingerprints: the same failure in different runs merges, different failures never do."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from labctl.diagnose import (
    default_catalog,
    diagnose_path,
    diagnose_text,
    fingerprint,
    group,
    normalise,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "2024-11-20 14:37:16 [rank3]: torch.OutOfMemoryError: CUDA out of memory. "
            "Tried to allocate 132.00 MiB. GPU 3",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <SIZE>. GPU <NUM>",
        ),
        (
            "slurmstepd: error: *** JOB 4711 ON della-l09g1 CANCELLED AT 2024-05-01T12:00:00 "
            "DUE TO TIME LIMIT ***",
            "slurmstepd: error: *** JOB <NUM> ON <HOST> CANCELLED AT <TS> DUE TO TIME LIMIT ***",
        ),
        (
            "PermissionError: [Errno 13] Permission denied: '/home/alice/.cache/huggingface/hub'",
            "PermissionError: [Errno 13] Permission denied: '<PATH>/hub'",
        ),
        (
            "ModuleNotFoundError: No module named 'h5py'",
            "ModuleNotFoundError: No module named 'h5py'",
        ),
        (
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
            "NVRM: Xid 79, pid=<NUM>, GPU has fallen off the bus.",
        ),
        (
            "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for "
            "url: https://huggingface.co/api/models/x",
            "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: <URL>",
        ),
        (
            "E0101 12:00:00.123456  1234 file.cc:12] cuDNN error: CUDNN_STATUS_INTERNAL_ERROR "
            "at 0x7f3204 id 123e4567-e89b-12d3-a456-426614174000",
            "cuDNN error: CUDNN_STATUS_INTERNAL_ERROR at <HEX> id <ID>",
        ),
        ("    exitcode  : -9 (pid: 3021)", "exitcode : -9 (pid: <NUM>)"),
        ("Signal 9 (SIGKILL) received by PID 3021", "Signal 9 (SIGKILL) received by PID <NUM>"),
        (
            "NET/IB : Got completion from peer 10.0.0.12<52344> with error 12",
            "NET/IB : Got completion from peer <HOST><<NUM>> with error <NUM>",
        ),
        (
            "Epoch 3:  45%|████▌     | 450/1000 loss=nan",
            "Epoch <NUM>: <NUM>%| <NUM>/<NUM> loss=nan",
        ),
    ],
)
def test_normalise(line: str, expected: str) -> None:
    assert normalise(line) == expected


def _oom_run(rng: random.Random) -> str:
    rank, gpu = rng.randrange(8), rng.randrange(8)
    mib, pid = rng.choice(["20.00", "132.00", "2.63"]), rng.randrange(1000, 99999)
    stamp = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:11:07"
    user = rng.choice(["alice", "bob"])
    return (
        f"{stamp} step {rng.randrange(10**6)} loss {rng.random():.3f}\n"
        f'Traceback (most recent call last):\n  File "/home/{user}/train.py", line '
        f"{rng.randrange(999)}\n"
        f"{stamp} [rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        f"{mib} MiB. GPU {gpu} has a total capacity of 79.15 GiB of which 1.25 MiB is free. "
        f"Process {pid} has 78.9 GiB memory in use.\n"
    )


def test_same_failure_in_different_runs_has_one_fingerprint() -> None:
    rng = random.Random(1)
    fps = {diagnose_text(_oom_run(rng))["fingerprint"] for _ in range(20)}
    assert len(fps) == 1
    perm = [  # one cache dir under three users' homes: one failure
        f"PermissionError: [Errno 13] Permission denied: '/home/{u}/.cache/hf/hub'\n"
        for u in ("alice", "bob", "carol")
    ]
    assert len({diagnose_text(p)["fingerprint"] for p in perm}) == 1
    time_limit = [
        f"slurmstepd: error: *** JOB {j} ON {n} CANCELLED AT 2024-0{m}-01T1{m}:00:00 "
        f"DUE TO TIME LIMIT ***\n"
        for j, n, m in ((1, "gpu-a17", 1), (99999, "della-l09g1", 5), (4711, "node07", 9))
    ]
    assert len({diagnose_text(t)["fingerprint"] for t in time_limit}) == 1


def test_different_failures_never_share_a_fingerprint() -> None:
    cat = default_catalog()
    seen: dict[str, tuple[str, str]] = {}
    for e in cat.entries:
        for ex in e.examples:
            d = diagnose_text(ex)
            fp = d["fingerprint"]
            if fp is None:
                continue
            key = (d["category"], d["catalog_id"])
            assert seen.setdefault(fp, key) == key, (fp, key, seen[fp])
    # same text, different category or id -> different fingerprint
    line = "RuntimeError: something broke"
    pairs = (("code_error", "code_error"), ("unknown", "unknown"), ("code_error", "other"))
    fps = {fingerprint(c, i, "RuntimeError", line) for c, i in pairs}
    assert len(fps) == 3
    # different modules are different failures
    a = diagnose_text("ModuleNotFoundError: No module named 'h5py'\n")["fingerprint"]
    b = diagnose_text("ModuleNotFoundError: No module named 'cv2'\n")["fingerprint"]
    assert a != b


def test_buried_excerpt_keeps_its_fingerprint(tmp_path: Path) -> None:
    excerpt = (
        "[rank1]:[E ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
        "operation timeout: "
        "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
        "ran for 600053 milliseconds before timing out.\n"
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"
    )
    alone = diagnose_text(excerpt)
    assert alone["category"] == "cuda_oom"
    log = tmp_path / "buried.log"
    with log.open("w") as f:
        for i in range(100_000):
            f.write(
                f"{{'loss': {1 + i % 7 / 10:.4f}, 'grad_norm': 0.31, 'epoch': {i / 1e4:.4f}}}\n"
            )
        f.write(excerpt)
        for i in range(100_000):  # the other ranks' teardown chatter: no progress after the OOM
            f.write(
                f"gpu-a{i % 97}:{1000 + i % 8}:2000 [0] NCCL INFO Channel {i % 32:02d}/0 : 0[0]\n"
            )
    for kw in ({"full": True}, {"full": False, "window": 1 << 20}):
        d = diagnose_path(log, **kw)
        assert d["category"] == "cuda_oom" and d["fingerprint"] == alone["fingerprint"], kw
    full = diagnose_path(log, full=True)
    assert full["evidence"][0]["line"] == 100_004
    assert full["evidence"][0]["line_from_end"] == 100_001


def test_group_one_record_per_fingerprint() -> None:
    rng = random.Random(3)
    ds = [diagnose_text(_oom_run(rng), source=f"run{i}.log") for i in range(3)]
    ds.append(diagnose_text("OSError: [Errno 28] No space left on device\n", source="x.log"))
    ds.append(diagnose_text("all good\n", source="ok.log"))
    records = [{"kind": "job", "job_id": "4711", "diagnosis": ds[0]}, *ds[1:]]
    groups = group(records)
    assert [g["count"] for g in groups] == [3, 1]
    top = groups[0]
    assert top["kind"] == "diagnosis_group" and top["category"] == "cuda_oom"
    assert top["sources"] == ["run0.log", "run1.log", "run2.log"] and top["jobs"] == ["4711"]


def _long_oom(rng: random.Random) -> str:
    n = lambda: f"{rng.uniform(1, 99999):.{rng.randint(0, 3)}f}"  # noqa: E731
    return (
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n()} MiB. GPU 0 has a "
        f"total capacity of 79.15 GiB of which {n()} MiB is free. Process "
        f"{rng.randint(1, 4 << 20)} has {n()} GiB memory in use. Of the allocated memory "
        f"{n()} GiB is allocated by PyTorch, "
        f"and {n()} MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory "
        "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
        "fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )


def test_a_line_longer_than_the_evidence_cap_keeps_its_fingerprint() -> None:
    """PyTorch's OOM message is ~480 characters: where a 400-character cut falls moves with
    the digits of each run, so the key is normalised first, then capped."""
    rng = random.Random(7)
    lines = [_long_oom(rng) for _ in range(20)]
    assert min(len(x) for x in lines) > 400
    fps = {diagnose_text(x)["fingerprint"] for x in lines}
    assert len(fps) == 1
    assert diagnose_text(lines[0])["fingerprint"] != diagnose_text(lines[0][:300])["fingerprint"]


# -- issue 15: one fingerprint per root cause, across projects; never one for two causes ----

WORK_NCCL = (
    "[rank{r}]:[E ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={n}, NumelOut={n}, "
    "Timeout(ms)={t}) ran for {ms} milliseconds before timing out.\n"
)


def _fp(text: str) -> str:
    fp = diagnose_text(text)["fingerprint"]
    assert fp is not None, text
    return str(fp)


def test_nccl_timeouts_on_different_collectives_or_sequence_numbers_are_two_failures() -> None:
    """Issue 15: the collective and its sequence number name the failure (a deterministic
    hang stops at the same collective every run); the rank, the tensor size and the timeout
    belong to the run and the launch, so they never split one failure in two."""
    runs = [
        (0, 808, 1, 600000, 600041),
        (3, 808, 1, 600000, 600107),
        (1, 808, 9801523, 600000, 600020),
        (6, 808, 419044352, 1800000, 1800055),
    ]
    same = {
        _fp(WORK_NCCL.format(r=r, seq=seq, op="ALLREDUCE", n=n, t=t, ms=ms))
        for r, seq, n, t, ms in runs
    }
    assert len(same) == 1
    other_op = _fp(WORK_NCCL.format(r=0, seq=808, op="ALLGATHER", n=1, t=600000, ms=600041))
    other_seq = _fp(WORK_NCCL.format(r=0, seq=20879, op="ALLREDUCE", n=1, t=600000, ms=600041))
    assert len(same | {other_op, other_seq}) == 3


def test_a_long_decimal_number_is_a_number_not_hex() -> None:
    """A run of 8+ decimal digits (a tensor's element count, a byte count) is masked like any
    number, so its magnitude never splits one failure in two; hex ids keep their own mask."""
    assert normalise("NumelIn=9801523 NumelOut=419044352") == "NumelIn=<NUM> NumelOut=<NUM>"
    assert normalise("stream 7f3a9c21e0 failed") == "stream <HEX> failed"


def test_permission_errors_on_different_paths_are_two_failures() -> None:
    ckpt = _fp("PermissionError: [Errno 13] Permission denied: '/scratch/run1/checkpoints'\n")
    cache = _fp("PermissionError: [Errno 13] Permission denied: '/home/al/.cache/hf/hub'\n")
    assert ckpt != cache
    # the same directory in another run or under another user is the same failure
    assert ckpt == _fp("PermissionError: [Errno 13] Permission denied: '/data/run7/checkpoints'\n")


def test_torch_save_on_a_full_disk_is_one_failure_in_every_project() -> None:
    projects = [
        (
            'Traceback (most recent call last):\n  File "/home/a/llava/train.py", line 88, in '
            "save\n    torch.save(state, path)\n"
            "OSError: [Errno 28] No space left on device\n"
        ),
        (
            '[rank0]: Traceback (most recent call last):\n[rank0]:   File "/opt/verl/trainer/'
            'ckpt.py", line 12, in save\n[rank0]: RuntimeError: [enforce fail at '
            "inline_container.cc:595] . unexpected pos 1407227904 vs 1407227792\n"
        ),
        "OSError: [Errno 28] No space left on device: '/scratch/x/global_step100/optim.pt'\n",
    ]
    fps = {_fp(p) for p in projects}
    assert len(fps) == 1


def test_a_vllm_kv_cache_shortfall_is_not_a_training_oom() -> None:
    """Both are GPU memory (category cuda_oom) but have different fixes: two failures. The same
    OOM in two runs of a sweep (other sizes, ranks, GPUs) stays one."""
    runs = {
        _fp(f"[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {size}. "
            f"GPU {r} has a total capacity of 79.15 GiB of which {free} is free.\n")
        for r, size, free in ((0, "20.00 MiB", "7.81 MiB"), (5, "2.75 GiB", "1.02 GiB"))
    }  # fmt: skip
    kv = diagnose_text(
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.\n"
    )
    assert kv["category"] == "cuda_oom" and kv["catalog_id"] == "vllm_kv_cache"
    assert len(runs) == 1 and kv["fingerprint"] not in runs


def test_a_type_printed_twice_by_two_ranks_is_the_clean_failure() -> None:
    clean = "ValueError: Expected input batch_size (4) to match target batch_size (8).\n"
    doubled = (
        "ValueErrorValueError: Expected input batch_size (4) to match target batch_size (8).\n"
    )
    assert _fp(clean) == _fp(doubled)


def test_a_shared_shell_message_gives_no_common_fingerprint() -> None:
    """Every job of the lab prints conda's activation error first; the fingerprints follow what
    each job died of (see also test_diagnose_generalised)."""
    conda = "CommandNotFoundError: Your shell has not been properly configured to use 'conda'.\n"
    ends = [
        "Traceback (most recent call last):\n  File \"t.py\", line 1\nKeyError: 'labels'\n",
        'Traceback (most recent call last):\n  File "t.py", line 1\nModuleNotFoundError: '
        "No module named 'h5py'\n",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n",
    ]
    assert len({_fp(conda + e) for e in ends}) == len(ends)


def test_a_long_line_cut_at_another_place_is_the_same_failure() -> None:
    """Lines are cut at a fixed length; where the cut falls depends on how many digits the
    numbers before it had, which must not split one failure in two."""
    words = "the tokenizer and the model disagree about the vocabulary of this checkpoint " * 5
    lines = [
        f"ValueError: token id {tid} is out of range for an embedding of size {size}: {words}\n"
        for tid, size in ((7, 32000), (151643, 151936))
    ]
    assert len(lines[0]) > 400 and len({_fp(line) for line in lines}) == 1


TB_LOAD = 'Traceback (most recent call last):\n  File "/src/train.py", line 40, in <module>\n'


def test_a_state_dict_size_mismatch_is_one_failure_in_every_project() -> None:
    """Whatever the model class, the parameter and the shapes (and transformers' hint after
    it): the checkpoint was trained with another config. A missing key is another failure."""
    projects = [
        "RuntimeError: Error(s) in loading state_dict for ArcFaceHead:\n\tsize mismatch for "
        "head.kernel: copying a param with shape torch.Size([512, 93431]) from checkpoint, the "
        "shape in current model is torch.Size([512, 10572]).\n",
        TB_LOAD
        + "RuntimeError: Error(s) in loading state_dict for YOLO:\n"
        + "".join(
            f"\tsize mismatch for model.0.{p}: copying a param with shape torch.Size([{n}]) "
            f"from checkpoint, the shape in current model is torch.Size([64]).\n"
            for p, n in (("conv.weight", "48, 3, 3, 3"), ("bn.weight", 48), ("bn.bias", 48))
        ),
        "RuntimeError: Error(s) in loading state_dict for RobertaForSequenceClassification:\n\t"
        "size mismatch for classifier.out_proj.weight: copying a param with shape "
        "torch.Size([5, 768]) from checkpoint, the shape in current model is torch.Size([2, "
        "768]).\n\tYou may consider adding `ignore_mismatched_sizes=True` in the model "
        "`from_pretrained` method.\n",
    ]
    ds = [diagnose_text(p) for p in projects]
    assert {d["catalog_id"] for d in ds} == {"checkpoint_shape_mismatch"}
    assert len({d["fingerprint"] for d in ds}) == 1
    missing = _fp(
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n\tMissing key(s) in "
        'state_dict: "module.fc.weight", "module.fc.bias".\n'
    )
    assert missing != ds[0]["fingerprint"]


def test_an_interpreters_version_is_no_difference() -> None:
    """torchelastic names the worker's binary: `.../bin/python` in one environment, `python3`
    or `python3.11` in another -- one segfaulting worker. Another exit code is another failure;
    a file that is named like an interpreter keeps its digits."""
    binaries = ("/opt/conda/envs/a/bin/python", "/gpfs/u/envs/b/bin/python3", "/usr/bin/python3.11")
    fps = {
        _fp(
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) "
            f"local_rank: 0 (pid: {pid}) of binary: {b}\n"
        )
        for pid, b in zip((1416, 2012686, 77), binaries, strict=True)
    }
    assert len(fps) == 1
    killed = _fp(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: "
        "0 (pid: 77) of binary: /usr/bin/python3\n"
    )
    assert killed not in fps
    assert normalise("python3: can't open file") == "python: can't open file"
    assert normalise("run python3.py") == "run python<NUM>.py"


def test_a_hub_read_timeout_is_one_failure_whatever_the_host_file_or_wrapper() -> None:
    """The Hub itself, its LFS CDN shards and a mirror, as requests, urllib3, huggingface_hub
    and a server's JSON error report it; a Hub that cannot be reached at all is another."""
    timeouts = [
        "requests.exceptions.ReadTimeout: (ReadTimeoutError(\"HTTPSConnectionPool(host='cdn-lfs"
        "-us-1.huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: "
        "5f0c)')\n",
        '  "message": "HTTPSConnectionPool(host=\'cdn-lfs.huggingface.co\', port=443): Read '
        'timed out.",\n',
        "Error while downloading from https://cdn-lfs-us-1.hf-mirror.com/repos/a1/b2/a1b2/model"
        ".safetensors?Expires=1700000000: HTTPSConnectionPool(host='cdn-lfs-us-1.hf-mirror.com',"
        " port=443): Read timed out.\n",
    ]
    ds = [diagnose_text(t) for t in timeouts]
    assert {d["catalog_id"] for d in ds} == {"hf_hub_read_timeout"}
    assert len({d["fingerprint"] for d in ds}) == 1
    unreachable = _fp(
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port="
        "443): Max retries exceeded with url: /api/models/gpt2 (Caused by NameResolutionError)\n"
    )
    assert unreachable != ds[0]["fingerprint"]


def test_a_truncated_checkpoint_is_one_failure_inside_a_spawn_report_or_not() -> None:
    zip_err = "PytorchStreamReader failed reading zip archive: failed finding central directory"
    plain = _fp(TB_LOAD + f"RuntimeError: [enforce fail at inline_container.cc:144] . {zip_err}\n")
    spawned = _fp(
        "torch.multiprocessing.spawn.ProcessRaisedException: \n\n-- Process 0 terminated with "
        "the following error:\n" + TB_LOAD + f"RuntimeError: {zip_err}\n"
    )
    assert plain == spawned


def test_an_earlier_jobs_cancel_in_an_appended_file_gives_no_fingerprint() -> None:
    """The last job of an LSF output file that others were appended to succeeded: healthy, no
    fingerprint -- never the one of a job that was really cancelled."""
    killed = "TERM_OWNER: job killed by owner.\nExited with exit code 130.\n"
    cancelled = diagnose_text("epoch 1\n" + killed)
    appended = diagnose_text("epoch 1\n" + killed + "epoch 1\nSuccessfully completed.\n")
    assert cancelled["category"] == "cancelled" and cancelled["fingerprint"]
    assert appended["category"] == "healthy" and appended["fingerprint"] is None


# -- corpus7's splits: one failure worded by different releases, wordings and victims -------


def test_a_shells_kill_report_is_one_failure_whatever_the_command_it_echoes() -> None:
    """bash names the command a signal ended, with the run's own arguments; a bare `Killed`
    line says the same. Another signal is another failure."""
    reports = [
        "Killed\n",
        "/var/spool/slurmd/job9001/slurm_script: line 28:  4542 Killed                  "
        "CUDA_VISIBLE_DEVICES=0,1 python train.py --seed 3 --lr 3e-4\n",
        "/var/spool/torque/mom_priv/jobs/812.SC: line 62: 98110 Killed                  "
        "/opt/tools/asm/bin/assemble --threads 64 -r reads.fa -o out/\n",
        "run.sh: line 7: 77 Killed\n",
    ]
    assert len({_fp(r) for r in reports}) == 1
    segv = _fp("run.sh: line 7: 77 Segmentation fault      (core dumped) ./solver --n 8\n")
    assert segv not in {_fp(r) for r in reports}
    assert normalise("line 7: 77 Segmentation fault      (core dumped) ./a") == (
        "Segmentation fault (core dumped)"
    )


def test_rays_memory_monitor_kill_is_one_failure_whatever_the_wording_or_victim() -> None:
    kills = [
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n",
        "The actor is dead because its worker process has died. Worker exit type: "
        "NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on "
        "memory.\n",
        "(raylet) [2025-01-01 00:00:00,000 E 99 99] (raylet) node_manager.cc:3040: 4 Workers "
        "(tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other "
        "reasons at node (ID: abc123, IP: 10.0.0.9) over the last time period.\n",
    ]
    fps = {_fp(k) for k in kills}
    assert len(fps) == 1
    kernel = _fp("slurmstepd: error: Detected 1 oom_kill event in StepId=77.batch.\n")
    assert kernel not in fps


def test_a_cuda_oom_is_one_failure_whatever_the_gpus_state_or_the_torch_release() -> None:
    """What the GPU held at that moment -- its capacity, what was free, what other processes
    had (printed only when some do) -- and one release's typo are no difference."""
    ooms = [
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.90 GiB. GPU 0 has "
        "a total capacty of 39.39 GiB of which 8.17 GiB is free. Including non-PyTorch memory, "
        "this process has 31.38 GiB memory in use. Process 120085 has 414.00 MiB memory in use. "
        "Of the allocated memory 23.95 GiB is allocated by PyTorch, and 6.11 GiB is reserved by "
        "PyTorch but unallocated.\n",
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.31 GiB. GPU 5 "
        "has a total capacity of 31.74 GiB of which 3.64 GiB is free. Including non-PyTorch "
        "memory, this process has 28.09 GiB memory in use. Of the allocated memory 27.25 GiB is "
        "allocated by PyTorch, and 69.27 MiB is reserved by PyTorch but unallocated.\n",
    ]
    assert len({_fp(TB_LOAD + o) for o in ooms}) == 1
    other = _fp(TB_LOAD + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert other != _fp(TB_LOAD + ooms[0])


def test_a_rendezvous_port_in_use_is_one_failure_whatever_the_port_host_or_wording() -> None:
    """torch's two wordings of TCPStore's bind failure, on other ports and hosts; a client that
    cannot reach the store is another failure."""
    binds = [
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
        "network address. The server socket has failed to bind to [::]:30786 (errno: 98 - Address "
        "already in use). The server socket has failed to bind to 0.0.0.0:30786 (errno: 98 - "
        "Address already in use).\n",
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
        "network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: "
        "address already in use\n",
    ]
    fps = {_fp(TB_LOAD + b) for b in binds}
    assert len(fps) == 1
    client = _fp(
        TB_LOAD + "torch.distributed.DistNetworkError: The client socket has failed to connect to "
        "[node07]:29500 (errno: 111 - Connection refused).\n"
    )
    assert client not in fps


def test_a_slurm_banner_names_its_reason_never_its_node_or_release() -> None:
    """v6: older SLURM prints the node after the banner; one time limit, one preemption, one
    cancel by its owner whatever the release, the job, the node or the time -- and the three
    are never one another."""
    fps = {}
    for reason in (" DUE TO TIME LIMIT", " DUE TO PREEMPTION", ""):
        banners = [
            f"slurmstepd: error: *** JOB 2743269 ON gr009 CANCELLED AT 2025-11-29T19:02:11"
            f"{reason} ***\n",
            f"slurmstepd: *** JOB 468071 CANCELLED AT 2016-04-22T22:58:14{reason} *** on "
            "c222-404\n",
            f"slurmstepd-sasquatch: error: *** STEP 36361.0 ON sasquatch CANCELLED AT "
            f"2021-07-19T17:50:09{reason} ***\n",
        ]
        one = {_fp(b) for b in banners}
        assert len(one) == 1, (reason, banners)
        fps[reason] = one.pop()
    assert len(set(fps.values())) == 3
    assert normalise("*** JOB 1 CANCELLED AT 2016-04-22T22:58:14 *** on c222-404") == (
        "*** JOB <NUM> CANCELLED AT <TS> ***"
    )
    # a person's cancel in other schedulers' words is the same failure
    assert _fp("TERM_OWNER: job killed by owner.\n") == fps[""]


def test_the_cgroup_oom_killer_is_one_failure_in_every_wording() -> None:
    """slurmstepd's two wordings of an oom-kill event (any count, any step), the kernel's and a
    pod's: the killer's report names the limit and its victim, never the program's cause."""
    kills = [
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=25908.batch. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=61769502.batch. Some of the step "
        "tasks have been OOM Killed.\n",
        "slurmstepd: error: Detected 3 oom_kill events in StepId=87754.0. Some of the step tasks "
        "have been OOM Killed.\n",
        "Last State: Terminated  Reason: OOMKilled  Exit Code: 137\n",
    ]
    fps = {_fp(k) for k in kills}
    assert len(fps) == 1
    assert _fp(TB_LOAD + "torch.OutOfMemoryError: CUDA out of memory.\n") not in fps


def test_an_appended_file_ending_in_a_preemption_never_shares_a_cancels_fingerprint() -> None:
    """Its earlier job's bare cancel is an earlier job's: the file's fingerprint is its last end's;
    a requeued job that trains on has none (it is healthy), so it joins no preemption."""
    steps = "".join(f"Step {i}: loss=0.0{i % 9 + 1}\n" for i in range(40))
    cancel = "slurmstepd: error: *** JOB 304184 ON dgx-10 CANCELLED AT 2025-10-16T02:31:48 ***\n"
    preempt = cancel.replace("JOB 304184", "JOB 310529").replace(" ***", " DUE TO PREEMPTION ***")
    appended = diagnose_text("== eval ==\n" + cancel + "== train ==\n" + steps + preempt)
    assert appended["category"] == "preemption"
    assert appended["fingerprint"] == _fp(steps + preempt) != _fp(steps + cancel)
    smi = "| NVIDIA-SMI 570.158.01    Driver Version: 570.158.01    CUDA Version: 12.8 |\n"
    requeued = "Mon Jan 19 10:28:25 2026\n" + smi + steps + preempt
    requeued += "Wed Jan 21 15:46:12 2026\n" + smi + steps.replace("Step ", "Step 1")
    assert diagnose_text(requeued)["fingerprint"] is None
