"""How dsfields words a snapshot's values for people: one spelling of a default, a type, "auto", a deprecation.

``lookup``, ``check``, ``diff``, the field history and the site all say "default 1e9" or "deprecated →
offload_param" about the same record; if each worded it its own way they would drift apart (they
did). Every function here returns plain text; the site escapes it for Markdown/HTML afterwards.
"""

from __future__ import annotations

import json

from dsfields.model import chinese
from dsfields.model.records import Auto, Deprecation, Enum, Field, Section, Source

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing typing costs lookup's start-up milliseconds; annotations are strings anyway
    from collections.abc import Iterable
    from typing import Any


def json_text(value: Any) -> str:
    """A value as a user writes it in ``ds_config.json``."""
    return json.dumps(value, ensure_ascii=False)


def scientific(number: Any) -> str | None:
    """``1e9`` for 1000000000, ``5e8``, ``1.5e6``: big round numbers are checked faster this way.

    It is also how DeepSpeed's source writes them (``pp_int(5e8)``, ``pp_int(1e5)``): the snapshot keeps the value,
    not its spelling, so the site's "as the source writes it" (``filters.source_number``) is this rule, checked
    against DeepSpeed 0.19.8, where every integer default of this shape is written so and every other large one
    is not (``1048576``, ``10 * 1024 * 1024``)."""
    if isinstance(number, bool) or not isinstance(number, int):
        return None
    digits = str(abs(number)) if abs(number) < 10**4000 else ""
    significant = digits.rstrip("0")
    exponent = len(digits) - 1
    if not digits or exponent < 5 or len(significant) > 3:
        return None
    mantissa = significant[0] + ("." + significant[1:] if len(significant) > 1 else "")
    return f"{'-' if number < 0 else ''}{mantissa}e{exponent}"


def value_text(value: Any, enum: Enum | None = None) -> str:
    """A JSON value as written in ds_config.json, with ``(1e9)`` for big round ints and enum names."""
    text = json_text(value)
    if (short := scientific(value)) is not None:
        text += f" ({short})"
    if enum is not None:
        names = [m.name for m in enum.members if m.value == value and m.name != value]
        if names:
            text += f" ({enum.name}.{names[0]})"
    return text


def short_factory(name: str) -> str:
    """``DeepSpeedZeroLeafModuleConfig.<lambda>`` for the dotted factory name: the module path is noise."""
    parts = name.split(".")
    start = 0
    while start < len(parts) - 1 and parts[start].islower():
        start += 1
    return ".".join(parts[start:])


def default_text(field: Field, enum: Enum | None = None, compact: bool = False) -> str:
    """pydantic-settings style: ``(required)``, ``(default: …)``, ``(default factory: …)``.

    ``compact`` (one-line listings) keeps what fits: the symbolic spelling, no enum member name.
    """
    if field.required:
        return "(required)"
    if field.read_without_default:
        return "(no default: absent means not set)"
    value = value_text(field.default, None if compact else enum)
    if field.default_factory:
        if compact:
            return f"(default: {value})"
        return f"(default factory: {short_factory(field.default_factory)} → {value})"
    symbolic = field.default_repr
    if symbolic is not None:
        # `sys.maxsize` says why the number is what it is; `torch.float16` has no JSON form at all.
        if compact or field.default is None:
            return f"(default: {symbolic})"
        return f"(default: {symbolic} = {value})"
    return f"(default: {value})"


def default_words(field: Field) -> list[tuple[str, str]]:
    """The default in a sentence or table cell, as ``(kind, text)`` pieces: ``"code"`` for a value or its
    spelling, ``"text"`` for words. The site's form (it adds only the markup); the same facts as
    :func:`default_text`: ``required``, not set when absent, the symbolic spelling where it says more
    than the JSON value, and a factory.
    """
    if field.required:
        return [("text", "required (no default)")]
    if field.read_without_default:
        return [("text", "none (absent means not set)")]
    value = json.dumps(field.default, ensure_ascii=False, sort_keys=True)
    symbolic = field.default_repr
    if symbolic and field.default is None:
        # `torch.float16` has no JSON form: the snapshot's null is not the default (as in default_text).
        words = [("code", symbolic)]
    elif symbolic and symbolic != value:
        words = [("code", symbolic), ("text", " = "), ("code", value)]
    else:
        words = [("code", value)]
    if field.default_factory:
        words.append(("text", " (factory)"))
    return words


def default_value(field: Field) -> str:
    """The default alone, for a sentence ("default 1e9"): symbolic spelling first, ``none`` when required."""
    if field.default_repr:
        return field.default_repr
    if field.default is None and field.required:
        return "none"
    return json_text(field.default)


def short_json(value: Any, limit: int = 80) -> str:
    """A value as JSON on one line (keys sorted), cut to ``limit``: for one-line-per-change reports."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def symbolic_default(field: Field) -> str:
    """``sys.maxsize (9223372036854775807)`` where a symbol explains the number, else the JSON value (cut short)."""
    shown = short_json(field.default)
    symbol = field.default_repr
    return f"{symbol} ({shown})" if symbol and shown != short_json(symbol) else shown


def stage_label(stage: str) -> str:
    return "when absent" if stage == "any" else f"at ZeRO stage {stage}"


def effective_at(field: Field, stage: str) -> Any:
    """What DeepSpeed uses at ``stage`` when the key is absent: the validator's choice, else the default."""
    effective = field.effective_default or {}
    if stage in effective:
        return effective[stage]
    return effective.get("any", field.default)


def default_in_context(field: Field, stage: int | None) -> str:
    """The default a user of ZeRO ``stage`` gets (``None``: unknown stage), for check's advice."""
    effective = field.effective_default
    if effective:
        if "any" in effective:
            return json_text(effective["any"])
        if stage is not None and str(stage) in effective:
            return f"{json_text(effective[str(stage)])} (at ZeRO stage {stage})"
        return "stage-dependent: " + ", ".join(f"stage {k}: {json_text(v)}" for k, v in sorted(effective.items()))
    return default_value(field)


def effective_text(field: Field) -> str | None:
    """What DeepSpeed really uses when the key is absent, where a validator makes it differ."""
    effective = field.effective_default
    if not effective:
        return None
    default = field.default
    if set(effective) == {"any"}:
        value = effective["any"]
        return None if value == default else f"{value_text(value)} (a validator sets it when absent)"
    if all(value == default for value in effective.values()):
        return None
    ordered = sorted(effective, key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s))
    groups: list[tuple[list[str], Any]] = []
    for stage in ordered:
        if groups and groups[-1][1] == effective[stage] and stage.isdigit() and groups[-1][0][-1].isdigit():
            groups[-1][0].append(stage)
        else:
            groups.append(([stage], effective[stage]))
    parts = []
    for members, value in groups:
        stages = f"stage {members[0]}" if len(members) == 1 else f"stages {members[0]}–{members[-1]}"
        parts.append(f"{value_text(value)} at ZeRO {stages}")
    return ", ".join(parts) + " (the stage decides when the key is absent)"


_SYMBOLS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def constraints_text(constraints: dict[str, Any]) -> str | None:
    parts = []
    for name, value in constraints.items():
        if name in _SYMBOLS:
            parts.append(f"{_SYMBOLS[name]} {value_text(value)}")
        elif name == "multiple_of":
            parts.append(f"multiple of {value_text(value)}")
        elif name == "min_length":
            parts.append(f"length >= {value}")
        elif name == "max_length":
            parts.append(f"length <= {value}")
        elif name == "pattern":
            parts.append(f"matches {value}")
        else:
            parts.append(f"{name} {value_text(value)}")
    return ", ".join(parts) or None


def allowed_text(field: Field, enum: Enum | None) -> str | None:
    """Allowed values; enum members as ``0 (disabled)``, aliases grouped under their value."""
    if enum is not None:
        by_value: dict[str, tuple[Any, list[str]]] = {}
        for member in enum.members:
            by_value.setdefault(json.dumps(member.value, ensure_ascii=False), (member.value, []))[1].append(member.name)
        items = []
        for value, names in by_value.values():
            names = [n for n in names if n != value]
            items.append(value_text(value) + (f" ({', '.join(names)})" if names else ""))
        return f"{enum.name}: " + ", ".join(items)
    if field.choices:
        return ", ".join(value_text(c) for c in field.choices)
    return None


def blocked_by(error: str | None, key: str | None) -> str | None:
    """The other key a probe's error names (``KeyError: 'different_groups'`` where ``schedule_offset`` was probed):
    the probe stopped on that key's absence before it read the value, so the value was never judged; else None."""
    import re

    missing = re.fullmatch(r"KeyError: '([^']+)'", error or "")
    return missing.group(1) if missing and key and missing.group(1) != key else None


def auto_case(accepted: bool, becomes: str | None, truthy: bool = False, kind: str | None = None,
              blocked: bool = False) -> str:
    """What DeepSpeed alone does with ``"auto"``, as one of ``rejected``, ``blocked`` (the probe stopped on another
    key first: :func:`blocked_by`), ``default`` (dropped, the default used), ``truthy`` (kept, and the release's
    reader tests its truth: it switches the key on), ``number`` / ``bool`` (kept where the key's type is one, which
    the string is not), ``kept`` and ``accepted``: the one decision the CLI (:func:`auto_text`) and the site
    (``docs/filters.auto_text``, ``auto_short``) each word."""
    if not accepted:
        return "blocked" if blocked else "rejected"
    if becomes == "default":
        return "default"
    if becomes == "kept":
        if truthy:
            return "truthy"
        return {"int": "number", "float": "number", "bool": "bool"}.get(kind or "", "kept")
    return "accepted"


def auto_text(auto: Auto | None, truthy: bool = False, kind: str | None = None, key: str | None = None
              ) -> str | None:
    """What DeepSpeed alone does with ``"auto"`` (:func:`auto_case`), in the CLI's words; ``truthy``: the release's
    reader tests the value's truth (:attr:`Field.truthiness`); ``kind``: the key's type; ``key``: its name."""
    if auto is None:
        return None
    blocked = blocked_by(auto.error, key) is not None
    return {
        "rejected": "rejected" + (f" ({auto.error})" if auto.error else ""),
        "blocked": f"not judged, the probe stopped first on another key ({auto.error})",
        "truthy": 'accepted but kept as the string "auto", which counts as true: it switches this on',
        "number": 'accepted by the config reader but kept as the string "auto" where DeepSpeed expects a number: '
                  'nothing resolves it, and code that uses it as a number fails or misreads it',
        "bool": 'accepted but kept as the string "auto" where DeepSpeed expects true or false: nothing resolves it',
        # DeepSpeed stores the string: something else (e.g. the HF Trainer) must replace it.
        "kept": 'accepted but kept as the string "auto": DeepSpeed does not resolve it',
    }.get(auto_case(auto.accepted, auto.becomes, truthy, kind, blocked), "accepted: dropped, the default is used")


def deprecation_text(deprecated: Deprecation) -> str:
    """``deprecated → new_key``, then what DeepSpeed does with the old key's value."""
    new = deprecated.new_param
    text = f"deprecated → {new}" if new else "deprecated"
    details = []
    if new and not deprecated.set_new_param:
        details.append(f"its value is not carried over to {new}")
    elif new:
        how = "converted and copied" if deprecated.converts_value else "copied"
        details.append(f"its value is {how} to {new} (setting both is an error)")
    if deprecated.message:
        details.append(str(deprecated.message))
    return text + ("; " + "; ".join(details) if details else "")


def strictness_text(section: Section | None) -> str:
    """What DeepSpeed does with a key it does not know in ``section``."""
    if section is None:
        return "unknown keys: not recorded"
    if section.passthrough:
        return "any key is passed on as is"
    return {
        "error": "strict: an unknown key is an error",
        "ignored": "lenient: an unknown key is silently ignored",
        "kept": "unknown keys are kept",
    }.get(section.unknown_keys, f"unknown keys: {section.unknown_keys}")


def source_text(source: Source | None) -> str | None:
    """``deepspeed/runtime/config.py:123 in get_x()``."""
    if source is None:
        return None
    text = f"{source.file}:{source.line}" if source.line is not None else source.file
    where = source.function or source.table
    return f"{text} in {where}" + ("()" if source.function else "") if where else text


def at_source(source: Any) -> str:
    """`` (file:line)`` of a raw source record (``{"file": ..., "line": ...}``), or "" where it names no file."""
    return f" ({source.get('file')}:{source.get('line')})" if isinstance(source, dict) and source.get("file") else ""


def integer_taking_true(record: Any) -> dict[str, Any] | None:
    """For a dict-read key DeepSpeed uses as an integer whose probes also passed ``true`` (the batch keys):
    its JSON types without ``boolean`` and the least value the probes saw pass (1 when 0 and -1 failed), else
    None. ``true`` passes only because Python's bool is an int (``true`` is a batch of 1): shown as such, not
    as a boolean key. ``record`` is a field record (a :class:`Field` or its raw dict); from the snapshot's own
    json_types and probes, nothing named here."""
    raw = record.raw if isinstance(record, Field) else record
    types = raw.get("json_types") or []
    if raw.get("type") == "bool" or isinstance(raw.get("default"), bool):
        return None
    if "boolean" not in types or "integer" not in types or not set(types) <= {"boolean", "integer", "null"}:
        return None
    probes = raw.get("probes") or {}
    if not (probes.get("true") or {}).get("ok"):
        return None
    least = 1 if (probes.get("1") or {}).get("ok") and all(
        name in probes and not probes[name].get("ok") for name in ("0", "-1")) else None
    return {"types": [kind for kind in types if kind != "boolean"], "least": least}


def _integer_taking_true_words(lang: str) -> tuple[str, str]:
    if lang == "zh":
        return chinese.text("model.wording.not_set"), chinese.text("model.wording.true_python_bool_int")
    return "not set", "{true} passes too, as 1 (a Python bool is an int)"


def integer_taking_true_text(info: dict[str, Any], lang: str = "en", code: Any = str, compact: bool = False) -> str:
    """The type of such a key (:func:`integer_taking_true`) in one wording for lookup and the site:
    ``integer ≥ 1 / null (not set); true passes too, as 1 (a Python bool is an int)``; ``code`` marks the
    JSON spellings (the site passes its HTML code span), ``lang`` en or zh; ``compact`` (one-line listings)
    only ``integer ≥ 1 / null``."""
    not_set, passes = _integer_taking_true_words(lang)
    text = code("integer") + (f" ≥ {info['least']}" if info.get("least") else "")
    if "null" in info.get("types", ()):
        text += f" / {code('null')}" + ("" if compact else f" ({not_set})")
    return text if compact else f"{text}; " + passes.format(true=code("true"))


def type_text(field: Field, lang: str = "en", compact: bool = False) -> str:
    """The type as lookup gives it (an integer that also takes ``true``: :func:`integer_taking_true_text`)."""
    info = integer_taking_true(field)
    if info is not None:
        return integer_taking_true_text(info, lang, compact=compact)
    if field.type == "any" and field.json_types:
        return f"any ({' | '.join(field.json_types)})"
    return field.type


def _words(key: str) -> tuple[str, ...]:
    return tuple(sorted(w for w in key.lower().replace("-", "_").split("_") if w))


def same_words(key: str, candidates: Iterable[str] | SpellingIndex) -> str | None:
    """The candidate spelt with ``key``'s words reordered (``comm_overlap`` → ``overlap_comm``), or split/joined
    differently by underscores (``overlapcomm``, ``over_lap_comm``): difflib's character ratio misses both. One
    home for ``check``'s and ``lookup``'s did-you-mean. ``candidates`` asked about many keys (every key of a
    release): a :class:`SpellingIndex` of them, which gives the same answer without respelling each candidate."""
    words, squashed = _words(key), key.lower().replace("_", "").replace("-", "")
    if isinstance(candidates, SpellingIndex):
        return candidates.first_other(key, words, squashed)
    for candidate in candidates:
        if candidate == key:
            continue
        if _words(candidate) == words or candidate.lower().replace("_", "") == squashed:
            return candidate
    return None


class SpellingIndex:
    """Candidates by their words and by their squashed spelling, each in the given order: :func:`same_words` over
    them, built once (``check`` asks it for every unknown key, against the ~600 keys of a release)."""

    def __init__(self, candidates: Iterable[str]) -> None:
        self._by_words: dict[tuple[str, ...], list[tuple[int, str]]] = {}
        self._by_squashed: dict[str, list[tuple[int, str]]] = {}
        for position, candidate in enumerate(candidates):
            self._by_words.setdefault(_words(candidate), []).append((position, candidate))
            self._by_squashed.setdefault(candidate.lower().replace("_", ""), []).append((position, candidate))

    def first_other(self, key: str, words: tuple[str, ...], squashed: str) -> str | None:
        """The first candidate other than ``key`` with these words or this squashed spelling, else None."""
        found = [entry for entry in (*self._by_words.get(words, ()), *self._by_squashed.get(squashed, ()))
                 if entry[1] != key]
        return min(found)[1] if found else None


def keys_named_by_words(text: str, section: str, paths: Iterable[str]) -> list[str]:
    """The keys of ``section`` (among ``paths``) whose name words a message uses: at least two, and two thirds of
    them (``stage3_prefetch_bucket_size`` in "the prefetch bucket size must be ..."), the closest two first. The
    one rule by which the message catalogue and ``explain`` tie a message to keys by its words.

    A word of the name the message lacks must be a qualifier: one with a digit (``stage3``) or a word of the
    section's own name (``zero`` of ``zero_quantized_weights``). A lacking word with a meaning of its own makes it
    another thing: "cannot find a group size" (a quantizer's) is not ``sub_group_size``."""
    import re

    words = {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", text)}
    words |= {short for short, long in _SHORT_FORMS.items() if long in words}  # "minimum" names min_loss_scale
    qualifiers = {w.rstrip("s") for w in re.split(r"[._]", section.lower()) if w}
    scored = []
    for path in paths:
        if not path.startswith(section + ".") or path.count(".") != section.count(".") + 1:
            continue
        tokens = [t.rstrip("s") for t in path.rsplit(".", 1)[-1].lower().split("_") if t]
        hits = sum(1 for t in tokens if t in words)
        lacking = [t for t in tokens if t not in words]
        if any(t not in qualifiers and not re.search(r"\d", t) for t in lacking):
            continue
        if hits >= 2 and hits * 3 >= len(tokens) * 2:
            scored.append((-hits / len(tokens), -hits, path))  # equally whole: the longer name is the closer
    return [p for _, _, p in sorted(scored)[:2]]


_SHORT_FORMS = {"min": "minimum", "max": "maximum", "num": "number"}
"""The English abbreviations DeepSpeed's key names use for words its messages spell out."""
