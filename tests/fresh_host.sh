#!/usr/bin/env bash
# Runs a command on a view of this machine as a new user's machine has it: no Slurm or munge
# programs, no `slurm`/`munge` users or groups, no Slurm configuration and no lab leftovers.
# `make test` runs the non-lab suite through it, so a test that leans on what the lab (or an
# earlier session) installed fails here instead of passing only on a used machine.
#
# Everything is hidden in private mount and PID namespaces of the command alone (it sees no
# daemon of the host either): the host is not changed. Needs root and unshare(1); elsewhere
# the command runs as it is, with a note.
set -euo pipefail

if [[ $# -eq 0 ]]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi
if [[ $(id -u) -ne 0 ]] || ! unshare --mount true 2>/dev/null; then
  echo "fresh_host: not root or no mount namespaces: running without hiding host Slurm" >&2
  exec "$@"
fi
if [[ ${FRESH_HOST_INSIDE:-} != 1 ]]; then
  FRESH_HOST_INSIDE=1 exec unshare --mount --propagation private --pid --fork --mount-proc -- "$0" "$@"
fi

users="${FRESH_HOST_USERS:-slurm munge}"
# Directories Slurm, munge and the lab leave behind (Debian's packages, the lab's own build).
dirs="/etc/slurm /etc/slurm-llnl /etc/munge /run/munge /var/lib/slurm /var/log/slurm
  /var/spool/slurm /var/spool/slurmctld /var/spool/slurmd /var/lib/munge /var/log/munge
  /srv/hplab /srv/hplab[0-9]* /run/hyperpod-lab-munge ${FRESH_HOST_DIRS:-}"
for dir in $dirs; do
  if [[ -d $dir ]]; then mount -t tmpfs -o size=1m,mode=755 fresh-host "$dir"; fi
done
# make test builds Slurm there while this suite runs: hidden even when it does not exist yet
# (made empty on the host, as the build would), so what appears in it later stays unseen.
mkdir -p /opt/hyperpod-lab
mount -t tmpfs -o size=1m,mode=755 fresh-host /opt/hyperpod-lab

# Every program the Slurm and munge packages put on the PATH becomes a non-executable file.
packages=$(dpkg-query -W -f='${Package} ${Status}\n' 2>/dev/null |
  awk '$1 ~ /^(slurm|munge|libmunge|libslurm|sview)/ && $NF == "installed" {print $1}')
for package in $packages; do
  for program in $(dpkg -L "$package" 2>/dev/null | grep -E '^/usr/(local/)?s?bin/' || true); do
    if [[ -f $program ]]; then mount --bind /dev/null "$program"; fi
  done
done

# The account files without those users and groups (copies on a tmpfs, bound over the real ones).
view=/mnt # a tmpfs over it inside the namespace: nothing is written on the host
mount -t tmpfs -o size=4m,mode=700 fresh-host "$view"
pattern="^($(tr ' ' '|' <<<"$users")):"
for file in /etc/passwd /etc/group /etc/shadow /etc/gshadow; do
  [[ -f $file ]] || continue
  grep -Ev "$pattern" "$file" >"$view/${file##*/}" || true
  chmod --reference="$file" "$view/${file##*/}"
  mount --bind "$view/${file##*/}" "$file"
done

unset FRESH_HOST_INSIDE
# Not exec: this shell stays PID 1 of the namespace and reaps what the tests leave orphaned.
"$@"
