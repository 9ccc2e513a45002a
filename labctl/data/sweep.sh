#!/bin/sh
# The sweep itself, shipped with labctl: scripts/sweep runs it in a checkout, and
# `labctl cron install` points cron at it where labctl was installed without one (pip,
# pipx), so both are the same sweep:
#
#   { labctl health; labctl poll; labctl merge-green --apply; } | labctl diagnose \
#     | labctl guard | labctl log --topic sweep | labctl table --format table
#
# then `labctl cron mark-run` records the run in the state dir (`labctl cron status`).
# What each stage does, the exit code and the knobs: see scripts/sweep. Which labctl:
#   LABCTL          the labctl executable (default: labctl on PATH)
#   LABCTL_PYTHON   else run `$LABCTL_PYTHON -m labctl` (a Python that has labctl)
set -u
PATH=$PATH:/usr/local/bin:/usr/bin:/bin
export PATH
if [ -n "${LABCTL_PYTHON:-}" ] && [ -z "${LABCTL:-}" ]; then
  lab() { "$LABCTL_PYTHON" -m labctl "$@"; }
else
  lab() { "${LABCTL:-labctl}" "$@"; }
fi

started=$(date +%s)
# the tables are kept in memory, not in a temporary file: on a full disk (the runbook's
# outage) they still print, with the error records that say what could not be saved
out=$(
  {
    lab health --quiet
    lab poll --quiet
    if [ "${SWEEP_MERGE:-1}" != 0 ]; then lab merge-green --apply --quiet; fi
  } | lab diagnose --quiet \
    | lab guard --quiet \
    | lab log --topic sweep --quiet \
    | lab table --format table --quiet
  echo "sweep-exit=$?"
)
rc=${out##*sweep-exit=}
out=${out%sweep-exit=*}
lab cron mark-run --exit-code "$rc" --started-at "$started" --quiet >/dev/null 2>&1
if [ "$rc" -ne 0 ] || [ "${SWEEP_QUIET_OK:-0}" != 1 ]; then
  printf '%s' "$out"
fi
exit "$rc"
