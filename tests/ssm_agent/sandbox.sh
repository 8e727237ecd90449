#!/usr/bin/env bash
# Runs a command in network, mount and PID namespaces of its own, for the tier that runs AWS's
# Session Manager agent: loopback only (nothing but 127.0.0.1 is reachable), and /etc, /var,
# /home, /root and /tmp as overlays whose changes go to a tmpfs, so the agent (root, writing
# under /var/lib/amazon and /var/log/amazon, perhaps /etc and /home) changes nothing on the host.
# Without root or namespaces the command runs as it is and the tier's tests skip, saying why.
set -euo pipefail

if [[ $# -eq 0 ]]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi
if [[ $(id -u) -ne 0 ]] || ! unshare --net --mount true 2>/dev/null; then
  echo "ssm-agent sandbox: not root or no network/mount namespaces: running without it" >&2
  exec "$@"
fi
if [[ ${SSM_AGENT_SANDBOX:-} != 1 ]]; then
  SSM_AGENT_SANDBOX=1 exec unshare --net --mount --propagation private --pid --fork --mount-proc -- "$0" "$@"
fi

ip link set lo up
mount -t sysfs ssm-agent-sandbox /sys # this namespace's interfaces: lo alone
# /mnt as the changes' tmpfs (inside the namespace: the host's /mnt is untouched).
mount -t tmpfs -o size=512m,mode=700 ssm-agent-sandbox /mnt
for dir in /etc /var /home /root /tmp; do
  [[ -d $dir ]] || continue
  name=${dir#/}
  mkdir -p "/mnt/$name/upper" "/mnt/$name/work"
  mount -t overlay ssm-agent-sandbox -o "lowerdir=$dir,upperdir=/mnt/$name/upper,workdir=/mnt/$name/work" "$dir"
done
chmod 1777 /tmp
# Not exec: this shell stays PID 1 of the namespace and reaps what the agent leaves orphaned.
"$@"
