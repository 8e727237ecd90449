#!/usr/bin/env bash
# Record, frame by frame, what AWS's Session Manager client sends to the project's fake agent
# (tests/fixtures/session_manager/<scenario>.jsonl). Run by hand; fetches and builds nothing:
# build `session-manager-plugin` from aws/session-manager-plugin yourself, following its own
# README, and pass the binary (this repository keeps no recipe for building others' code).
#
#   tools/session_manager_plugin/record.sh PLUGIN_BINARY SOURCE [SCENARIO...]
#
# SOURCE names what was built, e.g. aws/session-manager-plugin@<commit>; it is recorded.
set -euo pipefail
[[ $# -ge 2 && -x $1 ]] || { echo "usage: $0 PLUGIN_BINARY SOURCE [SCENARIO...]" >&2; exit 2; }
plugin=$(realpath "$1")
source=$2
shift 2
cd "$(dirname "$0")/../.."
.venv/bin/python -m tests.fakes.record_plugin --plugin "$plugin" \
    --out tests/fixtures/session_manager --source "$source" --version "$("$plugin" --version)" "$@"
