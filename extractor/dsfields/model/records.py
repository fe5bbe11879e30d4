"""Typed records over one snapshot: what every consumer and the extractor pass around instead of raw dicts.

A record is a thin, read-only view of its JSON object (``raw``): constructing one costs a pointer,
so ``dsfields lookup`` can wrap a 1 MB snapshot in microseconds, and serialising it back is the
object itself, so snapshots stay byte-stable. Every attribute tolerates a missing key (a partial
or hand-edited snapshot reads as "unknown", never as a ``KeyError``); :meth:`Snapshot.from_dict`
refuses what no consumer could use. The indexes every consumer needs (by path, by key within a
section, by Python name, by section, by bare key) are built once per snapshot, on first use.
The format itself is documented in ``docs/snapshot-format.md``.
"""

from __future__ import annotations

from functools import cached_property

from dsfields.model.dotted import join
from dsfields.model.errors import SnapshotError

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing typing costs lookup's start-up milliseconds; annotations are strings anyway
    from typing import Any

    Raw = dict[str, Any]


def _dict(value: Any) -> Raw:
    return value if isinstance(value, dict) else {}


class _Key:
    """A read-only attribute of a record: ``raw[key]`` (None where absent) through ``convert``.

    The records' plain accessors are these, made from the key and a conversion, instead of one hand-written
    ``@property`` each; the accessors that compute something stay properties.
    """

    __slots__ = ("key", "convert")

    def __init__(self, key: str, convert: Any = None) -> None:
        self.key = key
        self.convert = convert

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.raw.get(self.key)
        return value if self.convert is None else self.convert(value)


def _or_none(value: Any) -> Any:
    return value or None


def _list(value: Any) -> list[Any]:
    return list(value or [])


def _not_false(value: Any) -> bool:
    return value is not False


def _text(default: str) -> Any:
    def text(value: Any) -> str:
        return str(value or default)

    return text


def reader_constant(record: Any) -> Raw | None:
    """A field record's ``constant``, where it is its reader's: a constant of another package than the reader's
    source file is a name that only shares the key's spelling. The extraction matched constants by value, so
    ``fp16.enabled`` (read in ``deepspeed/runtime/config.py``) was given ``compression/constants.py``'s
    ``ACTIVATION_QUANTIZATION_ENABLED = "enabled"``; that label would name another feature on the page."""
    value = record.get("constant") if isinstance(record, dict) else None
    if not isinstance(value, dict):
        return None
    source = record.get("source")
    reader = source.get("file") if isinstance(source, dict) else None
    if isinstance(reader, str) and isinstance(value.get("file"), str) and \
            value["file"].split("/")[:2] != reader.split("/")[:2]:
        return None
    return value


class Record:
    """Base of every record: equality and hashing by content, ``as_dict`` for JSON output."""

    __slots__ = ("raw",)

    def __init__(self, raw: Raw) -> None:
        self.raw = raw


class Placed(Record):
    """A record stored under its JSON path: the path is known even where the object omits it."""

    __slots__ = ("_path",)

    def __init__(self, raw: Raw, path: str | None = None) -> None:
        super().__init__(raw)
        self._path = path

    @property
    def path(self) -> str:
        path = self.raw.get("path")
        return path if isinstance(path, str) else (self._path or "")

    def as_dict(self) -> Raw:
        return self.raw

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.raw == self.raw  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return id(self.raw)

    def __repr__(self) -> str:
        name = self.raw.get("path", self.raw.get("name", ""))
        return f"{type(self).__name__}({name!r})"


class Defaulted(Record):
    """A record with a default: its JSON value, and the symbolic spelling where JSON alone misleads."""

    __slots__ = ()

    default: Any = _Key("default")

    default_repr: str | None = _Key("default_repr")

    required: bool = _Key("required", bool)


class Source(Record):
    """Where DeepSpeed defines or reads something: ``deepspeed/<file>:<line>`` (site-packages relative)."""

    __slots__ = ()

    file: str = _Key("file", _text(""))

    @property
    def line(self) -> int | None:
        line = self.raw.get("line")
        return line if isinstance(line, int) and not isinstance(line, bool) else None

    function: str | None = _Key("function")

    table: str | None = _Key("table")


def _source(value: Any) -> Source | None:
    return Source(value) if isinstance(value, dict) and value.get("file") else None


class Deprecation(Record):
    """A pydantic field's deprecation: the replacement and what DeepSpeed does with the old value."""

    __slots__ = ()

    new_param: str | None = _Key("new_param")

    message: str | None = _Key("deprecated_msg")

    set_new_param: bool = _Key("set_new_param", _not_false)

    converts_value: bool = _Key("converts_value", bool)


class Auto(Record):
    """What DeepSpeed alone does with ``"auto"``: rejected, dropped for the default, or kept as a string."""

    __slots__ = ()

    accepted: bool = _Key("accepted", bool)

    becomes: str | None = _Key("becomes")
    """``"default"`` (dropped, the default is used) or ``"kept"`` (stored as given)."""

    error: str | None = _Key("error")


class Field(Placed, Defaulted):
    """One key DeepSpeed reads (sections included), as extracted from one release."""

    __slots__ = ()

    KEYS = (
        "auto", "choices", "constant", "constraints", "default", "default_factory", "default_repr",
        "deprecated", "description", "effective_default", "enum", "is_section", "json_types", "key",
        "path", "python_name", "read_without_default", "reader", "required", "section", "source", "type",
    )
    """Every key of a field record, in the order the format documents them (``other_defaults`` is optional)."""

    WITNESS_KEYS = (
        "alternatives", "choices_normalized", "condition", "conditions", "pattern", "probes", "truthiness",
        "witnesses",
    )
    """Keys format 2 adds (the reconciliation of the witnesses fills them in every record)."""

    OPTIONAL_KEYS = ("forced_by", "other_defaults", "when_absent")
    """Keys present only where they say something (absent from older snapshots too)."""

    @classmethod
    def new(cls, **values: Any) -> Field:
        """A complete record for the extractor: every key of :attr:`KEYS` must be given, no other."""
        missing = [k for k in cls.KEYS if k not in values]
        unknown = [k for k in values if k not in cls.KEYS and k not in cls.WITNESS_KEYS and k not in cls.OPTIONAL_KEYS]
        if missing or unknown:
            raise ValueError(f"field record: missing {missing}, unknown {unknown}")
        return cls(values)

    @property
    def section(self) -> str:
        section = self.raw.get("section")
        return section if isinstance(section, str) else self.path.rpartition(".")[0]

    @property
    def key(self) -> str:
        key = self.raw.get("key")
        return key if isinstance(key, str) else self.path.rpartition(".")[2]

    python_name: str | None = _Key("python_name", _or_none)

    @property
    def python_path(self) -> str | None:
        """``zero_optimization.max_live_parameters``: the path spelt with the attribute name, lower-cased."""
        name = self.python_name
        return join(self.section, name).lower() if name else None

    reader: str = _Key("reader", _text("dict"))
    """``"pydantic"`` or ``"dict"``."""

    @property
    def is_pydantic(self) -> bool:
        return self.reader == "pydantic"

    type: str = _Key("type", _text("any"))

    @property
    def json_types(self) -> list[str]:
        types = self.raw.get("json_types")
        return list(types) if isinstance(types, list) else []

    @property
    def used_as(self) -> list[str]:
        """The JSON types DeepSpeed uses the value as: :attr:`json_types` (declared, or what a validator accepted).

        A dict-read leaf that DeepSpeedConfig accepts anything for (``json_types`` is ``[]``) and whose
        default is a number is used as a number: the code that takes it later does arithmetic or
        comparisons (``gradient_clipping: "high"`` passes DeepSpeedConfig and fails at the first clip).
        This is an inference about later use that check and the schema share, never a stored JSON type
        (the snapshot's ``json_types`` are what DeepSpeed accepted). Other defaults say nothing
        (``datastates_ckpt`` defaults to false and takes an object; ``expert_parallel.top_k`` defaults
        to "auto" and takes an integer), so those stay ``[]``.
        """
        types = self.json_types
        if types or self.is_pydantic or self.is_section:
            return types
        default = self.default
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            return ["integer", "number"]  # an integer default takes 1.5 as Python does; only the kind is known
        return []

    @property
    def used_as_guessed(self) -> bool:
        """:attr:`used_as` comes from the default's type, not from a declaration or a validator."""
        return bool(self.used_as) and not self.json_types

    default_factory: str | None = _Key("default_factory")

    @property
    def comparable_default(self) -> Any:
        """The default as compared across releases: the symbolic spelling where JSON alone misleads."""
        return self.default_repr if self.default_repr is not None else self.default

    read_without_default: bool = _Key("read_without_default", bool)

    constraints: Raw = _Key("constraints", _dict)

    @property
    def choices(self) -> list[Any] | None:
        choices = self.raw.get("choices")
        return list(choices) if isinstance(choices, list) else None

    enum: str | None = _Key("enum")

    @property
    def deprecated(self) -> Deprecation | None:
        value = self.raw.get("deprecated")
        return Deprecation(value) if isinstance(value, dict) else None

    @property
    def effective_default(self) -> Raw | None:
        """ZeRO stage (``"0"``..``"3"``) or ``"any"`` → the value DeepSpeed uses when the key is absent."""
        value = self.raw.get("effective_default")
        return value if isinstance(value, dict) and value else None

    @property
    def auto(self) -> Auto | None:
        value = self.raw.get("auto")
        return Auto(value) if isinstance(value, dict) else None

    description: str | None = _Key("description", _or_none)

    source: Source | None = _Key("source", _source)

    @property
    def constant(self) -> Raw | None:
        """The constant naming the key in its reader's code (:func:`reader_constant`)."""
        return reader_constant(self.raw)

    is_section: bool = _Key("is_section", bool)

    # ---------------------------------------------------------------- witnesses (format 2)

    @property
    def witnesses(self) -> list[str]:
        """Which witnesses saw the read: ``trace``, ``static``, ``probe``, ``launch`` (``extract --launch``)."""
        value = self.raw.get("witnesses")
        return [str(v) for v in value] if isinstance(value, list) else []

    condition: str | None = _Key("condition", _or_none)
    """Source text of the branch every read of the key sits under, ``None`` when read unconditionally."""

    @property
    def conditions(self) -> list[Raw]:
        """The condition as tests ``{path, op, value}`` (all must hold)."""
        value = self.raw.get("conditions")
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    pattern: bool = _Key("pattern", bool)
    """The path has ``*`` segments: user-named keys (``different_groups.*.params.start_bits``)."""

    @property
    def alternatives(self) -> list[Raw]:
        """Other JSON shapes DeepSpeed accepts here: ``{json_type, means, source}``."""
        value = self.raw.get("alternatives")
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    choices_normalized: str | None = _Key("choices_normalized", _or_none)
    """``"lower"``/``"upper"`` when DeepSpeed case-folds the value before comparing it with :attr:`choices`."""

    truthiness: bool = _Key("truthiness", bool)
    """A dict reader tests the value's truth (any non-empty string, ``"false"`` too, switches it on)."""

    @property
    def requires(self) -> list[Raw]:
        """Keys of the same section some values of this one need (issue 25): ``{key, when, message, source}``,
        ``when`` ``"truthy"`` or the probe ids that need it; learned from DeepSpeed's refusals."""
        value = self.raw.get("requires")
        return [v for v in value if isinstance(v, dict) and isinstance(v.get("key"), str)] if isinstance(
            value, list) else []

    @property
    def requires_values(self) -> list[Raw]:
        """Values another key must hold while this one is true (issue 25): ``{path, values, when, message,
        source}``, e.g. ``zero_optimization.stage`` in ``[2]``; learned by probing that key's choices."""
        value = self.raw.get("requires_values")
        return [v for v in value if isinstance(v, dict) and isinstance(v.get("path"), str)
                and isinstance(v.get("values"), list)] if isinstance(value, list) else []

    @property
    def required_in_group(self) -> Raw | None:
        """Every entry of the user-named group above this key must give it (issue 25): ``{message, source}``,
        DeepSpeed's refusal of an entry without it (the entry's name written ``<name>``) and the line raising it."""
        value = self.raw.get("required_in_group")
        return value if isinstance(value, dict) else None

    @property
    def required_with_section(self) -> Raw | None:
        """Once its section is given, DeepSpeed needs this key (issue 25): ``{message, source}``, its refusal of the
        section without it (compression ``weight_quantization`` without ``different_groups``) and the line."""
        value = self.raw.get("required_with_section")
        return value if isinstance(value, dict) else None

    @property
    def compared_with(self) -> list[Raw]:
        """Sibling keys DeepSpeed compares this one with (issue 25): ``{key, op, message, source}``, ``op`` read
        as "this key op that key" (``schedule_offset_end >= schedule_offset``)."""
        value = self.raw.get("compared_with")
        return [v for v in value if isinstance(v, dict) and isinstance(v.get("key"), str)
                and v.get("op") in ("<", "<=", ">", ">=")] if isinstance(value, list) else []

    @property
    def choices_source(self) -> Raw | None:
        """Where a choice list was confirmed by building the class DeepSpeed builds from the section (issue 25):
        ``{built, file, line, function, message}``; None for choices DeepSpeedConfig itself checks."""
        value = self.raw.get("choices_source")
        return value if isinstance(value, dict) else None

    @property
    def switched_on(self) -> str | None:
        """The sibling switch (``enabled``) that was on when this key's verdicts were probed (issue 25): DeepSpeed
        judges the value only with the feature on. None where not recorded (older snapshots: see
        :attr:`Snapshot.probed_switched_on`)."""
        value = self.raw.get("switched_on")
        return value if isinstance(value, str) else None

    @property
    def item_probes(self) -> Raw:
        """DeepSpeed's verdicts on one-item lists ``{"-1": verdict, "0": verdict}`` (``[-1]``, ``[0]``), for a key
        holding a list of integers (elasticity ``micro_batch_sizes``); ``{}`` where not probed."""
        value = self.raw.get("item_probes")
        return value if isinstance(value, dict) else {}

    @property
    def refuses_falsy(self) -> str | None:
        """DeepSpeed's message when it refuses every false or empty probe value and accepts every other one
        (``assert self.results_dir``): the key must be non-empty. None otherwise, or when not probed."""
        probes = self.probes
        falsy, truthy = ("0", "null", "[]", "{}"), ("-1", "1", "true", '"1"', '"false"', "1.5")
        if not all(pid in probes for pid in falsy + truthy):
            return None
        errors = {str(probes[pid].get("error")) for pid in falsy if not probes[pid].get("ok")}
        if len(errors) != 1 or any(probes[pid].get("ok") for pid in falsy) or not all(
                probes[pid].get("ok") for pid in truthy):
            return None
        return errors.pop()

    def requirement_applies(self, requirement: Raw, value: Any) -> bool:
        """Whether ``value`` of this key needs ``requirement``'s key (DeepSpeed tests it as Python does)."""
        when = requirement.get("when")
        if when == "truthy":
            return bool(value)
        pid = probe_id(value)
        return isinstance(when, list) and pid is not None and pid in when

    @property
    def probes(self) -> dict[str, Raw]:
        """Probe id (``-1``, ``"false"``, ...) → DeepSpeed's verdict ``{ok, as?, error?}``; empty when not probed."""
        value = self.raw.get("probes")
        return {k: v for k, v in value.items() if isinstance(v, dict)} if isinstance(value, dict) else {}

    def probe_for(self, value: Any) -> tuple[str, Raw] | None:
        """The probe standing for ``value`` (same JSON type and sign class) and its verdict, if probed."""
        exact = f'"{value}"' if isinstance(value, str) and '"' not in value and "\\" not in value else None
        if exact is not None and exact in self.probes:
            # This very string was probed (the inference document probes its enums' spellings): its own verdict.
            return exact, self.probes[exact]
        pid = probe_id(value)
        if pid == "1.5" and value != 1.5 and "number" in self.json_types:
            return None  # 1.5 stands for "a fraction where an integer goes"; a number's range is the constraints'
        if pid == "1.5" and value != 1.5 and self._fraction_inside_default_interval(value):
            # The fixed probes (-1, 0, 1, 1.5) never try a value inside (0, 1): where DeepSpeed's own default is
            # such a fraction (dense_ratio 0.1, refused at 0, 1 and 1.5 by `0 < x < 1`), a fraction there is
            # not judged by 1.5's refusal.
            return None
        verdict = self.probes.get(pid) if pid else None
        return (pid, verdict) if pid and verdict is not None else None

    def _fraction_inside_default_interval(self, value: Any) -> bool:
        """``value`` and the default are both fractions strictly between 0 and 1 (no fixed probe lies there)."""
        default = self.default

        def inside(number: Any) -> bool:
            return isinstance(number, float) and 0 < number < 1

        return inside(value) and inside(default)

    @property
    def other_defaults(self) -> list[Raw]:
        value = self.raw.get("other_defaults")
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    # ---------------------------------------------------------------- parsed-state witnesses (optional)

    @property
    def when_absent(self) -> str | None:
        """What DeepSpeedConfig holds when the key is absent, where it was measured (``when_absent``).

        ``"defaults"`` (a section parsed like ``{}``), ``"none"`` (the whole section is None),
        ``"value"`` (DeepSpeed's own value, :attr:`absent_value`), ``"sentinel"`` (a private marker
        meaning "not given"); ``None`` when the snapshot does not say (older snapshots): ``default``
        is then all there is.
        """
        value = self.raw.get("when_absent")
        parsed = value.get("parsed") if isinstance(value, dict) else None
        return parsed if parsed in ("defaults", "none", "value", "sentinel") else None

    @property
    def absent_value(self) -> Any:
        """The value DeepSpeed uses when the key is absent, for :attr:`when_absent` ``"value"``."""
        value = self.raw.get("when_absent")
        return value.get("value") if isinstance(value, dict) else None

    @property
    def forced_by(self) -> list[Raw]:
        """``[{path, when, value}]``: while ``path`` is ``when``, DeepSpeed's parsed value is ``value``,
        whatever this key says (``wall_clock_breakdown`` with ``flops_profiler.enabled``)."""
        value = self.raw.get("forced_by")
        return [v for v in value if isinstance(v, dict) and isinstance(v.get("path"), str)] \
            if isinstance(value, list) else []


def probe_id(value: Any) -> str | None:
    """Which of the fixed value probes (``extract/probes.py``) a JSON value is judged by, or None."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else None
    if isinstance(value, (int, float)):
        if value < 0:
            return "-1"
        if value == 0:
            return "0"
        if value == 1 and isinstance(value, int):
            return "1"
        return "1.5" if isinstance(value, float) and not float(value).is_integer() else None
    if isinstance(value, str):
        if value == "auto":
            return '"auto"'
        if value.strip().lower() in ("false", "true", "yes", "no", "on", "off"):
            return '"false"'
        try:
            float(value)
        except ValueError:
            return None
        return '"1"'
    if isinstance(value, list):
        return "[]"
    if isinstance(value, dict):
        return "{}"
    return None


class Section(Placed):
    """A JSON object DeepSpeed reads as a unit: a pydantic model or a dict reader."""

    __slots__ = ()

    kind: str = _Key("kind", _text("dict"))
    """``"model"`` or ``"dict"``."""

    model: str | None = _Key("model")

    @property
    def model_name(self) -> str | None:
        """The class name alone (``DeepSpeedZeroConfig``), as pydantic titles its errors."""
        return self.model.rsplit(".", 1)[-1] if self.model else None

    parent: str | None = _Key("parent")

    strict: bool = _Key("strict", bool)

    unknown_keys: str = _Key("unknown_keys", _text("ignored"))
    """``"error"``, ``"ignored"`` or ``"kept"``."""

    passthrough: bool = _Key("passthrough", bool)

    @property
    def passed_to(self) -> list[Raw]:
        """Receivers of the whole dict (``{to, kind, file, line}``): its keys are read there, not ignored."""
        value = self.raw.get("passed_to")
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    pattern: bool = _Key("pattern", bool)

    source: Source | None = _Key("source", _source)

    description: str | None = _Key("description", _or_none)


class Removed(Placed):
    """A key DeepSpeed rejects with a message (removed from the config format)."""

    __slots__ = ()

    @property
    def section(self) -> str:
        section = self.raw.get("section")
        return section if isinstance(section, str) else self.path.rpartition(".")[0]

    @property
    def key(self) -> str:
        key = self.raw.get("key")
        return key if isinstance(key, str) else self.path.rpartition(".")[2]

    message: str = _Key("message", _text(""))

    source: Source | None = _Key("source", _source)

    python_name = None


class EnumMember(Record):
    __slots__ = ()

    @property
    def name(self) -> str:
        return str(self.raw.get("name", ""))

    value: Any = _Key("value")


class Enum(Record):
    """An enum class whose values a field takes (``ZeroStageEnum``), aliases included."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return str(self.raw.get("name", ""))

    @property
    def members(self) -> list[EnumMember]:
        members = self.raw.get("members")
        return [EnumMember(m) for m in members if isinstance(m, dict)] if isinstance(members, list) else []

    description: str | None = _Key("description", _or_none)

    source: Source | None = _Key("source", _source)


class CatalogParam(Defaulted):
    """One constructor argument of an optimizer or scheduler class."""

    __slots__ = ()


class CatalogClass(Record):
    """A class an optimizer/scheduler ``type`` may build, with its parameters."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return str(self.raw.get("class", ""))

    importable: bool = _Key("importable", bool)

    @property
    def params(self) -> dict[str, CatalogParam] | None:
        params = self.raw.get("params")
        if not isinstance(params, dict):
            return None
        return {name: CatalogParam(p) for name, p in params.items() if isinstance(p, dict)}

    var_keyword: bool = _Key("var_keyword", bool)

    source: Source | None = _Key("source", _source)


class CatalogEntry(Record):
    """One ``type`` value of the optimizer or scheduler section and what DeepSpeed builds for it."""

    __slots__ = ("name",)

    def __init__(self, name: str, raw: Raw) -> None:
        super().__init__(raw)
        self.name = name

    origin: str = _Key("origin", _text(""))

    case_insensitive: bool = _Key("case_insensitive", bool)

    engine_params: list[str] = _Key("engine_params", _list)

    params_passed: bool = _Key("params_passed", _not_false)

    @property
    def classes(self) -> list[CatalogClass]:
        classes = self.raw.get("classes")
        return [CatalogClass(c) for c in classes if isinstance(c, dict)] if isinstance(classes, list) else []

    constant: str | None = _Key("constant")


class Catalog(Record):
    """The optimizer or scheduler section: its JSON keys and every ``type`` the engine can build."""

    __slots__ = ("label", "__dict__")  # cached_property needs an instance dict

    def __init__(self, raw: Raw, label: str) -> None:
        super().__init__(raw)
        self.label = label
        """``"optimizer"`` or ``"scheduler"``."""

    @property
    def section(self) -> str:
        return str(self.raw.get("section") or self.label)

    type_key: str = _Key("type_key", _text("type"))

    params_key: str = _Key("params_key", _text("params"))

    source: Source | None = _Key("source", _source)

    @property
    def rejected_params(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in _dict(self.raw.get("rejected_params")).items()}

    fallback_modules: list[str] = _Key("fallback_modules", _list)

    @cached_property
    def names(self) -> dict[str, CatalogEntry]:
        return {name: CatalogEntry(name, entry) for name, entry in _dict(self.raw.get("names")).items()
                if isinstance(entry, dict)}


class HfTrainer(Record):
    """The keys whose ``"auto"`` the HF Trainer fills, read from transformers' source
    (:func:`dsfields.hf.trainer.fill_list`, from ``generated/hf/``)."""

    __slots__ = ()

    transformers_version: str | None = _Key("transformers_version")

    @property
    def paths(self) -> dict[str, Raw]:
        return {p: _dict(v) for p, v in _dict(self.raw.get("paths")).items()}


_REQUIRED: dict[str, type] = {"deepspeed_version": str, "fields": dict, "sections": dict}
"""Top-level keys without which no consumer can answer; the others default to empty."""
_OPTIONAL: dict[str, type] = {"removed": dict, "enums": dict, "coverage": dict, "environment": dict}


class Snapshot(Record):
    """Everything extracted from one DeepSpeed release, with its indexes built once."""

    __slots__ = ("__dict__",)  # cached_property needs an instance dict

    def paths_with(self, fact: str) -> frozenset[str]:
        """The paths whose record states ``fact`` (``required_with_section``, ``compared_with``,
        ``required_in_group``)."""
        known = self.__dict__.setdefault("_paths_with", {})  # asked per given section: scanned once per fact
        if fact not in known:
            known[fact] = frozenset(path for path, record in self.fields.items() if record.raw.get(fact))
        return known[fact]

    @classmethod
    def from_dict(cls, data: Any, name: str = "snapshot") -> Snapshot:
        """Wrap loaded JSON, refusing (:class:`SnapshotError`) what would break a consumer."""
        if not isinstance(data, dict):
            raise SnapshotError(f"{name}: not a JSON object")
        for key, kind in _REQUIRED.items():
            if not isinstance(data.get(key), kind):
                raise SnapshotError(f"{name}: missing or malformed {key!r}; re-extract it")
        for key, kind in _OPTIONAL.items():
            if key in data and data[key] is not None and not isinstance(data[key], kind):
                raise SnapshotError(f"{name}: malformed {key!r}; re-extract it")
        for group in ("fields", "sections", "removed"):
            for path, record in _dict(data.get(group)).items():
                if not isinstance(record, dict):
                    raise SnapshotError(f"{name}: {group} entry {path!r} is not an object; re-extract it")
        return cls(data)

    @property
    def version(self) -> str:
        return str(self.raw.get("deepspeed_version", "?"))

    format_version: Any = _Key("format_version")

    document: str = _Key("document", _text("training"))
    """``"training"`` (``fields.json``: DeepSpeedConfig) or ``"inference"`` (``inference.json``)."""

    environment: Raw = _Key("environment", _dict)

    coverage: Raw = _Key("coverage", _dict)

    @cached_property
    def probed_switched_on(self) -> dict[str, str]:
        """Keys whose probe verdicts were taken with their section's switch on (``{path: switch key}``), as the
        requirements witness says ("elasticity.min_gpus: probed again with enabled on: refuses ..."). DeepSpeed
        judges those values only with the feature on, so ``check`` applies the verdicts only then (issue 25)."""
        import re

        notes = _dict(self.coverage.get("witnesses")).get("requirements") or []  # not raw: an indexed one decodes all
        found = (re.match(r"(\S+): probed again with (\S+) on: refuses", n) for n in notes if isinstance(n, str))
        return {m[1]: m[2] for m in found if m}

    def values_required_of(self, path: str) -> list[tuple[Field, Raw]]:
        """The switches whose true value needs ``path`` to hold one of a few values, each with that fact of its
        ``requires_values`` (``fp16.fp16_master_weights_and_grads`` needs ``zero_optimization.stage`` in [2]).

        The witness's notes name the records ("...: true requires zero_optimization.stage in [2]"), so only those
        are decoded (``check`` reads a few records of an indexed snapshot); the facts are the records' own."""
        notes = _dict(self.coverage.get("witnesses")).get("requirements") or []
        marker = f": true requires {path} in "
        found = []
        for note in notes:
            if isinstance(note, str) and marker in note:
                record = self.fields.get(note.partition(marker)[0])
                found.extend((record, r) for r in (record.requires_values if record else ()) if r["path"] == path)
        return found

    # ------------------------------------------------------------ the records

    @cached_property
    def fields(self) -> dict[str, Field]:
        return {path: Field(raw, path) for path, raw in _dict(self.raw.get("fields")).items()}

    @cached_property
    def sections(self) -> dict[str, Section]:
        return {path: Section(raw, path) for path, raw in _dict(self.raw.get("sections")).items()}

    @cached_property
    def removed(self) -> dict[str, Removed]:
        return {path: Removed(raw, path) for path, raw in _dict(self.raw.get("removed")).items()}

    @cached_property
    def enums(self) -> dict[str, Enum]:
        return {name: Enum(raw) for name, raw in _dict(self.raw.get("enums")).items() if isinstance(raw, dict)}

    @cached_property
    def optimizers(self) -> Catalog | None:
        return _catalog(self.raw.get("optimizers"), "optimizer")

    @cached_property
    def schedulers(self) -> Catalog | None:
        return _catalog(self.raw.get("schedulers"), "scheduler")

    @cached_property
    def catalogs(self) -> dict[str, Catalog]:
        """Section path (``optimizer``, ``scheduler``) → its catalog."""
        return {c.section: c for c in (self.optimizers, self.schedulers) if c is not None}

    # ------------------------------------------------------------ indexes

    @cached_property
    def by_section(self) -> dict[str, dict[str, Field]]:
        """Section path → key → field directly inside it."""
        out: dict[str, dict[str, Field]] = {}
        for record in self.fields.values():
            out.setdefault(record.section, {})[record.key] = record
        return out

    @cached_property
    def by_python_name(self) -> dict[str, dict[str, Field]]:
        """Section path → Python attribute name → field, where the name differs from the key.

        DeepSpeedConfigModel sets ``populate_by_name``: a pydantic field accepts its attribute name too.
        """
        out: dict[str, dict[str, Field]] = {}
        for record in self.fields.values():
            name = record.python_name
            if record.is_pydantic and name and name != record.key:
                out.setdefault(record.section, {})[name] = record
        return out

    @cached_property
    def by_alias(self) -> dict[str, dict[str, Field]]:
        """Section path → pydantic alias → field, for documents keyed by attribute name (the inference
        document: ``kernel_inject`` is ``replace_with_kernel_inject``'s alias; both are accepted)."""
        out: dict[str, dict[str, Field]] = {}
        for record in self.fields.values():
            for alias in record.raw.get("aliases") or ():
                if isinstance(alias, str) and alias != record.key:
                    out.setdefault(record.section, {})[alias] = record
        return out

    @cached_property
    def by_key(self) -> dict[str, list[str]]:
        """Bare key → every path spelt with it (``enabled`` is in many sections)."""
        out: dict[str, list[str]] = {}
        for path, record in self.fields.items():
            out.setdefault(record.key, []).append(path)
        return out

    @cached_property
    def removed_by_section(self) -> dict[str, dict[str, Removed]]:
        out: dict[str, dict[str, Removed]] = {}
        for record in self.removed.values():
            out.setdefault(record.section, {})[record.key] = record
        return out

    @cached_property
    def all_paths(self) -> list[str]:
        """Every field, removed key and section, shallow paths first (the likelier reading of a key)."""
        paths = set(_dict(self.raw.get("fields"))) | set(_dict(self.raw.get("removed"))) | set(
            _dict(self.raw.get("sections")))
        paths.discard("")
        return sorted(paths, key=lambda p: (p.count("."), p))

    @cached_property
    def patterns(self) -> list[tuple[tuple[str, ...], str]]:
        """Pattern paths (fields and sections with ``*``) split into segments, most specific first."""
        paths = {p for p, f in self.fields.items() if f.pattern} | {p for p, s in self.sections.items() if s.pattern}
        return sorted(((tuple(p.split(".")), p) for p in paths), key=lambda t: (t[1].count("*"), t[1]))

    def resolve(self, path: str) -> str:
        """The snapshot's path for a concrete one (``different_groups.wq1.params`` → ``different_groups.*.params``)."""
        if path in self.fields or path in self.sections or path in self.removed:
            return path
        parts = tuple(path.split("."))
        for segments, pattern in self.patterns:
            if len(segments) == len(parts) and all(s in ("*", p) for s, p in zip(segments, parts, strict=True)):
                return pattern
        return path

    @cached_property
    def names(self) -> list[tuple[str, str, str | None]]:
        """``(path, key, python path)`` lower-cased for every path of :attr:`all_paths`, in its order.

        What ``lookup`` searches; built from the raw objects without wrapping every record, because a
        lookup must answer about as fast as grep.
        """
        fields, removed = _dict(self.raw.get("fields")), _dict(self.raw.get("removed"))
        out = []
        for path in self.all_paths:
            raw = fields.get(path) or removed.get(path)
            key = raw.get("key") if isinstance(raw, dict) else None
            if not isinstance(key, str):
                key = path.rpartition(".")[2]
            name = raw.get("python_name") if isinstance(raw, dict) and path in fields else None
            section = raw.get("section") if isinstance(raw, dict) else None
            python_path = None
            if name:
                section = section if isinstance(section, str) else path.rpartition(".")[0]
                python_path = join(section, name).lower()
            out.append((path, key.lower(), python_path))
            for alias in (raw.get("aliases") or ()) if isinstance(raw, dict) and path in fields else ():
                if isinstance(alias, str):  # an alias finds its field (inference: kernel_inject)
                    alias_section = section if isinstance(section, str) else path.rpartition(".")[0]
                    out.append((path, alias.lower(), join(alias_section, alias).lower()))
        return out

    def enum_of(self, field: Field) -> Enum | None:
        return self.enums.get(field.enum) if field.enum else None

    def field_by_name(self, section: str, name: str) -> Field | None:
        """The field of ``section`` whose key or Python attribute name is ``name``; a dotted ``name`` is a path
        below ``section`` (DeepSpeed's ``new_param="tensor_parallel.tp_size"``), each part a key or a name."""
        if "." in name:
            record: Field | None = None
            for part in name.split("."):
                record = self.field_by_name(section, part)
                if record is None:
                    return None
                section = record.path
            return record
        own = self.by_section.get(section, {})
        if name in own:
            return own[name]
        return self.by_python_name.get(section, {}).get(name) or self.by_alias.get(section, {}).get(name)

    def spelling(self, section: str, name: str) -> str:
        """The JSON key for ``name`` (a key or an attribute name) in ``section``."""
        record = self.field_by_name(section, name)
        if record is not None and "." in name:  # a path below section: spelt from there
            return record.path[len(section) + 1:] if section else record.path
        return record.key if record else name

    def is_field(self, path: str) -> bool:
        return path in self.fields


def _catalog(value: Any, label: str) -> Catalog | None:
    return Catalog(value, label) if isinstance(value, dict) and value.get("section") else None
