"""axe-core on a built site (issue 41): serious and critical violations per page kind, language and colour scheme.

    PYTHONPATH=extractor:tests python bench/axe_site.py SITE_DIR [--json OUT]

Needs ``axe-playwright-python`` (it carries axe-core's axe.min.js) and Chromium (/usr/bin/chromium). Pages: home,
a release overview, a section's field page, the catalogue, templates, errors, compare, inference; en and zh; light
and dark (``prefers-color-scheme``, which the palette follows). Prints each rule's count of nodes.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from axe_playwright_python.sync_playwright import Axe
from conftest import serving
from playwright.sync_api import sync_playwright

from dsfields.model.generated import available_versions

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def pages(newest: str) -> dict[str, str]:
    return {"home": "", "overview": f"{newest}/", "field": f"{newest}/fields/zero_optimization/",
            "catalogue": f"{newest}/optimizers-schedulers/", "templates": f"{newest}/config-templates/",
            "errors": f"{newest}/typos-errors/", "compare": "releases/compare/", "inference": f"{newest}/inference/"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("site", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    newest = available_versions()[-1]
    axe = Axe()
    found: dict[str, dict[str, int]] = {}
    with serving(args.site) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for scheme in ("light", "dark"):
                context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
                page = context.new_page()
                for lang in ("en", "zh"):
                    for kind, path in pages(newest).items():
                        page.goto(url + ("zh/" if lang == "zh" else "") + path)
                        page.wait_for_load_state("networkidle")
                        results = axe.run(page).response
                        counts = Counter()
                        for violation in results["violations"]:
                            if violation.get("impact") in ("serious", "critical"):
                                counts[violation["id"]] += len(violation["nodes"])
                        found[f"{kind} {lang} {scheme}"] = dict(counts)
                        print(f"{kind:10} {lang} {scheme:5} {sum(counts.values()):4}  {dict(counts)}", flush=True)
                context.close()
        finally:
            browser.close()
    total = Counter()
    for counts in found.values():
        total.update(counts)
    print("total serious/critical nodes by rule:", dict(total))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
