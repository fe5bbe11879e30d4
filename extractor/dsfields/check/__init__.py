"""``dsfields check``: what DeepSpeed would reject, ignore or misread in a ds_config, judged from a snapshot.

May import: ``dsfields.model``, ``dsfields.configfile`` and its own modules; never DeepSpeed (``--runtime``
gets DeepSpeed's verdict passed in from the command line). Parts, bottom up: ``values`` (pydantic's
coercions), ``findings`` (what is reported), ``rules`` (cross-field rules), ``engine`` (the checker),
``runtime`` (DeepSpeed's second opinion), ``report`` (output styles), ``command`` (the CLI).
"""

from dsfields.check.check_command import add_arguments, run
from dsfields.check.engine import Checker, check_file, check_text
from dsfields.check.findings import FileReport, Finding, Kind, Options, Severity, exit_code

__all__ = ["Checker", "FileReport", "Finding", "Kind", "Options", "Severity", "add_arguments", "check_file",
           "check_text", "exit_code", "run"]
