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
# `HYPERPOD_HA_DRILL_RESULT rc=<n>` last, for transports that report no exit code.

main() {
  set -u
  exec 2>&1
  # Slurm may be outside the session's PATH (HyperPod: /opt/slurm/bin); appended, so the
  # caller's own come first.
  export PATH="$PATH:/opt/slurm/bin:/opt/slurm/sbin:/usr/local/bin"
  local action=${1:-} rc
  case "$action" in
    takeover) act_takeover "${2:-}" ;;
    list) act_jobs "${2:-none}" ;;
    submit) act_submit ;;
    register) act_register ;;
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
  local cluster host out rc
  # Bounded to about 50 s in all, within the drill's command deadline (60 s).
  cluster=$(timeout -k 1 8 scontrol show config 2>/dev/null | sed -n 's/^ClusterName *= *//p')
  if [ -z "$cluster" ]; then
    echo "error=scontrol show config gave no ClusterName"
    return 1
  fi
  # A controller that just took control may be registering now: a few seconds first.
  host=$(registered_within 5 "$cluster")
  echo "registered_before=${host:-none}"
  [ -n "$host" ] && return 0
  out=$(timeout -k 1 15 scontrol reconfigure 2>&1)
  rc=$?
  echo "reconfigure_rc=$rc"
  say output "$out"
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
    host=$(timeout -k 1 3 sacctmgr -n -P show cluster "$2" format=ControlHost 2>/dev/null | head -n 1)
    if [ -n "$host" ] || [ "$SECONDS" -ge "$until" ]; then
      break
    fi
    sleep 1
  done
  echo "$host"
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
