"""What every docs page template sees: one release (:class:`Release`, its structure computed once and shared by
every page's copy), the site of all releases (:class:`Site`, read by :func:`load_site`), and the Jinja environment.

Only snapshots (and dsfields.diff and dsfields.model.history, computed from them) are read; DeepSpeed is
never imported. Field URLs are :func:`dsfields.links.field_url`'s (``<version>/fields/<top-level
section>/#<anchor>``, shared with the JSON Schema and ``check``).
"""

from __future__ import annotations

import copy
import html
import json
import logging
import posixpath
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import jinja2

from dsfields.docs import groups
from dsfields.docs.filters import FILTERS, format_config, history_phrase, json_value
from dsfields.docs.i18n import LANGUAGES, translator
from dsfields.model import chinese, official_docs, prose
from dsfields.model import examples as examples_model
from dsfields.model.store import available_versions, load, repo_generated_dir

log = logging.getLogger(__name__)

RELEASES = "releases"
"""Folder under ``docs/`` of the generated pages about all releases (one folder per release besides)."""
FIELDS = "fields"
"""Sub-folder of a release holding its field pages (``links.field_url``)."""
TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates" / "docs"
EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"

# Pages every release gets, next to its fields/ folder.
OVERVIEW = "index"
DEFAULTS = "default-values"
ENUMS = "enum-types"
DEPRECATED = "deprecated-removed"
CHANGES = "release-changes"
TEMPLATES = "config-templates"
TYPOS = "typos-errors"
ERRORS = "errors"
"""Per release: the messages DeepSpeed raises or logs about a config key (issue 38; :mod:`dsfields.docs.errors_index`),
one page for every release, its script showing the reader's release's entries."""
SKELETON = "config-skeleton"
"""Per release: every section of a ds_config on one screen, each key linked to its field (issue 41)."""
BATCH_EXAMPLES: tuple[dict[str, int], ...] = (
    {"train_micro_batch_size_per_gpu": 4}, {"train_batch_size": 32},
    {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8},
    {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4})
"""Configs that leave a batch key out, to show what DeepSpeed derives for it (example values, not defaults)."""
OFFICIAL = "official-docs"
"""Per release: where DeepSpeed's official config page disagrees with its code (dsfields.model.official_docs)."""
CATALOGS = "optimizers-schedulers"
RELEASES_FILE = "releases.json"
"""Release dates next to the snapshots (``python -m dsfields.extract.releases_dates`` writes it)."""


def environment() -> jinja2.Environment:
    """The Jinja environment of every docs template, with all filters of :mod:`dsfields.docs.filters`."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=False,  # Markdown, not HTML: filters escape each value for its spot instead
        # Lenient undefined on purpose: snapshot records omit optional keys (deprecated_msg,
        # other_defaults, source.function), and templates test them with a plain `if`.
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


_ENVIRONMENT: list[jinja2.Environment] = []


def shared_environment() -> jinja2.Environment:
    """One :func:`environment` per process (templates compiled once, inherited by forked renders)."""
    if not _ENVIRONMENT:
        _ENVIRONMENT.append(environment())
    return _ENVIRONMENT[0]


# ---------------------------------------------------------------- the seed's configuration templates


def load_examples() -> list[dict[str, Any]]:
    """The seed's templates A/B/C, quoted in ``examples/*.json`` (sorted by file name)."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(EXAMPLES_DIR.glob("*.json"))]


def _leaves(config: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in config.items():
        path = f"{prefix}{key}"
        out.append((path, value))
        if isinstance(value, dict):
            out.extend(_leaves(value, path + "."))
    return out


def _prune(config: dict[str, Any], missing: set[str], prefix: str = "") -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in config.items():
        path = f"{prefix}{key}"
        if path in missing:
            continue
        kept[key] = _prune(value, missing, path + ".") if isinstance(value, dict) else value
    return kept


# ---------------------------------------------------------------- one release


@lru_cache(maxsize=65536)
def _relpath(target: str, start: str) -> str:
    """``posixpath.relpath``, memoised: a render computes ~70 000 links between a few thousand pages."""
    return posixpath.relpath(target, start)


@lru_cache(maxsize=65536)
def _site_url(target: str, page: str) -> str:
    """The built site's URL of ``target`` (a docs/-relative .md path) from ``page``'s URL."""
    def folder(doc: str) -> str:
        stem = doc.removesuffix(".md")
        return posixpath.dirname(stem) if posixpath.basename(stem) == "index" else stem

    return _relpath(folder(target), folder(page) or ".") + "/"


@dataclass
class SectionView:
    """A section of one release with its direct keys, in page order."""

    path: str
    record: dict[str, Any]
    fields: list[dict[str, Any]]
    """Direct keys that are not sections themselves."""
    children: list[str]
    """Paths of direct sub-sections."""
    removed: list[dict[str, Any]]
    """Keys of this section that DeepSpeed rejects with a message and no longer reads."""
    group: groups.Group

    @property
    def depth(self) -> int:
        return self.path.count(".") + 1 if self.path else 0


class shared_property:
    """A property of a release computed once, on first use, for the release and every copy of it
    (:meth:`Site.release` hands each page a shallow copy: the copies share ``_shared``)."""

    def __init__(self, compute: Any) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, release: Any, owner: Any = None) -> Any:
        if release is None:
            return self
        shared = release._shared
        if self.name not in shared:
            shared[self.name] = self.compute(release)
        return shared[self.name]


@dataclass
class Release:
    """Everything the templates need to know about one snapshotted release."""

    version: str
    snapshot: dict[str, Any]
    newest: str
    previous: str | None
    history: dict[str, list[dict[str, Any]]] | None
    oldest: str
    changes: list[Any] | None = None
    """:class:`dsfields.diff.Change` list from ``previous`` (``None``: diff engine unavailable)."""
    page: str = ""
    """Path (under docs/) of the page being rendered: links are made relative to it."""
    has_changes_page: bool = False
    has_errors_page: bool = False
    lang: str = "en"
    owners: dict[tuple[str, str], str] = field(default_factory=dict)
    """(version, field page) → the release whose page documents it (identical pages are shared)."""
    date: str | None = None
    """Release date (``generated/releases.json``)."""
    generated: Path | None = None
    """The snapshot folder (its ``<version>/official_docs.json``); None: the checkout's."""
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)
    """What :class:`shared_property` computed, shared by the release and its copies."""

    def _(self, text: str) -> str:
        return translator(self.lang)(text)

    @shared_property
    def official_docs(self) -> dict[str, Any] | None:
        """What DeepSpeed's official config page at this release's tag states (None: not extracted)."""
        return official_docs.load(self.version, self.generated)

    @shared_property
    def official(self) -> dict[str, official_docs.Disagreement]:
        """path → where the official page's default differs from the code's, in this release."""
        return {d.path: d for d in official_docs.disagreements(self.snapshot, self.official_docs)
                if d.kind == "default"}

    @shared_property
    def official_types(self) -> list[official_docs.Disagreement]:
        """Where the official page names another plain type than the code reads."""
        return [d for d in official_docs.disagreements(self.snapshot, self.official_docs) if d.kind == "type"]

    @shared_property
    def derived_batch(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """batch key → [(a config that leaves it out, the value DeepSpeed derives)], at world size 1.

        The snapshot's default for these keys is null (DeepSpeed derives them); what a reader wants is the
        value it ends up with, computed by the one copy of DeepSpeed's batch arithmetic (``dsfields.resolve``).
        """
        from dsfields.model.batch import BATCH_KEYS
        from dsfields.model.records import Snapshot
        from dsfields.resolve import DERIVED, Resolver

        resolver = Resolver(Snapshot.from_dict(self.snapshot))
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        for given in BATCH_EXAMPLES:
            for resolved in resolver.resolve(dict(given)):
                if resolved.path in BATCH_KEYS and resolved.source == DERIVED and resolved.value is not None:
                    out.setdefault(resolved.path, []).append((given, resolved.value))
        return out

    def examples(self, path: str) -> list[tuple[str, dict[str, Any]]]:
        """The JSON examples of ``path``'s page in this release (dsfields.model.examples.shown)."""
        return examples_model.shown(self.snapshot, path, self.scope) if path else []

    @property
    def batch_keys(self) -> tuple[str, ...]:
        from dsfields.model.batch import BATCH_KEYS

        return tuple(BATCH_KEYS)

    def hf_fills(self, path: str) -> bool | None:
        """Whether the HF Trainer fills ``path`` ("auto"), or None where there is no fill list."""
        paths = hf_fill_paths(self.generated)
        return None if paths is None else path in paths

    @shared_property
    def scope(self) -> prose.Scope:
        """The release shown, for prose that holds only in some releases."""
        return prose.Scope.of_raw(self.snapshot)

    def original(self, text: str) -> str:
        """DeepSpeed's own words (a message, a docstring) as they are: on a page in another language,
        marked as English and as the original (原文), so they are not read as an untranslated sentence."""
        if self.lang == "en" or not text:
            return text
        return f'<span class="dsf-original" lang="en">{text}</span> <small>（{self._("original")}）</small>'

    def change_detail(self, change: Any) -> str:
        """A change's detail as HTML (changes page, compare page): dsfields.diff's own words in the page's
        language, and only DeepSpeed's own message in it (a key now rejected) marked as the original."""
        return change_detail_html(change, self.lang)

    def explain(self, path: str) -> prose.Explanation | None:
        """Our explanation of ``path`` in the page's language (English where the translation is missing),
        as it holds for this release."""
        return prose.explain_shown(path, self.lang, self.scope)

    def explain_type(self, section: str, name: str) -> prose.Explanation | None:
        return prose.explain_type(section, name, self.lang, self.scope) or (
            prose.explain_type(section, name, "en", self.scope) if self.lang != "en" else None)

    def hf_auto(self, path: str) -> dict[str, str] | None:
        """What the HF Trainer fills in for ``"auto"`` at ``path`` in this release (its fill list + our mapping)."""
        paths = hf_fill_paths(self.generated) or {}
        if path not in paths:
            return None
        return (prose.hf_auto(path, self.lang, self.scope) or prose.hf_auto(path, "en", self.scope)
                or {"value": "", "from": ""})

    @property
    def catalogs(self) -> list[tuple[str, dict[str, Any]]]:
        """(section, catalogue) of the optimizer and scheduler types this release builds."""
        out = []
        for key in ("optimizers", "schedulers"):
            catalog = self.snapshot.get(key)
            if isinstance(catalog, dict) and catalog.get("names"):
                out.append((catalog.get("section") or key[:-1], catalog))
        return out

    @property
    def is_newest(self) -> bool:
        return self.version == self.newest

    @property
    def fields(self) -> dict[str, dict[str, Any]]:
        return self.snapshot.get("fields") or {}

    @property
    def sections_raw(self) -> dict[str, dict[str, Any]]:
        return self.snapshot.get("sections") or {}

    @property
    def removed(self) -> dict[str, dict[str, Any]]:
        return self.snapshot.get("removed") or {}

    @property
    def enums(self) -> dict[str, dict[str, Any]]:
        return self.snapshot.get("enums") or {}

    # ------------------------------------------------------------ structure

    @shared_property
    def sections(self) -> list[SectionView]:
        """Every section, ordered by group, then top-level key, then path (parents before children)."""
        by_section: dict[str, list[dict[str, Any]]] = {path: [] for path in self.sections_raw}
        for record in self.fields.values():
            if not record.get("is_section"):
                by_section.setdefault(record.get("section", ""), []).append(record)
        removed_by: dict[str, list[dict[str, Any]]] = {}
        for record in self.removed.values():
            if record["path"] not in self.fields:
                removed_by.setdefault(record.get("section", ""), []).append(record)
        views = []
        for path, record in self.sections_raw.items():
            children = sorted(p for p, r in self.sections_raw.items() if r.get("parent") == path and p)
            views.append(SectionView(
                path=path,
                record=record,
                fields=sorted(by_section.get(path, []), key=lambda r: r["key"]),
                children=children,
                removed=sorted(removed_by.get(path, []), key=lambda r: r["key"]),
                group=groups.group_of(path) if path else groups.MISC,
            ))
        return sorted(views, key=lambda v: (v.path != "", v.group.number, groups.top_key(v.path), v.path))

    @shared_property
    def section_map(self) -> dict[str, SectionView]:
        return {view.path: view for view in self.sections}

    @shared_property
    def top_sections(self) -> list[str]:
        """Top-level keys that are sections: each has its own page in the newest release."""
        return [v.path for v in self.sections if v.path and groups.is_top_section(v.path, self.snapshot)]

    def page_sections(self, top: str) -> list[SectionView]:
        """The section ``top`` and all sections nested in it, in page order."""
        return [v for v in self.sections if v.path == top or v.path.startswith(top + ".")]

    @shared_property
    def group_views(self) -> list[dict[str, Any]]:
        """Per group: its top-level non-section keys and its top-level sections (groups with neither are left out)."""
        top = self.section_map.get("")
        scalars = top.fields if top else []
        removed = top.removed if top else []
        out = []
        for group in groups.GROUPS:
            keys = [r for r in scalars if groups.group_of(r["path"]) == group]
            gone = [r for r in removed if groups.group_of(r["path"]) == group]
            sections = [p for p in self.top_sections if groups.group_of(p) == group]
            if keys or gone or sections:
                out.append({"group": group, "scalars": keys, "removed": gone, "sections": sections})
        return out

    @shared_property
    def unmapped(self) -> list[str]:
        """Top-level keys no group rule matches (shown under misc)."""
        keys = {groups.top_key(p) for p in list(self.fields) + list(self.removed)}
        return sorted(k for k in keys if groups.group_rule(k)[1] is None)

    # ------------------------------------------------------------ links

    def doc(self, name: str, version: str | None = None) -> str:
        return f"{version or self.version}/{name}.md"

    def field_doc(self, page: str, version: str | None = None) -> str:
        return f"{version or self.version}/{FIELDS}/{page}.md"

    def rel(self, target: str, anchor: str = "") -> str:
        """Link from the page being rendered to ``target`` (a docs/-relative .md path)."""
        link = _relpath(target, posixpath.dirname(self.page) or ".")
        return f"{link}#{anchor}" if anchor else link

    def field_page(self, page: str) -> str:
        """The docs/-relative file of this release's field page ``page`` (shared with a later release if identical)."""
        return self.field_doc(page, self.owners.get((self.version, page), self.version))

    def field_link(self, path: str) -> str:
        """Where ``path`` is documented in this release: its entry on the release's field page."""
        page, anchor = groups.field_location(path, self.snapshot)
        return self.rel(self.field_page(page), anchor)

    def url(self, target: str, anchor: str = "") -> str:
        """Link to ``target`` (a docs/-relative .md path) as the built site's URL, for raw HTML blocks.

        mkdocs rewrites and checks Markdown links only; the tests check these in the built site.
        """
        link = _site_url(target, self.page)
        return f"{link}#{anchor}" if anchor else link

    def field_href(self, path: str) -> str:
        """:meth:`field_link` as a site URL, for raw HTML blocks."""
        page, anchor = groups.field_location(path, self.snapshot)
        return self.url(self.field_page(page), anchor)

    def global_href(self, name: str, anchor: str = "") -> str:
        return self.url(f"{RELEASES}/{name}.md", anchor)

    def page_href(self, name: str, version: str | None = None, anchor: str = "") -> str:
        return self.url(self.doc(name, version), anchor)

    def page_link(self, name: str, version: str | None = None, anchor: str = "") -> str:
        return self.rel(self.doc(name, version), anchor)

    def global_link(self, name: str, anchor: str = "") -> str:
        return self.rel(f"{RELEASES}/{name}.md", anchor)

    @property
    def version_pages(self) -> list[tuple[str, str]]:
        """(page name, title) of the lean pages every release has, for the banner."""
        pages = [(OVERVIEW, "overview"), (DEFAULTS, "default values"), (ENUMS, "enums"),
                 (DEPRECATED, "deprecated and removed"), (CATALOGS, "optimizers and schedulers"),
                 (TEMPLATES, "templates A/B/C"), (TYPOS, "typos and errors")]
        pages.insert(1, (SKELETON, "config skeleton"))
        pages = pages + [(ERRORS, "errors and warnings")] if self.has_errors_page else pages
        pages = pages + [(CHANGES, "what changed")] if self.has_changes_page else pages
        pages = pages + [(OFFICIAL, "official docs vs code")] if self.official_docs is not None else pages
        return [(name, self._(title)) for name, title in pages]

    def skeleton(self) -> list[dict[str, Any]]:
        """The release's whole config on one screen, in the seed's groups (its 7.2): per group, its top-level keys
        with their defaults, and its sections with their ``enabled`` switch where they have one and how many keys
        they hold. All from the snapshot: the groups of :attr:`group_views`, the keys and defaults of its fields."""
        out = []
        for view in self.group_views:
            lines = [{"path": record["path"], "key": record["key"], "value": skeleton_value(record), "keys": 0}
                     for record in view["scalars"]]
            for top in view["sections"]:
                switch = self.fields.get(f"{top}.enabled")
                inner = [path for path, record in self.fields.items()
                         if path.startswith(top + ".") and not record.get("is_section")]
                lines.append({"path": top, "key": top, "value": None, "keys": len(inner),
                              "switch": (f"{top}.enabled", skeleton_value(switch)) if switch else None})
            out.append({"group": view["group"], "lines": lines})
        return out

    # ------------------------------------------------------------ facts per field

    def replacement(self, record: dict[str, Any]) -> str | None:
        """JSON path a deprecated key points to: ``new_param`` names a python attribute of the same section."""
        new_param = (record.get("deprecated") or {}).get("new_param")
        if not new_param:
            return None
        for path, other in self.fields.items():
            if other.get("python_name") == new_param and other.get("section") == record.get("section") \
                    and path != record["path"]:
                return path
        candidate = f"{record['section']}.{new_param}" if record.get("section") else new_param
        return candidate if candidate in self.fields else None

    def field_history(self, path: str) -> list[dict[str, Any]]:
        return list((self.history or {}).get(path) or [])

    def history_line(self, path: str, as_html: bool = False) -> str:
        """The key's history events in one line (Markdown, or HTML for raw blocks)."""
        return history_phrase(self.field_history(path), self.oldest, self._, as_html)

    def removed_in(self, path: str) -> str | None:
        """The release from which DeepSpeed stopped reading ``path`` or started rejecting it (its last such event)."""
        gone = [e["version"] for e in self.field_history(path) if e["kind"] in ("removed", "became_removed")]
        return gone[-1] if gone else None

    def added_in(self, path: str) -> str | None:
        came = [e["version"] for e in self.field_history(path) if e["kind"] in ("introduced", "reintroduced")]
        return came[-1] if came else None

    def other_defaults(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """Further reads with another default, each once (snapshots may repeat them)."""
        seen: set[str] = set()
        out = []
        for item in record.get("other_defaults") or []:
            key = json_value(item)
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out

    def enum_users(self, name: str) -> list[str]:
        return sorted(p for p, r in self.fields.items() if r.get("enum") == name)

    @shared_property
    def deprecated_fields(self) -> list[dict[str, Any]]:
        return sorted((r for r in self.fields.values() if r.get("deprecated")), key=lambda r: r["path"])

    @shared_property
    def removed_records(self) -> list[dict[str, Any]]:
        return sorted(self.removed.values(), key=lambda r: r["path"])

    def is_documented(self, path: str) -> bool:
        return path in self.fields or path in self.removed

    # ------------------------------------------------------------ templates A/B/C

    def example(self, example: dict[str, Any]) -> dict[str, Any]:
        """A seed template checked against this release: keys it lacks are dropped and listed."""
        leaves = _leaves(example["config"])
        missing = {path for path, _ in leaves if path not in self.fields}
        # Drop only the outermost missing key: its children go with it.
        outermost = {p for p in missing if not any(p.startswith(m + ".") for m in missing if m != p)}
        config = _prune(example["config"], outermost)
        rows = [(path, value, self.fields[path]) for path, value in _leaves(config)]
        corrections = []
        for fix in example.get("corrections") or []:
            parent = fix["seed_path"].rpartition(".")[0]
            corrections.append({**fix, "parent": parent, "parent_section": self.sections_raw.get(parent)})
        # The batch keys' "auto" fails as a combination (template A's three "auto" meet `train_batch > 0`), not as
        # each key's own probe beside numbers: their cell says what this template's combination raises.
        from dsfields.model.batch import BATCH_KEYS, unfilled_auto_error

        given = {path: value for path, value, _ in rows if path in BATCH_KEYS}
        batch_error = unfilled_auto_error(*(given.get(k) for k in BATCH_KEYS)) if "auto" in given.values() else None
        return {**example, "config": config, "text": format_config(config), "rows": rows,
                "dropped": sorted(outermost), "corrections": corrections,
                "batch_auto_error": batch_error, "batch_keys": BATCH_KEYS}


# ---------------------------------------------------------------- the site


@dataclass
class Page:
    path: str
    """Relative to docs/."""
    template: str
    context: dict[str, Any]


@dataclass
class Site:
    """All releases, the per-field history and the release diffs: the input of every page."""

    generated: Path
    versions: list[str]
    snapshots: dict[str, dict[str, Any]]
    index: dict[str, Any] | None
    changes: dict[str, list[Any]] | None
    notices: list[str] = field(default_factory=list)
    dates: dict[str, str] = field(default_factory=dict)
    """Version → release date (ISO), from ``generated/releases.json``."""
    lang: str = "en"
    _releases: dict[str, Release] = field(default_factory=dict, repr=False)

    @property
    def newest(self) -> str:
        return self.versions[-1]

    def release(self, version: str, page: str) -> Release:
        """The release as seen from ``page``: one shared object per release (its structure is computed
        once, not once per page), copied to carry the page its links are relative to."""
        base = self._releases.get(version)
        if base is None:
            # Its structure (shared_property) is computed on first use, once for every page's copy.
            base = self._releases[version] = self._new_release(version)
        view = copy.copy(base)
        view.page = page
        view.lang = self.lang
        return view

    @cached_property
    def owners(self) -> dict[tuple[str, str], str]:
        """(version, field page) → the release whose page shows it: the newest of a run of releases whose
        records for that page are identical (source lines included), so 77 releases need ~500 field pages."""
        out: dict[tuple[str, str], str] = {}
        previous: dict[str, tuple[str, str]] = {}  # page -> (content key, owner)
        for version in reversed(self.versions):
            contents = page_contents(self.snapshots[version], self.generated)
            for page, key in contents.items():
                seen = previous.get(page)
                owner = seen[1] if seen and seen[0] == key else version
                out[(version, page)] = owner
                previous[page] = (key, owner)
            for page in set(previous) - set(contents):
                del previous[page]
        return out

    @cached_property
    def errors(self) -> dict[str, Any] | None:
        """The "Errors and warnings" index of every release (:func:`dsfields.docs.errors_index.build`), or None
        where it cannot be made (its page is then omitted, with a notice)."""
        from dsfields.docs import errors_index

        try:
            return errors_index.build(str(self.generated))
        except Exception as exc:  # the site is worth building without this page
            notice = (f"the errors-and-warnings index could not be made ({type(exc).__name__}: {exc}): "
                      "its pages are omitted")
            self.notices.append(notice)
            log.warning("%s", notice)
            return None

    def covers(self, owner: str, page: str) -> list[str]:
        """The releases a shared field page stands for, oldest first."""
        return [v for v in self.versions if self.owners.get((v, page)) == owner]

    def _new_release(self, version: str) -> Release:
        i = self.versions.index(version)
        return Release(
            version=version,
            snapshot=self.snapshots[version],
            newest=self.newest,
            previous=self.versions[i - 1] if i else None,
            oldest=self.versions[0],
            history=(self.index or {}).get("fields"),
            changes=(self.changes or {}).get(version),
            has_changes_page=self.changes is not None,
            has_errors_page=self.errors is not None,
            owners=self.owners,
            date=self.dates.get(version),
            generated=self.generated,
        )

    def added_by_release(self) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """Release → [(path, its introduced/reintroduced event)], the oldest release left out."""
        out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for path, events in sorted(((self.index or {}).get("fields") or {}).items()):
            for event in events:
                if event["kind"] in ("introduced", "reintroduced") and event["version"] != self.versions[0]:
                    out.setdefault(event["version"], []).append((path, event))
        return out


def hf_fill_paths(generated: Path | None = None) -> dict[str, Any] | None:
    """The keys whose ``"auto"`` the HF Trainer fills, from the site's snapshot folder (``generated``; None: the
    checkout's) by :func:`dsfields.hf.trainer.fill_list` (it depends on transformers, not on the DeepSpeed release
    shown), or None where that folder has no fill list."""
    from dsfields.hf.trainer import fill_list

    hf = fill_list(str(generated) if generated is not None else None)
    return hf.paths if hf is not None else None


def page_contents(snapshot: dict[str, Any], generated: Path | None = None) -> dict[str, str]:
    """Field page → a key of everything the page shows for this release (equal keys: identical pages): the
    snapshot's records, and what else depends on the release: our prose as scoped to it (both languages),
    its curated examples, the HF Trainer's fills and the official page's disagreements."""
    pages: dict[str, dict[str, Any]] = {}
    scope = prose.Scope.of_raw(snapshot)
    hf = hf_fill_paths(generated)
    official = {d.path: [d.docs, d.code] for d in official_docs.disagreements(
        snapshot, official_docs.load(str(snapshot.get("deepspeed_version")), generated)) if d.kind == "default"}
    tops = {p for p in snapshot.get("sections") or {} if groups.is_top_section(p, snapshot)}
    for kind in ("fields", "sections", "removed"):
        for path, record in (snapshot.get(kind) or {}).items():
            top = groups.top_key(path)
            page = top if top in tops else groups.TOP_LEVEL_PAGE
            if page == groups.TOP_LEVEL_PAGE and "." in path:
                continue
            shown = pages.setdefault(page, {})
            shown[f"{kind}:{path}"] = record
            for lang in LANGUAGES:
                if prose.is_scoped(path, lang):  # unscoped prose follows the records, already compared
                    ex = prose.explain_shown(path, lang, scope)
                    shown[f"prose:{lang}:{path}"] = ex.as_dict() if ex else None
            shown[f"example:{path}"] = examples_model.curated(path, scope)
            shown[f"hf:{path}"] = path in hf if isinstance(hf, dict) else None
            shown[f"official:{path}"] = official.get(path)
    out = {page: json.dumps(records, sort_keys=True, default=str) for page, records in pages.items()}
    out.setdefault(groups.TOP_LEVEL_PAGE, "{}")
    return out


def load_site(generated: Path | None = None, versions: list[str] | None = None,
              changes_of: set[str] | None = None) -> Site:
    """Read the snapshots, the index (per-field history) and the diffs between consecutive releases.

    Missing sibling modules (diff, index) only drop their pages, with a notice: the site is still
    worth building without them. ``changes_of``: diff only into these releases (``docs build --release``).
    """
    root = generated or repo_generated_dir()
    chosen = versions or available_versions(root)
    if not chosen:
        raise FileNotFoundError(f"no snapshots in {root}: run `dsfields extract` first")
    snapshots = {v: load(v, root).raw for v in chosen}
    notices: list[str] = []
    index = None
    try:
        from dsfields.model.history import load_index
    except ImportError:
        notices.append("dsfields.model.history is not available: the added-since and history pages are omitted")
    else:
        index = load_index(root)
        if index.get("versions") != chosen:
            index = None
            notices.append("generated/index.json covers other versions: the history pages are omitted")
    changes = None
    try:
        from dsfields.diff import diff_snapshots
    except ImportError:
        notices.append("dsfields.diff is not available: the release-changes pages are omitted")
    else:
        changes = {}
        for i, version in enumerate(chosen[1:], 1):
            if changes_of is None or version in changes_of:
                changes[version] = diff_snapshots(snapshots[chosen[i - 1]], snapshots[version])
    for notice in notices:
        log.warning("%s", notice)
    dates = {}
    if (root / RELEASES_FILE).is_file():
        releases = json.loads((root / RELEASES_FILE).read_text(encoding="utf-8")).get("releases") or {}
        dates = {v: r["date"] for v, r in releases.items() if isinstance(r, dict) and r.get("date")}
    return Site(root, chosen, snapshots, index, changes, notices, dates)


def change_detail_html(change: Any, lang: str) -> str:
    """The detail of a ``dsfields.diff`` change as HTML in ``lang``. Its words are ours, translated
    (``i18n.change_detail``), except DeepSpeed's message for a key it now rejects (the change's new value,
    which the detail starts with): that stays as DeepSpeed wrote it, marked 原文 on a page in another language."""
    from dsfields.docs.filters import html_text
    from dsfields.docs.i18n import change_detail

    detail = change.detail or ""
    message = change.new.strip() if isinstance(change.new, str) else ""
    if change.kind.key == "became_removed" and message and detail.startswith(message):
        words = html_text(message)
        rest = detail[len(message):]
        if lang != "en":
            original = translator(lang)("original")
            words = f'<span class="dsf-original" lang="en">{words}</span> <small>（{original}）</small>'
            rest = f"（{change_detail(rest.strip(), lang)}）" if rest.strip() else ""
        return words + html.escape(rest, quote=False)
    if change.kind.key in VALUE_DETAILS and " → " in detail and not detail.startswith("effective default"):
        # "old → new" values (types, defaults, constraints): code, as values are everywhere on the site.
        label, values = "", detail
        if detail.startswith("JSON types "):
            label = chinese.text("docs.views.json_types") if lang == "zh" else "JSON types "
            values = detail[len("JSON types "):]
        return f"{label}<code>{html.escape(values, quote=False)}</code>"
    return html_text(change_detail(detail, lang))


VALUE_DETAILS = {"default_changed", "type_changed", "constraint_changed"}
"""Change kinds whose detail is values only (``0.0 → 1.0``, ``choices: null → [...]``), shown as code."""


def skeleton_value(record: dict[str, Any]) -> str:
    """A key's default in the skeleton, as HTML: round integers as the source writes them (``5e8``, the exact
    integer on hover), other values as compact JSON cut to 40 characters; ``null`` when it has none."""
    from dsfields.docs.filters import format_config, source_number
    from dsfields.model.wording import short_json

    if record.get("required") or record.get("read_without_default"):
        return "null"
    value = record.get("default")
    if isinstance(value, int) and not isinstance(value, bool):
        spelled = source_number(str(value))
        if spelled:
            return spelled
    if isinstance(value, float):  # 5e8 as the seed and the source write it, not 500000000.0
        return html.escape(format_config(value), quote=False)
    return html.escape(short_json(value, 40), quote=False)
