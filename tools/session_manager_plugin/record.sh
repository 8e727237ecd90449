#!/usr/bin/env bash
# Build AWS's Session Manager client from a checkout of aws/session-manager-plugin and
# record, frame by frame, what it sends to the project's fake agent
# (tests/fixtures/session_manager/<scenario>.jsonl). Run by hand; fetches nothing.
#
#   tools/session_manager_plugin/record.sh CHECKOUT [SCENARIO...]
#
# Needs Go: Debian's golang-1.19 builds it (GOPATH mode, dependencies vendored).
# GOCACHE may name a build cache to reuse; SOURCE overrides the recorded provenance.
set -euo pipefail
[[ $# -ge 1 && -d $1/src/sessionmanagerplugin-main ]] || { echo "usage: $0 CHECKOUT [SCENARIO...]" >&2; exit 2; }
checkout=$(realpath "$1")
shift
repository=$(cd "$(dirname "$0")/../.." && pwd)
go=${GO:-$(command -v go || echo /usr/lib/go-1.19/bin/go)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

package=$work/gopath/src/github.com/aws/session-manager-plugin
mkdir -p "$package"
ln -s "$checkout/src" "$package/src"
(cd "$package" && GO111MODULE=off GOFLAGS= GOPATH="$work/gopath:$checkout/vendor" \
    GOCACHE="${GOCACHE:-$work/cache}" "$go" build -o "$work/session-manager-plugin" ./src/sessionmanagerplugin-main)

version=$("$work/session-manager-plugin" --version)
source=${SOURCE:-aws/session-manager-plugin@$(git -C "$checkout" rev-parse HEAD 2>/dev/null || echo unknown)}
cd "$repository"
.venv/bin/python -m tests.fakes.record_plugin --plugin "$work/session-manager-plugin" \
    --out tests/fixtures/session_manager --source "$source" --version "$version" "$@"
