# shellcheck shell=bash
# scripts/lib.sh — helpers shared by slurm-up, slurm-down, sshd-up and sshd-down.
#
# Sourced, not executed. Before sourcing, a script sets LABCTL_TAG (the name shown in
# its log lines). Provides:
#   log/die               timestamped messages on stderr ("[tag  1.23s] ...")
#   need_root             exit unless running as root
#   ensure_packages P...  apt-get install --no-install-recommends whatever is missing
#                         (honours SKIP_INSTALL=1: fail instead of installing)
#   alive PID             running and not a zombie (PID 1 may reap late: kill -0 lies)
#   pid_record FILE PID   write "PID STARTTIME COMM" (STARTTIME = field 22 of /proc/PID/stat)
#   pid_ours FILE         print the PID if FILE's process is still that very process
#   wait_pidfile FILE     wait for a daemon-written pid file to name a live process; print PID
#   stop_pid FILE NAME    SIGTERM (then SIGKILL after STOP_TIMEOUT s) the process in FILE,
#                         only if start time and command name still match
#   wait_for WHAT CMD...  poll CMD until it succeeds or READY_TIMEOUT seconds pass
#   write_if_changed FILE MODE OWNER   replace FILE with stdin when different; rc 0 if replaced
#   take_lock FILE        serialise concurrent runs (flock on fd 9)
#   detached CMD...       run CMD with every fd above 2 closed (our lock, and whatever the
#                         caller leaked to us, must not stay open in a long-lived daemon);
#                         the caller redirects 0/1/2 away from its own stdio
#   detached_bg CMD...    the same in the background, for daemons that do not fork
#                         (no intermediate shell stays behind holding fds)

LABCTL_TAG=${LABCTL_TAG:-labctl}
_LABCTL_T0=$(date +%s.%N)
READY_TIMEOUT=${READY_TIMEOUT:-60}
STOP_TIMEOUT=${STOP_TIMEOUT:-20}

log() {
  local now; now=$(date +%s.%N)
  printf '[%s %6.2fs] %s\n' "$LABCTL_TAG" "$(awk -v a="$now" -v b="$_LABCTL_T0" 'BEGIN{print a-b}')" "$*" >&2
}
die() { log "ERROR: $*"; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

ensure_packages() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "${SKIP_INSTALL:-0}" = 1 ] && die "missing packages (install disabled): ${missing[*]}"
  command -v apt-get >/dev/null || die "missing packages and no apt-get: ${missing[*]}"
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local out
  out=$(mktemp)
  # an install from an old package list can 404; refresh the lists first
  if ! apt-get update -qq >"$out" 2>&1; then
    tail -n 20 "$out" >&2
    rm -f "$out"
    die "apt-get update failed"
  fi
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$out" 2>&1; then
    tail -n 20 "$out" >&2
    rm -f "$out"
    die "apt-get install failed for: ${missing[*]}"
  fi
  rm -f "$out"
  log "installed"
}

_stat_field() { awk -v f="$2" '{print $f}' "/proc/$1/stat" 2>/dev/null; }
alive() {
  local st
  st=$(_stat_field "$1" 3) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
pid_record() {
  local comm
  comm=$(cat "/proc/$2/comm" 2>/dev/null) || return 1
  echo "$2 $(_stat_field "$2" 22) $comm" > "$1"
}
pid_ours() {
  local pid st comm
  [ -f "$1" ] || return 1
  read -r pid st comm < "$1" || return 1
  [ -n "$pid" ] && alive "$pid" || return 1
  [ "$(_stat_field "$pid" 22)" = "$st" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
  echo "$pid"
}
wait_pidfile() {
  local pid _
  for _ in $(seq 1 100); do
    pid=$(cat "$1" 2>/dev/null || true)
    if [ -n "$pid" ] && alive "$pid"; then echo "$pid"; return 0; fi
    sleep 0.1
  done
  return 1
}
stop_pid() {
  local file=$1 name=$2 pid _
  if ! pid=$(pid_ours "$file"); then
    [ -f "$file" ] && log "$name: recorded process is gone; removing stale pid file"
    rm -f "$file"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((STOP_TIMEOUT * 10))); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$name ($pid) ignored SIGTERM for ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$file"
  log "$name ($pid) stopped"
}
wait_for() {
  local what=$1 deadline
  shift
  deadline=$(($(date +%s) + READY_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "timed out after ${READY_TIMEOUT}s waiting for $what"
    sleep 0.2
  done
}
write_if_changed() {
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  cat > "$tmp"
  chmod "$2" "$tmp"
  chown "$3" "$tmp"
  if cmp -s "$tmp" "$1"; then
    rm -f "$tmp"
    chmod "$2" "$1"
    chown "$3" "$1"
    return 1
  fi
  mv -f "$tmp" "$1"
}
take_lock() {
  exec 9>"$1"
  flock -w "$READY_TIMEOUT" 9 || die "another run holds $1 for more than ${READY_TIMEOUT}s"
}
_close_fds_and_exec() {
  local f n
  for f in /proc/"$BASHPID"/fd/*; do
    n=${f##*/}
    if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 2 ] && [ -e "/proc/$BASHPID/fd/$n" ]; then
      eval "exec $n>&-"
    fi
  done
  exec "$@"
}
detached() { (_close_fds_and_exec "$@"); }
detached_bg() { (_close_fds_and_exec "$@") & }
