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
# Output: `key=value` lines, then `HYPERPOD_HA_RESULT rc=<n>` last (controller_node.sh).

. hyperpod_ha/acting/controller_node.sh

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
  local cluster registered
  timeout -k 1 5 scontrol ping 2>/dev/null | grep -q "^Slurmctld(primary) at $1 is UP" || return 0
  cluster=$(cluster_name)
  [ -n "$cluster" ] || return 0
  registered=$(registered_host "$cluster")
  echo "registered_before=${registered:-none}"
  [ -n "$registered" ] && return 0
  register_again || true
}

run_to_result restore </dev/null
