"""Does a lighter build of the docs site still say everything the old one said? (issue 24 point 6: no loss of content)

For every HTML page of OLD_SITE with an article, the text of its article (tags stripped, white space
collapsed) must be the text of the same URL in NEW_SITE. Where NEW_SITE has a redirect stub (a page stored
once for several releases), the page it leads to is read as the reader's browser shows it (what
``assets/dsfields.js`` restates): on a release page the owner's release number and date in its text become
the reader's; on a field page the banner's release, date and newest link and the section examples' release;
on both the lines of the source links become the reader's release's (its ``releases/data/<v>.json``
``lines``), and the note naming the releases a shared page stands for is dropped. A page the old site stored
once already is compared as its readers saw it there. The GitHub source links must be
the same too (written out, or made by the script from ``dsf-src`` links). Prints the pages compared,
stored once, and every page that differs (with the first difference).

    python bench/site_content.py OLD_SITE NEW_SITE
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
STUB = re.compile(r'location\.replace\("([^"]+)"')
TAG = re.compile(r"<[^>]+>")
COVERS = re.compile(r'<p class="dsf-covers">.*?</p>', re.S)
MARKER = re.compile(r'<div id="dsf-page" data-version="([^"]+)" data-page="([^"]+)"(?: data-covers="([^"]*)")?')
BANNER_RELEASE = re.compile(r'(<strong class="dsf-banner__release">)[^<]*(</strong>)')
COMMENT = re.compile(r"<!--.*?-->", re.S)
GITHUB = re.compile(r'href="(https://github\.com/deepspeedai/DeepSpeed/blob/v[^"]+)"')
SOURCE = re.compile(r'<a class="dsf-src" data-v="([^"]+)">([^<]*)</a>')


def source_urls(article: str, owner: str | None = None, reader: str | None = None) -> list[str]:
    """The GitHub source links of an article: written out, or made by assets/dsfields.js from a dsf-src link
    (for the reader's release on a page stored once)."""
    out = [html.unescape(url) for url in GITHUB.findall(article)]
    for version, label in SOURCE.findall(article):
        version = reader if owner and version == owner else version
        file, _, line = html.unescape(label).rpartition(":")
        out.append(f"https://github.com/deepspeedai/DeepSpeed/blob/v{version}/{file}#L{line if line.isdigit() else 1}")
    if owner and reader:
        out = [url.replace(f"/blob/v{owner}/", f"/blob/v{reader}/") for url in out]
    return sorted(out)


def text_of(article: str) -> str:
    return " ".join(html.unescape(TAG.sub(" ", COMMENT.sub("", article))).split())


def article(path: Path) -> str | None:
    found = ARTICLE.search(path.read_text(encoding="utf-8", errors="replace"))
    return found.group(1) if found else None


def shown(new: Path, rel: str, dates: dict[str, dict[str, str]]) -> tuple[str | None, bool]:
    """The article text the reader of ``rel`` sees in the new site (its source links after it, one a line),
    and whether it is a shared page."""
    text, shared, links = _shown(new, rel, dates)
    return (None if text is None else text + "\n" + "\n".join(links)), shared


def _shown(new: Path, rel: str, dates: dict[str, dict[str, str]]) -> tuple[str | None, bool, list[str]]:
    path = new / rel
    if not path.is_file():
        return None, False, []
    text = path.read_text(encoding="utf-8", errors="replace")
    stub = STUB.search(text) if "<article" not in text else None
    if not stub:
        body = article(path)
        if body is None:
            return None, False, []
        marker = MARKER.search(body)
        if marker and marker.group(3):  # the owner of a shared page, read as its own release
            body = COVERS.sub("", BANNER_RELEASE.sub(rf"\g<1>{marker.group(1)}\g<2>", body))
        return text_of(body), False, source_urls(body)
    target = stub.group(1).split("?")[0]
    owner_path = (path.parent / target / "index.html").resolve()
    body = article(owner_path)
    if body is None:
        return None, True, []
    reader = rel.split("/zh/")[-1].removeprefix("zh/").split("/")[0]
    marker = MARKER.search(body)
    owner = marker.group(1) if marker else reader
    lang = "zh" if rel.startswith("zh/") else "en"
    owner_date, reader_date = dates[lang].get(owner), dates[lang].get(reader)
    # The lines of the reader's release, written into the source links (restateLines).
    prefix = "zh/" if lang == "zh" else ""
    data = json.loads((new / prefix / "releases" / "data" / f"{reader}.json").read_text(encoding="utf-8"))
    lines = iter((data.get("lines") or {}).get(marker.group(2) if marker else "", []))

    def line(match: re.Match[str]) -> str:
        version, label = match.groups()
        restated = next(lines, None)
        if version == owner and restated is not None:
            file, _, _ = label.rpartition(":")
            label = f"{file or label}:{restated}" if restated else (file or label)
        return f'<a class="dsf-src" data-v="{version}">{label}</a>'

    body = SOURCE.sub(line, body)
    if marker and marker.group(2).startswith("fields/"):
        # A field page's text is never restated (its history names releases): only the banner, its date and
        # newest link, and the section examples' release (restateHeadings).
        body = COVERS.sub("", BANNER_RELEASE.sub(rf"\g<1>{reader}\g<2>", body))
        body = SHOWN_RELEASE.sub(rf"\g<1>{reader}\g<2>", body)
        if owner_date and reader_date:
            body = BANNER_DATE.sub(lambda m: m.group().replace(owner_date, reader_date), body)
        body = BANNER_NEWEST.sub(lambda m: _newest(m, reader, dates[lang]), body)
        return text_of(body), True, source_urls(body, owner, reader)
    body = COVERS.sub("", BANNER_RELEASE.sub(rf"\g<1>{owner}\g<2>", body))
    restated = text_of(body)
    restated = re.sub(rf"(?<![\d.]){re.escape(owner)}(?![\d]|\.\d)", reader, restated)
    if owner_date and reader_date:
        restated = restated.replace(owner_date, reader_date)
    return restated, True, source_urls(body, owner, reader)


SHOWN_RELEASE = re.compile(r'(<span class="dsf-shown-release">)[^<]*(</span>)')
BANNER_DATE = re.compile(r'<span class="dsf-banner__date">[^<]*</span>')
BANNER_NEWEST = re.compile(r'(<span class="dsf-banner__newest">)(.*?)(</span>)', re.S)


def _newest(match: re.Match[str], reader: str, dates: dict[str, str]) -> str:
    """The banner's "newest" part as the script writes it for ``reader`` (the word, and the newest release
    where the reader's is older)."""
    newest = max(dates, key=lambda v: tuple(int(p) for p in v.split(".")))
    word = TAG.sub("", match.group(2)).replace("·", "").split(":")[0].strip()
    shown = f" · {word}" if reader == newest else f' · <a href="#">{word}: {newest}</a>'
    return match.group(1) + shown + match.group(3)


def _first_difference(before: str, after: str) -> str:
    at = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(len(before), len(after)))
    return f"…{before[max(0, at - 60):at + 60]}… → …{after[max(0, at - 60):at + 60]}…"


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: python bench/site_content.py OLD_SITE NEW_SITE")
    old, new = Path(sys.argv[1]), Path(sys.argv[2])
    dates = {}
    for lang, prefix in (("en", ""), ("zh", "zh/")):
        data = json.loads((new / prefix / "releases" / "site-data.json").read_text(encoding="utf-8"))
        dates[lang] = {v: d for v, d in data["dates"].items() if d}
    compared = shared = stubs_compared = 0
    differ = []
    for path in sorted(old.rglob("*.html")):
        rel = path.relative_to(old).as_posix()
        before = article(path)
        if before is None:
            if STUB.search(path.read_text(encoding="utf-8", errors="replace")):
                # A page the old site stored once already: as its reader saw it there, and sees it now.
                was, _ = shown(old, rel, dates)
                now, _ = shown(new, rel, dates)
                stubs_compared += 1
                if was != now:
                    why = "missing" if now is None else _first_difference(was or "", now)
                    differ.append(f"{rel} (stored once in both): {why}")
            continue
        before_text = text_of(COVERS.sub("", before))
        marker = MARKER.search(before)
        if marker and marker.group(3):  # an old shared field page: compared as the owner's release reads it
            before_text = text_of(COVERS.sub("", BANNER_RELEASE.sub(rf"\g<1>{marker.group(1)}\g<2>", before)))
        before_text += "\n" + "\n".join(source_urls(before))
        after, was_shared = shown(new, rel, dates)
        compared += 1
        shared += was_shared
        if after != before_text:
            if after is None:
                differ.append(f"{rel}: missing")
                continue
            differ.append(f"{rel}: {_first_difference(before_text, after)}")
    print(f"{compared} pages compared, {shared} of them now stored once for several releases; {stubs_compared} "
          f"pages stored once in the old site compared as their readers see them; {len(differ)} differ")
    for line in differ[:40]:
        print("  " + line)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
