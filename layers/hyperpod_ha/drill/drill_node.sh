#!/usr/bin/env bash
# hyperpod-ha failover drill: the only commands a drill runs on a controller.
#
# Runs as root through the stack's drill Session documents, each fixing its action:
#   takeover <index>   index 1-9: `scontrol takeover <index>` (that backup takes control; the
#                      active controller saves its state and exits). Index 0: hand control
#                      back to the configured primary, run ON the primary: its slurmctld is
#                      started again and asks for control (REQUEST_CONTROL).
#   list <ids|none>    the jobs Slurm knows now (squeue), and for the given ids that squeue no
#                      longer lists, how they ended (sacct).
#   submit             a small test job (`true`, one minute limit, no output file).
#   register           run on the new active controller after a change of control: when
#                      slurmdbd has no controller registered (ControlHost empty: the controller
#                      stepping down deregistered after the new one registered, seen with Slurm
#                      24.11 when both reach slurmdbd from the same address), `scontrol
#                      reconfigure` makes the active slurmctld register again.
# Output: `key=value` lines and `job <id> <state>` / `acct <id> <state> <exit>` lines, then
# `HYPERPOD_HA_RESULT rc=<n>` last (controller_node.sh).

. hyperpod_ha/acting/controller_node.sh

main() {
  case "${1:-}" in
    takeover) act_takeover "${2:-}" ;;
    list) act_jobs "${2:-none}" ;;
    submit) act_submit ;;
    register) act_register ;;
    *) echo "error=unknown action"; false ;;
  esac
}

act_takeover() {
  local index=$1 out rc
  case "$index" in
    [1-9]) ;;
    0) act_hand_back; return ;;
    *) echo "error=controller index must be 0-9"; return 2 ;;
  esac
  echo "action=takeover index=$index"
  out=$(timeout -k 2 30 scontrol takeover "$index" 2>&1)
  rc=$?
  echo "scontrol_rc=$rc"
  say output "$out"
  return "$rc"
}

act_hand_back() {
  local out rc
  echo "action=hand-back"
  if [ -n "$(this_slurmctld)" ]; then
    # Still running here (a standby that stayed up): ask for control from this controller.
    echo "slurmctld=running"
    out=$(timeout -k 2 30 scontrol takeover 0 2>&1)
  else
    echo "slurmctld=stopped"
    out=$(timeout -k 2 30 systemctl start slurmctld 2>&1)
  fi
  rc=$?
  echo "start_rc=$rc"
  say output "$out"
  return "$rc"
}

act_jobs() {
  local ids=$1 out rc id listed
  out=$(timeout -k 2 20 squeue -h -t all -o '%i %T' 2>&1)
  rc=$?
  echo "squeue_rc=$rc"
  if [ "$rc" != 0 ]; then
    say error "$out"
    return "$rc"
  fi
  listed=" "
  while read -r id state; do
    [ -n "$id" ] || continue
    echo "job $id $state"
    listed="$listed$id "
  done <<<"$out"
  [ "$ids" = none ] && return 0
  for id in ${ids//,/ }; do
    case "$listed" in
      *" $id "*) continue ;;
    esac
    out=$(timeout -k 2 20 sacct -n -X -P -j "$id" -o JobID,State,ExitCode 2>&1 | head -n 1)
    IFS='|' read -r _ state code <<<"$out"
    echo "acct $id ${state%% *} ${code:-?}"
  done
  return 0
}

act_submit() {
  local out rc
  out=$(timeout -k 2 20 sbatch --parsable -J hyperpod-ha-drill -o /dev/null -t 1 --wrap true 2>&1)
  rc=$?
  echo "sbatch_rc=$rc"
  if [ "$rc" = 0 ]; then
    echo "submitted=${out%%;*}"
  else
    say error "$out"
  fi
  return "$rc"
}

act_register() {
  local cluster host rc
  # Bounded to about 50 s in all, within the drill's command deadline (60 s).
  cluster=$(cluster_name)
  if [ -z "$cluster" ]; then
    echo "error=scontrol show config gave no ClusterName"
    return 1
  fi
  # A controller that just took control may be registering now: a few seconds first.
  host=$(registered_within 5 "$cluster")
  echo "registered_before=${host:-none}"
  [ -n "$host" ] && return 0
  register_again
  rc=$?
  if [ "$rc" != 0 ]; then
    echo "error=scontrol reconfigure exited $rc"
    return "$rc"
  fi
  host=$(registered_within 15 "$cluster")
  echo "registered=${host:-none}"
  if [ -z "$host" ]; then
    echo "error=slurmdbd names no controller after scontrol reconfigure"
    return 1
  fi
}

registered_within() { # seconds cluster -> the ControlHost slurmdbd has for it, empty when none
  local until=$((SECONDS + $1)) host=""
  for _ in $(seq 1 "$1"); do
    host=$(registered_host "$2")
    if [ -n "$host" ] || [ "$SECONDS" -ge "$until" ]; then
      break
    fi
    sleep 1
  done
  echo "$host"
}

run_to_result main "$@" </dev/null
