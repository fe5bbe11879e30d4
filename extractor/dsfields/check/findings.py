"""What ``check`` reports: one :class:`Finding` per problem, grouped per file, each explaining itself per style."""

from __future__ import annotations

import json
from collections import namedtuple
from enum import StrEnum

from dsfields.model.style import OutputStyle, github_data, github_property
from dsfields.model.termsafe import shown

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def github_level(self) -> str:
        return {"error": "error", "warning": "warning", "info": "notice"}[self.value]


RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Kind(StrEnum):
    """What a finding is about; the value is its human title (griffe's BreakageKind style)."""

    UNKNOWN_KEY = "unknown key"
    REMOVED_KEY = "removed key"
    DEPRECATED_KEY = "deprecated key"
    ALIAS = "Python attribute name used as key"
    DUPLICATE_KEY = "duplicate key"
    SYNTAX = "syntax"
    WRONG_TYPE = "wrong type"
    COERCED = "value coerced"
    CHOICE = "value not allowed"
    CONSTRAINT = "value out of range"
    AUTO = '"auto" value'
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    REQUIRED_KEY = "required key missing"
    RULE = "DeepSpeed rule"
    RUNTIME = "DeepSpeedConfig verdict"
    LAUNCH = "deepspeed.initialize rule"
    LAUNCH_VERDICT = "deepspeed.initialize verdict"
    LIMITATION = "not checked"


class Finding(namedtuple("Finding", "path severity kind message fix line related rule id",
                         defaults=(None, (), None, None))):
    __slots__ = ()

    path: str
    severity: Severity
    kind: Kind
    message: str
    fix: str
    line: int | None  # default None
    related: tuple[str, ...]  # default ()
    rule: str | None  # default None
    id: str | None  # default None
    """The stable ID (DSnnnnnnnn: the DeepSpeed message it quotes; DSFnnnnn: its rule), set by
    :func:`dsfields.check.codes.assign_ids` when the report is printed."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "severity": self.severity.value,
            "kind": self.kind.name.lower(),
            "title": self.kind.value,
            "message": self.message,
            "fix": self.fix,
            "related": list(self.related),
            "rule": self.rule,
            "id": self.id,
        }

    def explain(self, style: OutputStyle, *, file: str = "", version: str = "") -> str:
        """This finding in ``style``: an indented text block, a JSON object, or a GitHub annotation."""
        if style is OutputStyle.JSON:
            return json.dumps(self.as_dict(), ensure_ascii=False)
        if style is OutputStyle.GITHUB:
            title = f"dsfields {self.id + ' ' if self.id else ''}{self.kind.value} (DeepSpeed {version})"
            text = f"{self.path or '(file)'}: {self.message}" + (f" Fix: {self.fix}" if self.fix else "")
            return (f"::{self.severity.github_level} file={github_property(file)},line={self.line or 1},"
                    f"title={github_property(title)}::{github_data(text)}")
        # Path, message and fix carry data (keys, values, DeepSpeed's words): never a line break of their own.
        path, message, fix = shown(self.path or "(file)"), shown(self.message), shown(self.fix or "")
        if style is OutputStyle.MARKDOWN:
            fix = f" — fix: {fix}" if fix else ""
            ident = f" [{self.id}]" if self.id else ""
            return f"- **{self.severity.value}** line {self.line or 1}, `{path}`: {message}{ident}{fix}"
        tags = " ".join(t for t in (self.id, self.rule) if t)
        rule = f" [{tags}]" if tags else ""
        lines = [f"  {self.line or 1:>4}  {self.severity.value:<7}  {path}: {message}{rule}"]
        if fix:
            lines.append(f"  {'':>4}  {'':<7}  fix: {fix}")
        return "\n".join(lines)


class Options(namedtuple("Options", "hf world_size strict runtime optimizer_from_code launch hf_pair gpus_per_node",
                         defaults=(False, None, False, False, False, False, None, None))):
    """How a config is judged: for the HF Trainer, at a world size, strictly, with DeepSpeed's own verdict.

    ``optimizer_from_code``: plain code passes an optimizer to ``deepspeed.initialize`` (which launch
    rules apply); ``launch``: run ``deepspeed.initialize`` itself (``check --launch``).
    """

    __slots__ = ()

    hf: bool  # default False
    world_size: int | None  # default None
    strict: bool  # default False
    runtime: bool  # default False
    optimizer_from_code: bool  # default False
    launch: bool  # default False
    hf_pair: tuple[str, str] | None  # default None
    """With ``hf``: the transformers / accelerate releases whose programs plan the launch (``--hf-version``, else the
    installed or newest snapshotted pair); None: :data:`dsfields.hf.trainer.WITNESS_PAIR`."""
    gpus_per_node: int | None  # default None
    """Ranks per node (``--gpus-per-node``): ZeRO++'s hpZ and MiCS judge against it; None: all on one node."""


class FileReport:
    """One file's findings (or why it could not be read)."""

    __slots__ = ("name", "findings", "error", "config")

    def __init__(self, name: str, findings: list[Finding] | None = None, error: str | None = None,
                 config: Any = None) -> None:
        self.name = name
        self.findings = findings if findings is not None else []
        self.error = error
        """Set when the file is unusable (exit 2); ``findings`` is then empty."""
        self.config = config
        """The parsed :class:`~dsfields.configfile.ConfigFile` (``None`` when unusable)."""

    def __repr__(self) -> str:
        return f"FileReport({self.name!r}, {len(self.findings)} findings, error={self.error!r})"


def exit_code(reports: list[FileReport], strict: bool) -> int:
    if any(r.error for r in reports):
        return 2
    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    return 1 if any(f.severity in failing for r in reports for f in r.findings) else 0


def counts(reports: list[FileReport]) -> dict[str, int]:
    totals = {s.value: 0 for s in Severity}
    for report in reports:
        for finding in report.findings:
            totals[finding.severity.value] += 1
    return totals
