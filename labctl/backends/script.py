"""One bash script per cluster per poll step, and its output split back into sections.

A poll runs several commands on a cluster (the clock, squeue, sacct, a stat of the logs…).
Each costs an SSH round trip when run alone, so they go into ONE script fed to `bash -s`
through the Transport. Every command's stdout, exit status and stderr come back as named
sections between marker lines that carry a random nonce, so no job name or log line can
fake a marker:

    \\n@@labctl:<nonce>:<section>:<part>\\n     part = out | rc | err

The marker starts with a newline (a command's output need not end with one); exactly that
newline is removed again, so a section's bytes are what the command printed, byte for byte.
A final `end` marker proves the script ran to completion (output not cut short).
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from labctl.errors import BackendError

if TYPE_CHECKING:
    from labctl.backends.transport import Transport

# An argv element that stands for the login user on the cluster (`id -un`, evaluated there).
LOGIN_USER = "@@LABCTL_LOGIN_USER@@"
STDERR_KEEP = 4000


@dataclass
class Section:
    name: str
    out: bytes = b""
    rc: int | None = None
    err: bytes = b""
    parts: dict[str, bytes] = field(default_factory=dict)  # any other part, by name

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace")

    def stderr_line(self, limit: int = 300) -> str:
        text = self.err.decode("utf-8", "replace").strip().replace("\n", " | ")
        return text[-limit:]


def shell_word(arg: str) -> str:
    """shlex.quote, except the LOGIN_USER placeholder becomes "$LABCTL_USER"."""
    if LOGIN_USER in arg:
        parts = arg.split(LOGIN_USER)
        return '"$LABCTL_USER"'.join(shlex.quote(p) if p else "" for p in parts)
    return shlex.quote(arg)


def shell_join(argv: Iterable[str]) -> str:
    return " ".join(shell_word(a) for a in argv)


@dataclass
class Script:
    """Builds the script. `env` is exported first; `path_prepend` goes before PATH."""

    env: Mapping[str, str] = field(default_factory=dict)
    path_prepend: Sequence[str] = ()
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        pre = [
            "set +e",
            "export LC_ALL=C",
        ]
        if self.path_prepend:
            pre.append(f'export PATH={shlex.quote(":".join(self.path_prepend))}:"$PATH"')
        pre += [f"export {k}={shlex.quote(v)}" for k, v in self.env.items()]
        pre += [
            "LABCTL_T=$(mktemp -d 2>/dev/null) || "
            '{ LABCTL_T="/tmp/labctl.$$"; mkdir -p "$LABCTL_T"; }',
            "trap 'rm -rf \"$LABCTL_T\"' EXIT",
            "LABCTL_USER=$(id -un 2>/dev/null)",
            f'_m() {{ printf \'\\n@@labctl:{self.nonce}:%s:%s\\n\' "$1" "$2"; }}',
            '_run() { local n=$1; shift; _m "$n" out; "$@" 2>"$LABCTL_T/err"; local rc=$?; '
            f'_m "$n" rc; echo "$rc"; _m "$n" err; head -c {STDERR_KEEP} "$LABCTL_T/err"; }}',
            '_bg() { local n=$1; shift; "$@" >"$LABCTL_T/$n.out" 2>"$LABCTL_T/$n.err"; '
            'echo $? >"$LABCTL_T/$n.rc"; }',
            '_emit() { _m "$1" out; cat "$LABCTL_T/$1.out"; _m "$1" rc; cat "$LABCTL_T/$1.rc"; '
            f'_m "$1" err; head -c {STDERR_KEEP} "$LABCTL_T/$1.err"; }}',
            "_m clock out; date +%s",
            '_m user out; printf %s "$LABCTL_USER"',
        ]
        self.lines[:0] = pre

    def run(self, name: str, argv: Sequence[str]) -> None:
        """A section with the command's stdout, exit status and (the head of) stderr."""
        _check_name(name)
        self.lines.append(f"_run {name} {shell_join(argv)}")

    def lanes(self, lanes: Sequence[Sequence[tuple[str, Sequence[str]]]]) -> None:
        """Sections whose commands run concurrently, one lane at a time each (e.g. squeue
        in one lane, the sacct calls in two others): the script waits for all of them and
        then prints their sections in order. Output is buffered in the temp directory."""
        names: list[str] = []
        for lane in lanes:
            calls = []
            for name, argv in lane:
                _check_name(name)
                names.append(name)
                calls.append(f"_bg {name} {shell_join(argv)}")
            if calls:
                self.lines.append("{ " + "; ".join(calls) + "; } &")
        self.lines.append("wait")
        self.lines += [f"_emit {name}" for name in names]

    def define(self, code: str) -> None:
        """Shell function definitions (or other setup) placed before every section."""
        self.lines.insert(self._sections_start(), code)

    def emit(self, code: str) -> None:
        """Code that prints its own sections with `_m <section> <part>` (a trusted string)."""
        self.lines.append(code)

    def _sections_start(self) -> int:
        return next(i for i, line in enumerate(self.lines) if line.startswith("_m clock"))

    def shell(self, name: str, code: str) -> None:
        """A section running shell code (a trusted string: the user's own config)."""
        _check_name(name)
        self.lines.append(f"_run {name} bash -c {shlex.quote(code)}")

    def raw(self, name: str, code: str) -> None:
        """A section whose stdout is whatever `code` prints (no rc/err capture)."""
        _check_name(name)
        self.lines.append(f"_m {name} out; {{ {code}\n}}")

    def text(self) -> str:
        return "\n".join([*self.lines, "_m end out", ""])


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_.-]*", name):
        raise ValueError(f"bad section name {name!r}")


def parse_sections(stdout: bytes, nonce: str) -> dict[str, Section]:
    """Split a script's stdout into sections. Raises BackendError(bad_output) when the end
    marker is missing (the script was cut short) or a section's exit status is garbled."""
    marker = re.compile(
        rb"\n@@labctl:" + re.escape(nonce.encode()) + rb":([a-z0-9_.-]+):([a-z]+)\n"
    )
    sections: dict[str, Section] = {}
    # a leading newline so a marker at the very start matches too
    data = b"\n" + stdout
    matches = list(marker.finditer(data))
    if not matches or matches[-1].group(1) != b"end":
        raise BackendError(
            "the cluster's output stopped before the end of the poll script", reason="bad_output"
        )
    for m, nxt in zip(matches, [*matches[1:], None], strict=True):
        name = m.group(1).decode()
        part = m.group(2).decode()
        body = data[m.end() : nxt.start() if nxt is not None else len(data)]
        sec = sections.setdefault(name, Section(name))
        if part == "out":
            sec.out = body
        elif part == "err":
            sec.err = body
        elif part != "rc":
            sec.parts[part] = body
        else:
            text = body.strip()
            if not text.lstrip(b"-").isdigit():
                raise BackendError(
                    f"garbled exit status of {name}: {text[:40]!r}", reason="bad_output"
                )
            sec.rc = int(text)
    sections.pop("end", None)
    return sections


def run_script(
    transport: Transport, script: Script, *, timeout: float, what: str
) -> tuple[dict[str, Section], float]:
    """Run a poll script; (sections, elapsed seconds). Transport failures, a cut-short
    output and a missing clock raise BackendError.

    The script also limits itself on the cluster (`timeout`, a second before our own
    deadline), so a hung sacct dies there too instead of lingering in an SSH session."""
    remote = max(1.0, timeout - 1.0)
    argv = ["timeout", "-k", "1", f"{remote:.1f}s", "bash", "-s"]
    result = transport.run(argv, timeout=timeout, input=script.text().encode())
    if result.timed_out or (not transport.is_local and result.returncode == 255):
        raise transport.error_for(result, what=what)
    try:
        sections = parse_sections(result.stdout, script.nonce)
    except BackendError as exc:
        if result.returncode in (124, 137):
            raise BackendError(
                f"{what} did not finish within {timeout:.0f}s (stopped on the cluster)",
                reason="timeout",
            ) from None
        if result.returncode != 0:
            raise transport.error_for(result, what=what) from None
        raise exc from None
    return sections, result.elapsed_s


def clock_of(sections: dict[str, Section]) -> float:
    text = sections.get("clock", Section("clock")).text.strip()
    if not text.isdigit():
        raise BackendError(
            f"the cluster's clock (date +%s) printed {text[:40]!r}", reason="bad_output"
        )
    return float(text)
