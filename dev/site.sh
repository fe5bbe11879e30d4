#!/usr/bin/env bash
# Main job: install dsfields (no DeepSpeed, no torch) and build the docs site from the committed snapshots.
source "$(dirname "$0")/env.sh"
pip install -q -e "$ROOT[docs]"
cd "$ROOT"
dsfields docs build "$@"
