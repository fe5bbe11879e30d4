"""Every page a reader of a release is shown names only what that release has (issue 39, point 1).

The field prose is checked entry by entry in ``test_prose_facts.py``; this test reads what the built site actually
shows: every release × language × page kind (overview, fields and sections, the optimizer/scheduler catalogue,
templates, default values, enum types, typos and errors, the errors-and-warnings index as its script shows it to
the release's reader, inference), through the same claim finder
(``dsfields.model.prose_facts.contradictions``), against the snapshot of the release the page is shown for (the
inference document's own snapshot for inference pages). A key, feature or identifier the release lacks is a
finding, wherever it comes from: our prose, a template, a table, a label.

Left out, because naming other releases is what they are for: the banner (it links the newest release), a field's
History line, the pages of changes between releases (release changes, inference changes, deprecated and removed,
official docs vs code), a torch fallback type's name in the catalogue of a release that lists it, the HF
Trainer's fill line (it names the model config's attributes, not DeepSpeed keys),
and elements marked ``dsf-elsewhere`` (a note that says what this release does not read). Release numbers are not
claims here (framing such as "from 0.17.6 on" is allowed on pages); the field prose test checks them.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from dsfields.model.prose import own_type
from dsfields.model.prose_facts import Facts, Vocabulary, contradictions
from dsfields.model.store import available_versions, repo_generated_dir

pytestmark = pytest.mark.site

LANGUAGES = ("en", "zh")
BETWEEN_RELEASES = {"release-changes", "official-docs", "deprecated-removed"}
"""Page kinds (the first folder under a release) whose subject is what differs between releases."""
ARTICLE = re.compile(r"<article[^>]*>(.*?)</article>", re.S)
LEFT_OUT = [re.compile(p, re.S) for p in (
    r'<p class="dsf-banner">.*?</p>',
    r'<li class="dsf-history">.*?</li>',
    r'<li class="dsf-hf">.*?</li>',
    r'<div class="admonition[^"]*\bdsf-elsewhere\b[^"]*">.*?</div>',
    r"<script.*?</script>", r"<style.*?</style>",
)]
CODE = re.compile(r"<code[^>]*>(.*?)</code>", re.S)
TAG = re.compile(r"<[^>]+>")
BLOCK_END = re.compile(r"</(?:p|li|h\d|tr|div|td|th|summary|pre)>")


def shown_lines(page: str) -> list[str]:
    """The article's text a reader sees, one line per block, code spans backticked (as prose writes them)."""
    match = ARTICLE.search(page)
    if not match:
        return []
    text = match.group(1)
    for pattern in LEFT_OUT:
        text = pattern.sub(" ", text)
    text = CODE.sub(lambda m: "`" + TAG.sub("", m.group(1)) + "`", text)
    text = html.unescape(TAG.sub(" ", BLOCK_END.sub("\n", text)))
    return [line.strip() for line in text.split("\n") if line.strip()]


class Releases:
    """Each release's facts, for the training document and for the inference one, and what any release has."""

    def __init__(self, root: Path) -> None:
        self.training: dict[str, Facts] = {}
        self.inference: dict[str, Facts] = {}
        self.vocabulary, self.inference_vocabulary = Vocabulary(), Vocabulary()
        self._judged: dict[tuple[str, bool, str], list[str]] = {}
        self.fallbacks: dict[str, set[str]] = {}
        """Per release, the optimizer/scheduler types its catalogue lists as torch fallbacks (``Muon`` builds
        ``torch.optim.Muon`` where DeepSpeed has no muon of its own): a catalogue entry names them rightly."""
        for version in available_versions(root):
            raw = json.loads((root / version / "fields.json").read_text("utf-8"))
            self.training[version] = Facts.of_raw(raw)
            self.vocabulary.add(self.training[version])
            self.fallbacks[version] = {name for key in ("optimizers", "schedulers")
                                       for name, entry in ((raw.get(key) or {}).get("names") or {}).items()
                                       if not own_type(entry)}
            inference = root / version / "inference.json"
            if inference.is_file():
                self.inference[version] = Facts.of_raw(json.loads(inference.read_text("utf-8")))
                self.inference_vocabulary.add(self.inference[version])

    def claims(self, version: str, kind: str, lines: list[str]) -> list[str]:
        facts, vocabulary = ((self.inference.get(version), self.inference_vocabulary) if kind == "inference"
                             else (self.training.get(version), self.vocabulary))
        if facts is None:
            return []
        fallbacks = self.fallbacks.get(version, set()) if kind == "optimizers-schedulers" else set()
        out = []
        for line in lines:  # a table row or a label repeats on many pages of a release: each is judged once
            key = (version, kind == "inference", line)
            found = self._judged.get(key)
            if found is None:
                found = self._judged[key] = [c for c in contradictions("", line, facts, vocabulary)
                                             if not c.startswith("names release")]
            out += [f"{c}: {line[:140]}" for c in found if not any(c.startswith(f"names {n}, ") for n in fallbacks)]
        return out


@pytest.fixture(scope="module")
def releases(built_site) -> Releases:
    return Releases(Path(built_site.generated) if built_site.generated else repo_generated_dir())


STORED_ONCE = re.compile(r"is the same as (\d+\.\d+\.\d+)'s, stored once")
ERROR_ENTRY = re.compile(r'<section class="dsf-error" id="[^"]*" data-runs="([^"]*)">.*?</section>', re.S)
VARIANT = re.compile(r'<div class="dsf-error__variant" data-runs="([^"]*)">.*?</div>', re.S)
EMPTY_GROUP = re.compile(r'<h2[^>]*>(?:(?!</h2>).)*</h2>\s*<div class="dsf-as-is dsf-errors-group">\s*</div>', re.S)
DEEPSPEED_QUOTED = re.compile(r'<pre class="dsf-error__message">.*?</pre>'
                              r'|[(（](?:condition|reported when|出现条件|条件)[:：] ?<code>.*?</code>[)）]', re.S)


def as_shown_for(page: str, at: int) -> str:
    """The errors page (one for every release, each entry marked with the runs of releases that have it) as its
    script shows it to the reader of the ``at``-th release: the entries of other releases hidden."""
    def has(runs: str) -> bool:
        return any(int(first) <= at <= int(last) for first, last in (run.split("-") for run in runs.split()))

    def kept(entry: re.Match[str]) -> str:  # the entry, with only its variant of that release
        return VARIANT.sub(lambda v: v.group(0) if has(v.group(1)) else " ", entry.group(0)) if has(entry.group(1)) \
            else " "
    shown = ERROR_ENTRY.sub(kept, page)
    shown = EMPTY_GROUP.sub(" ", shown)  # a group none of whose entries is the release's: its heading hidden too
    # DeepSpeed's own words of that release: the message and the check's condition quoted from its source
    return DEEPSPEED_QUOTED.sub(" ", shown)



def release_pages(site: Path, lang: str, version: str) -> list[tuple[str, Path]]:
    """(page kind, file) of every page a reader of the release is shown in ``lang``: a page stored once for several
    releases (the release's own file only points at it) is read for each release it stands for."""
    root = site / "zh" if lang == "zh" else site
    folder = root / version
    out = []
    for page in sorted(folder.rglob("index.html")):
        parts = page.relative_to(folder).parts
        kind = parts[0] if len(parts) > 1 else "overview"
        if kind in BETWEEN_RELEASES or (kind == "inference" and "changes" in parts):
            continue
        if page.stat().st_size < 2048:
            stored = STORED_ONCE.search(page.read_text(encoding="utf-8"))
            if stored:
                page = root / stored.group(1) / page.relative_to(folder)
        out.append((kind, page))
    return out


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_page_names_what_its_release_lacks(built_site, releases, lang):
    site = Path(built_site.site)
    found, kinds = [], set()
    for at, version in enumerate(releases.training):
        for kind, page in release_pages(site, lang, version):
            kinds.add(kind)
            text = page.read_text(encoding="utf-8")
            if kind == "errors":
                text = as_shown_for(text, at)
            for claim in releases.claims(version, kind, shown_lines(text)):
                found.append(f"{page.relative_to(site)}: {claim}")
    # every kind of release page was read (a renamed folder would otherwise make this test vacuous)
    assert {"overview", "fields", "optimizers-schedulers", "config-templates", "typos-errors", "inference",
            "errors"} <= kinds
    assert found == [], f"{len(found)} claims a release contradicts, e.g.\n" + "\n".join(found[:12])


def test_a_muon_sentence_on_an_old_release_page_is_found(built_site, releases):
    """Mutation: the same reading of a 0.10.3 page with a sentence naming Muon (and a key 0.10.3 lacks) fails."""
    site = Path(built_site.site)
    kind, page = next((k, p) for k, p in release_pages(site, "en", "0.10.3") if k == "overview")
    text = page.read_text(encoding="utf-8").replace(
        "</article>", "<p>Prefer Muon, and set <code>zero_optimization.zenflow</code> for it.</p></article>", 1)
    claims = releases.claims("0.10.3", kind, shown_lines(text))
    assert any("Muon" in c for c in claims) and any("zenflow" in c for c in claims), claims
    # true of the release that has them
    assert not [c for c in releases.claims("0.19.8", kind, shown_lines(text)) if "Muon" in c or "zenflow" in c]


def test_later_source_names_on_an_old_release_page_are_found(built_site, releases):
    """Mutation (audit r3): the sentences that escaped, put back on 0.10.3's own zero_optimization page, are found
    there (AutoEP, a private function, a module file, a key path written from its section, a module function no
    release defines) and, except the last, not on the newest release's page."""
    site = Path(built_site.site)
    kind, page = next((k, p) for k, p in release_pages(site, "en", "0.10.3")
                      if k == "fields" and p.parent.name == "zero_optimization")
    sentences = ("Stage 3 only; AutoEP with stage 3 rejects values above 1.",
                 "The ZeRO optimizer passes this to <code>_configure_master_weights</code>.",
                 "Convert it with <code>deepspeed/checkpoint/ds_to_universal.py</code>.",
                 "It gives finer granularity to <code>offload_optimizer.ratio</code>.",
                 "<code>deepspeed.comm.start_profiling_op([...])</code> edits the list.")
    text = page.read_text(encoding="utf-8").replace(
        "</article>", "".join(f"<p>{s}</p>" for s in sentences) + "</article>", 1)
    claims = releases.claims("0.10.3", kind, shown_lines(text))
    for name in ("AutoEP", "_configure_master_weights", "ds_to_universal", "offload_optimizer.ratio",
                 "deepspeed.comm.start_profiling_op"):
        assert any(f"names {name}" in c or f"names key {name}" in c for c in claims), (name, claims)
    inserted = shown_lines("<article>" + "".join(f"<p>{s}</p>" for s in sentences) + "</article>")
    later = releases.claims(list(releases.training)[-1], kind, inserted)
    assert later and all("start_profiling_op" in c for c in later), later
