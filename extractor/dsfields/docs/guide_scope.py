"""What the guides name that a reader's release lacks (issue 39: every sentence true for the release it is shown for).

A guide is written for the newest release and stored once; a reader of an older release opens it with ``?v=<release>``.
Each line of each guide is read by the prose claim finder (:func:`dsfields.model.prose_facts.contradictions`)
against every release's snapshot: a key, feature or identifier one release lacks (``ZenFlowCPUAdam`` before 0.17.x,
``use_multi_rank_bucket_allreduce`` before 0.10.x) is recorded with the releases that lack it. The site's script
(``assets/dsfields.js``, ``scopeGuide``) marks every paragraph, list item, table row and code block of the guide
that names one of them for the reader's release, saying which, and from or until which release each exists. A
message a guide quotes as DeepSpeed prints it (a ```text block) is matched against each release's message catalogue
(:func:`message_scope`): a release that raises no message it matches is told so above the quote.

Release numbers are not claims here (a guide names the release it quotes on purpose), and a name the newest release
lacks is none either: ``tests/test_guides.py`` holds the guides to the newest release, so such a finding is the
finder's, not the guide's (a transformers file ``deepspeed.py``, a model's ``hidden_size``).
"""

from __future__ import annotations

import re
from typing import Any

from dsfields.model import source_names
from dsfields.model.message_ids import longest_chunk
from dsfields.model.prose_facts import Facts, Vocabulary, contradictions
from dsfields.model.source_names import index_runs

NAMED = re.compile(r"^names (?:key )?(.+?), which ")
TEXT_BLOCK = re.compile(r"^```text\n(.*?)\n```", re.S | re.M)
"""A message a guide quotes as DeepSpeed prints it."""
"""The name in a finding ("names key tensor_parallel.autotp_size, which 0.14.4 lacks")."""


def release_facts(snapshots: dict[str, dict[str, Any]], versions: list[str], root: str
                  ) -> tuple[list[Facts], Vocabulary]:
    """Each release's :class:`Facts` (its source names from ``root``'s index) and the vocabulary of them all."""
    key = (root, tuple(versions))
    if key not in _FACTS:
        facts = [Facts.of_raw(snapshots[v], source_names.of_release(v, root)) for v in versions]
        vocabulary = Vocabulary()
        for one in facts:
            vocabulary.add(one)
        _FACTS.clear()
        _FACTS[key] = (facts, vocabulary)
    return _FACTS[key]


_FACTS: dict[tuple[str, tuple[str, ...]], tuple[list[Facts], Vocabulary]] = {}
"""The facts of the last set of releases asked (the English and the Chinese site are built from the same ones)."""


FIELD_LINK = re.compile(r"\]\(field:([\w.*]+)\)")
"""A guide's link to a key's entry (``[`ratio`](field:zero_optimization.offload_optimizer.ratio)``)."""


def lines_of(text: str) -> list[str]:
    """The distinct non-empty lines of a guide's Markdown, its code blocks' lines included (a JSON example names keys
    too); a link to a key's entry names its whole path (the short text ``ratio`` names no key by itself)."""
    return sorted({FIELD_LINK.sub(lambda m: f"] `{m[1]}`", line.strip()) for line in text.splitlines()
                   if line.strip() and not line.startswith("```")})


def guide_scope(texts: list[str], snapshots: dict[str, dict[str, Any]], versions: list[str], root: str
                ) -> dict[str, str]:
    """Name → the releases lacking it (indexes into ``versions``, as :func:`~dsfields.model.source_names.index_runs`),
    for every name the guides' ``texts`` spell that some release lacks and the newest has."""
    facts, vocabulary = release_facts(snapshots, versions, root)
    lines = sorted({line for text in texts for line in lines_of(text)})
    lacking: dict[str, set[int]] = {}
    for at, one in enumerate(facts):
        for line in lines:
            for finding in contradictions("", line, one, vocabulary):
                named = NAMED.match(finding)
                if named:
                    lacking.setdefault(named.group(1), set()).add(at)
    newest = len(versions) - 1
    return {name: index_runs(sorted(ats)) for name, ats in sorted(lacking.items()) if newest not in ats}


def message_scope(texts: list[str], versions: list[str], root: str) -> dict[str, str]:
    """A message a guide quotes (a ```text block) → the releases whose message catalogue lacks it (indexes into
    ``versions``, as :func:`~dsfields.model.source_names.index_runs`): the releases that raise no catalogued message
    its text matches (:func:`dsfields.explain.catalogue`, which the errors index of the same build reads). A quote no
    release's catalogue matches (another library's message) is left out, and so is one the newest release lacks."""
    from dsfields.explain import catalogue

    quotes = sorted({quote.strip() for text in texts for quote in TEXT_BLOCK.findall(text) if quote.strip()})
    if not quotes:
        return {}

    position = {version: at for at, version in enumerate(versions)}
    said = [(longest_chunk(m.pattern), m.regex(), {position[o.version] for o in m.occurrences if o.version in position})
            for m in catalogue(root).values() if m.layer == "deepspeed"]  # a release's DeepSpeed messages
    out = {}
    for quote in quotes:
        flat = re.sub(r"\s+", " ", quote).lower()
        having: set[int] = set()
        for chunk, regex, ats in said:
            if chunk and chunk in flat and regex.search(quote):
                having |= ats
        lacking = [at for at in range(len(versions)) if at not in having]
        if having and lacking and len(versions) - 1 not in lacking:
            out[quote] = index_runs(lacking)
    return out
