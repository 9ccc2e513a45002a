"""Stable failure fingerprints (research §12).

fingerprint = first 16 hex digits of sha256(`v8|category|catalog id|exception type|message`),
where the message is the root-cause line from the start of the catalog match (so per-run
prefixes such as timestamps, ranks and merged progress-bar frames fall away), with launcher
and logger prefixes stripped and per-run values masked by fixed, ordered rules:

  kept as is   errno (`[Errno 28]`, `error=2`), signal names/numbers, exit codes, HTTP status,
               Xid numbers, CUDA/NCCL status names, exception types, `sm_NN`, the module in
               `No module named 'x'`, an NCCL collective's `OpType=` and `SeqNum=` (issue
               15's rule: two timeouts on different collectives or sequence numbers are two
               failures; a deterministic hang stops at the same collective every run)
  <TS>         timestamps and times of day
  <URL>        URLs
  <ID>         UUIDs
  <HOST>       IPv4/IPv6 addresses, host names with digits (`node-a17`, `ip-10-0-0-1`), FQDNs
  <PATH>/name  absolute, home-relative and multi-segment relative paths keep their last
               component (digits masked): one cause under two users' homes is one failure,
               permission errors on two different directories are two
  python       an interpreter's version suffix is dropped (`python3`, `python3.11`, `pypy3`,
               `perl5` are the interpreter they name: torchelastic's "of binary: .../python3"
               and ".../python" report one failure)
  <HEX>        `0x…` and runs of 8+ hex digits containing a digit and a letter (a run of
               decimal digits is a number, however long); a dump of 8-digit hex words (two
               or more in a row, as the driver's `Xid 62, 223b6a66 00002100 ...` payload)
               is one <HEX>, whichever of its words happen to hold only decimal digits
  <SIZE>       a size with its unit (20.00 MiB, 1.5 GiB, 4096 bytes)
  <NUM>        every other number (sizes, steps, ranks, pids, ports, durations, job ids)
  GPU state    an allocator's report of the GPU at the failed allocation -- its capacity and
               what is free ("GPU <NUM> has a total capacity of ... is free.", spelt
               "capacty" by some torch releases), what other processes hold there ("Process
               <NUM> has ... memory in use.", printed only when some do) -- is dropped: the
               state of the device at that moment, not the failure
  shell job    a shell's report of a command a signal ended (`script: line 28:  4542 Killed
               <command>`) is its status alone (`Killed`, as a bare line says it): the command
               it echoes carries the run's own arguments (seeds, paths, hyperparameters); bash
               glues a core dump's note on (`Floating point exception(core dumped)`), the bare
               line spaces it: one spelling
  banner node  the node older SLURM releases print after an end banner (`*** JOB 4711
               CANCELLED AT <time> DUE TO TIME LIMIT *** on c222-404`) is dropped, as the
               node inside it (`ON <node>`) is masked: where the job ran, not why it ended

The exception type is reduced to its last component, in the message too
(`torch.OutOfMemoryError` and `torch.cuda.OutOfMemoryError` are one failure), the normalised
message is cut at MESSAGE_CHARS (so a long line's tail, cut where its raw length happens to fall,
never splits one failure in two), and a type two ranks printed at once
(`SyntaxErrorSyntaxError`) to one copy. PyTorch's "(when checking argument for argument x in
method y)" suffix is dropped. An entry with `fingerprint = "entry"` (a full disk or quota) is
identified by the entry alone. The rules are versioned (`v8`; v1 masked whole paths and NCCL
sequence numbers, v2 took decimal runs of 8+ digits for hex, v3 kept an interpreter's version,
v4 a GPU's state in an allocator's report, the command a shell's job report echoes and an
exception type's module path in the message, v5 the node an older SLURM banner ends with, v6
split a hex dump into <HEX> and <NUM> by the digits each word happened to hold, v7 kept the
glued "(core dumped)" of a shell's job report):
changing them means a new version, never a silent regrouping.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

VERSION = "v8"
MESSAGE_CHARS = 300  # of the normalised message: where a long line is cut is no difference

_PREFIXES = [
    re.compile(p)
    for p in (
        r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
        r"\s*[:|-]?\s*",
        r"^\[?[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}\]\s*",
        r"^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}\s+",
        r"^\[\s*\d+\.\d+\]\s*",
        r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+\S+:\d+\]\s*",
        r"^\[?(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL|TRACE)\]?(?::[\w.]*:|\s*[:|-]\s*|\s+)",
        r"^\[(?:[Rr]ank|RANK|default)?\s*\d+\]:?\s*",
        r"^\[\d+,\d+\]<std(?:out|err)>:\s*",
        r"^<std(?:out|err)>:?\s*",
        r"^\((?:\w+ )?pid=\d+(?:, ip=\S+)?\)\s*",
        r"^\d{1,5}:\s+",
        r"^\[[A-Z] [\w.]+:\d+\]\s*",
    )
]
_KEEP = re.compile(
    r"\[Errno -?\d+\]|\berror=\d+|(?i:\berrno[ =:]+-?\d+)"
    r"|\bSignals\.SIG\w+: \d+|\bSIG[A-Z]+\b|(?i:\bsignal:? \d+\b)"
    r"|(?i:\bexit(?:ed with)? ?(?:code|status)[ :=]+-?\d+)|\bexitcode\s*:\s*-?\d+"
    r"|return code = -?\d+|non-zero exit status -?\d+"
    r"|\b[1-5]\d\d (?:Client|Server) Error\b|\bHTTP(?:/\d(?:\.\d)?)? [1-5]\d\d\b"
    r"|\bXid \d+|\b(?:sm|compute)_\d+\b|runtime error \(\d+\)"
    r"|No module named '?[\w.]+'?|\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b"
    r"|\bOpType=\w+|\bSeqNum=\d+"
)
_DOUBLED = re.compile(r"\b((?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w*(?:Error|Exception))\1\b")
_DROP = re.compile(r"\s*\(when checking argument for argument \w+ in method \w+\)")
_XID = re.compile(r"\bXid \([^)]*\): (\d+)")
_INTERPRETER = re.compile(
    r"(?<![\w.+-])(python|pypy|perl|ruby|node|julia|lua|php|Rscript)\d+(?:\.\d+)*(?![\w+-]|\.\w)"
)


def _path(text: str) -> str:
    """A path keeps its last component, digits masked (`\x01` stands for <NUM> until the
    number rule has run)."""
    name = re.split(r"[/\\]", text.rstrip("/\\"))[-1]
    return "<PATH>/" + re.sub(r"\d+", "\x01", name)


_RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>)]+"), "<URL>"),
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<ID>",
    ),
    (
        re.compile(
            r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
        ),
        "<TS>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<TS>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<HOST>"),
    (re.compile(r"\[?\b(?:[0-9a-fA-F]{1,4}:){3,7}[0-9a-fA-F]{1,4}\b\]?(?::\d+)?"), "<HOST>"),
    (
        re.compile(
            r"(?:(?<=[\s'\"(=:,\[])|^)(?:[A-Za-z]:(?=\\)|~|\.{1,2}(?=/))?(?:[/\\][\w.@+$%-]+)+/?"
        ),
        lambda m: _path(m.group(0)),
    ),
    (re.compile(r"\b[\w.@+-]+(?:/[\w.@+-]+){2,}"), lambda m: _path(m.group(0))),
    (
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9]*(?:-[a-zA-Z0-9]+)*-[a-zA-Z0-9]*\d[a-zA-Z0-9-]*\b"),
        "<HOST>",
    ),
    (re.compile(r"\b[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+){2,}\.[a-zA-Z]{2,}\b"), "<HOST>"),
    # a hex dump (the driver's Xid payload), whatever digits each of its words holds
    (re.compile(r"\b[0-9a-fA-F]{8}(?:\s+[0-9a-fA-F]{8})+\b"), "<HEX>"),
    # a size in any unit: "20.00 MiB" and "1.50 GiB" are the same failure
    (re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:[KMGTPE]i?B|[kKMGTPE]B|bytes?)\b"), "<SIZE>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<HEX>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<HEX>"),
    (re.compile(r"[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?"), "<NUM>"),
    (re.compile(r"\|[ █▏▎▍▌▋▊▉#]*\|"), "|"),
    (re.compile(r"(?:<NUM>)(?:\s*[,x×*]\s*<NUM>)+"), "<NUM>"),
]
# after masking: a GPU's state in an allocator's report, and a shell job report's command
_ACCOUNTING = re.compile(
    r"\b(GPU <NUM>) has a total capac\w* of <SIZE> of which <SIZE> is free\."
    r"|\s*\bProcess <NUM> has <SIZE> memory in use\."
)
_SHELL_JOB = re.compile(
    r"\bline <NUM>: <NUM> ((?:Killed|Terminated|Aborted|Hangup|Quit|Bus error|Segmentation fault"
    r"|Floating point exception|Illegal instruction|User defined signal <NUM>"
    r"|Trace/breakpoint trap|CPU time limit exceeded|File size limit exceeded)"
    r")(?: ?(\(core dumped\)))?(?: .*)?$"
)


def _shell_job(m: re.Match[str]) -> str:
    return f"{m[1]} {m[2]}" if m[2] else m[1]


_BANNER_NODE = re.compile(r"(\*\*\*) on \S+$")
_MODULE_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)+(?=[A-Z]\w*(?:Error|Exception)\b)")


def _accounting(m: re.Match[str]) -> str:
    return f"{m.group(1)}." if m.group(1) else ""


_EXC = re.compile(
    r"(?<![\w.])(?P<exc>(?:[A-Za-z_]\w*(?:\.|::))*"
    r"(?:[A-Z]\w*(?:Error|Exception|Interrupt|Failure|Fault)|Exception))"
    r"(?=:\s|:$|\(['\"]|'>|\s*$)"
)

# libstdc++'s std::terminate banner: `terminate called after throwing an instance of
# 'c10::DistBackendError'` (also `std::bad_alloc`, `std::runtime_error`, templated types).
_CXX_EXC = re.compile(r"throwing an instance of '(?P<exc>[A-Za-z_][\w:]*(?:<[\w:<>, ]*>)?)'")


def strip_prefixes(text: str) -> str:
    """Remove timestamps, log levels, rank/launcher tags from the start of a line."""
    text = text.strip()
    for _ in range(8):
        before = text
        for rx in _PREFIXES:
            text = rx.sub("", text, count=1)
        if text == before:
            break
    return text


def normalise(text: str) -> str:
    """The per-run-independent form of one log line (see the module docstring)."""
    text = _INTERPRETER.sub(r"\1", _XID.sub(r"Xid \1", strip_prefixes(text)))
    kept: list[str] = []

    def protect(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\x00{_letters(len(kept) - 1)}\x00"

    text = _DROP.sub("", _DOUBLED.sub(r"\1", text))
    text = _KEEP.sub(protect, text)
    for rx, repl in _RULES:
        text = rx.sub(repl, text)
    text = text.replace("\x01", "<NUM>")
    text = re.sub("\x00([A-Z]+)\x00", lambda m: kept[_index(m.group(1))], text)
    text = " ".join(text.split())
    text = _SHELL_JOB.sub(_shell_job, _ACCOUNTING.sub(_accounting, text))
    return _BANNER_NODE.sub(r"\1", text)


def undouble(exc: str | None) -> str | None:
    """An exception type two ranks printed at once (`ValueErrorValueError`) as one copy."""
    return _DOUBLED.sub(r"\1", exc) if exc else exc


def exception_type(text: str, at: int | None = None) -> str | None:
    """The exception type a line reports: `torch.OutOfMemoryError: ...`, logger forms such as
    `<class 'RuntimeError'>` and `RuntimeError('...')`, a bare `Exception: ...`, and the C++
    type in `terminate called after throwing an instance of 'c10::Error'`. With `at` (where
    the catalog match starts) the type printed last at or before it wins, else the first.
    """
    text = _DOUBLED.sub(r"\1", text)
    found = sorted(
        (m.start(), m.group("exc")) for rx in (_EXC, _CXX_EXC) for m in rx.finditer(text)
    )
    if not found:
        return None
    if at is not None:
        before = [exc for start, exc in found if start <= at]
        if before:
            return before[-1]
    return found[0][1]


def fingerprint(category: str, catalog_id: str, exc_type: str | None, message: str) -> str:
    """16 hex digits identifying this failure across runs."""
    exc = (exc_type or "").rsplit(".", 1)[-1]
    text = _MODULE_PATH.sub("", normalise(message))[:MESSAGE_CHARS]
    key = "|".join((VERSION, category, catalog_id, exc, text))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _letters(n: int) -> str:
    out = ""
    while True:
        out = chr(65 + n % 26) + out
        n = n // 26 - 1
        if n < 0:
            return out


def _index(s: str) -> int:
    n = 0
    for ch in s:
        n = n * 26 + (ord(ch) - 64)
    return n - 1
