"""`--every 30m` as a cron schedule.

cron repeats on the clock, not from a start time, so only intervals that divide the hour
(in minutes) or the day (in hours) repeat evenly: 5m, 10m, 15m, 20m, 30m, 1h, 2h, 3h,
4h, 6h, 8h, 12h, 1d. Anything else is refused rather than rounded. A raw five-field
schedule (`--schedule "7,37 * * * *"`) is taken as given after a shape check.
"""

from __future__ import annotations

import re

from labctl.errors import UsageError

_FIELD = re.compile(r"^[0-9A-Za-z*/,-]+$")
SPECIALS = ("@reboot", "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight")


def every(seconds: float, text: str) -> str:
    """The schedule that runs every `seconds` (from `--every TEXT`)."""
    minutes = seconds / 60
    if minutes != int(minutes) or minutes < 1:
        raise UsageError(f"--every {text}: cron counts whole minutes (at least 1m)")
    m = int(minutes)
    if m < 60 and 60 % m == 0:
        return "* * * * *" if m == 1 else f"*/{m} * * * *"
    if m % 60 == 0:
        h = m // 60
        if h == 24:
            return "0 0 * * *"
        if h < 24 and 24 % h == 0:
            return "0 * * * *" if h == 1 else f"0 */{h} * * *"
    raise UsageError(
        f"--every {text}: cron cannot repeat that evenly; use minutes that divide an hour "
        "(5m, 10m, 15m, 20m, 30m), hours that divide a day (1h, 2h, 3h, 4h, 6h, 8h, 12h), "
        "1d, or give --schedule"
    )


def check(schedule: str) -> str:
    """A raw schedule: five fields, or one of cron's @ specials."""
    text = " ".join(schedule.split())
    if text in SPECIALS:
        return text
    fields = text.split(" ")
    if len(fields) != 5 or not all(_FIELD.match(f) for f in fields):
        raise UsageError(
            f"--schedule {schedule!r}: give five cron fields (e.g. '*/30 * * * *') or "
            f"one of {', '.join(SPECIALS)}"
        )
    return text
