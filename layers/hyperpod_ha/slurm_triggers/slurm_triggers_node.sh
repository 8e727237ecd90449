#!/usr/bin/env bash
# hyperpod-ha Slurm triggers: installs on this controller the program Slurm's triggers run, and
# sets the triggers that are missing; or lists them. Modes (the stack's SlurmTriggersDocument):
#   install <topic-arn>  writes the trigger program (below) to PROGRAM, root's, mode 0755, through
#                        a temporary file and a rename; then asks `strigger --get` and sets each
#                        event of EVENTS that has no trigger of ours yet, as SlurmUser:
#                        `strigger --set --flags=PERM --<event> --program="PROGRAM <event>"`.
#                        Running it again sets nothing (what is there is kept).
#   list <topic-arn>     read-only: this controller's program and which of our triggers are set.
# Runs as root. slurmctld accepts triggers only from SlurmUser when SlurmUser is not root, and
# runs a trigger's program as the user who set it: SlurmUser, as HyperPod's ON/OFF program does.
# It splits the program at spaces: argument 1 is the event, then Slurm adds the trigger's res_id.
# Output: `key=value` lines and `trigger <event> <state>` rows, then `HYPERPOD_HA_RESULT rc=<n>`.

. hyperpod_ha/acting/controller_node.sh

# The events, as hyperpod_ha.slurm.triggers.TRIGGER_EVENTS names them (a test compares).
EVENTS="backup_slurmctld_failure backup_slurmctld_assumed_control backup_slurmctld_resumed_operation primary_slurmctld_failure primary_slurmctld_resumed_control primary_slurmctld_resumed_operation primary_slurmdbd_failure primary_slurmdbd_resumed_operation primary_database_failure primary_database_resumed_operation primary_slurmctld_acct_buffer_full"
# Local to each controller (slurmctld runs it where it is in control). Fixed: a script that
# writes as root takes no path from its environment (tests move it in the script's text).
PROGRAM_DIR=/usr/local/libexec/hyperpod-ha
PROGRAM="$PROGRAM_DIR/slurm-trigger"
TOPIC_ARN_PATTERN='^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$'
# Every strigger call is bounded; the whole install stops setting after SET_SECONDS.
CALL_SECONDS=5
SET_SECONDS=15

main() { # mode topic-arn
  local mode=${1:-} topic=${2:-}
  if ! printf '%s' "$topic" | grep -Eq "$TOPIC_ARN_PATTERN"; then
    echo "error=the topic is not an SNS topic ARN"
    return 2
  fi
  case "$mode" in
    install) install "$topic" ;;
    list) list "$topic" ;;
    *)
      echo "error=mode is not install or list"
      return 2
      ;;
  esac
}

program_text() { # topic region: the program; no secret in it, only where to publish
  cat <<EOF
#!/bin/bash
# hyperpod-ha's Slurm trigger program, written by the stack's SlurmTriggersDocument (install).
# slurmctld runs it as SlurmUser when one of the stack's triggers fires:
# --program="$PROGRAM <event>". It publishes one message to the cluster's failover topic
# and nothing else; a failed publish is one line in syslog (tag hyperpod-ha-slurm-trigger).
exec </dev/null >/dev/null 2>&1
export PATH="\${PATH:+\$PATH:}/usr/local/bin:/usr/bin:/bin"
topic='$1'
region='$2'
event=\$(printf '%s' "\${1:-unknown}" | tr -cd 'a-z_' | head -c 48)
host=\$(hostname -s 2>/dev/null | tr -cd 'A-Za-z0-9.-' | head -c 253)
at=\$(date -u +%Y-%m-%dT%H:%M:%SZ)
message="Slurm trigger \${event:-unknown} fired on \${host:-unknown} at \$at"
# Bounded: slurmctld keeps the trigger until this program ends.
out=\$(timeout -k 5 20 aws sns publish --region "\$region" --topic-arn "\$topic" \\
  --subject "Slurm Trigger" --message "\$message" 2>&1)
rc=\$?
if [ "\$rc" != 0 ]; then
  logger -t hyperpod-ha-slurm-trigger -p daemon.warning -- \\
    "publish failed (exit \$rc): \$message: \$(printf '%s' "\$out" | tr -cd '[:print:]' | tail -c 300)"
fi
exit "\$rc"
EOF
}

safe_directories() { # the program's directory (made when missing) and every directory above it:
  # none may let another user replace the program. Each belongs to root (or to this user) and is
  # not writable by group or others; above the program's own, a world-writable one must be sticky.
  local me dir facts owner mode
  me=$(id -u)
  [ -L "$PROGRAM_DIR" ] && { echo "program_error=$PROGRAM_DIR is a symbolic link"; return 1; }
  if [ ! -d "$PROGRAM_DIR" ]; then
    mkdir -p -m 0755 -- "$PROGRAM_DIR" || { echo "program_error=cannot create $PROGRAM_DIR"; return 1; }
  fi
  dir=$PROGRAM_DIR
  while :; do
    facts=$(stat -c '%u %a' -- "$dir" 2>/dev/null) || { echo "program_error=cannot stat $dir"; return 1; }
    owner=${facts% *}
    mode=$(printf '%04d' "${facts#* }")
    if [ "$owner" != 0 ] && [ "$owner" != "$me" ]; then
      echo "program_error=$dir belongs to uid $owner"
      return 1
    fi
    case "${mode:2:2}" in
      *[2367]*)
        if [ "$dir" = "$PROGRAM_DIR" ] || [ $((${mode:0:1} & 1)) = 0 ]; then
          echo "program_error=$dir is writable by others"
          return 1
        fi
        ;;
    esac
    [ "$dir" = / ] && return 0
    dir=$(dirname -- "$dir")
  done
}

write_program() { # topic: the program in place, atomically; program_action=written|unchanged
  local topic=$1 region tmp
  region=$(printf '%s' "$topic" | cut -d: -f4)
  safe_directories || return 1
  tmp=$(mktemp "$PROGRAM_DIR/.slurm-trigger.XXXXXX") || { echo "program_error=cannot create a file in $PROGRAM_DIR"; return 1; }
  if ! program_text "$topic" "$region" >"$tmp" || ! chmod 0755 -- "$tmp"; then
    rm -f -- "$tmp"
    echo "program_error=cannot write $tmp"
    return 1
  fi
  if [ -f "$PROGRAM" ] && [ ! -L "$PROGRAM" ] && cmp -s -- "$tmp" "$PROGRAM" &&
    [ "$(stat -c '%a' -- "$PROGRAM")" = 755 ]; then
    rm -f -- "$tmp"
    echo "program_action=unchanged"
    return 0
  fi
  mv -f -- "$tmp" "$PROGRAM" || { rm -f -- "$tmp"; echo "program_error=cannot rename into $PROGRAM"; return 1; }
  echo "program_action=written"
}

ours() { # event table: whether the table has a permanent trigger of ours for the event
  # strigger prints "%7u %-9s %7s %-35s %6d %-8s %-5s %s" (TYPE is the 4th word; FLAGS PERM or
  # blank; the program last, as it was set).
  printf '%s\n' "$2" | awk -v event="$1" -v program="$PROGRAM $1" '
    $4 != event { next }
    {
      tail = " PERM  " program
      if (length($0) >= length(tail) && substr($0, length($0) - length(tail) + 1) == tail) found = 1
    }
    END { exit found ? 0 : 1 }'
}

slurm_user() { # SlurmUser's name, as `scontrol show config` gives it ("slurm(401)" -> slurm)
  timeout -k 1 "$CALL_SECONDS" scontrol show config 2>/dev/null | sed -n 's/^SlurmUser *= *\([a-z_][a-z0-9_-]*\).*/\1/p' | head -n 1
}

as_slurm_user() { # user command...: as that user (directly when it is this one)
  local user=$1
  shift
  if [ "$user" = "$(id -un)" ]; then
    "$@"
  else
    runuser -u "$user" -- "$@"
  fi
}

triggers_now() { # the table, or nothing and rc != 0 (get_error, on stderr: the script's output
  # since controller_node.sh, while the caller keeps stdout)
  local out rc
  out=$(timeout -k 1 "$CALL_SECONDS" "$STRIGGER" --get 2>&1)
  rc=$?
  if [ "$rc" != 0 ]; then
    say get_error "strigger --get exited $rc: $(printf '%s' "$out" | head -n 2)" >&2
    return 1
  fi
  printf '%s\n' "$out" | head -n 2000
}

install() { # topic
  local topic=$1 user table event out rc installed="" already="" failed="" until
  echo "program=$PROGRAM"
  write_program "$topic" || return 1
  STRIGGER=$(command -v strigger) || { echo "error=strigger not found"; return 1; }
  user=$(slurm_user)
  [ -n "$user" ] || { echo "error=scontrol show config names no SlurmUser (slurmctld does not answer?)"; return 1; }
  echo "slurm_user=$user"
  table=$(triggers_now) || return 1
  until=$((SECONDS + SET_SECONDS))
  for event in $EVENTS; do
    if ours "$event" "$table"; then
      already="$already${already:+,}$event"
      echo "trigger $event already"
      continue
    fi
    if [ "$SECONDS" -ge "$until" ]; then
      failed="$failed${failed:+,}$event"
      echo "trigger $event out-of-time"
      continue
    fi
    out=$(as_slurm_user "$user" timeout -k 1 "$CALL_SECONDS" "$STRIGGER" --set --flags=PERM "--$event" \
      "--program=$PROGRAM $event" 2>&1)
    rc=$?
    if [ "$rc" = 0 ]; then
      installed="$installed${installed:+,}$event"
      echo "trigger $event installed"
    else
      failed="$failed${failed:+,}$event"
      echo "trigger $event failed"
      say "set_error_$event" "exit $rc: $out"
    fi
  done
  echo "installed=$installed"
  echo "already=$already"
  echo "failed=$failed"
  [ -z "$failed" ]
}

list() { # topic: read-only
  local topic=$1 table event present="" missing="" in_program
  echo "program=$PROGRAM"
  if [ -f "$PROGRAM" ] && [ -x "$PROGRAM" ]; then
    in_program=$(sed -n "s/^topic='\(arn:[^']*\)'\$/\1/p" "$PROGRAM" | head -n 1 | head -c 200)
    echo "program_state=executable"
    echo "program_topic=$in_program"
    echo "program_topic_matches=$([ "$in_program" = "$topic" ] && echo yes || echo no)"
  elif [ -e "$PROGRAM" ]; then
    echo "program_state=not_executable"
  else
    echo "program_state=missing"
  fi
  STRIGGER=$(command -v strigger) || { echo "error=strigger not found"; return 1; }
  table=$(triggers_now) || return 1
  for event in $EVENTS; do
    if ours "$event" "$table"; then
      present="$present${present:+,}$event"
      echo "trigger $event installed"
    else
      missing="$missing${missing:+,}$event"
      echo "trigger $event missing"
    fi
  done
  echo "installed=$present"
  echo "missing=$missing"
}

run_to_result main "$@" </dev/null
