"""supervise's pure parts: argument spellings, fixes, the policy, the output sink."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labctl.backends.sink import Sink
from labctl.diagnose import default_catalog
from labctl.redact import Redactor
from labctl.supervise.args import add, command_name, find, scale, spellings
from labctl.supervise.fixes import FixContext, NoFix, Setup, plan
from labctl.supervise.policy import Escalate, History, Retry, decide

BATCH = spellings(default_catalog().arg_families["batch_size"])
SCOPE = spellings(default_catalog().arg_families["scope"])
FAMILIES = {name: spellings(v) for name, v in default_catalog().arg_families.items()}


@pytest.mark.parametrize(
    ("argv", "found"),
    [
        (["t", "--batch-size", "64"], [("--batch-size", "64", 2, "space")]),
        (["t", "--batch_size=64"], [("--batch_size", "64", 1, "equals")]),
        (
            ["t", "--per-device-train-batch-size", "8"],
            [("--per-device-train-batch-size", "8", 2, "space")],
        ),
        (["t", "data.train_batch_size=64"], [("data.train_batch_size", "64", 1, "key")]),
        (["t", "++model.bs=4", "x=1"], [("++model.bs", "4", 1, "key")]),
        (["t", "--eval_batch_size", "64", "--lr", "3"], []),
        (["t", "--batch-size"], [("--batch-size", None, 1, "flag")]),
        (["--batch-size", "3"], []),  # argv[0] is the program
    ],
)
def test_find_every_spelling(argv: list[str], found: list[tuple[Any, ...]]) -> None:
    assert [(o.name, o.value, o.index, o.style) for o in find(argv, BATCH)] == found


def test_scale_halves_to_the_minimum_and_no_further() -> None:
    argv = ["t", "--batch-size", "3", "trainer.max_steps=10", "--lr", "3e-4"]
    out, changes = scale(argv, BATCH, 0.5, 1)
    assert out == ["t", "--batch-size", "1", "trainer.max_steps=10", "--lr", "3e-4"]
    assert [(c.old, c.new) for c in changes] == [("3", "1")]
    again, none = scale(out, BATCH, 0.5, 1)
    assert again == out and none == []
    floats, changes = scale(["t", "--max-epochs=3.0"], SCOPE, 0.5)
    assert floats == ["t", "--max-epochs=1.5"]


@given(
    value=st.integers(min_value=0, max_value=1 << 20),
    lo=st.integers(min_value=0, max_value=64),
    noise=st.lists(
        st.sampled_from(["--lr", "3e-4", "x=1", "--fp16", "train.py", "-v", "7"]), max_size=6
    ),
    spelling=st.sampled_from(["--batch-size", "--batch_size=", "data.micro_batch_size="]),
)
def test_scaling_never_goes_below_min_nor_touches_other_tokens(
    value: int, lo: int, noise: list[str], spelling: str
) -> None:
    token = [f"{spelling}{value}"] if spelling.endswith("=") else [spelling, str(value)]
    argv = ["prog", *noise, *token, *noise]
    out, changes = scale(argv, BATCH, 0.5, lo)
    assert len(out) == len(argv)
    assert [a for a, b in zip(argv, out, strict=True) if a != b] == (
        [argv[len(noise) + len(token)]] if changes else []
    )
    if changes:
        new = int(changes[0].new or 0)
        assert lo <= new < value
    else:
        assert value // 2 < lo or value <= lo or value == 0


@pytest.mark.parametrize(
    ("argv", "added"),
    [
        (["p", "train.py", "--learning-rate", "3"], ["--max-grad-norm", "1.0"]),
        (["p", "train.py", "--learning_rate=3", "--bf16"], ["--max_grad_norm=1.0"]),
        (["p", "train.py", "optim.lr=3", "data=c4"], ["max_grad_norm=1.0"]),
        (["p", "train.py"], ["--max_grad_norm", "1.0"]),
    ],
)
def test_add_uses_the_commands_own_style(argv: list[str], added: list[str]) -> None:
    assert add(argv, frozenset(), "max_grad_norm", 1.0) == [*argv, *added]


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["python", "train.py"], "train"),
        (["/opt/venv/bin/python3.11", "-u", "scripts/sft.py", "--x", "1"], "sft"),
        (["torchrun", "--nproc_per_node", "8", "rl/grpo.py"], "grpo"),
        (["python", "-m", "lab.eval"], "lab.eval"),
        (["./run it.sh"], "run_it"),
        (["python", "-c", "print(1)"], "python"),
    ],
)
def test_command_name(argv: list[str], name: str) -> None:
    assert command_name(argv) == name


def _ctx(**kw: Any) -> FixContext:
    return FixContext(base_env={"CUDA_VISIBLE_DEVICES": "0"}, families=FAMILIES, **kw)


def test_plan_fixes_env_install_and_once() -> None:
    setup = Setup(("p", "t.py"))
    cpu = plan(
        {"type": "set_env", "name": "CUDA_VISIBLE_DEVICES", "value": "", "once": True},
        setup,
        _ctx(),
    )
    assert not isinstance(cpu, NoFix) and cpu.setup.env == (("CUDA_VISIBLE_DEVICES", ""),)
    used = _ctx(once_used=frozenset({cpu.once_key or ""}))
    again = plan(
        {"type": "set_env", "name": "CUDA_VISIBLE_DEVICES", "value": "", "once": True},
        cpu.setup,
        used,
    )
    assert isinstance(again, NoFix) and again.reason == "fix_exhausted"
    port = plan({"type": "set_env", "name": "MASTER_PORT", "value": "{free_port}"}, setup,
                _ctx(free_port=lambda: 29871))  # fmt: skip
    assert not isinstance(port, NoFix) and port.setup.env == (("MASTER_PORT", "29871"),)
    gone = plan({"type": "set_env", "name": "CUDA_VISIBLE_DEVICES", "unset": True}, setup, _ctx())
    assert not isinstance(gone, NoFix) and gone.setup.environ({"CUDA_VISIBLE_DEVICES": "0"}) == {}
    module = {"type": "install_module", "module": "cv2", "package": "opencv-python"}
    refused = plan(module, setup, _ctx())
    assert isinstance(refused, NoFix) and refused.reason == "install_disabled"
    assert "'cv2'" in refused.message and "opencv-python" in refused.message
    allowed = plan(module, setup, _ctx(allow_install=True))
    assert not isinstance(allowed, NoFix) and allowed.install == "opencv-python"
    assert allowed.setup.key() != setup.key()  # an install changes what the attempt runs
    for kind in ("none", "scale_resource", "prune_disk"):
        assert isinstance(plan({"type": kind}, setup, _ctx()), NoFix)


@pytest.mark.parametrize(
    ("action", "argv"),
    [
        ({"type": "add_arg", "arg": "max_grad_norm", "value": 1.0}, ("p", "t.py")),
        ({"type": "set_env", "name": "HF_HUB_OFFLINE", "value": "1"}, ("p", "t.py")),
        ({"type": "set_env", "name": "CUDA_VISIBLE_DEVICES", "unset": True}, ("p", "t.py")),
        (
            {"type": "reduce_scope", "arg": "max_steps", "factor": 0.5, "min": 1},
            ("p", "t.py", "--max-steps", "100"),
        ),
    ],
    ids=["add_arg", "set_env", "unset_env", "reduce_scope"],
)
def test_add_arg_set_env_and_reduce_scope_are_once_only_without_saying_so(
    action: dict[str, Any], argv: tuple[str, ...]
) -> None:
    """No `once = true` in the entry (a user catalog's, say): still applied once per run."""
    first = plan(action, Setup(argv), _ctx())
    assert not isinstance(first, NoFix) and first.once_key
    # a fresh Setup: the fix would change something again (scope 100 -> 50 once more)
    again = plan(action, Setup(argv), _ctx(once_used=frozenset({first.once_key})))
    assert isinstance(again, NoFix) and again.reason == "fix_exhausted"
    assert "already applied once" in again.message


def test_a_port_clash_gets_a_fresh_port_each_time() -> None:
    port = {"type": "set_env", "name": "MASTER_PORT", "value": "{free_port}"}
    ports = iter([29871, 29872])
    ctx = _ctx(free_port=lambda: next(ports))
    first = plan(port, Setup(("p",)), ctx)
    assert not isinstance(first, NoFix) and first.once_key is None
    second = plan(port, first.setup, ctx)
    assert not isinstance(second, NoFix) and second.setup.env == (("MASTER_PORT", "29872"),)
    halve = {"type": "scale_arg", "arg": "batch_size", "factor": 0.5, "min": 1}
    assert plan(halve, Setup(("p", "--bs", "8")), ctx).once_key is None  # type: ignore[union-attr]


OOM = {
    "category": "cuda_oom", "catalog_id": "cuda_oom", "title": "CUDA out of memory",
    "retryable": False, "fingerprint": "a" * 16,
    "action": {"type": "scale_arg", "arg": "per_device_train_batch_size", "factor": 0.5, "min": 1},
}  # fmt: skip
NCCL = {
    "category": "nccl_timeout", "catalog_id": "nccl_timeout", "title": "NCCL timeout",
    "retryable": True, "fingerprint": "b" * 16, "action": {"type": "resubmit"},
}  # fmt: skip


def _hist(
    n: int = 1, seen: tuple[Setup, ...] = (), fps: tuple[str, ...] = (), budget: int = 3
) -> History:
    return History(n, frozenset(s.key() for s in seen), frozenset(fps), budget)


def test_policy_fixes_until_budget_and_never_repeats_an_attempt() -> None:
    s64 = Setup(("p", "--bs", "64"))
    step = decide(OOM, s64, _hist(seen=(s64,)), _ctx())
    assert isinstance(step, Retry) and step.fix.setup.argv == ("p", "--bs", "32")
    spent = decide(OOM, s64, _hist(n=4, seen=(s64,)), _ctx())
    assert isinstance(spent, Escalate) and spent.reason == "budget_spent"
    s32 = Setup(("p", "--bs", "32"))  # the fix would go back to an attempt already run
    loop = decide(OOM, s64, _hist(seen=(s64, s32)), _ctx())
    assert isinstance(loop, Escalate) and loop.reason == "would_repeat"
    unknown = decide({**OOM, "category": "unknown", "catalog_id": "unknown"}, s64, _hist(), _ctx())
    assert isinstance(unknown, Escalate) and unknown.reason == "unknown_failure"


def test_policy_reruns_a_retryable_failure_once() -> None:
    s = Setup(("p",))
    first = decide(NCCL, s, _hist(seen=(s,)), _ctx())
    assert isinstance(first, Retry) and first.fix.resubmit and first.fix.setup == s
    second = decide(NCCL, s, _hist(n=2, seen=(s,), fps=(NCCL["fingerprint"],)), _ctx())
    assert isinstance(second, Escalate) and second.reason == "repeated_failure"
    code = {**NCCL, "retryable": False, "action": {"type": "none"}}
    assert decide(code, s, _hist(), _ctx()) == Escalate(
        "no_fix", "NCCL timeout: the catalog has no automatic fix for this failure"
    )


TOKENS = ["ghp_" + "Q" * 36, "hf_" + "abcdEFGH" * 4, "sk-ant-" + "x1" * 15]


@given(
    lines=st.lists(
        st.tuples(st.sampled_from(["", "token=", "push with ", "config: {'k': '"]),
                  st.sampled_from([*TOKENS, "plain"]), st.sampled_from(["\n", "\r", "'}\n"])),
        min_size=1, max_size=12,
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=10),
)  # fmt: skip
def test_sink_redacts_whatever_the_chunking(
    lines: list[tuple[str, str, str]], cuts: list[int]
) -> None:
    data = "".join(a + b + c for a, b, c in lines).encode()
    log = io.BytesIO()
    sink = Sink(log, None, Redactor().text)
    pos = 0
    for cut in sorted(set(cuts)):
        sink.feed(data[pos:cut])
        pos = max(pos, cut)
    sink.feed(data[pos:])
    sink.close()
    out = log.getvalue().decode()
    for token in TOKENS:
        assert token not in out and token[:12] not in out
    assert out.count("\n") + out.count("\r") == data.count(b"\n") + data.count(b"\r")
    assert out.count("plain") == data.count(b"plain")
