"""DeepSpeed's own verdict on a config dict, for the consumers that ask for it (``check --runtime``).

Lives in :mod:`dsfields.extract` because it imports DeepSpeed; the command line hands
:func:`build_deepspeed_config` to :mod:`dsfields.check.runtime`, which never imports DeepSpeed itself.
"""

from __future__ import annotations

import copy
from typing import Any

from dsfields.model.errors import DsfieldsError, missing_extra


def build_deepspeed_config(data: dict[str, Any]) -> BaseException | None:
    """Construct the installed ``DeepSpeedConfig`` on ``data``; the exception it raises, or None."""
    import contextlib
    import io
    import logging
    import os

    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:  # a DeepSpeed that cannot be imported is no verdict on the config: one line, exit 2
            from deepspeed.runtime.config import DeepSpeedConfig
        except ImportError as exc:
            raise missing_extra(exc) from None
        except (Exception, SystemExit) as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            raise DsfieldsError(f"cannot import DeepSpeed ({type(exc).__name__}: {first})") from None

        logging.getLogger("DeepSpeed").setLevel(logging.CRITICAL)
        try:
            DeepSpeedConfig(copy.deepcopy(data))
        except Exception as exc:  # every DeepSpeed complaint is a verdict (asserts, ValueError, pydantic)
            return exc
    return None


