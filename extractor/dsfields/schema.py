"""``dsfields schema``: a JSON Schema (Draft 2020-12) of ds_config for one DeepSpeed release.

Editors (VS Code's ``json.schemas``, JetBrains, ``check-jsonschema`` in CI) validate and complete
JSON against a schema with no plugin and no DeepSpeed installed. The schema is generated from the
same snapshot ``check`` reads, so the two agree (a test compares them on real configs): types,
enums, constraints and defaults per key, ``deprecated``, removed keys rejected, optimizer and
scheduler params per ``type`` (if/then), and ``additionalProperties: false`` exactly where
DeepSpeed raises on an unknown key — or, with ``--strict-unknown``, also where it silently drops
one. ``"auto"`` is allowed only where DeepSpeed itself accepts it (as ``check`` judges), and with
``--hf`` also where the HF Trainer fills it (as ``check --hf``). Each field carries a
``markdownDescription`` (our explanation, DeepSpeed's docstring quoted, default, "auto", docs link)
and ``examples`` for completion. Cross-field rules (batch arithmetic,
fp16 xor bf16) are not expressible per key and stay in ``check``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dsfields.links import SITE_URL, anchor, field_url
from dsfields.model import chinese, prose
from dsfields.model.inference_prose import explain_for
from dsfields.model.records import Catalog, CatalogEntry, Field, Snapshot
from dsfields.model.store import dumps, load_requested, write_atomic

DRAFT = "https://json-schema.org/draft/2020-12/schema"
EXAMPLES_DIR = Path(__file__).resolve().parent / "docs" / "examples"
"""The seed's templates A/B/C, as the site's templates page quotes them (``docs/views.py`` reads the same files)."""
SCHEMA_FILE = "ds_config.schema.json"


def build_schema(snapshot: Snapshot | dict[str, Any], strict_unknown: bool = False,
                 site_url: str | None = SITE_URL, lang: str = "en", hf: bool = False,
                 history: Mapping[str, Any] | None = None, history_links: bool = False,
                 generated: str | None = None) -> dict[str, Any]:
    """The whole training config's schema for ``snapshot``'s DeepSpeed version, described in ``lang``;
    ``hf``: for configs given to the HF Trainer, which fills the "auto" values of its list; ``history``: each
    key's events across releases (:func:`committed_history`), which date its deprecation and removal.
    ``history_links``: each key's docs link (with ``site_url``) is its history across releases
    (``releases/history/#<anchor>``), the same in every release, rather than its entry in this release: the
    site's copies, whose keys are files shared by the releases that read them alike (``dsfields.docs.schemas``;
    a link per release made every key of every release a file of its own: 203 MB instead of 10).
    ``generated``: the snapshot folder whose ``hf/`` holds that list (None: the checkout's)."""
    typed = snapshot if isinstance(snapshot, Snapshot) else Snapshot.from_dict(snapshot)
    return _Builder(typed, strict_unknown, site_url, lang, hf, history, history_links, generated).root()


def history_of(index: Any) -> dict[str, Any]:
    """Every key's events across releases from an ``index.json`` (``fields``, and ``versions``, the releases in
    order); {} for no index or one of another shape."""
    from collections.abc import Mapping

    if not isinstance(index, dict) or not isinstance(index.get("fields"), Mapping):  # read_index's: decoded per key
        return {}
    return {"fields": index["fields"], "versions": list(index.get("versions") or [])}


@functools.lru_cache(maxsize=4)
def committed_history(generated_dir: Path | None = None) -> dict[str, Any]:
    """:func:`history_of` the committed snapshots' ``index.json`` (or ``generated_dir``'s), {} where the index is
    not current or absent (an installed wheel without it). Read once per process; callers do not change it."""
    from dsfields.model.history import read_index

    try:
        return history_of(read_index(generated_dir))
    except (OSError, ValueError):
        return {}


def schema_file(hf: bool = False, lang: str = "en") -> str:
    """The schema's file name on the site: ``ds_config.schema.json``, ``ds_config.hf.schema.json`` (``--hf``);
    a Chinese one lives under the Chinese site (``/zh/<release>/``) with the same name."""
    return "ds_config.hf.schema.json" if hf else SCHEMA_FILE


class _Builder:
    def __init__(self, snapshot: Snapshot, strict_unknown: bool, site_url: str | None, lang: str = "en",
                 hf: bool = False, history: Mapping[str, Any] | None = None, history_links: bool = False,
                 generated: str | None = None) -> None:
        self.history_links = history_links
        self.snapshot = snapshot
        self.hf = hf
        self.lang = lang
        self.scope = prose.Scope.of_snapshot(snapshot)
        self.version = snapshot.version
        self.strict_unknown = strict_unknown
        self.site_url = site_url
        self.sections = snapshot.sections
        from dsfields.hf.trainer import fill_list

        hf = fill_list(generated)
        self.hf_filled: set[str] = set(hf.paths) if hf is not None else set()
        self.catalogs = snapshot.catalogs
        self.history: Mapping[str, Any] = history or {}

    def root(self) -> dict[str, Any]:
        schema = self.section("")
        schema.pop("description", None)
        head: dict[str, Any] = {"$schema": DRAFT}
        if self.site_url:
            language = "" if self.lang == "en" else f"/{self.lang}"
            head["$id"] = f"{self.site_url.rstrip('/')}{language}/{self.version}/{schema_file(self.hf)}"
        auto = ('"auto" is accepted where DeepSpeed itself accepts it, and where the HF Trainer fills it (--hf).'
                if self.hf else '"auto" is accepted only where DeepSpeed itself accepts it; configs for the HF '
                'Trainer want `dsfields schema --hf`.')
        said = f"The training config of DeepSpeed {self.version}, derived from its source by dsfields. " + auto
        if self.lang == "zh":  # issue 28: the schema's own words in Chinese too
            said = (chinese.text("schema.deepspeed_self_version_dsfields", self_version=self.version)
                    + (chinese.text("schema.deepspeed_hf_trainer_hf_auto") if self.hf else
                       chinese.text("schema.deepspeed_auto_hf_trainer_dsfields_schema")))
        return head | {
            "$comment": f"Generated by `dsfields schema --version {self.version}"
                        f"{' --hf' if self.hf else ''}"
                        f"{' --strict-unknown' if self.strict_unknown else ''}"
                        f"{' --lang ' + self.lang if self.lang != 'en' else ''}"
                        f"{' --site-url ' + self.site_url if self.site_url else ''}` from generated/{self.version}/"
                        "fields.json; do not edit.",
            "title": f"DeepSpeed {self.version} " + (
                "ds_config.json" if self.snapshot.document == "training" else
                chinese.text("schema.init_inference_config_deepspeedinferenceconfig") if self.lang == "zh" else
                "init_inference config (DeepSpeedInferenceConfig)"),
            "description": said,
        } | schema | ({"defaultSnippets": snippets} if (snippets := self.snippets()) else {})

    def snippets(self) -> list[dict[str, Any]]:
        """The seed's templates A/B/C (``docs/examples/*.json``, the site's templates page) as VS Code
        ``defaultSnippets`` for an empty file, titled in the schema's language; keys this release does not read
        are left out, as the templates page does. Only in the ``--hf`` schema of the training config: the templates
        are the HF Trainer's (its "auto" values), which the plain schema rejects."""
        if self.snapshot.document != "training" or not self.hf:
            return []
        import json

        from dsfields.docs.i18n import ZH

        zh = self.lang == "zh"
        out = []
        for path in sorted(EXAMPLES_DIR.glob("*.json")):
            example = json.loads(path.read_text(encoding="utf-8"))
            dropped: list[str] = []
            body = _ints(self._known(example["config"], "", dropped))
            title = ZH.get(example["title"], example["title"]) if zh else example["title"]
            word = chinese.text("schema.template") if zh else "template"
            label = f"DeepSpeed {word} {example['id']}{'：' if zh else ': '}{title}"
            auto = (chinese.text("schema.its_auto_values_are_filled_in") if zh else
                    'Its "auto" values are filled in by the HF Trainer.')
            seed = example["seed_title"]
            shared = chinese.text("schema.often_shared_as", seed=seed) if zh else f'Often shared as "{seed}".'
            left = ""
            if dropped:
                keys = "、".join(dropped) if zh else ", ".join(dropped)
                left = (chinese.text("schema.left_out_not_read_by_this", keys=keys) if zh else
                        f'Left out: {keys} (not read by this release, or an "auto" the HF Trainer does not fill).')
            out.append({"label": label, "description": " ".join(filter(None, (shared, auto, left))), "body": body})
        return out

    def _known(self, config: dict[str, Any], prefix: str, dropped: list[str]) -> dict[str, Any]:
        """``config`` without the keys this release does not read (a missing section goes whole) and without an
        ``"auto"`` the HF Trainer does not fill (the templates are the Trainer's; accelerate refuses such an
        "auto": ``check --hf``'s launch rule): both would be errors. What is left out is added to ``dropped``."""
        kept: dict[str, Any] = {}
        for key, value in config.items():
            path = prefix + key
            record = self.snapshot.fields.get(path)
            if record is None or (value == "auto" and path not in self.hf_filled):
                dropped.append(path)
                continue
            kept[key] = self._known(value, path + ".", dropped) if isinstance(value, dict) else value
        return kept

    # ------------------------------------------------------------ sections

    def section(self, path: str) -> dict[str, Any]:
        record = self.sections.get(path)
        properties: dict[str, Any] = {}
        for field_record in sorted(self.snapshot.by_section.get(path, {}).values(), key=lambda r: r.key):
            properties[field_record.key] = self.field(field_record)
            name = field_record.python_name
            if field_record.is_pydantic and name and name != field_record.key:
                # DeepSpeedConfigModel sets populate_by_name: the attribute name works as a key too.
                alias = self.field(field_record)
                same_as = (chinese.text("schema.same_as_its_python_attribute_name",
                                        field_record_key=field_record.key) if self.lang == "zh" else
                           f'Same as "{field_record.key}" (its Python attribute name). ')
                alias["description"] = same_as + alias.get("description", "")
                if "markdownDescription" in alias:
                    alias["markdownDescription"] = (same_as.replace(f'"{field_record.key}"', f'`"{field_record.key}"`')
                                                    .rstrip() + "\n\n" + alias["markdownDescription"])
                properties.setdefault(name, alias)
            for other in field_record.raw.get("aliases") or ():  # the inference document: pydantic aliases
                same = self.field(field_record)
                same["description"] = (chinese.text("schema.same_as_its_alias",
                                                    field_record_key=field_record.key) if self.lang == "zh" else
                                       f'Same as "{field_record.key}" (its alias). ') + same.get("description", "")
                same.pop("markdownDescription", None)
                properties.setdefault(other, same)
        for removed in self.snapshot.removed.values():
            if removed.section == path:
                since = self.event_release(removed.path, "became_removed")
                zh = self.lang == "zh"
                earlier = since is not None and since.startswith("≤")
                since = since.lstrip("≤") if since else since
                when = "" if not since else (
                    (chinese.text("schema.in_deepspeed_or_earlier",
                                  since=since) if zh else f" in DeepSpeed {since} or earlier") if earlier
                    else (chinese.text("schema.in_deepspeed", since=since) if zh else f" in DeepSpeed {since}"))
                said = chinese.text("schema.removed", when=when,
                                    removed_message=removed.message) if zh else f"Removed{when}: {removed.message}"
                # VS Code shows errorMessage instead of "Matches a schema that is not allowed."
                properties[removed.key] = {"not": {}, "description": said, "errorMessage": said}
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if path in self.catalogs:
            self.catalog(schema, self.catalogs[path])
        if record is not None and record.passthrough:
            schema["additionalProperties"] = True
        elif (record is not None and record.raw.get("unknown_keys") == "error") or (
                self.strict_unknown and path in self.sections):
            schema["additionalProperties"] = False
        if record is not None and record.description:
            schema["description"] = record.description
        return schema

    # ------------------------------------------------------------ fields

    def field(self, record: Field) -> dict[str, Any]:
        path = record.path
        types = record.used_as  # as check judges it: a number default is used as a number
        if record.is_section and path in self.sections:
            core = self.section(path)
            if "null" in types:
                core["type"] = ["object", "null"]
        else:
            core = self.value(record, types)
        meta: dict[str, Any] = {"description": self.describe(record)}
        markdown = self.markdown(record)
        if markdown:
            meta["markdownDescription"] = markdown
        if record.default is not None or "null" in types:
            if not record.required and not record.is_section:
                meta["default"] = record.default
        examples = self.examples(record)
        if examples:
            meta["examples"] = examples
        if record.deprecated:
            meta["deprecated"] = True
            meta["deprecationMessage"] = self.deprecation_message(record)
        if self.auto_allowed(record) and not self._string_accepts_auto(core):
            return {"anyOf": [core, {"const": "auto"}]} | meta
        return core | meta

    def value(self, record: Field, types: list[str]) -> dict[str, Any]:
        schema: dict[str, Any] = {}
        if types:
            schema["type"] = types[0] if len(types) == 1 else types
        choices = record.choices
        if choices:
            if "array" in types:
                schema["items"] = {"enum": list(choices)}
            else:
                schema["enum"] = list(choices) + ([None] if "null" in types and None not in choices else [])
        limits = record.constraints
        for ours, theirs in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"),
                             ("le", "maximum"), ("multiple_of", "multipleOf"), ("min_length", "minLength"),
                             ("max_length", "maxLength"), ("pattern", "pattern")):
            if limits.get(ours) is not None:
                schema[theirs] = limits[ours]
        return schema

    @staticmethod
    def _string_accepts_auto(core: dict[str, Any]) -> bool:
        kind = core.get("type")
        is_string = kind == "string" or (isinstance(kind, list) and "string" in kind) or kind is None
        return is_string and "enum" not in core and "pattern" not in core and "properties" not in core

    def auto_allowed(self, record: Field) -> bool:
        """As ``check`` (``--hf``): dropped or kept as a string by DeepSpeed, or (``hf``) filled by the Trainer."""
        if self.hf and record.path in self.hf_filled:
            return True
        behaviour = record.auto
        if behaviour is None or not behaviour.accepted:
            return False
        types = record.json_types
        return behaviour.becomes == "default" or not types or "string" in types

    def event_release(self, path: str, kind: str) -> str | None:
        """The release (not after this one) of ``path``'s last ``kind`` event in the history given
        (:func:`committed_history`), None without one; ``"≤V"`` where V is the oldest committed release (the
        key may have changed before it)."""
        from dsfields.model.generated import version_key

        mine = version_key(self.version)
        found = None
        for event in (self.history.get("fields") or {}).get(path, ()):
            if isinstance(event, dict) and event.get("kind") == kind and isinstance(event.get("version"), str) \
                    and version_key(event["version"]) <= mine:
                found = event["version"]
        versions = self.history.get("versions") or []
        if found is not None and versions and found == versions[0]:
            return "≤" + found
        return found

    def deprecation_message(self, record: Field) -> str:
        """What an editor shows on a deprecated key (VS Code's ``deprecationMessage``): since which release, the
        replacement, and DeepSpeed's own message where it gives one."""
        deprecated = record.deprecated
        since = self.event_release(record.path, "deprecated")
        new = deprecated.new_param if deprecated is not None else None
        message = (deprecated.message or "").strip() if deprecated is not None else ""
        earlier = since is not None and since.startswith("≤")
        since = since.lstrip("≤") if since else since
        if self.lang == "zh":
            said = ((chinese.text("schema.deepspeed_since",
                                  since=since) if earlier else chinese.text("schema.deepspeed_since_2", since=since))
                    if since else chinese.text("schema.deprecated")) + (chinese.text("schema.deprecated_use_new",
                                                                               new=new) if new else "。")
            return said + (chinese.text("schema.message", message=message) if message else "")
        said = ((f"Deprecated in DeepSpeed {since} or earlier" if earlier else f"Deprecated since DeepSpeed {since}")
                if since else "Deprecated") + (f': use "{new}" instead.'
                                                                                   if new else ".")
        return said + (f" DeepSpeed: {message}" if message else "")

    def describe(self, record: Field) -> str:
        parts = []
        ours = explain_for(self.snapshot.document, record.path, self.lang, self.scope)
        if ours is not None:
            parts.append(ours.summary + (f" {ours.body}" if ours.body else ""))
        if record.description:
            quoted = record.description.strip()
            if self.lang == "zh":  # DeepSpeed's docstring, marked as its own words
                parts.append(chinese.text("schema.quoted", quoted=quoted))
            else:
                parts.append(f"DeepSpeed: {quoted}" if ours is not None else quoted)
        deprecated = record.deprecated
        zh = self.lang == "zh"
        if deprecated:
            parts.append((chinese.text("schema.deprecated") if zh else "Deprecated") + (
                (chinese.text("schema.deprecated_param_use",
                              deprecated_new_param=deprecated.new_param) if zh else f': use "{deprecated.new_param}".')
                if deprecated.new_param else ("。" if zh else ".")))
        if record.default_repr:
            parts.append(chinese.text("schema.default", record_default_repr=record.default_repr) if zh else
                         f"Default: {record.default_repr}.")
        if self.site_url:  # no link to a site that is not published (links.SITE_URL)
            parts.append(f"Docs: {self.docs_url(record)}")
        return "\n\n".join(parts)

    def docs_url(self, record: Field) -> str:
        """The key's page on the site: its entry in this release, or its history across releases."""
        if self.history_links:
            language = "" if self.lang == "en" else f"{self.lang}/"
            return f"{(self.site_url or '').rstrip('/')}/{language}releases/history/#{anchor(record.path)}"
        return field_url(self.version, record.path, self.site_url, is_section=record.is_section)

    def markdown(self, record: Field) -> str | None:
        """What an editor's hover shows (VS Code's ``markdownDescription``): our explanation as the Markdown it
        is written in, the pitfall, the default, "auto" and the docs link; DeepSpeed's docstring quoted apart."""
        ours = (prose.explain(record.path, self.lang) if self.snapshot.document == "training"
                else explain_for(self.snapshot.document, record.path, self.lang, self.scope))
        zh = self.lang == "zh"
        parts = []
        if ours is not None:
            parts.append(f"**{ours.summary}**")
            if ours.body:
                parts.append(ours.body)
            if ours.pitfall:
                parts.append((chinese.text("schema.pitfall") if zh else "**Pitfall:** ") + ours.pitfall)
        if record.description:
            quoted = "\n".join("> " + line for line in record.description.strip().splitlines())
            label = chinese.text("schema.deepspeed_s_docstring") if zh else "DeepSpeed's docstring:\n\n"
            parts.append(label + quoted)
        if record.deprecated:
            new = record.deprecated.new_param
            parts.append((chinese.text("schema.deprecated") if zh else "Deprecated") + (f": `{new}`" if new else "."))
        if not record.is_section and not record.required:
            shown = record.default_repr or _json_text(record.default)
            parts.append((chinese.text("schema.default_2") if zh else "Default") + f": `{shown}`")
        if self.auto_allowed(record):
            hf = prose.hf_auto(record.path, self.lang) if self.hf and record.path in self.hf_filled else None
            if hf and hf.get("value"):
                parts.append(f'`"auto"`: {hf["value"]}' + (f" ({hf['from']})" if hf.get("from") else ""))
            else:
                parts.append('`"auto"`: ' + (chinese.text("schema.accepted_by_deepspeed") if zh else
                                             "accepted by DeepSpeed"))
        if self.site_url:
            url = self.docs_url(record)
            parts.append(f"[{chinese.text('schema.docs') if zh else 'Docs'}]({url})")
        return "\n\n".join(parts) if ours is not None or record.description else None

    def examples(self, record: Field) -> list[Any] | None:
        """Values an editor offers to complete: the enum's members or choices, else the default (and "auto"
        where it is accepted); none for sections."""
        if record.is_section:
            return None
        values: list[Any] = list(record.choices or [])
        enum = self.snapshot.enum_of(record)
        if not values and enum is not None:
            values = list(dict.fromkeys(m.value for m in enum.members))  # aliases (max_stage = 3) once
        if not values and record.default is not None and not record.required:
            values = [record.default]
        if values and self.auto_allowed(record) and "auto" not in values:
            values.append("auto")
        return values or None

    # ------------------------------------------------------------ optimizer / scheduler

    def catalog(self, schema: dict[str, Any], catalog: Catalog) -> None:
        """``type`` limited to the engine's names; ``params`` checked per name with if/then."""
        names = catalog.names
        section, type_key, params_key = catalog.section, catalog.type_key, catalog.params_key
        exact = sorted(n for n, e in names.items() if not e.case_insensitive)
        folded = sorted(n for n, e in names.items() if e.case_insensitive)
        allowed: list[dict[str, Any]] = [{"enum": exact}] if exact else []
        if folded:
            allowed.append({"pattern": "^(?:" + "|".join(_any_case(n) for n in folded) + ")$"})
        type_schema = schema["properties"].get(type_key, {})
        schema["properties"][type_key] = {
            "description": type_schema.get("description", ""),
            "type": "string",
            "anyOf": allowed,
        }
        schema["properties"][params_key] = {
            "type": "object",
            "description": (chinese.text("schema.keyword_arguments_of_the_class_named", type_key=type_key,
                                         section=section) if self.lang == "zh" else
                            f"Keyword arguments of the {section} class named by \"{type_key}\"."),
        }
        branches = []
        for name, entry in sorted(names.items()):
            params = self.params_schema(section, params_key, entry, catalog)
            if params is None:
                continue
            match = {"pattern": f"^{_any_case(name)}$"} if entry.case_insensitive else {"const": name}
            branches.append({
                "if": {"properties": {type_key: match}, "required": [type_key]},
                "then": {"properties": {params_key: params}},
            })
        if branches:
            schema["allOf"] = branches

    def params_schema(self, section: str, params_key: str, entry: CatalogEntry,
                      catalog: Catalog) -> dict[str, Any] | None:
        classes = entry.classes
        importable = [c for c in classes if c.importable and c.params is not None]
        if not entry.raw.get("params_passed") or not importable or len(importable) != len(classes):
            return None
        properties: dict[str, Any] = {}
        for cls in importable:
            for key, spec in (cls.params or {}).items():
                path = f"{section}.{params_key}.{key}"
                prop: dict[str, Any] = {"description": chinese.text("schema.argument",
                                                                    cls_name=cls.name) if self.lang == "zh" else
                                        f"{cls.name} argument."}
                if spec.default is not None:
                    prop["default"] = spec.default
                if self.hf and path in self.hf_filled:
                    prop["description"] += (chinese.text("schema.auto_filled_by_the_hf_trainer")
                                            if self.lang == "zh" else ' "auto": filled by the HF Trainer.')
                else:
                    prop["not"] = {"const": "auto"}
                properties.setdefault(key, prop)
        for key in entry.engine_params:
            properties.setdefault(key,
                                  {"description": chinese.text("schema.consumed_by_the_deepspeed_engine_before")
                                   if self.lang == "zh" else
                                   "Consumed by the DeepSpeed engine before the class is built."})
        for key, message in catalog.rejected_params.items():
            properties[key] = {"not": {}, "description": chinese.text("schema.rejected_by_deepspeed",
                                                                      message=message) if self.lang == "zh"
                               else f"Rejected by DeepSpeed: {message}"}
        schema: dict[str, Any] = {"properties": dict(sorted(properties.items()))}
        if not any(c.var_keyword for c in importable):
            schema["additionalProperties"] = False
        required = sorted(k for k in properties if all(
            k in (c.params or {}) and (c.params or {})[k].required for c in importable))
        if required:
            schema["required"] = required
        return schema


def _ints(value: Any) -> Any:
    """Integral floats (the templates write 1e9) as the integers DeepSpeed's hjson reads them as, so an editor
    inserting a snippet writes no ``1000000000.0`` into an integer field."""
    if isinstance(value, dict):
        return {key: _ints(item) for key, item in value.items()}
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _any_case(name: str) -> str:
    """A regex matching ``name`` in any letter case (ECMA-262 has no inline ``(?i)``)."""
    out = []
    for char in name:
        if char.isalpha():
            out.append(f"[{char.upper()}{char.lower()}]")
        else:
            out.append("\\" + char if not char.isalnum() else char)
    return "".join(out)


# ---------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", default=None, help="DeepSpeed version (default: installed if snapshotted, "
                                                        "else newest)")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help=f"write here (atomically) instead of stdout, e.g. generated/<version>/{SCHEMA_FILE}")
    parser.add_argument("--force", action="store_true",
                        help="with -o: also write a read-only or hard-linked target (a hard-linked one in place)")
    parser.add_argument("--strict-unknown", action="store_true",
                        help="also reject unknown keys where DeepSpeed silently ignores them")
    parser.add_argument("--lang", default=None, metavar="LANG",
                        help="language of the descriptions: en or zh (default: zh when LANG is a zh locale)")
    parser.add_argument("--hf", action="store_true",
                        help='for configs given to the HF Trainer: also accept "auto" where the Trainer fills it')
    parser.add_argument("--inference", action="store_true",
                        help="the schema of the init_inference config (DeepSpeedInferenceConfig) instead of ds_config")
    parser.add_argument("--site-url", default=SITE_URL, metavar="URL",
                        help="the published docs site: gives the schema its $id and each field a Docs: link "
                             "(default: none, so no links)")


def run(args: argparse.Namespace) -> int:
    if getattr(args, "inference", False):  # issue 29: the init_inference document (no site pages for it yet)
        from dsfields.model.store import load_inference

        snapshot = load_inference(args.version)
        lang = prose.language(args.lang)
        schema = build_schema(snapshot, strict_unknown=args.strict_unknown, site_url=None, lang=lang)
        schema["$comment"] = schema["$comment"].replace("schema --version", "schema --inference --version").replace(
            "fields.json", "inference.json")
        schema["description"] = (
            chinese.text("schema.the_config_deepspeed_init_inference_of",
                         snapshot_version=snapshot.version) if lang == "zh" else
            f"The config deepspeed.init_inference of DeepSpeed {snapshot.version} takes "
            "(config= or keyword arguments), derived from its source by dsfields.")
        text = dumps(schema)
        if args.output is None or str(args.output) == "-":
            sys.stdout.write(text)
        else:
            write_atomic(args.output, text)
        return 0
    snapshot = load_requested(args.version)
    text = dumps(build_schema(snapshot, strict_unknown=args.strict_unknown, site_url=args.site_url,
                              lang=prose.language(args.lang), hf=args.hf, history=committed_history()))
    if args.output is None or str(args.output) == "-":
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text, force=args.force)
    return 0
