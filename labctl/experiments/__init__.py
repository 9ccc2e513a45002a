"""`labctl migrate-experiment`: closing an experiment in one safe pass, and the survey.

`match` says which jobs and crontab lines belong to an experiment; `refill` removes
keep-N/refill entries from YAML/TOML/JSON byte-exactly; `move` moves the folder (rename,
or copy-verify-delete across file systems); `journal` remembers what a migration did so
a re-run after a crash finishes it; `steps` and `core` run the steps; `survey` is --list.
"""
