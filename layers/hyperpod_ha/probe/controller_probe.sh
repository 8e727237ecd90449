#!/usr/bin/env bash
# hyperpod-ha controller probe: read-only health facts about the Slurm controller it runs on.
#
# Runs as root on a controller (HyperPod, EC2 or the lab), usually through SSM. It changes
# nothing but one temporary file, created and removed at once in StateSaveLocation to prove
# that directory is writable. Each check runs as a background job with its own time limit and
# is killed (its whole process group) when the limit passes, so the probe ends within a bounded
# time even when slurmctld, slurmdbd or the shared file system hang.
#
# Output, all on stdout (stderr merged): marked sections and a last result line, as
# hyperpod_ha/slurm/probe_output.py reads them; a nonce keeps printed text from passing for a marker.
#
# The whole script is one function, called with stdin from /dev/null: it is usually fed to
# bash on stdin, and a command reading stdin must not swallow the rest of the script.

main() {
  set -u
  set -m # background jobs get their own process group, so a hung job is killed whole
  exec 2>&1

  local version=1 mark='@@hyperpod-ha'
  local cap=${HYPERPOD_HA_PROBE_TIMEOUT:-} # tests only: caps every time limit (seconds)
  local nonce work started
  started=$(now_ms)
  nonce=$(tr -dc 'a-f0-9' </proc/sys/kernel/random/uuid 2>/dev/null | head -c 16)
  [ -n "$nonce" ] || nonce="$$x$RANDOM$RANDOM"

  # Slurm may be installed outside the session's PATH (HyperPod: /opt/slurm/bin). Appended,
  # so whatever the caller put first wins.
  export PATH="$PATH:/opt/slurm/bin:/opt/slurm/sbin:/usr/local/bin"

  work=$(mktemp -d "${TMPDIR:-/tmp}/hyperpod-ha-probe.XXXXXX" 2>/dev/null)
  if [ -z "$work" ] || [ ! -d "$work" ]; then
    echo "$mark probe begin version=$version nonce=$nonce"
    echo "HYPERPOD_HA_PROBE_RESULT {\"version\":$version,\"nonce\":\"$nonce\",\"complete\":false,\"error\":\"cannot create a temporary directory\"}"
    return 70
  fi
  WORK=$work
  trap 'rm -rf -- "$WORK"' EXIT

  echo "$mark probe begin version=$version nonce=$nonce"

  # Phase 1: everything that needs nothing else, in parallel. A job is killed 3 s after its
  # limit; phase 2 starts when the configuration is known (at most 18 s) and takes at most
  # 13 s, so the probe ends within about 35 s whatever hangs (callers allow 60 s or more).
  start_job identity "$(limit 5 "$cap")" sec_identity
  start_job slurm_conf "$(limit 6 "$cap")" sec_slurm_conf
  start_job config "$(limit 15 "$cap")" sec_config
  start_job ping "$(limit 20 "$cap")" sec_ping
  start_job sinfo "$(limit 15 "$cap")" sec_sinfo
  start_job sdiag "$(limit 12 "$cap")" sec_sdiag
  start_job dbd_clusters "$(limit 12 "$cap")" sec_dbd_clusters
  start_job dbd_ping "$(limit 12 "$cap")" sec_dbd_ping
  start_job hyperpod_hand "$(limit 12 "$cap")" sec_hyperpod_hand
  start_job slurm_triggers "$(limit 10 "$cap")" sec_slurm_triggers

  # Phase 2 needs StateSaveLocation, SlurmctldLogFile and SlurmUser from the configuration,
  # and the slurm.conf file phase 1 found (services: SlurmUser owns the node's own slurmctld).
  wait_jobs config slurm_conf
  local state_dir log_file slurm_user_as_given slurm_user conf_path
  state_dir=$(conf_get StateSaveLocation)
  log_file=$(conf_get SlurmctldLogFile)
  slurm_user_as_given=$(conf_get SlurmUser)
  slurm_user=${slurm_user_as_given%%(*}
  conf_path=$(sed -n '1s/^path=//p' "$WORK/slurm_conf.out" 2>/dev/null)
  start_job services "$(limit 8 "$cap")" sec_services "$slurm_user_as_given"
  start_job role "$(limit 10 "$cap")" sec_role "$log_file"
  start_job heartbeat "$(limit 6 "$cap")" sec_heartbeat "$state_dir"
  start_job state_save "$(limit 10 "$cap")" sec_state_save "$state_dir" "$slurm_user"
  start_job failover_conf "$(limit 8 "$cap")" sec_failover_conf "$conf_path"
  start_job conf_change "$(limit 8 "$cap")" sec_conf_change "$conf_path"
  start_job notify_failures "$(limit 6 "$cap")" sec_notify_failures "$conf_path"
  start_job slurmctld_http "$(limit 10 "$cap")" sec_slurmctld_http "$(conf_get SlurmctldPort)" \
    "$(conf_get CommunicationParameters)"

  local all="identity services slurm_conf config ping sinfo sdiag dbd_clusters dbd_ping role heartbeat state_save failover_conf conf_change notify_failures slurmctld_http hyperpod_hand slurm_triggers"
  # shellcheck disable=SC2086 # a fixed list of words
  wait_jobs $all

  local name summary="" rc ms timed_out
  for name in $all; do
    emit_section "$mark" "$nonce" "$name"
    read -r rc ms timed_out <"$WORK/$name.rc"
    summary="$summary${summary:+,}\"$name\":[$rc,$ms,$timed_out]"
  done
  echo "HYPERPOD_HA_PROBE_RESULT {\"version\":$version,\"nonce\":\"$nonce\",\"complete\":true,\"elapsed_ms\":$(($(now_ms) - started)),\"sections\":{$summary}}"
  return 0
}

# --- jobs ---

now_ms() {
  if [ -n "${EPOCHREALTIME:-}" ]; then
    local t=${EPOCHREALTIME/[.,]/}
    echo $((t / 1000))
  else
    date +%s%3N
  fi
}

limit() { # default seconds, cap -> the smaller
  if [ -n "$2" ] && [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi
}

start_job() { # name seconds function [args...]; the function gets the seconds first
  local name=$1 seconds=$2 fn=$3 now
  shift 3
  now=$(now_ms)
  "$fn" "$seconds" "$@" >"$WORK/$name.out" 2>&1 </dev/null &
  # Inner commands stop at `seconds` (timeout -k 2): the job itself gets 3 s more.
  echo "$! $((now + (seconds + 3) * 1000)) $now" >"$WORK/$name.job"
}

wait_jobs() { # names...: until each has ended or been killed at its deadline
  local name pid deadline began now pending rc
  while :; do
    pending=0
    now=$(now_ms)
    for name in "$@"; do
      [ -e "$WORK/$name.rc" ] && continue
      if [ ! -e "$WORK/$name.job" ]; then
        echo "125 0 0" >"$WORK/$name.rc"
        continue
      fi
      read -r pid deadline began <"$WORK/$name.job"
      if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        rc=$?
        echo "$rc $((now - began)) 0" >"$WORK/$name.rc"
      elif [ "$now" -ge "$deadline" ]; then
        # Not waited for: a process stuck in the kernel (a hung mount) would block `wait`.
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
        echo "124 $((now - began)) 1" >"$WORK/$name.rc"
      else
        pending=1
      fi
    done
    [ "$pending" = 0 ] && return 0
    sleep 0.1
  done
}

emit_section() { # mark nonce name
  local mark=$1 nonce=$2 name=$3 out="$WORK/$3.out" max=12288 size truncated=0 rc ms timed_out
  read -r rc ms timed_out <"$WORK/$name.rc"
  echo "$mark $nonce begin $name"
  if [ -s "$out" ]; then
    size=$(wc -c <"$out")
    if [ "$size" -gt "$max" ]; then
      truncated=1
      head -c "$max" "$out" >"$out.cut"
      mv -f "$out.cut" "$out"
    fi
    cat "$out"
    [ -n "$(tail -c 1 "$out")" ] && echo
  fi
  echo "$mark $nonce end $name rc=$rc ms=$ms timed_out=$timed_out truncated=$truncated"
}

conf_get() { # key [sources] -> value from `scontrol show config` (if it answered) or slurm.conf
  local key=$1 sources=${2:-config slurm_conf} file value rc
  for file in $sources; do
    [ -s "$WORK/$file.out" ] || continue
    read -r rc _ <"$WORK/$file.rc"
    [ "$rc" = 0 ] || continue
    value=$(grep -i -E "^[[:space:]]*${key}[[:space:]]*=" "$WORK/$file.out" | tail -n 1 |
      sed -e 's/^[^=]*=[[:space:]]*//' -e 's/[[:space:]]*#.*$//' -e 's/[[:space:]]*$//')
    [ "$value" = "(null)" ] && value=""
    if [ -n "$value" ]; then
      echo "$value"
      return 0
    fi
  done
  return 1
}

# --- sections (each gets its time limit in seconds first) ---

CONFIG_KEYS='CommunicationParameters|SlurmctldHost\[[0-9]+\]|ControlMachine|ControlAddr|BackupController|BackupAddr|SlurmctldTimeout|StateSaveLocation|SlurmctldLogFile|SlurmctldPort|ClusterName|SlurmUser|AccountingStorageHost|AccountingStoragePort|AccountingStorageType|MessageTimeout|MaxDBDMsgs|MaxJobCount|SlurmctldPrimaryOnProg|SlurmctldPrimaryOffProg|SLURM_VERSION|SLURM_CONF'
CONF_FILE_KEYS='CommunicationParameters|SlurmctldHost|ControlMachine|ControlAddr|BackupController|BackupAddr|SlurmctldTimeout|StateSaveLocation|SlurmctldLogFile|SlurmctldPort|ClusterName|SlurmUser|SlurmctldPrimaryOnProg|SlurmctldPrimaryOffProg'

sec_identity() {
  local seconds=$1 a
  echo "hostname=$(uname -n)"
  echo "fqdn=$(timeout -k 1 "$seconds" hostname -f 2>/dev/null)"
  if command -v ip >/dev/null 2>&1; then
    timeout -k 1 "$seconds" ip -o addr show 2>/dev/null |
      sed -n 's/^[0-9]*:[[:space:]]*[^[:space:]]*[[:space:]]*inet6\{0,1\}[[:space:]]\{1,\}\([^/[:space:]]*\).*/address=\1/p'
  else
    for a in $(timeout -k 1 "$seconds" hostname -I 2>/dev/null); do echo "address=$a"; done
  fi
  echo "now=$(date +%s)"
  echo "uid=$(id -u)"
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

# --- end of this node's own slurmctld ---

sec_services() { # seconds slurm-user
  local seconds=$1 slurm_user=$2 daemon state pid pids mine facts same own_net own_uts
  own_net=$(readlink /proc/$$/ns/net 2>/dev/null)
  own_uts=$(readlink /proc/$$/ns/uts 2>/dev/null)
  for daemon in slurmctld slurmdbd; do
    state=""
    if command -v systemctl >/dev/null 2>&1; then
      state=$(timeout -k 1 "$seconds" systemctl is-active "$daemon" 2>/dev/null | head -n 1)
    fi
    echo "systemctl $daemon ${state:-unavailable}"
    pids=$(named_pids "$daemon")
    if [ "$daemon" = slurmctld ]; then
      # Only the node's own slurmctld is reported; another named so is said, not counted.
      mine=" $(slurmctld_pids "$slurm_user" | tr '\n' ' ') "
      for pid in $pids; do
        case "$mine" in *" $pid "*) ;; *) echo "ignored slurmctld pid=$pid: not the node's Slurm binary run by root or SlurmUser" ;; esac
      done
      pids=$mine
    fi
    for pid in $pids; do
      [ -r "/proc/$pid/status" ] || continue
      facts=$(sed -n -e 's/^State:[[:space:]]*\([A-Za-z]\).*/state=\1/p' -e 's/^PPid:[[:space:]]*/ppid=/p' \
        -e 's/^Threads:[[:space:]]*/threads=/p' "/proc/$pid/status" 2>/dev/null | tr '\n' ' ')
      # A process in another network or UTS namespace (a lab controller on the same machine,
      # a container) is not this node's daemon.
      same=unknown
      if [ -n "$own_net" ]; then
        same=no
        if [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$own_net" ] &&
          [ "$(readlink "/proc/$pid/ns/uts" 2>/dev/null)" = "$own_uts" ]; then
          same=yes
        fi
      fi
      echo "process $daemon pid=$pid ${facts}same_ns=$same"
    done
  done
  return 0
}

sec_slurm_conf() {
  local seconds=$1 file
  for file in "${SLURM_CONF:-}" /opt/slurm/etc/slurm.conf /etc/slurm/slurm.conf /etc/slurm-llnl/slurm.conf \
    /usr/local/etc/slurm.conf; do
    [ -n "$file" ] || continue
    if timeout -k 1 "$seconds" test -r "$file"; then
      echo "path=$file"
      timeout -k 1 "$seconds" grep -i -E "^[[:space:]]*($CONF_FILE_KEYS)[[:space:]]*=" "$file"
      return 0
    fi
  done
  echo "path="
  return 1
}

filtered() { # seconds error-lines pattern command...: its matching lines, or its error's start
  local seconds=$1 lines=$2 pattern=$3 out rc
  shift 3
  out=$(timeout -k 2 "$seconds" "$@" 2>&1)
  rc=$?
  if [ "$rc" = 0 ]; then
    printf '%s\n' "$out" | grep -E "$pattern"
  else
    printf '%s\n' "$out" | head -n "$lines"
  fi
  return "$rc"
}

sec_config() { filtered "$1" 20 "^($CONFIG_KEYS)[[:space:]]*=" scontrol show config; }

sec_ping() { timeout -k 2 "$1" scontrol ping; }

sec_sinfo() { timeout -k 2 "$1" sinfo -h -o '%T %D'; }

# sdiag of the active controller: only what slurm/controller_load.py reads (24 RPC rows a table).
SDIAG_FILTER='
/^Remote Procedure Call statistics by message type/ { part = "rpc"; rows = 0; print; next }
/^Remote Procedure Call statistics by user/ { part = "rpc"; rows = 0; print; next }
/^Main schedule statistics/ { part = "cycle"; print; next }
/^Backfilling stats/ { part = "cycle"; print; next }
/^(Main scheduler exit|Backfill exit|Pending RPC statistics)/ { part = ""; next }
part == "rpc" { if (++rows <= 24) print; next }
part == "cycle" && /^[ \t]*(Last cycle|Mean cycle|Max cycle):/ { print; next }
/^(sdiag output at|Data since|Server thread count|Agent queue size|Agent count|Agent thread count|DBD Agent queue size|Jobs pending|Jobs running)/ { print }
'

sec_sdiag() {
  local out rc
  out=$(timeout -k 2 "$1" sdiag -t 2>&1)
  rc=$?
  if [ "$rc" = 0 ]; then
    printf '%s\n' "$out" | awk "$SDIAG_FILTER"
  else
    printf '%s\n' "$out" | head -n 10
  fi
  return "$rc"
}

# ControlHost names the controller registered with slurmdbd (empty, port 0, when none is).
sec_dbd_clusters() { timeout -k 2 "$1" sacctmgr -n -P show cluster format=cluster,controlhost,controlport; }

# Newer Slurm has `sacctmgr ping`; 22.05 answers "invalid keyword: ping".
sec_dbd_ping() { timeout -k 2 "$1" sacctmgr -n ping; }

# A role, refusal or fatal line is one of slurmctld's own lines whose whole message is that
# phrase (role_log.py reads the same grammar). Its own lines: the log file's "[<time>] <message>"
# and the journal's "<time> <host> slurmctld[<pid>]: <message>" (under systemd with -D, its
# stderr form: "[<time>] <message>" or "slurmctld: <message>"). slurmctld logs users' text inside
# a message ("_get_job_parts: invalid partition specified: <text>"), never at its start, and
# writes no carriage return: a line holding one is someone's text. Bracket expressions, not
# backslashes (awk -v would eat them) nor {n} (mawk 1.3.4 of Ubuntu 22.04 has none).
LOG_FILE_HEADER='^[[][^]]+[]] '
LOG_JOURNAL_HEADER='^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9][^ ]* [^ ]+ slurmctld[[][0-9]+[]]: ([[][^]]+[]] |slurmctld: )?'
ROLE_MESSAGES='^(Running as primary controller|slurmctld running in background mode|error: ControlMachine [^ ]+ not responding, BackupController[0-9]+ [^ ]+ taking over|slurmctld version [0-9][0-9A-Za-z._-]* started on cluster [^ ]+|Terminate signal (SIGINT|SIGTERM|SIGQUIT|[(]SIGINT or SIGTERM[)]) received)$'
# Slurm 24.11's standby says why it does not take over (src/slurmctld/backup.c).
REFUSAL_MESSAGES='^(error: Not taking control[.] Primary slurmctld is unresponsive, but (heartbeat file could not be read[.] Something is wrong with your StateSaveLocation|is still updating the heartbeat file[.] Check for clock skew|not yet able to determine if primary may actually be running)[.]|warning: Waiting for heartbeat file to exist[.][.][.])$'
# slurmctld's last words when it exits on an error (25.11: a backup taking over without a state file).
FATAL_MESSAGES='^fatal: '

last_role_lines() { # stdin: log lines, newest first -> up to 8 role lines, plus the refusals
  # (at most 3) and the newest fatal line logged after the newest role line, oldest first.
  # Stops at the 8th role line.
  awk -v file_header="$LOG_FILE_HEADER" -v journal_header="$LOG_JOURNAL_HEADER" -v role="$ROLE_MESSAGES" \
    -v refusal="$REFUSAL_MESSAGES" -v fatal="$FATAL_MESSAGES" '
    index($0, "\r") { next }
    { if (!match($0, file_header) && !match($0, journal_header)) next; message = substr($0, RLENGTH + 1) }
    message ~ role { print; roles++; if (roles >= 8) exit; next }
    roles == 0 && refusals < 3 && message ~ refusal { print; refusals++; next }
    roles == 0 && fatals < 1 && message ~ fatal { print; fatals++ }' | tac
}

sec_role() { # the last lines saying which role this node's slurmctld took, and any refusal since
  local seconds=$1 log=$2 file found=""
  echo "now_local=$(date '+%Y-%m-%dT%H:%M:%S')"
  if [ -n "$log" ] && timeout -k 1 "$seconds" test -r "$log"; then
    # Read from the end: the file may be large; rotated once, the last role line may be in .1
    for file in "$log" "$log.1"; do
      timeout -k 1 "$seconds" test -r "$file" || continue
      found=$(timeout -k 1 "$seconds" tac "$file" | LC_ALL=C last_role_lines)
      if [ -n "$found" ]; then
        echo "source=file:$file"
        printf '%s\n' "$found"
        return 0
      fi
    done
    echo "source=file:$log"
    return 1
  fi
  if command -v journalctl >/dev/null 2>&1; then
    echo "source=journal:slurmctld"
    found=$(timeout -k 1 "$seconds" journalctl -u slurmctld --no-pager -o short-iso -r -n 50000 2>/dev/null |
      LC_ALL=C last_role_lines)
    if [ -n "$found" ]; then
      printf '%s\n' "$found"
      return 0
    fi
    return 1
  fi
  echo "source=none"
  return 1
}

last_words() { # the cause at the end of an error message ("...: Read-only file system")
  printf '%s' "$1" | head -n 1 | sed -e 's/^.*: //' | tr -cd '[:print:]' | head -c 120
}

fs_error() { # rc what: a failed file operation; one that timed out means a hung file system
  if [ "$1" = 124 ] || [ "$1" = 137 ]; then
    echo "error=timed out $2"
    return 124
  fi
  echo "error=failed $2 (exit $1)"
  return 1
}

sec_heartbeat() { # 16 bytes: big-endian time of the last beat, big-endian index of the writer
  local seconds=$1 dir=$2 file rc bytes
  if [ -z "$dir" ]; then
    echo "error=StateSaveLocation unknown"
    return 2
  fi
  file="$dir/heartbeat"
  echo "path=$file"
  # Slurm 24.11 replaces the file (heartbeat.new, unlink, link): it may be missing for an
  # instant, so a missing file is looked for twice more, as slurmctld itself does.
  local attempt
  for attempt in 1 2 3; do
    timeout -k 1 "$seconds" test -e "$file"
    rc=$?
    [ "$rc" = 1 ] && [ "$attempt" -lt 3 ] && { sleep 0.1; continue; }
    break
  done
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "error=timed out looking for the heartbeat file"
    return 124
  fi
  if [ "$rc" != 0 ]; then
    echo "exists=no"
    echo "now=$(date +%s)"
    return 1
  fi
  echo "exists=yes"
  local times
  # Replaced again between the look and the read (seen on the lab): read again, as above.
  for attempt in 1 2 3; do
    times=$(timeout -k 1 "$seconds" stat -c $'size=%s\nmtime=%Y' "$file" 2>/dev/null)
    rc=$?
    [ "$rc" = 1 ] && [ "$attempt" -lt 3 ] && { sleep 0.1; continue; }
    break
  done
  [ "$rc" = 0 ] || { fs_error "$rc" "reading the heartbeat file's size and time"; return; }
  echo "$times"
  echo "now=$(date +%s)"
  for attempt in 1 2 3; do
    if command -v od >/dev/null 2>&1; then
      bytes=$(timeout -k 1 "$seconds" od -An -tu1 -v -N 16 "$file" 2>/dev/null)
    else
      bytes=$(timeout -k 1 "$seconds" python3 -c 'import sys; print(*open(sys.argv[1], "rb").read(16))' "$file" 2>/dev/null)
    fi
    rc=$?
    [ "$rc" = 1 ] && [ "$attempt" -lt 3 ] && { sleep 0.1; continue; }
    break
  done
  [ "$rc" = 0 ] || { fs_error "$rc" "reading the heartbeat file"; return; }
  # shellcheck disable=SC2086 # word splitting joins od's columns
  echo "bytes="$bytes
  return 0
}

mount_of() { # seconds path prefix: the file system holding path (<prefix>mount_target, fstype, source)
  local seconds=$1 path=$2 prefix=$3 line target fstype source
  if command -v findmnt >/dev/null 2>&1; then
    line=$(timeout -k 1 "$seconds" findmnt -n -o TARGET,FSTYPE,SOURCE -T "$path" 2>/dev/null | head -n 1)
    read -r target fstype source <<<"$line"
  else
    fstype=$(timeout -k 1 "$seconds" stat -f -c %T "$path" 2>/dev/null)
    line=$(timeout -k 1 "$seconds" df -P "$path" 2>/dev/null | tail -n 1)
    read -r source _ _ _ _ target <<<"$line"
  fi
  echo "${prefix}mount_target=${target:-}"
  echo "${prefix}fstype=${fstype:-}"
  echo "${prefix}source=${source:-}"
}

sec_state_save() { # where StateSaveLocation lives and whether it takes a new file
  local seconds=$1 dir=$2 user=$3 rc write_test out began
  if [ -z "$dir" ]; then
    echo "error=StateSaveLocation unknown"
    return 2
  fi
  echo "path=$dir"
  timeout -k 1 "$seconds" test -d "$dir"
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "error=timed out looking at StateSaveLocation"
    return 124
  fi
  if [ "$rc" != 0 ]; then
    echo "exists=no"
    return 1
  fi
  echo "exists=yes"
  timeout -k 1 "$seconds" stat -c $'owner=%U\nmode=%a' "$dir" 2>/dev/null
  mount_of "$seconds" "$dir" ""
  # The directory belongs to SlurmUser, who could plant a symlink at any name root can guess:
  # mktemp creates a random name with O_CREAT|O_EXCL (mode 600), so it never follows one.
  # shellcheck disable=SC2016 # $1 is the inner shell's
  write_test='f=$(mktemp -p "$1" .hyperpod-ha-probe.XXXXXXXXXX) && rm -f -- "$f"'
  began=$(now_ms)
  out=$(timeout -k 1 "$seconds" bash -c "$write_test" _ "$dir" 2>&1)
  rc=$?
  case "$rc" in
    0) echo "writable=yes" && echo "write_ms=$(($(now_ms) - began))" ;; # a file created and removed
    124 | 137) fs_error "$rc" "creating a file in StateSaveLocation"; return ;;
    *)
      echo "writable=no"
      echo "write_error=$(last_words "$out")"
      ;;
  esac
  # slurmctld writes as SlurmUser: root writing is not proof (root squash, ownership).
  if [ -n "$user" ] && [ "$user" != root ] && command -v runuser >/dev/null 2>&1 && id -u "$user" >/dev/null 2>&1; then
    echo "slurm_user=$user"
    out=$(timeout -k 1 "$seconds" runuser -u "$user" -- bash -c "$write_test" _ "$dir" 2>&1)
    rc=$?
    if [ "$rc" = 0 ]; then
      echo "writable_by_slurm_user=yes"
    else
      echo "writable_by_slurm_user=no"
      echo "slurm_user_write_error=$(last_words "$out")"
    fi
  fi
  return 0
}

# What the next failover needs from this node: where its slurm.conf resolves (a link to the
# shared copy, or a local file) and a hash of it (never its content: it may hold a password),
# the version of its slurmctld, and the SlurmctldPrimaryOnProg/OffProg programs that publish
# the failover topic's messages: set in the running configuration (`scontrol show config`,
# answered by the active controller) and in this node's slurm.conf, and each one executable.
sec_failover_conf() {
  local seconds=$1 conf=$2 out rc kind source slot resolved sum
  # `slurmctld -V` prints "slurm 24.11.5": the binary this node starts, running or not.
  out=$(set -o pipefail; timeout -k 1 "$seconds" slurmctld -V 2>&1 | head -c 200)
  rc=$?
  out=$(printf '%s\n' "$out" | head -n 1)
  if [ "$rc" = 0 ] && [ -n "$out" ]; then
    echo "version=${out##* }"
  else
    echo "version_error=$(last_words "$out") (exit $rc)"
  fi
  for kind in running:config file:slurm_conf; do
    source=${kind#*:}
    kind=${kind%%:*}
    # A configuration that could not be read says nothing: no line at all (unknown).
    [ -s "$WORK/$source.out" ] && read -r rc _ <"$WORK/$source.rc" && [ "$rc" = 0 ] || continue
    for slot in On Off; do
      program_state "$seconds" "${kind}_${slot,}_prog" "$(conf_get "SlurmctldPrimary${slot}Prog" "$source")"
    done
  done
  if [ -z "$conf" ]; then
    echo "conf_error=no readable slurm.conf found"
    return 1
  fi
  echo "conf_path=$conf"
  if timeout -k 1 "$seconds" test -L "$conf"; then echo "conf_link=yes"; else echo "conf_link=no"; fi
  resolved=$(timeout -k 1 "$seconds" readlink -f -- "$conf" 2>/dev/null)
  echo "conf_resolved=$resolved"
  mount_of "$seconds" "${resolved:-$conf}" conf_
  sum=$(timeout -k 1 "$seconds" sha256sum -- "$conf" 2>/dev/null)
  rc=$?
  if [ "$rc" != 0 ]; then
    echo "conf_error=$(fs_error "$rc" "hashing slurm.conf" | sed 's/^error=//')"
    return 1
  fi
  echo "conf_hash=${sum%% *}"
  return 0
}

# Slurm 25.11+: slurmctld's /readyz (204 in control, else 500) and /livez (slurm/http_probes.py).
# Older releases are not asked (they would log a bad RPC).
sec_slurmctld_http() { # seconds port communication-parameters
  local s=$1 port=${2%%-*} v major minor path rc each
  echo "port=${port:=6817}"
  v=$(timeout -k 1 "$s" slurmctld -V 2>/dev/null | head -n 1)
  v=${v##* } major=${v%%.*} minor=${v#*.} minor=${minor%%.*}
  echo "version=$v"
  case "$major$minor$port" in '' | *[!0-9]*) echo "served=unknown"; echo "why=this node's slurmctld version is unknown"; return 0 ;; esac
  if [ "$major" -lt 25 ] || { [ "$major" = 25 ] && [ "$minor" -lt 11 ]; }; then
    printf 'served=no\nwhy=Slurm %s serves no /readyz (added in 25.11)\n' "$v"; return 0
  fi
  case ",$3," in *,disable_http,*) printf 'served=no\nwhy=CommunicationParameters=disable_http\n'; return 0 ;; esac
  each=$(((s - 1) / 2)); [ "$each" -ge 1 ] || each=1
  for path in readyz livez; do
    # shellcheck disable=SC2016 # the inner shell's arguments
    v=$(timeout -k 1 "$each" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 3
      printf "GET /%s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" "$2" >&3
      IFS= read -r line <&3 || exit 4
      printf "%s\n" "$line"' _ "$port" "$path" 2>/dev/null)
    rc=$?
    case "$rc" in
      0) echo "$path=$(printf '%s' "$v" | sed -n 's|^HTTP/[0-9.]* \([0-9][0-9][0-9]\).*|\1|p')" ;;
      3) echo "${path}_error=connection refused on port $port" ;;
      4 | 141) echo "${path}_error=connection closed without an HTTP answer (built without an HTTP parser?)" ;;
      124 | 137) echo "${path}_error=no answer within $each s" ;;
      *) echo "${path}_error=failed (exit $rc)" ;;
    esac
  done
}

# The configuration files' time and hash, systemd's last kill of slurmctld by a signal (slurm/conf_change.py).
sec_conf_change() { # seconds slurm.conf-path
  local s=$1 file facts sum line
  echo "now=$(date +%s)"
  [ -n "$2" ] || { echo "error=no readable slurm.conf found"; return 1; }
  for file in "$2" "${2%/*}/topology.conf" "${2%/*}/topology.yaml"; do
    facts=$(timeout -k 1 "$s" stat -L -c '%Y %s' -- "$file" 2>/dev/null) || { echo "file ${file##*/} missing"; continue; }
    sum=$(timeout -k 1 "$s" sha256sum <"$file" 2>/dev/null)
    echo "file ${file##*/} mtime=${facts% *} size=${facts#* } sha256=${sum%% *}"
  done
  command -v journalctl >/dev/null 2>&1 || return 0
  line=$(timeout -k 1 "$s" journalctl -u slurmctld --no-pager -o short-unix -r -n 5000 2>/dev/null |
    grep -m 1 -E 'Main process exited, code=(killed|dumped), status=' | tr -cd '[:print:]' | head -c 300)
  [ -z "$line" ] || echo "signal_exit=$line"
}

# HyperPod's ON/OFF program's failed publishes, in <shared>/var/log/slurm/ (slurm/notify_failures.py).
sec_notify_failures() { # seconds slurm.conf-path
  local s=$1 root log tail
  root=$(timeout -k 1 "$s" readlink -f -- "$2" 2>/dev/null)
  case "$root" in */opt/slurm/etc/slurm.conf) root=${root%/opt/slurm/etc/slurm.conf} ;;
    *) echo "error=slurm.conf (${root:-not found}) is not in HyperPod's shared layout"; return 0 ;; esac
  log="$root/var/log/slurm/notification_attempts.log"
  echo "path=$log"
  timeout -k 1 "$s" test -f "$log" || { echo "exists=no"; return 0; }
  tail=$(timeout -k 1 "$s" tail -c 65536 -- "$log" 2>/dev/null | grep 'Failed to send notification')
  printf 'exists=yes\nnow=%s\nmtime=%s\nfailures=%s\nlast_failure=%s\n' "$(date +%s)" \
    "$(timeout -k 1 "$s" stat -c %Y -- "$log" 2>/dev/null)" "$(printf '%s' "$tail" | grep -c .)" \
    "$(printf '%s\n' "$tail" | tail -n 1 | tr -cd '[:print:]' | head -c 200)"
}

# /opt/slurm's target, the nodes HyperPod replaces or reboots (slurm/hyperpod_hand.py).
sec_hyperpod_hand() {
  local seconds=$1 link=${HYPERPOD_HA_SLURM_LINK:-/opt/slurm} out rc # the variable: tests only
  if [ -L "$link" ]; then
    echo "slurm_link=$(readlink -- "$link" | head -c 200)"
  elif [ -e "$link" ]; then
    echo "slurm_link_error=$link is not a link"
  else
    echo "slurm_link_error=no $link"
  fi
  out=$(timeout -k 2 "$seconds" sinfo -h -N -R -o '%N|%E' 2>&1)
  rc=$?
  if [ "$rc" = 0 ]; then
    printf '%s\n' "$out" | grep -E '[|].*Action:(Replace|Reboot)' | head -n 32 | sed 's/^/action /'
  else
    echo "actions_error=sinfo -R: $(last_words "$out") (exit $rc)"
  fi
  return 0
}

sec_slurm_triggers() { # slurm/strigger_get.py
  local p=${HYPERPOD_HA_TRIGGER_DIR:-/usr/local/libexec/hyperpod-ha}/slurm-trigger o r
  program_state "$1" program "$p"
  echo "program_topic=$(sed -n "s/^topic='\(.*\)'$/\1/p" "$p" 2>/dev/null)"
  o=$(timeout -k 2 "$1" strigger --get 2>&1) || { r=$?; echo "get_error=$(last_words "$o")"; return $r; }
  echo "$o" | grep -F " $p " || :
}

program_state() { # seconds name path: name=<path> and, when set, name_state=executable|not_executable|missing
  local seconds=$1 name=$2 path=$3 rc
  echo "$name=$path"
  [ -n "$path" ] || return 0
  timeout -k 1 "$seconds" test -f "$path" -a -x "$path"
  rc=$?
  if [ "$rc" = 0 ]; then
    echo "${name}_state=executable"
  elif [ "$rc" = 1 ]; then
    if timeout -k 1 "$seconds" test -e "$path"; then echo "${name}_state=not_executable"; else echo "${name}_state=missing"; fi
  else
    echo "${name}_state=unknown"
  fi
}

main "$@" </dev/null
