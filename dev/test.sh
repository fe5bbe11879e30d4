#!/usr/bin/env bash
# Every test: unit tests on fixture packages, integration tests against the real DeepSpeed 0.19.8,
# the docs build and the headless-browser test. Installs everything it needs from the project's files.
source "$(dirname "$0")/env.sh"
pip install -q -c "$ROOT/dev/constraints-test.txt" torch
pip install -q -c "$ROOT/dev/constraints-test.txt" -e "$ROOT[extract,docs,test]" deepspeed
# Chromium for the browser tests; a CJK font so the Chinese screenshots show characters, not boxes.
if { ! command -v chromium >/dev/null 2>&1 || [ ! -d /usr/share/fonts/opentype/noto ]; } && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk >/dev/null) \
        || echo "dev/test.sh: could not install chromium / fonts-noto-cjk" >&2
fi
cd "$ROOT"
ruff check extractor tests bench
python -m pytest "$@"
