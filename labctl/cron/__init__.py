"""`labctl cron`: the periodic sweep in the user's crontab, installed exactly once.

`lines` reads crontab text as lines and edits it byte-exactly (shared with
migrate-experiment); `schedule` turns `--every 30m` into a cron schedule; `core` yields
the `cron` records of install/status/remove.
"""
