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
# Output: `key=value` lines and `job <id> <state>` / `acct <id> <state> <exit>` lines, then
# `HYPERPOD_HA_DRILL_RESULT rc=<n>` last, for transports that report no exit code.

main() {
  set -u
  exec 2>&1
  local dir
  for dir in /opt/slurm/bin /opt/slurm/sbin /usr/local/bin; do
    case ":$PATH:" in
      *":$dir:"*) ;;
      *) [ -d "$dir" ] && PATH="$PATH:$dir" ;;
    esac
  done
  export PATH
  local action=${1:-} rc
  case "$action" in
    takeover) act_takeover "${2:-}" ;;
    list) act_jobs "${2:-none}" ;;
    submit) act_submit ;;
    *) echo "error=unknown action"; false ;;
  esac
  rc=$?
  echo "HYPERPOD_HA_DRILL_RESULT rc=$rc"
  return "$rc"
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
  [ -n "$out" ] && echo "output=$(echo "$out" | tr '\n' ' ' | tail -c 400)"
  return "$rc"
}

act_hand_back() {
  local out rc
  echo "action=hand-back"
  if [ -n "$(timeout -k 1 5 pgrep -x slurmctld 2>/dev/null)" ]; then
    # Still running here (a standby that stayed up): ask for control from this controller.
    echo "slurmctld=running"
    out=$(timeout -k 2 30 scontrol takeover 0 2>&1)
  else
    echo "slurmctld=stopped"
    out=$(timeout -k 2 30 systemctl start slurmctld 2>&1)
  fi
  rc=$?
  echo "start_rc=$rc"
  [ -n "$out" ] && echo "output=$(echo "$out" | tr '\n' ' ' | tail -c 400)"
  return "$rc"
}

act_jobs() {
  local ids=$1 out rc id listed
  out=$(timeout -k 2 20 squeue -h -t all -o '%i %T' 2>&1)
  rc=$?
  echo "squeue_rc=$rc"
  if [ "$rc" != 0 ]; then
    echo "error=$(echo "$out" | tr '\n' ' ' | tail -c 400)"
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
    echo "error=$(echo "$out" | tr '\n' ' ' | tail -c 400)"
  fi
  return "$rc"
}

main "$@" </dev/null
