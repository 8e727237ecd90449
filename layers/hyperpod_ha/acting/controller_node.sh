#!/usr/bin/env bash
# hyperpod-ha: what every script that acts on a controller (drill_node.sh, restore_node.sh) starts
# with. No script runs it as it is: the package's node_scripts puts it in place of the line
# `. hyperpod_ha/acting/controller_node.sh` of each, and the document carries the whole.

# Slurm may be outside the session's PATH (HyperPod: /opt/slurm/bin); appended, so the caller's
# own come first. Output on one stream: the transports keep stdout.
export PATH="$PATH:/opt/slurm/bin:/opt/slurm/sbin:/usr/local/bin"
set -u
exec 2>&1

run_to_result() { # command...: runs it, then prints the result line last (for transports that
  # report no exit code; node_commands.py reads it) and returns its exit code
  local rc
  "$@"
  rc=$?
  echo "HYPERPOD_HA_RESULT rc=$rc"
  return "$rc"
}

say() { # key text: one line, the text's last 400 characters; nothing when the text is empty
  [ -n "$2" ] && echo "$1=$(echo "$2" | tr '\n' ' ' | tail -c 400)"
  return 0
}

cluster_name() { # Slurm's ClusterName, empty when scontrol does not answer
  timeout -k 1 8 scontrol show config 2>/dev/null | sed -n 's/^ClusterName *= *//p'
}

registered_host() { # cluster -> the ControlHost slurmdbd has for it, empty when none
  timeout -k 1 3 sacctmgr -n -P show cluster "$1" format=ControlHost 2>/dev/null | head -n 1
}

register_again() { # the active slurmctld registers with slurmdbd again (`scontrol reconfigure`):
  # slurmdbd names no controller when the one stepping down deregistered after the new one
  # registered (Slurm 24.11, both reaching slurmdbd from one address); returns its exit code
  local out rc
  out=$(timeout -k 1 15 scontrol reconfigure 2>&1)
  rc=$?
  echo "reconfigure_rc=$rc"
  say output "$out"
  return "$rc"
}

this_slurmctld() { # the pids of this node's own slurmctld (SlurmUser asked only when one may run)
  [ -n "$(named_pids slurmctld)" ] || return 0
  slurmctld_pids "$(timeout -k 1 5 scontrol show config 2>/dev/null | sed -n 's/^SlurmUser *= *//p' | head -n 1)"
}

# --- this node's own slurmctld (the same block in controller_probe.sh and here, which
# drill_node.sh and restore_node.sh start with: a test compares them) ------------------------

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
