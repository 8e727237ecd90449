#!/usr/bin/env bash
# hyperpod-ha/lambda-python:3.13: a local Lambda base image for python3.13, for
# `sam local invoke --invoke-image` where AWS's public images cannot be pulled.
#
# A Debian trixie root file system (debootstrap, from this machine's own Debian mirror),
# whose python3.13 is the runtime's Python, plus awslambdaric and boto3 in /var/runtime, the
# runtime's `bootstrap` and AWS's entrypoint contract. `docker import`ed: no registry, no
# Dockerfile. Rebuilt only when this recipe (the files of this directory) changes: the
# image carries the recipe's hash as a label.
#
# Usage: images/lambda-python/build.sh [PYTHON]   (PYTHON: a Python with pip, for the wheels)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
IMAGE=${LOCAL_IMAGE:-hyperpod-ha/lambda-python:3.13}
SUITE=trixie
PYTHON=${1:-python3}
LABEL=hyperpod-ha.recipe

recipe=$(cd "$here" && cat build.sh bootstrap lambda-entrypoint.sh requirements.txt | sha256sum | cut -c1-16)
current=$(docker image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true)
if [[ $current == "$recipe" ]]; then
  echo "$IMAGE is up to date (recipe $recipe)"
  exit 0
fi
[[ $(id -u) == 0 ]] || { echo "building $IMAGE needs root (debootstrap)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debootstrap is missing: .ci/container-runtime install" >&2; exit 1; }

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

case $(uname -m) in
  x86_64) arch=amd64 wheel=manylinux2014_x86_64 ;;
  aarch64) arch=arm64 wheel=manylinux2014_aarch64 ;;
  *) echo "no Lambda architecture for $(uname -m)" >&2; exit 1 ;;
esac
source=$(mirror)
work=$(mktemp -d /var/tmp/hyperpod-ha-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
started=$SECONDS

echo "debootstrap $SUITE ($arch) from $source"
debootstrap --variant=minbase --arch="$arch" --include=python3.13,ca-certificates \
  "$SUITE" "$root" "$source" >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; exit 1; }

# The runtime client and the SDK, as wheels for this architecture and Python 3.13.
"$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --no-compile --target "$root/var/runtime" \
  --platform "$wheel" --implementation cp --python-version 3.13 --only-binary=:all: \
  -r "$here/requirements.txt"
install -m 0755 "$here/bootstrap" "$root/var/runtime/bootstrap"
install -m 0755 "$here/lambda-entrypoint.sh" "$root/lambda-entrypoint.sh"
mkdir -p "$root/var/task" "$root/opt" "$root/var/rapid"
chroot "$root" /usr/bin/python3.13 -m compileall -q /var/runtime
# What a Lambda image has no use for: apt's lists and caches, documentation, locales.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc/* \
  "$root"/usr/share/man/* "$root"/usr/share/locale/* "$root"/var/log/*

python_version=$(chroot "$root" /usr/bin/python3.13 -c 'import platform; print(platform.python_version())')
tar -C "$root" --numeric-owner -c . | docker import \
  --change "LABEL $LABEL=$recipe" \
  --change "LABEL hyperpod-ha.python=$python_version" \
  --change "ENV LANG=C.UTF-8 TZ=:/etc/localtime LAMBDA_TASK_ROOT=/var/task LAMBDA_RUNTIME_DIR=/var/runtime" \
  --change "ENV PATH=/usr/local/bin:/usr/bin:/bin:/opt/bin" \
  --change "WORKDIR /var/task" \
  --change 'ENTRYPOINT ["/lambda-entrypoint.sh"]' \
  - "$IMAGE" >/dev/null
echo "built $IMAGE (Python $python_version, recipe $recipe) in $((SECONDS - started)) s"
