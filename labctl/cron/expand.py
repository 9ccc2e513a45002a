"""What a crontab job's command names once cron and the shell have expanded it.

cron runs each command with `/bin/sh -c` in an environment it builds as it reads the
crontab: HOME (and LOGNAME, SHELL, PATH) from the password database of the user the line
runs as, then every environment line above the job line (`HOME=/x` overrides it). So
`~/experiments/active/exp1/run.sh`, `$HOME/...`, `${HOME}/...`, `~alice/...` and
`$EXP_ROOT/...` (with `EXP_ROOT=/lab/experiments` above it) are paths labctl can resolve;
a variable the crontab does not set (`$LAB/...`) is not: that part is left as it is, for
the caller to treat as unresolved.

`home_of(None)` is the home of the user the line runs as, `home_of(name)` that user's
(None: unknown; the caller looks them up: backends.crontab.home_lookup).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from labctl.cron.lines import Line, assignment

HomeOf = Callable[[str | None], str | None]
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# a tilde the shell expands: at the start of an unquoted word (or after `=` / `:` in an
# assignment); a quoted `"~/x"` stays as it is (the shell leaves it too)
_TILDE = re.compile(r"""(?:^|(?<=[\s;&|()=:]))~([A-Za-z0-9_.-]*)(?=/|$|[\s;&|()'"`])""")


def expand(command: str, env: Mapping[str, str], home_of: HomeOf) -> str:
    """`command` with `~`, `~user` and the variables in `env` replaced by their values."""

    def tilde(m: re.Match[str]) -> str:
        home = env.get("HOME") if not m.group(1) else home_of(m.group(1))
        return home if home else m.group(0)

    def var(m: re.Match[str]) -> str:
        value = env.get(m.group(1) or m.group(2))
        return value if value is not None else m.group(0)

    return _VAR.sub(var, _TILDE.sub(tilde, command))


def expanded(lines: Iterable[Line], home_of: HomeOf) -> dict[int, str]:
    """Each job line's command (by line number) as the shell would see its paths."""
    env: dict[str, str] = {}
    homes: dict[str | None, dict[str, str]] = {}
    out: dict[int, str] = {}
    for line in lines:
        pair = assignment(line)
        if pair is not None:
            env[pair[0]] = pair[1]
            continue
        if line.kind != "job" or line.command is None:
            continue
        if line.user not in homes:
            home = home_of(line.user)
            homes[line.user] = {"HOME": home} if home else {}
        out[line.number] = expand(line.command, {**homes[line.user], **env}, home_of)
    return out
