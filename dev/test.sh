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
# DeepSpeed's CPU ops (fused_adam, cpu_adam, shm_comm, ...) JIT-built once per DeepSpeed into
# ~/.cache/dsfields/torch_extensions, outside any launch timeout (minutes the first time, then cached).
PYTHONPATH="$ROOT/extractor" python -m dsfields.extract.launch --build-ops >/dev/null 2>&1 || echo "dev/test.sh: building DeepSpeed's CPU ops failed" >&2
python -m pytest "$@"
