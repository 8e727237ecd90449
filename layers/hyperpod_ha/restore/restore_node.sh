#!/usr/bin/env bash
# hyperpod-ha restore: the only command a restore runs on a controller. It takes no parameter.
#
# Runs as root through the stack's restore Session document, on a controller that is not the
# active one (the restore's guards chose it):
#   - slurmctld not running: `systemctl start slurmctld`;
#   - slurmctld stopped (SIGSTOP, process state T) or not answering ping from this node:
#     `systemctl restart slurmctld` (systemd sends SIGCONT after SIGTERM);
#   - slurmctld running and answering: nothing is started.
# Then, for up to 20 s, whether this node's slurmctld answers `scontrol ping`. On the configured
# primary, a started slurmctld asks for control back (as the drill's hand-back); when it is the
# active controller and slurmdbd names no controller (Slurm 24.11 when both reach slurmdbd from
# one address), `scontrol reconfigure` registers it again. Running it again is harmless: a
# running, answering slurmctld is left alone and only the registration is looked at.
# Output: `key=value` lines, then `HYPERPOD_HA_RESTORE_RESULT rc=<n>` last, for transports that
# report no exit code.

main() {
  set -u
  exec 2>&1
  # Slurm may be outside the session's PATH (HyperPod: /opt/slurm/bin); appended, so the
  # caller's own come first.
  export PATH="$PATH:/opt/slurm/bin:/opt/slurm/sbin:/usr/local/bin"
  local rc
  restore
  rc=$?
  echo "HYPERPOD_HA_RESTORE_RESULT rc=$rc"
  return "$rc"
}

restore() {
  local pid state before out rc host
  host=$(hostname -s 2>/dev/null || hostname)
  pid=$(this_slurmctld | head -n 1)
  if [ -z "$pid" ]; then
    before=not-running
  else
    state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
    if [ "$state" = T ] || [ "$state" = t ]; then
      before=stopped
    elif [ "$(own_ping "$host")" = DOWN ]; then
      before=not-answering
    else
      before=running
    fi
  fi
  echo "host=$host"
  echo "before=$before"
  case "$before" in
    not-running) out=$(timeout -k 2 40 systemctl start slurmctld 2>&1) ;;
    stopped | not-answering) out=$(timeout -k 2 40 systemctl restart slurmctld 2>&1) ;;
    *) out="" ;;
  esac
  rc=$?
  echo "action=$([ "$before" = running ] && echo none || echo started)"
  echo "start_rc=$rc"
  say output "$out"
  [ "$rc" = 0 ] || return "$rc"
  answers_within 20 "$host"
  register_if_active "$host"
  return 0
}

own_ping() { # host -> UP, DOWN, or nothing when scontrol ping names no line of this host
  timeout -k 1 10 scontrol ping 2>/dev/null | sed -n "s/^Slurmctld([a-z0-9]*) at $1 is \([A-Z]*\).*/\1/p" | head -n 1
}

answers_within() { # seconds host: says whether this node's slurmctld answers ping
  local until=$((SECONDS + $1)) seen=""
  while [ "$SECONDS" -lt "$until" ]; do
    seen=$(own_ping "$2")
    [ "$seen" = UP ] && break
    sleep 2
  done
  echo "answers_ping=$([ "$seen" = UP ] && echo yes || echo no)"
}

register_if_active() { # host: when this node is the active controller and slurmdbd names none
  local cluster registered out rc
  timeout -k 1 5 scontrol ping 2>/dev/null | grep -q "^Slurmctld(primary) at $1 is UP" || return 0
  cluster=$(timeout -k 1 8 scontrol show config 2>/dev/null | sed -n 's/^ClusterName *= *//p')
  [ -n "$cluster" ] || return 0
  registered=$(timeout -k 1 5 sacctmgr -n -P show cluster "$cluster" format=ControlHost 2>/dev/null | head -n 1)
  echo "registered_before=${registered:-none}"
  [ -n "$registered" ] && return 0
  out=$(timeout -k 1 15 scontrol reconfigure 2>&1)
  rc=$?
  echo "reconfigure_rc=$rc"
  say output "$out"
  return 0
}

this_slurmctld() { # the pids of this node's own slurmctld (SlurmUser asked only when one may run)
  [ -n "$(named_pids slurmctld)" ] || return 0
  slurmctld_pids "$(timeout -k 1 5 scontrol show config 2>/dev/null | sed -n 's/^SlurmUser *= *//p' | head -n 1)"
}

# --- this node's own slurmctld (the same block in controller_probe.sh, drill_node.sh and
# restore_node.sh: a test compares them) ---------------------------------------------------

named_pids() { # process name -> the pids of processes of that name (pgrep, or /proc without it)
  if command -v pgrep >/dev/null 2>&1; then
    timeout -k 1 4 pgrep -x "$1"
    return 0
  fi
  local p comm
  for p in /proc/[0-9]*; do
    { read -r comm <"$p/comm"; } 2>/dev/null || continue
    [ "$comm" = "$1" ] && echo "${p#/proc/}"
  done
  return 0
}

# slurm user ("slurm", or "slurm(401)" as `scontrol show config` gives it; may be empty) -> the
# pids of this node's slurmctld, one a line. Any user can start a process named slurmctld, even
# from Slurm's own binary, so a name proves nothing. Counted: systemd's main PID of
# slurmctld.service; else a process running the Slurm binary this node runs (`command -v
# slurmctld`, or the unit's ExecStart) whose real and effective owner is root or SlurmUser. A
# zombie has no executable any more: not counted (systemd does not count it either).
slurmctld_pids() {
  local user=${1:-} binary unit main="" unit_binary="" uids=" 0 " uid pid exe ids
  binary=$(command -v slurmctld 2>/dev/null) && binary=$(readlink -f -- "$binary" 2>/dev/null)
  if command -v systemctl >/dev/null 2>&1; then
    unit=$(timeout -k 1 4 systemctl show -p MainPID -p ExecStart slurmctld 2>/dev/null)
    main=$(printf '%s\n' "$unit" | sed -n 's/^MainPID=\([1-9][0-9]*\)$/\1/p' | head -n 1)
    unit_binary=$(printf '%s\n' "$unit" | sed -n 's/^ExecStart={ path=\([^ ;]*\) ;.*/\1/p' | head -n 1)
    [ -n "$unit_binary" ] && unit_binary=$(readlink -f -- "$unit_binary" 2>/dev/null)
  fi
  uid=${user#*(}
  uid=${uid%)}
  [ -n "${user%%(*}" ] && id -u -- "${user%%(*}" >/dev/null 2>&1 && uid=$(id -u -- "${user%%(*}")
  case "$uid" in '' | *[!0-9]*) ;; *) uids="$uids$uid " ;; esac
  for pid in $(named_pids slurmctld); do
    if [ "$pid" = "$main" ]; then
      echo "$pid"
      continue
    fi
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    exe=${exe% (deleted)} # its binary replaced since it started (an upgrade): still that path
    [ -n "$exe" ] && { [ "$exe" = "$binary" ] || [ "$exe" = "$unit_binary" ]; } || continue
    ids=$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\)[[:space:]]*\([0-9]*\).*/\1 \2/p' "/proc/$pid/status" 2>/dev/null)
    case "$uids" in *" ${ids% *} "*) ;; *) continue ;; esac
    case "$uids" in *" ${ids#* } "*) echo "$pid" ;; esac
  done
  return 0
}

# --- end of this node's own slurmctld -------------------------------------------------------

say() { # key text: one line, the text's last 400 characters; nothing when the text is empty
  [ -n "$2" ] && echo "$1=$(echo "$2" | tr '\n' ' ' | tail -c 400)"
  return 0
}

main "$@" </dev/null
