"""DeepSpeedConfig's verdict on each config given as JSON on the command line, one line of JSON per config.

Run inside a release's runtime by ``tests/test_sampled_facts.py --score VERSION`` (through
``dsfields.extract.releases.run_in_release``): the readings of an older release's sampled facts are checked
against that release's own DeepSpeedConfig, as the 0.19.8 readings are in CI.
"""

from __future__ import annotations

import json
import sys

if __name__ == "__main__":
    import contextlib
    import copy
    import io

    # Not dsfields.extract.oracle: it sets DS_ACCELERATOR=cpu, which 0.9.3-0.14.0 cannot import without IPEX.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        from deepspeed.runtime.config import DeepSpeedConfig
    verdicts = []
    for config in json.loads(sys.argv[1]):
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                DeepSpeedConfig(copy.deepcopy(config))
            verdicts.append(None)
        except Exception as exc:  # any refusal is the verdict wanted
            verdicts.append(f"{type(exc).__name__}: {exc}"[:200])
    print(json.dumps(verdicts))
