"""The site's inference section (issue 29): each release's ``init_inference`` config, from its inference.json only.

Three pages per release and language, under ``<release>/inference/`` like the release's own pages, so every
URL names one release and every link on them stays in it: the fields (one page, a block per field with its
anchor, ``links.anchor`` of the path, in the compact field layout of the training pages), the default values
(one table) and what changed since the previous release with each changed field's history. Three lean
pages rather than one page per field: 77 releases x 136 fields would be ~20,000 pages for what fits in 231.
The prose is :mod:`dsfields.model.inference_prose`, scoped to the release shown. ``planning.render_language``
calls :func:`pages` and :func:`extend_nav`; nothing else of the renderer knows about this section.
"""

from __future__ import annotations

import html
from typing import Any

from dsfields.docs.filters import (
    default_text,
    effective_text,
    history_phrase,
    hkey,
    html_paras,
    html_text,
    jcode,
    source_html,
    type_text,
)
from dsfields.docs.i18n import translator
from dsfields.links import anchor
from dsfields.model import chinese, inference_prose, prose
from dsfields.model.store import inference_versions, load_inference

FOLDER = "inference"
FIELDS, DEFAULTS, CHANGES = "index", "defaults", "changes"
GENERATED_BY = "dsfields docs build"

EN_TEXT = {
    "intro": ("The config of `deepspeed.init_inference(model, config=...)` (`DeepSpeedInferenceConfig`) in DeepSpeed "
              "{v}: {n} fields in {s} sections. It is a document of its own, apart from `ds_config.json` (the config "
              "of `deepspeed.initialize`): a key of the same spelling there is another key. Check a file against this "
              "release with `dsfields check --inference FILE --version {v}`."),
    "defaults_intro": ("Every field of the inference config of DeepSpeed {v} with its default; each key links to "
                       "its entry (type, source, history)."),
    "changes_oldest": "DeepSpeed {v} is the oldest release with an inference config snapshot: nothing to compare.",
    "changes_none": "Nothing changed in the inference config since DeepSpeed {p}.",
    "changes_intro": "{n} changes in the inference config since DeepSpeed {p} (`dsfields diff --inference {p} {v}`).",
    "history_intro": "The history of each field named above, over every snapshotted release.",
}
"""This section's sentences, by a short key (the labels are their own English key, as in i18n.ZH)."""
ZH = {
    "Inference config": chinese.text("docs.inference_pages.inference_config"),
    "Fields": chinese.text("docs.inference_pages.fields"),
    "What changed": chinese.text("docs.inference_pages.what_changed"),
    "release overview": chinese.text("docs.inference_pages.release_overview"),
    "top level": chinese.text("docs.inference_pages.top_level"),
    "Aliases": chinese.text("docs.inference_pages.aliases"),
    "Read at": chinese.text("docs.inference_pages.read_at"),
    "pydantic model": chinese.text("docs.inference_pages.pydantic_model"),
    "Unknown keys": chinese.text("docs.inference_pages.unknown_keys"),
    "and {n} more": chinese.text("docs.inference_pages.and_n_more"),
    "intro": (chinese.text("docs.inference_pages.intro")),
    "defaults_intro": chinese.text("docs.inference_pages.defaults_intro"),
    "changes_oldest": chinese.text("docs.inference_pages.changes_oldest"),
    "changes_none": chinese.text("docs.inference_pages.changes_none"),
    "changes_intro": chinese.text("docs.inference_pages.changes_intro"),
    "history_intro": chinese.text("docs.inference_pages.history_intro"),
}
"""This section's Chinese words; a label not here is the site's (i18n.ZH), else English."""


def words(lang: str) -> Any:
    """``_`` of this section in ``lang``."""
    if lang == "zh":
        site = translator(lang)
        return lambda text: ZH.get(text) or site(text)
    return lambda text: EN_TEXT.get(text, text)


class Section:
    """What the inference pages of one site render from: every release's inference document, its history."""

    def __init__(self, site: Any) -> None:
        have = set(inference_versions(site.generated))
        self.versions = [v for v in site.versions if v in have]
        self.docs = {v: load_inference(v, site.generated) for v in self.versions}
        from dsfields.model.history import walk_snapshots

        self.events = walk_snapshots([(v, self.docs[v]) for v in self.versions])
        self._changes: dict[str, list[Any]] = {}

    def previous(self, version: str) -> str | None:
        i = self.versions.index(version)
        return self.versions[i - 1] if i else None

    def changes(self, version: str) -> list[Any]:
        if version not in self._changes:
            from dsfields.diff import diff_snapshots

            before = self.previous(version)
            self._changes[version] = (diff_snapshots(self.docs[before].raw, self.docs[version].raw)
                                      if before else [])
        return self._changes[version]


def section_of(site: Any) -> Section:
    """One :class:`Section` per site object (forked languages inherit it once built)."""
    found = site.__dict__.get("_inference_section")
    if found is None:
        found = site.__dict__["_inference_section"] = Section(site)
    return found


def page_path(version: str, name: str) -> str:
    return f"{version}/{FOLDER}/{name}.md"


SHAREABLE = (FIELDS, DEFAULTS)
"""Pages stored once for a run of releases where they read alike (``planning.release_page_owners``)."""


def with_covers(text: str, covers: list[str]) -> str:
    """A page stored once for the releases ``covers``: its marker names them (assets/dsfields.js restates it)."""
    if len(covers) < 2:
        return text
    return text.replace('" hidden></div>', f'" data-covers="{" ".join(covers)}" hidden></div>', 1)


def page_key(name: str) -> str:
    """The page's name within its release (the version selector's key, ``releases/data/<v>.json`` pages)."""
    return FOLDER if name == FIELDS else f"{FOLDER}/{name}"


def _front(title: str, newest: bool, version: str, name: str) -> str:
    """Front matter, the generated-by line and the page marker assets/dsfields.js reads (its release, its key)."""
    search = "" if newest else "search:\n  exclude: true\n"
    return (f'---\ntitle: "{title}"\n{search}---\n\n<!-- generated by `{GENERATED_BY}` from '
            f"generated/{version}/inference.json: edit extractor/dsfields/docs/inference_pages.py, not this file -->\n"
            f'<!--raw-->\n<div id="dsf-page" data-version="{version}" data-page="{page_key(name)}" hidden></div>\n'
            "<!--/raw-->\n\n")


def _banner(_: Any, version: str, here: str, date: str | None) -> str:
    """The release line of the training pages' banner: the release, then this section's other pages."""
    # From <v>/inference/ (index) or <v>/inference/<page>/ (the others): directory URLs.
    up = "" if here == FIELDS else "../"
    links = [(FIELDS, _("Fields")), (DEFAULTS, _("Default values")), (CHANGES, _("What changed"))]
    parts = [f'<a href="{up}{"" if name == FIELDS else name + "/"}">{title}</a>' for name, title in links
             if name != here]
    parts.append(f'<a href="{up}../">{_("release overview")}</a>')
    released = f' <span class="dsf-banner__date">({html.escape(date)})</span>' if date else ""
    return ('<!--raw-->\n<p class="dsf-banner">DeepSpeed <strong class="dsf-banner__release">'
            f"{html.escape(version)}</strong>{released} · {_('Inference config')} · " + " · ".join(parts)
            + "</p>\n<!--/raw-->\n\n")


def _default_html(raw: dict[str, Any], path: str, training: dict[str, Any], _: Any) -> str:
    """A key's default as its page shows it; for a key of the ``zero`` block (``DeepSpeedZeroConfig``, the training
    config's own class) with the declared default null, the value the class's validator gives it per ZeRO stage, as
    the release's training snapshot records it for ``zero_optimization`` (``overlap_comm``: stage 3 true)."""
    text = _(default_text(raw, True))
    effective = raw.get("effective_default")
    if not effective and path.startswith("zero.") and raw.get("default") is None:
        twin = (training.get("fields") or {}).get("zero_optimization." + path[len("zero."):]) or {}
        effective = twin.get("effective_default")
    return f"{text}; {effective_text(effective, True)}" if effective else text


def _training(site: Any, version: str) -> dict[str, Any]:
    """The release's training snapshot (its JSON) where the site has it, else {}."""
    return site.snapshots.get(version) or {}


def _original(text: str, lang: str, _: Any) -> str:
    if lang == "en" or not text:
        return text
    return f'<span class="dsf-original" lang="en">{text}</span> <small>（{_("original")}）</small>'


def _field_block(record: Any, version: str, lang: str, scope: prose.Scope, events: list[Any], oldest: str,
                 _: Any, training: dict[str, Any]) -> str:
    raw = record.raw
    ex = inference_prose.explain_shown(record.path, lang, scope)
    out = ['<div class="dsf-field">']
    if ex:
        out.append(f'<p class="dsf-summary">{html_text(ex.summary)}</p>')
    facts = [f"<li><strong>{_('Default')}</strong>: {_default_html(raw, record.path, training, _)}</li>",
             f"<li><strong>{_('Type')}</strong>: {type_text(raw, True)}</li>"]
    aliases = raw.get("aliases") or []
    if aliases:
        facts.append(f"<li><strong>{_('Aliases')}</strong>: " + ", ".join(hkey(a) for a in aliases) + "</li>")
    if raw.get("choices"):
        facts.append(f"<li><strong>{_('Allowed values')}</strong>: "
                     + ", ".join(jcode(c, True) for c in raw["choices"]) + "</li>")
    if raw.get("constraints"):
        facts.append(f"<li><strong>{_('Constraints')}</strong>: "
                     + ", ".join(f"{html.escape(k)} {jcode(v, True)}" for k, v in sorted(raw["constraints"].items()))
                     + "</li>")
    deprecated = raw.get("deprecated")
    if deprecated:
        new = deprecated.get("new_param") if isinstance(deprecated, dict) else None
        target = f' <a href="#{anchor(new)}">{hkey(new)}</a>' if new else ""
        message = deprecated.get("deprecated_msg") if isinstance(deprecated, dict) else None
        facts.append(f"<li><strong>{_('Deprecated')}</strong>{(': ' + _('use') + target) if new else ''}"
                     + (f" — {_original(html_text(message), lang, _)}" if message else "") + "</li>")
    if raw.get("source"):
        facts.append(f"<li><strong>{_('Source')}</strong>: {source_html(raw['source'], version)}</li>")
    reads = raw.get("read_at") or []
    if reads:
        shown = source_html(reads[0], version)
        more = f" ({_('and {n} more').format(n=len(reads) - 1)})" if len(reads) > 1 else ""
        facts.append(f"<li><strong>{_('Read at')}</strong>: {shown}{more}</li>")
    history = history_text(events, oldest, _)
    if history:
        facts.append(f"<li><strong>{_('History')}</strong>: {history}</li>")
    out.append('<ul class="dsf-facts">' + "".join(facts) + "</ul>")
    if ex and ex.body:
        out.append(html_paras(ex.body))
    if ex and ex.pitfall:
        out.append(f'<div class="admonition warning"><p class="admonition-title">{_("Pitfall")}</p>'
                   f"{html_paras(ex.pitfall)}</div>")
    if record.description:
        label = _("DeepSpeed's docstring")
        out.append(f'<blockquote class="dsf-docstring"><p class="dsf-quote-label">{label}</p>'
                   f"{html_paras(record.description)}</blockquote>")
    out.append("</div>")
    return "\n".join(out)


def history_text(events: list[Any], oldest: str, _: Any) -> str:
    """The field's history in one line, worded as the training pages word it."""
    return history_phrase([e.as_dict() for e in events], oldest, _, as_html=True)


def _head(_: Any, site: Any, version: str, page: str, name: str | None, heading_id: str) -> list[str]:
    """A page's front matter, its heading naming the release and the page, and the release banner."""
    shown = f"{_('Inference config')}, {_(name)}" if name else _("Inference config")
    title = f"{_(name)} · {_('Inference config')}" if name else _("Inference config")
    return [_front(f"{title} · DeepSpeed {version}", version == site.newest, version, page),
            f"# DeepSpeed {version}: {shown} {{ #{heading_id} }}\n\n",
            _banner(_, version, page, site.dates.get(version))]


def fields_page(section: Section, site: Any, version: str, lang: str) -> str:
    _ = words(lang)
    doc = section.docs[version]
    scope = prose.Scope.of_snapshot(doc)
    training = _training(site, version)
    out = _head(_, site, version, FIELDS, None, "inference")
    sections = sorted(doc.sections)
    fields = [f for f in doc.fields.values() if not f.is_section]
    out.append(_("intro").format(v=version, n=len(fields), s=len(sections)) + "\n\n")
    for name in sections:
        record = doc.sections[name]
        heading = f"`{name}`" if name else _("top level")
        out.append(f"## {heading} {{ #{anchor(name) if name else 'top-level'} }}\n\n<!--raw-->\n")
        facts = []
        if record.raw.get("model"):
            facts.append(f"<li><strong>{_('pydantic model')}</strong>: {hkey(record.raw['model'])}"
                         + (f" ({source_html(record.raw['source'], version)})" if record.raw.get("source") else "")
                         + "</li>")
        if record.raw.get("unknown_keys") == "error":
            facts.append(f"<li><strong>{_('Unknown keys')}</strong>: "
                         f"{_('rejected: DeepSpeed raises a validation error')}</li>")
        out.append('<ul class="dsf-facts">' + "".join(facts) + "</ul>\n")
        ex = inference_prose.explain_shown(name, lang, scope) if name else None
        if ex:
            out.append(f'<p class="dsf-summary">{html_text(ex.summary)}</p>\n{html_paras(ex.body)}\n')
        out.append("<!--/raw-->\n\n")
        own, shared = [], []
        for f in sorted((f for f in fields if f.section == name), key=lambda f: f.path):
            ex = inference_prose.explain_shown(f.path, lang, scope)
            (shared if ex is not None and ex.key != f.path else own).append((f, ex))
        for f, _ex in own:
            out.append(f"### `{f.key}` {{ #{anchor(f.path)} }}\n\n<!--raw-->\n")
            out.append(_field_block(f, version, lang, scope, section.events.get(f.path, []), section.versions[0], _,
                                    training))
            out.append("\n<!--/raw-->\n\n")
        if shared:
            out.append(_shared_rows(shared, _, training))
    return "".join(out)


def _shared_rows(shared: list[tuple[Any, prose.Explanation]], _: Any, training: dict[str, Any]) -> str:
    """Fields that one pattern entry explains alike (the ``zero`` keys): their text once, then one row each,
    the row carrying the field's anchor. 76 full blocks saying the same were most of a page's weight."""
    out = ["<!--raw-->\n"]
    texts: dict[str, prose.Explanation] = {}
    for _f, ex in shared:
        texts.setdefault(ex.key, ex)
    for ex in texts.values():
        out.append(f'<p class="dsf-summary">{html_text(ex.summary)}</p>\n{html_paras(ex.body)}\n')
    out.append(f'<table class="dsf-table"><thead><tr><th>{_("Key")}</th><th>{_("Type")}</th><th>{_("Default")}</th>'
               "</tr></thead><tbody>")
    for f, _ex in shared:
        note = f" ({_('Deprecated')})" if f.raw.get("deprecated") else ""
        out.append(f'<tr id="{anchor(f.path)}"><td>{hkey(f.key)}{note}</td><td>{type_text(f.raw, True)}</td>'
                   f"<td>{_default_html(f.raw, f.path, training, _)}</td></tr>")
    out.append("</tbody></table>\n<!--/raw-->\n\n")
    return "".join(out)


def defaults_page(section: Section, site: Any, version: str, lang: str) -> str:
    _ = words(lang)
    doc = section.docs[version]
    out = _head(_, site, version, DEFAULTS, "Default values", "inference-defaults")
    training = _training(site, version)
    out.append(_("defaults_intro").format(v=version) + "\n\n<!--raw-->\n")
    # Key and default only: the type is on the field's entry, one click away, and a lean table keeps this page
    # (one per release and language) lighter than the site's median page.
    rows = [f"<thead><tr><th>{_('Key')}</th><th>{_('Default')}</th></tr></thead><tbody>"]
    for f in sorted((f for f in doc.fields.values() if not f.is_section), key=lambda f: f.path):
        note = f" ({_('Deprecated')})" if f.raw.get("deprecated") else ""
        rows.append(f'<tr><td><a href="../#{anchor(f.path)}">{hkey(f.path)}</a>{note}</td>'
                    f"<td>{_default_html(f.raw, f.path, training, _)}</td></tr>")
    out.append('<table class="dsf-table">' + "".join(rows) + "</tbody></table>\n<!--/raw-->\n")
    return "".join(out)


def changes_page(section: Section, site: Any, version: str, lang: str) -> str:
    _ = words(lang)
    doc = section.docs[version]
    out = _head(_, site, version, CHANGES, "What changed", "inference-changes")
    before = section.previous(version)
    changes = section.changes(version)
    if before is None:
        out.append(_("changes_oldest").format(v=version) + "\n")
    elif not changes:
        out.append(_("changes_none").format(p=before) + "\n")
    else:
        out.append(_("changes_intro").format(n=len(changes), p=before, v=version) + "\n\n<!--raw-->\n<ul>\n")
        for c in changes:
            key = (f'<a href="../#{anchor(c.path)}">{hkey(c.path)}</a>' if c.path in doc.fields
                   else html.escape(c.path or _("top level")))
            detail = f" — {_original(html_text(c.detail), lang, _)}" if c.detail else ""
            out.append(f"<li>{key}: <strong>{html.escape(_(c.kind.value))}</strong>{detail}</li>\n")
        out.append("</ul>\n<!--/raw-->\n")
        named = sorted({c.path for c in changes if c.path in section.events})
        if named:
            out.append(f"\n## {_('History')} {{ #inference-history }}\n\n{_('history_intro')}\n\n<!--raw-->\n<ul>\n")
            for path in named:
                out.append(f"<li>{hkey(path)}: {history_text(section.events[path], section.versions[0], _)}</li>\n")
            out.append("</ul>\n<!--/raw-->\n")
    return "".join(out)


def pages(site: Any, only: str | None = None) -> dict[str, str]:
    """Every page of the inference section in ``site.lang`` (docs/-relative), or only release ``only``'s."""
    section = section_of(site)
    out: dict[str, str] = {}
    for version in section.versions if only is None else [v for v in section.versions if v == only]:
        out[page_path(version, FIELDS)] = fields_page(section, site, version, site.lang)
        out[page_path(version, DEFAULTS)] = defaults_page(section, site, version, site.lang)
        out[page_path(version, CHANGES)] = changes_page(section, site, version, site.lang)
    return out


def extend_nav(site: Any, navs: dict[str, Any], moved: dict[str, str] | None = None) -> None:
    """Each release's nav gets its inference pages (in the release's group, after its own pages; a page
    stored once for several releases, ``moved``, is the owner's), and the pages their release
    (``hooks.page_release``)."""
    _ = words(site.lang)
    moved = moved or {}
    for version in section_of(site).versions:
        def path(name: str, version: str = version) -> str:
            return moved.get(page_path(version, name), page_path(version, name))

        entry = {_("Inference config"): [{_("Fields"): path(FIELDS)},
                                         {_("Default values"): path(DEFAULTS)},
                                         {_("What changed"): path(CHANGES)}]}
        for item in navs["releases"].get(version, []):
            title, children = next(iter(item.items()))
            if title.startswith(f"DeepSpeed {version}") and isinstance(children, list):
                children.append(entry)
                break
        for name in (FIELDS, DEFAULTS, CHANGES):
            if page_path(version, name) not in moved:
                navs["pages"][page_path(version, name)] = version


def extend_urls(site: Any, urls: dict[str, dict[str, str]], moved: dict[str, str] | None = None) -> None:
    """The section's pages in each release's page map (``planning.page_urls``): the version selector then
    takes a reader to the same inference page of the release they choose (the owner's, if stored once)."""
    for version in section_of(site).versions:
        for name in (FIELDS, DEFAULTS, CHANGES):
            owner = (moved or {}).get(page_path(version, name), page_path(version, name)).split("/")[0]
            url = f"{owner}/{FOLDER}/" + ("" if name == FIELDS else f"{name}/")
            urls.setdefault(version, {})[page_key(name)] = url
