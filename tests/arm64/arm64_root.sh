#!/usr/bin/env bash
# An arm64 root of Debian trixie with its Python 3.13 (the Lambda runtime's version), for running
# the arm64 layer under qemu-user: `debootstrap --foreign` fetches the packages from this
# machine's own Debian mirror and every one is unpacked (no package script runs: nothing of
# arm64 executes here but Python itself, through qemu-aarch64-static -L ROOT).
# Kept between runs: rebuilt only when this recipe changes (its hash in ROOT/.recipe).
#
# Usage: tests/arm64/arm64_root.sh ROOT        (root; debootstrap and qemu-user-static)
#        tests/arm64/arm64_root.sh --packages  (installs them when missing)
set -euo pipefail

SUITE=trixie
if [[ ${1:-} == --packages ]]; then
  missing=()
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
  if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  exit 0
fi
root=${1:?usage: $0 ROOT}
[[ $(id -u) == 0 ]] || { echo "building the arm64 root needs root (debootstrap)" >&2; exit 1; }
recipe=$(sha256sum "$0" | cut -c1-16)
if [[ -f $root/.recipe && $(cat "$root/.recipe") == "$recipe" ]]; then
  echo "arm64 root $root is up to date (recipe $recipe)"
  exit 0
fi

# The Debian mirror this machine's apt uses (one-line or deb822 sources), not the security archive.
mirror() {
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  local file uri
  for file in "${files[@]}"; do
    [[ -f $file ]] || continue
    if [[ $file == *.sources ]]; then
      uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$file")
    else
      uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' "$file")
    fi
    uri=$(grep -v -- '-security\|/security' <<<"$uri" | grep '/debian/\?$' | head -1 || true)
    if [[ -n $uri ]]; then echo "${uri%/}"; return; fi
  done
  echo "no Debian mirror found in /etc/apt/sources.list(.d)" >&2
  return 1
}

work="$root.new"
rm -rf "$work"
mkdir -p "$(dirname "$root")"
debootstrap --foreign --arch=arm64 --variant=minbase --include=python3.13 "$SUITE" "$work" "$(mirror)" \
  >"$work.log" 2>&1 || { tail -20 "$work.log" >&2; exit 1; }
while read -r _ deb; do
  dpkg-deb -x "$work$deb" "$work"
done <"$work/debootstrap/debpaths"
rm -rf "$work/var/cache/apt/archives"/*.deb "$work/debootstrap" "$work.log"
echo "$recipe" >"$work/.recipe"
rm -rf "$root"
mv "$work" "$root"
echo "arm64 root $root built (recipe $recipe)"
