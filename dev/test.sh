#!/usr/bin/env bash
# Every test, in every lane (tests/lanes.py): unit (fixture packages), data (the committed snapshots),
# integration (the real DeepSpeed 0.19.8 on CPU), site (the docs build and headless Chromium), build (g++).
# Installs everything it needs from the project's files.
#
#   bash dev/test.sh              set up, then every lane on both cores; extra arguments go to pytest
#   bash dev/test.sh --unit       the built wheel in a fresh virtualenv without torch: the unit lane, then a
#                                 smoke of lookup, check, extract (must refuse) and docs build
if [ "${1:-}" = "--unit" ]; then
    shift
    exec bash "$(dirname "$0")/unit.sh" "$@"
fi
source "$(dirname "$0")/env.sh"
pip install -q -c "$ROOT/dev/constraints-test.txt" torch
pip install -q -c "$ROOT/dev/constraints-test.txt" -e "$ROOT[extract,docs,test]" deepspeed
# Chromium for the browser tests; a CJK font so the Chinese screenshots show characters, not boxes.
if { ! command -v chromium >/dev/null 2>&1 || [ ! -d /usr/share/fonts/opentype/noto ]; } && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk >/dev/null) \
        || echo "dev/test.sh: could not install chromium / fonts-noto-cjk" >&2
fi
cd "$ROOT"
ruff check -q extractor tests bench
# DeepSpeed's CPU ops (fused_adam, cpu_adam, shm_comm, ...) JIT-built once per DeepSpeed into
# ~/.cache/dsfields/torch_extensions, outside any launch timeout (minutes the first time, then cached).
PYTHONPATH="$ROOT/extractor" python -m dsfields.launch --build-ops >/dev/null 2>&1 || echo "dev/test.sh: building DeepSpeed's CPU ops failed" >&2
# Both cores; a module's tests stay on one worker (--dist loadfile), so each module-scoped fixture (the site
# build, the launch worker, an extraction) is made once. Every test is bounded; the slowest are listed, and
# every skipped test is named with its reason (-rs), so a skip in CI is seen, not assumed.
set +e
python -m pytest -q -rs -n 2 --dist loadfile --timeout 900 --durations 25 "$@"
status=$?
# pytest's 5 ("no tests collected") is a failure here: a run that tests nothing must not pass.
exit $status
