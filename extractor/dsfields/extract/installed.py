"""The snapshot of the DeepSpeed importable here, for consumers that compare against it (``diff installed``).

The command line calls :func:`installed_snapshot` and hands the result to :mod:`dsfields.diff`, so the
consumer never imports the extractor (or DeepSpeed).
"""

from __future__ import annotations

import contextlib
import io

from dsfields.model.errors import SnapshotError, missing_extra
from dsfields.model.records import Snapshot


def installed_snapshot() -> Snapshot:
    """Extract the DeepSpeed importable here, in memory; :class:`SnapshotError` in one line if it fails."""
    try:  # every import of the extraction path inside the handler: a missing griffe is one line too
        from dsfields.extract.build import extract_installed
        from dsfields.extract.extract_command import import_failure
    except ImportError as exc:
        raise missing_extra(exc) from None
    cause = import_failure()
    if cause is not None:
        raise SnapshotError(f"cannot import DeepSpeed ({cause}); install it: pip install dsfields[extract]")

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return Snapshot.from_dict(extract_installed(), "the installed DeepSpeed's snapshot")
    except SnapshotError:
        raise
    except Exception as exc:  # the user's DeepSpeed failed us: one line, never a traceback
        raise SnapshotError(f"extracting the installed DeepSpeed failed ({type(exc).__name__}: {exc})") from None
