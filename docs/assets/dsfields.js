// dsfields: the release selector, the "not in this release" notice, the language switch that stays on
// the page, one release per URL (a page stored once for several releases, or a page across releases, shows
// the reader's release: its sidebar, footer, headings and links), the search hook (fields of this release,
// python names, Chinese terms, "did you mean" with the same edit distance as `dsfields lookup`), and the
// pickers of the "changes between two releases" and "added since" pages, the errors page's release filter.
// Data: releases/site-data.json
// (releases, dates, this language's words), releases/data/<version>.json (a release's pages, fields, nav
// and finder keys), releases/keys.json (the finder's entries of every release), releases/changes.json,
// releases/anchors.json (written by `dsfields docs build`). Everything is fetched from this site: no
// outside host.
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("__config").textContent);
  var root = new URL(config.base.replace(/\/?$/, "/"), location.href);
  var lang = (document.documentElement.lang || "en").slice(0, 2);
  var zh = lang === "zh";
  var T = {}, TERMS = {};
  // Every string this script writes, in English; site-data.json's "words" gives them in the page's
  // language (dsfields/docs/i18n.py).
  function t(text) { return T[text] || text; }
  var dataPromise = fetch(new URL("releases/site-data.json", root)).then(function (r) { return r.json(); });

  // Links to DeepSpeed's source: the page holds <a class="dsf-src" data-v="0.14.4">file:line</a> and the
  // address is made here, as dsfields/docs/filters.py GITHUB_BLOB and source_url make it (the tag v<release>,
  // the file, #L<line>; a page stored once for several releases restates them for the reader's release).
  var GITHUB_BLOB = "https://github.com/deepspeedai/DeepSpeed/blob/v";
  function sourceLinks() {
    document.querySelectorAll("a.dsf-src[data-v]:not([href])").forEach(function (a) {
      var label = a.textContent, cut = label.lastIndexOf(":"), line = label.slice(cut + 1);
      a.href = GITHUB_BLOB + a.dataset.v + "/" + (cut < 0 ? label : label.slice(0, cut)) + "#L" + (/^\d+$/.test(line) ? line : "1");
    });
  }
  sourceLinks();
  var keysCache = {}, releaseCache = {};
  var shownVersion = null;

  function releaseData(version) {
    if (!releaseCache[version]) {
      releaseCache[version] = fetch(new URL("releases/data/" + version + ".json", root)).then(function (r) { return r.json(); })
        .then(function (rd) {
          // The Chinese site's file holds its nav; the parts that name no word of a language (pages, fields,
          // source lines) are the English site's file's, read from there (hooks.py, share_release_data).
          if (!rd.english) return rd;
          return fetch(new URL("../releases/data/" + version + ".json", root)).then(function (r) { return r.json(); })
            .then(function (en) { rd.english.forEach(function (key) { rd[key] = en[key]; }); return rd; });
        })
        .then(function (rd) {
          // Its fields come as a list of anchors: a set of them, to ask whether the release has a key.
          var fields = {};
          (rd.fields || []).forEach(function (anchor) { fields[anchor] = true; });
          rd.fields = fields;
          return rd;
        });
    }
    return releaseCache[version];
  }

  function marker() { return document.getElementById("dsf-page"); }
  function params() { return new URLSearchParams(location.search); }

  function currentVersion(data) {
    if (shownVersion) return shownVersion;
    var m = marker();
    var wanted = params().get("v");
    if (m) {
      var covers = (m.dataset.covers || m.dataset.version).split(" ");
      return wanted && covers.indexOf(wanted) >= 0 ? wanted : m.dataset.version;
    }
    return wanted && data.versions.indexOf(wanted) >= 0 ? wanted : data.newest;
  }

  // A URL of this site as a path from its root ("0.14.5/fields/bf16/"), or null for another site.
  function sitePath(url) {
    if (url.origin !== root.origin || url.pathname.indexOf(root.pathname) !== 0) return null;
    return url.pathname.slice(root.pathname.length).replace(/index\.html$/, "");
  }

  // Whether release index `index` is in `runs` ("0-12 15-15": first-last indexes of the site's releases, as
  // dsfields.model.source_names.index_runs writes them): the errors page's data-runs and the guides' scope.
  function inRuns(runs, index) {
    return runs.split(" ").some(function (run) {
      var ends = run.split("-");
      return Number(ends[0]) <= index && index <= Number(ends[1]);
    });
  }

  function versionOf(path, data) {
    var first = path.split("/")[0];
    return data.versions.indexOf(first) >= 0 ? first : null;
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; });
  }

  // The URL of release `version`'s page `key` (its own, or the page it shares with a later release, with ?v=).
  function releaseUrl(rd, key, hash) {
    var path = rd.pages[key];
    if (path === undefined) return null;
    var url = new URL(path, root);
    if (path.split("/")[0] !== rd.version) {
      url.searchParams.set("v", rd.version);
    }
    if (hash) url.hash = hash;
    return url;
  }

  function targetUrl(data, target, version) {
    var m = marker();
    var anchor = decodeURIComponent(location.hash.slice(1));
    var url;
    if (!m) {  // a page across releases: the same page, for the chosen release
      url = new URL(location.href);
      url.searchParams.delete("missing");
      if (version === data.newest) url.searchParams.delete("v"); else url.searchParams.set("v", version);
      return url.href;
    }
    url = releaseUrl(target, m.dataset.page, location.hash) || releaseUrl(target, "index");
    if (anchor) {
      var shown = releaseCache[currentVersion(data)];
      if (target.pages[m.dataset.page] === undefined || (!target.fields[anchor] && shownFields[anchor])) {
        url.searchParams.set("missing", anchor);
      }
      url.hash = location.hash;
    }
    return url.href;
  }
  var shownFields = {};

  function selector(data) {
    var current = currentVersion(data);
    var select = document.createElement("select");
    select.className = "dsf-version";
    select.id = "dsf-version";
    select.setAttribute("aria-label", t("DeepSpeed release"));
    var phone = window.matchMedia && window.matchMedia("(max-width: 44.9375em)").matches;
    data.versions.slice().reverse().forEach(function (v) {
      var option = document.createElement("option");
      option.value = v;
      // On a phone the closed selector must show the whole release: the date goes to the option's label.
      option.textContent = v + (data.dates[v] && !phone ? " · " + data.dates[v] : "");
      if (data.dates[v]) option.title = v + " · " + data.dates[v];
      if (v === current) option.selected = true;
      select.appendChild(option);
    });
    // A release changes on a deliberate choice only (issue 41): a click in the open list, or Enter. Arrow keys,
    // Home/End and typing on the closed selector move its value (the browser fires "change" at once) without
    // leaving the page, so a keyboard user can walk the list and then press Enter.
    var keyed = false;
    function go() {
      var version = select.value;
      if (version === current) return;
      releaseData(version).then(function (target) { location.href = targetUrl(data, target, version); });
    }
    select.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        keyed = false;
        go();
        return;
      }
      keyed = /^(Arrow(Up|Down|Left|Right)|Page(Up|Down)|Home|End)$/.test(event.key) || event.key.length === 1;
    });
    select.addEventListener("mousedown", function () { keyed = false; });
    select.addEventListener("change", function () {
      if (keyed) {
        keyed = false;
        return;
      }
      go();
    });
    var header = document.querySelector(".md-header__inner");
    var search = header && header.querySelector(".md-search");
    if (header) header.insertBefore(select, search || null);
  }

  function notice(data, rd) {
    var anchor = params().get("missing");
    var hash = decodeURIComponent(location.hash.slice(1));
    if (!anchor && hash && !document.getElementById(hash) && !rd.fields[hash]) anchor = hash;
    if (!anchor || rd.fields[anchor]) return;
    fetch(new URL("releases/anchors.json", root)).then(function (r) { return r.json(); }).then(function (anchors) {
      if (!anchors[anchor]) return;
      var box = document.createElement("div");
      box.className = "dsf-notice";
      box.id = "dsf-missing";
      var history = new URL("releases/history/", root);
      history.hash = anchor;
      box.innerHTML = "<code>" + escapeHtml(anchors[anchor]) + "</code> " +
        escapeHtml(t("does not exist in DeepSpeed {v}").replace("{v}", rd.version)) + ": <a href=\"" + history.href + "\">" +
        escapeHtml(t("see its history across releases")) + "</a>.";
      var content = document.querySelector(".md-content__inner");
      if (content) content.insertBefore(box, content.firstChild);
    });
  }

  // ------------------------------------------------------------ one release per URL
  // The page's sidebar, footer and links were written for the release whose nav it was built in: its
  // owner (a field page stored once for several identical releases) or the newest (pages across
  // releases). Shown for another release, they are restated for that one; links to a page stored under
  // another release carry ?v=<release> everywhere.
  function navLeaves(items, out) {
    items.forEach(function (item) {
      if (item[2]) navLeaves(item[2], out);
      else if (item[1] !== null && item[1].indexOf("#") < 0 && !/^[a-z]+:/.test(item[1])) out.push(item);
    });
    return out;
  }

  function scopedHref(path, hash, data, from, shown) {
    // `path` as seen from the page's own release `from` → the same page of release `shown`.
    var reverse = from._reverse;
    if (!reverse) {
      reverse = from._reverse = {};
      Object.keys(from.pages).forEach(function (key) { reverse[from.pages[key]] = key; });
    }
    var key = reverse[path];
    if (key !== undefined) {
      var url = releaseUrl(shown, key, hash);
      if (!url) {
        url = releaseUrl(shown, "index");
        if (hash) url.searchParams.set("missing", hash.slice(1));
      }
      return url;
    }
    if (versionOf(path, data) || /^(assets|search|releases\/(data|keys))\//.test(path)) return null;
    if (shown.version === data.newest) return null;
    var across = new URL(path, root);  // a page across releases, the guides, the home page
    across.searchParams.set("v", shown.version);
    across.hash = hash;
    return across;
  }

  function rewriteLinks(scope, data, from, shown) {
    scope.querySelectorAll("a[href]").forEach(function (a) {
      if (a.closest(".md-select") || a.classList.contains("headerlink")) return;
      var url = new URL(a.getAttribute("href"), location.href);
      var path = sitePath(url);
      if (path === null || url.searchParams.has("v")) return;
      var scoped = scopedHref(path, url.hash, data, from, shown);
      if (scoped) a.href = scoped.href;
    });
  }

  function navItem(item, current, activeLeaf, path, level) {
    var li = document.createElement("li");
    var title = escapeHtml(item[0]);
    if (!item[2]) {
      if (item[1] === current && activeLeaf) return activeLeaf;
      li.className = "md-nav__item";
      var cls = "md-nav__link" + (item[1] === current ? " md-nav__link--active" : "");
      li.innerHTML = "<a href=\"" + escapeHtml(new URL(item[1], root).href) + "\" class=\"" + cls + "\"><span class=\"md-ellipsis\">" +
        title + "</span></a>";
      return li;
    }
    var leaves = navLeaves(item[2], []);
    var open = leaves.some(function (leaf) { return leaf[1] === current; });
    if (!open) {
      var first = item[2][0] && !item[2][0][2] ? item[2][0][1] : (leaves[0] || [null, ""])[1];
      li.className = "md-nav__item md-nav__item--pruned md-nav__item--nested";
      li.innerHTML = "<a href=\"" + escapeHtml(new URL(first, root).href) + "\" class=\"md-nav__link\"><span class=\"md-ellipsis\">" +
        title + "</span><span class=\"md-nav__icon md-icon\"></span></a>";
      return li;
    }
    li.className = "md-nav__item md-nav__item--active md-nav__item--nested";
    li.innerHTML = "<input class=\"md-nav__toggle md-toggle\" type=\"checkbox\" id=\"" + path + "\" checked>" +
      "<label class=\"md-nav__link\" for=\"" + path + "\" id=\"" + path + "_label\" tabindex=\"0\"><span class=\"md-ellipsis\">" + title +
      "</span><span class=\"md-nav__icon md-icon\"></span></label><nav class=\"md-nav\" data-md-level=\"" + level +
      "\" aria-labelledby=\"" + path + "_label\" aria-expanded=\"true\"><label class=\"md-nav__title\" for=\"" + path +
      "\"><span class=\"md-nav__icon md-icon\"></span>" + title + "</label><ul class=\"md-nav__list\" data-md-scrollfix></ul></nav>";
    var list = li.querySelector("ul");
    item[2].forEach(function (child, i) { list.appendChild(navItem(child, current, activeLeaf, path + "_" + (i + 1), level + 1)); });
    return li;
  }

  // The whole primary nav from the release's nav: a page holds only the way to itself (its release, group,
  // its own entry with its table of contents) and the top-level links (hooks.py, _nav_item); the rest is
  // drawn here. Top-level sections are open, as navigation.sections shows them.
  function navSection(item, current, activeLeaf, id) {
    var li = document.createElement("li");
    var title = escapeHtml(item[0]);
    var open = navLeaves(item[2], []).some(function (leaf) { return leaf[1] === current; });
    li.className = "md-nav__item" + (open ? " md-nav__item--active" : "") + " md-nav__item--section md-nav__item--nested";
    li.innerHTML = "<input class=\"md-nav__toggle md-toggle \" type=\"checkbox\" id=\"" + id + "\"" + (open ? " checked" : "") + ">" +
      "<label class=\"md-nav__link\" for=\"" + id + "\" id=\"" + id + "_label\" tabindex=\"\"><span class=\"md-ellipsis\">" + title +
      "</span><span class=\"md-nav__icon md-icon\"></span></label><nav class=\"md-nav\" data-md-level=\"1\" aria-labelledby=\"" + id +
      "_label\" aria-expanded=\"" + open + "\"><label class=\"md-nav__title\" for=\"" + id + "\"><span class=\"md-nav__icon md-icon\"></span>" +
      title + "</label><ul class=\"md-nav__list\" data-md-scrollfix></ul></nav>";
    var list = li.querySelector("ul");
    item[2].forEach(function (child, i) { list.appendChild(navItem(child, current, activeLeaf, id + "_" + (i + 1), 2)); });
    return li;
  }

  function drawNav(shown, current) {
    var list = document.querySelector("nav.md-nav--primary > ul.md-nav__list");
    if (!list || !shown.nav) return;
    var leaves = list.querySelectorAll("li.md-nav__item--active:not(.md-nav__item--nested)");
    var activeLeaf = leaves.length ? leaves[leaves.length - 1] : null;
    var items = shown.nav.map(function (item, i) {
      return item[2] ? navSection(item, current, activeLeaf, "__nav_" + (i + 1)) : navItem(item, current, activeLeaf, "__nav_" + (i + 1), 1);
    });
    list.textContent = "";
    items.forEach(function (item) { list.appendChild(item); });
  }

  function restateFooter(shown, current) {
    var pages = navLeaves(shown.nav, []);
    var at = -1;
    pages.forEach(function (page, i) { if (page[1] === current) at = i; });
    if (at < 0) return;
    [["prev", at - 1], ["next", at + 1]].forEach(function (side) {
      var link = document.querySelector(".md-footer__link--" + side[0]);
      var page = pages[side[1]];
      if (!link) return;
      if (!page) { link.hidden = true; return; }
      link.href = new URL(page[1], root).href;
      var title = link.querySelector(".md-footer__title .md-ellipsis");
      if (title) title.textContent = page[0];
      var direction = link.querySelector(".md-footer__direction");
      link.setAttribute("aria-label", (direction ? direction.textContent + ": " : "") + page[0]);
    });
  }

  function restateHeadings(data, shown, owner) {
    var strong = document.querySelector(".dsf-banner__release");
    if (strong) strong.textContent = shown.version;
    // Other mentions of the release in a shared page's text (the section example's title).
    document.querySelectorAll(".dsf-shown-release").forEach(function (node) { node.textContent = shown.version; });
    var date = document.querySelector(".dsf-banner__date");
    var shownDate = data.dates[shown.version], ownerDate = data.dates[owner];
    if (date && !(shownDate && date.textContent.indexOf(shownDate) >= 0)) {  // as the page words it, if it does
      date.textContent = ownerDate && shownDate && date.textContent.indexOf(ownerDate) >= 0 ?
        date.textContent.split(ownerDate).join(shownDate) : shownDate ? " (" + t("released") + " " + shownDate + ")" : "";
    }
    var newest = document.querySelector(".dsf-banner__newest");
    if (newest) {
      newest.innerHTML = shown.version === data.newest ? " · " + escapeHtml(t("newest")) :
        " · <a href=\"" + new URL(data.newest + "/", root).href + "\">" + escapeHtml(t("newest")) + ": " + data.newest + "</a>";
    }
    document.querySelectorAll(".dsf-covers").forEach(function (node) { node.remove(); });
    restateLines(shown, owner);
    if (owner && owner !== shown.version) {
      // DeepSpeed's source at the release shown (the lines are the same: that is why the page is shared).
      document.querySelectorAll(".md-content a[href*='/blob/v" + owner + "/']").forEach(function (a) {
        if (!asIs(a)) a.href = a.href.replace("/blob/v" + owner + "/", "/blob/v" + shown.version + "/");
      });
    }
  }

  // What a page holds inside .dsf-as-is names releases of its own (the errors page's entries: their releases,
  // their source): it is not restated for the reader's release.
  function asIs(node) { return !!(node && node.closest && node.closest(".dsf-as-is")); }

  // A page stored once for releases whose source lines differ (DeepSpeed's edits move them): the release
  // data lists the shown release's line of each source link, in the page's order (dsfields/docs/planning.py,
  // line_restatements), and the links are made again for it.
  function restateLines(shown, owner) {
    var m = marker(), lines = m && shown.lines && shown.lines[m.dataset.page];
    if (!owner || owner === shown.version) return;
    document.querySelectorAll(".md-content a.dsf-src[data-v]").forEach(function (a, i) {
      if (a.dataset.v !== owner || asIs(a)) return;
      if (lines && i < lines.length) {
        var label = a.textContent, cut = label.lastIndexOf(":");
        a.textContent = (cut < 0 ? label : label.slice(0, cut)) + (lines[i] ? ":" + lines[i] : "");
      }
      a.dataset.v = shown.version;
      a.removeAttribute("href");
    });
    sourceLinks();
  }

  // A release page stored once for a run of releases (they read the same but for the release's number and
  // date: dsfields/docs/planning.py, release_page_owners) reads as the shown release's own.
  function restateText(data, owner, shown) {
    var number = new RegExp("(^|[^\\d.])" + owner.replace(/\./g, "\\.") + "(?![\\d]|\\.\\d)", "g");
    var ownerDate = data.dates[owner], shownDate = data.dates[shown.version];
    function restate(text) {
      text = text.replace(number, "$1" + shown.version);
      return ownerDate && shownDate ? text.split(ownerDate).join(shownDate) : text;
    }
    [".md-content", ".md-header__topic", ".md-sidebar--primary"].forEach(function (selector) {
      document.querySelectorAll(selector).forEach(function (scope) {
        var walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT), node;
        while ((node = walker.nextNode())) {
          if (asIs(node.parentNode)) continue;
          if (node.nodeValue.indexOf(owner) >= 0 || (ownerDate && node.nodeValue.indexOf(ownerDate) >= 0)) {
            node.nodeValue = restate(node.nodeValue);
          }
        }
      });
    });
    document.title = restate(document.title);
  }

  function scopeRelease(data, shown, from) {
    var m = marker();
    if (m && !/DeepSpeed [0-9]/.test(document.title)) {
      // A field page's title names no release (it is its sidebar entry in every release it stands for).
      var cut = document.title.indexOf(" - ");
      var named = " · DeepSpeed " + shown.version;
      document.title = cut < 0 ? document.title + named : document.title.slice(0, cut) + named + document.title.slice(cut);
    }
    var current = m ? shown.pages[m.dataset.page] : sitePath(new URL(location.href));
    drawNav(shown, current);
    if (from.version !== shown.version) {
      restateFooter(shown, current);
      if (m && m.dataset.covers && m.dataset.page.indexOf("fields/") !== 0) restateText(data, m.dataset.version, shown);
      if (m) restateHeadings(data, shown, m.dataset.version);
      // The restated sidebar and footer link the release's own URLs: its shared pages get ?v= too.
      [".md-sidebar--primary", ".md-footer"].forEach(function (selector) {
        var scope = document.querySelector(selector);
        if (scope) rewriteLinks(scope, data, shown, shown);
      });
    } else if (m && m.dataset.covers) {
      // the release's own page, standing for a run of releases that read alike ("0.11.2 – 0.14.4" without the
      // script): its reader came for this release
      var strong = document.querySelector(".dsf-banner__release");
      if (strong) strong.textContent = shown.version;
    }
    // A page of no release (home, guides, the hand-written pages) keeps the reader's release in its text's
    // links too (issue 39 point 4); the pages across releases keep theirs (they name releases on purpose).
    var own = m ? null : sitePath(new URL(location.href));
    var across = own !== null && /^releases\//.test(own);
    var where = m ? [document] : [document.querySelector(".md-header"), document.querySelector(".md-sidebar--primary"),
                                  document.querySelector(".md-footer"), across ? null : document.querySelector(".md-content")];
    where.forEach(function (scope) { if (scope) rewriteLinks(scope, data, from, shown); });
    if (m && m.dataset.covers && from.version !== shown.version) {
      // The address bar shows the reader's release: its own URL of this page (which leads back here).
      var own = new URL(shown.version + "/" + (m.dataset.page === "index" ? "" : m.dataset.page + "/"), root);
      params().forEach(function (value, name) { if (name !== "v") own.searchParams.set(name, value); });
      own.hash = location.hash;
      history.replaceState(history.state, "", own.href);
      // Its canonical link names that URL too (issue 41): the page stands for the reader's release here.
      var canonical = document.querySelector("link[rel=canonical]");
      if (canonical) {
        var named = new URL(canonical.getAttribute("href"), location.href);
        named.pathname = named.pathname.replace("/" + m.dataset.version + "/", "/" + shown.version + "/");
        named.search = "";
        named.hash = "";
        canonical.setAttribute("href", named.href);
      }
    }
  }

  // Every mention of release `from` in the text under `scope` said as release `to` (whole numbers only:
  // 0.19.8 is not a part of 0.19.80).
  function restateNodes(scope, from, to) {
    var number = new RegExp("(^|[^\\d.])" + from.replace(/\./g, "\\.") + "(?![\\d]|\\.\\d)", "g");
    var walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      if (node.nodeValue.indexOf(from) >= 0) node.nodeValue = node.nodeValue.replace(number, "$1" + to);
    }
  }

  // Material's full-text hits are the newest release's pages: on another release they open that
  // release's page (or its overview, saying the key is missing there), labelled with the release.
  function scopeSearchHits(data, shown) {
    var list = document.querySelector(".md-search-result__list");
    if (!list || shown.version === data.newest) return;
    var newest = null;
    function fix() {
      list.querySelectorAll("a.md-search-result__link:not([data-dsf])").forEach(function (a) {
        a.setAttribute("data-dsf", "1");
        var url = new URL(a.getAttribute("href"), location.href);
        var path = sitePath(url);
        if (path === null) return;
        var scoped = versionOf(path, data) === data.newest ? null : scopedHref(path, url.hash, data, newest, shown);
        if (versionOf(path, data) === data.newest) {
          var anchor = decodeURIComponent(url.hash.slice(1));
          scoped = scopedHref(path, url.hash, data, newest, shown);
          if (scoped && anchor && newest.fields[anchor] && !shown.fields[anchor]) scoped.searchParams.set("missing", anchor);
          var label = document.createElement("span");
          label.className = "dsf-hit-release";
          label.textContent = "DeepSpeed " + shown.version;
          var article = a.querySelector("article");
          if (article) {
            // The hit's title names the release it opens (the newest's page title says the newest).
            article.querySelectorAll("h1, h2").forEach(function (title) { restateNodes(title, data.newest, shown.version); });
            article.insertBefore(label, article.firstChild);
          }
        }
        if (scoped) a.href = scoped.href;
      });
    }
    releaseData(data.newest).then(function (rd) {
      newest = rd;
      fix();
      new MutationObserver(fix).observe(list, {childList: true, subtree: true});
    });
  }

  // ------------------------------------------------------------ language switch: same page
  function languageLinks() {
    var here = location.href.slice(root.href.length);
    document.querySelectorAll("a.md-select__link[hreflang]").forEach(function (a) {
      var other = a.getAttribute("hreflang").slice(0, 2);
      if (other === lang) { a.href = location.href; return; }
      var base = zh ? new URL("../", root) : new URL("zh/", root);
      a.href = new URL(here, base).href;
    });
  }

  // ------------------------------------------------------------ search: fields, python names, typos
  function editDistance(a, b, max) {
    if (Math.abs(a.length - b.length) > max) return max + 1;
    var prev = [], cur, i, j;
    for (j = 0; j <= b.length; j++) prev[j] = j;
    for (i = 1; i <= a.length; i++) {
      cur = [i];
      var best = i;
      for (j = 1; j <= b.length; j++) {
        cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
        if (cur[j] < best) best = cur[j];
      }
      if (best > max) return max + 1;
      prev = cur;
    }
    return prev[b.length];
  }

  function names(entry) {
    var path = entry[0].toLowerCase(), out = [path];
    var tail = path.split(/ = |\./).pop();
    out.push(tail);
    if (entry[1]) { out.push(entry[1].toLowerCase()); out.push(entry[1].toLowerCase().split(".").pop()); }
    return out;
  }

  var CJK = /[\u3400-\u9fff\uf900-\ufaff]/;

  // The query's words: Latin words as typed (also split at "_" and "."), and each Chinese term of the
  // glossary (site-data.json "terms", dsfields/docs/i18n.py) as the English words of its meaning; the
  // Chinese text itself is matched against our (Chinese) summaries.
  function queryWords(q) {
    var words = [], rest = q;
    Object.keys(TERMS).sort(function (a, b) { return b.length - a.length; }).forEach(function (term) {
      if (rest.indexOf(term) >= 0) {
        rest = rest.split(term).join(" ");
        TERMS[term].split(" ").forEach(function (w) { words.push(w); });
      }
    });
    rest.split(/[\s_.\-]+/).forEach(function (w) { if (w && !CJK.test(w)) words.push(w); });
    return words;
  }

  // Rank: the key as written (its path or python path), then keys whose own name holds every word whole,
  // then keys whose path does, then words inside names, then our summary. Within a rank: deprecated and
  // removed keys last, sections before leaves, the name itself before a name holding it, shallow before
  // deep. Each key once.
  function match(keys, query) {
    var q = query.trim().toLowerCase().slice(0, 200);
    if (q.length < 2) return null;
    var cjk = CJK.test(q);
    var words = queryWords(q);
    var joined = q.replace(/\s+/g, "_");
    var found = [], seen = {};
    keys.forEach(function (entry) {
      if (seen[entry[0]]) return;
      var ns = names(entry), tail = ns[1], summary = (entry[3] || "").toLowerCase();
      var tailParts = tail.split(/[_ =]+/), pathParts = ns[0].split(/[._ =]+/);
      var exactTail = !cjk && (tail === q || tail === joined) ? 0 : 1;
      var rank = -1;
      if (!cjk && [ns[0], ns[2]].some(function (n) { return n === q || n === joined; })) rank = 0;
      else if (!exactTail || (words.length && words.every(function (w) { return tailParts.indexOf(w) >= 0; }))) rank = 1;
      else if (words.length && words.every(function (w) { return pathParts.indexOf(w) >= 0; })) rank = 2;
      else if (!cjk && q.length >= 3 && ns.some(function (n) { return n.indexOf(q) >= 0 || n.indexOf(joined) >= 0; })) rank = 3;
      else if (words.length && words.every(function (w) { return w.length >= 3 && ns[0].indexOf(w) >= 0; })) rank = 3;
      else if (summary && (cjk ? summary.indexOf(q) >= 0 : q.split(/\s+/).every(function (w) { return summary.indexOf(w) >= 0; }))) rank = 4;
      if (rank < 0) return;
      seen[entry[0]] = true;
      found.push([rank, entry, exactTail]);
    });
    var flags = function (e) { return e[4] || ""; };
    var order = function (a, b) {
      var ea = a[1], eb = b[1];
      var gone = (/[dr]/.test(flags(ea)) ? 1 : 0) - (/[dr]/.test(flags(eb)) ? 1 : 0);
      return a[0] - b[0] || gone || (flags(eb).indexOf("s") >= 0) - (flags(ea).indexOf("s") >= 0) ||
        (a[2] || 0) - (b[2] || 0) || ea[0].split(".").length - eb[0].split(".").length || (ea[0] < eb[0] ? -1 : 1);
    };
    found.sort(order);
    var strong = found.filter(function (f) { return f[0] < 4; });
    if (strong.length) return {kind: "fields", entries: found.slice(0, 10).map(function (f) { return f[1]; })};
    // "Did you mean": Latin queries only, against names long enough for an edit to mean a typo.
    var suggested = [];
    if (!cjk && q.length >= 4) {
      var max = Math.max(2, Math.floor(q.length / 4));
      keys.forEach(function (entry) {
        if (seen[entry[0]]) return;
        var d = Math.min.apply(null, names(entry).filter(function (n) { return n.length >= 4; })
          .map(function (n) { return editDistance(q, n, max); }).concat([max + 1]));
        if (d <= max) { seen[entry[0]] = true; suggested.push([d, entry]); }
      });
      suggested.sort(order);
    }
    var described = found.map(function (f) { return f[1]; });
    if (suggested.length) return {kind: "mean", entries: suggested.slice(0, 5).map(function (s) { return s[1]; }).concat(described.slice(0, 5))};
    return {kind: "fields", entries: described.slice(0, 10)};
  }

  // The finder's keys of a release: releases/keys.json holds every distinct entry of any release once, the
  // release's data which of them it has; an entry's "page#anchor" is where the release shows that page.
  var keyTable = null;
  function keysOf(version) {
    if (!keysCache[version]) {
      keyTable = keyTable || fetch(new URL("releases/keys.json", root)).then(function (r) { return r.json(); });
      keysCache[version] = Promise.all([keyTable, releaseData(version)]).then(function (both) {
        var rd = both[1];
        return (rd.keys || []).map(function (i) {
          var entry = both[0][i].slice(), cut = entry[2].indexOf("#");
          var key = cut < 0 ? entry[2] : entry[2].slice(0, cut), hash = cut < 0 ? "" : entry[2].slice(cut);
          entry[2] = (releaseUrl(rd, key, hash) || releaseUrl(rd, "index")).href;
          return entry;
        });
      });
    }
    return keysCache[version];
  }

  function searchHook(data) {
    var input = document.querySelector("input.md-search__input");
    if (!input) return;
    var version = currentVersion(data), timer = null;
    function show() {
      var query = input.value;
      keysOf(version).then(function (keys) {
        if (input.value !== query) return;
        var result = document.querySelector(".md-search-result");
        if (!result) return;
        var box = document.getElementById("dsf-search");
        if (!box) {
          box = document.createElement("div");
          box.id = "dsf-search";
          box.className = "dsf-search";
          result.insertBefore(box, result.firstChild);
        }
        var found = match(keys, query);
        if (!found || !found.entries.length) { box.hidden = !found; box.innerHTML = found ? escapeHtml(t("No matching field")) : ""; return; }
        box.hidden = false;
        var title = found.kind === "mean" ? t("Did you mean") : t("Fields of DeepSpeed {v}").replace("{v}", version);
        box.innerHTML = "<strong>" + escapeHtml(title) + "</strong><ol>" + found.entries.map(function (e) {
          var url = new URL(e[2], root);
          return "<li><a class=\"dsf-search__link\" href=\"" + url.href + "\"><code>" + escapeHtml(e[0]) + "</code></a>" +
            (e[3] ? "<small>" + escapeHtml(e[3]) + "</small>" : "") + "</li>";
        }).join("") + "</ol>";
      });
    }
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(show, 120); });
    // The hook is attached once the site and release data have arrived: a query typed before that fired no
    // input event here, so it is answered now.
    if (input.value) show();
    document.addEventListener("click", function (event) {
      // Material's search overlay stays open on same-page links; close it like its own results do.
      if (event.target.closest && event.target.closest(".dsf-search__link")) {
        var toggle = document.querySelector("input[data-md-toggle=search]");
        if (toggle) toggle.checked = false;
      }
    });
  }

  // ------------------------------------------------------------ changes between two releases
  // changes.json holds each detail as HTML in the page's language, DeepSpeed's own words already marked (render.py).
  function comparePage(data) {
    var form = document.getElementById("dsf-compare");
    if (!form) return;
    var out = document.getElementById("dsf-compare-out");
    var from = document.getElementById("dsf-compare-from"), to = document.getElementById("dsf-compare-to");
    fetch(new URL("releases/changes.json", root)).then(function (r) { return r.json(); }).then(function (changes) {
      function draw() {
        var a = data.versions.indexOf(from.value), b = data.versions.indexOf(to.value);
        if (a > b) { var swap = a; a = b; b = swap; }
        var byPath = {}, order = [];
        data.versions.slice(a + 1, b + 1).forEach(function (v) {
          (changes[v] || []).forEach(function (c) {
            if (!byPath[c[1]]) { byPath[c[1]] = []; order.push(c[1]); }
            byPath[c[1]].push([v, c[0], c[2]]);
          });
        });
        order.sort();
        var newer = data.versions[b], older = data.versions[a];
        var token = ++drawn;  // the last pick wins when two are answered out of order
        Promise.all([releaseData(newer), releaseData(older)]).then(function (both) {
          if (token === drawn) show(order, byPath, a, b, both);
        });
      }
      var drawn = 0;
      // Each key links to its field page (issue 41): in the newer release, or the older one if it is gone there.
      function keyLink(path, both) {
        var anchor = path.replace(/\./g, "-").toLowerCase(), top = path.split(".")[0];
        for (var i = 0; i < both.length; i++) {
          var rd = both[i];
          if (!rd.fields[anchor]) continue;
          var page = path.indexOf(".") >= 0 || rd.pages["fields/" + top] !== undefined ? "fields/" + top : "fields/top-level";
          var url = releaseUrl(rd, page, "#" + anchor);
          if (url) return url.href;
        }
        return null;
      }
      function show(order, byPath, a, b, both) {
        var rows = order.map(function (path) {
          return byPath[path].map(function (c, i) {
            var key = path ? "<code>" + escapeHtml(path).replace(/([._\/])/g, "$1<wbr>") + "</code>" : escapeHtml(t("top level"));
            var href = path && !i ? keyLink(path, both) : null;
            if (href) key = "<a href=\"" + escapeHtml(href) + "\">" + key + "</a>";
            return "<tr><td data-label=\"" + escapeHtml(t("Key")) + "\">" + (i ? "" : key) +
              "</td><td data-label=\"" + escapeHtml(t("Release")) + "\">" + c[0] + "</td><td data-label=\"" + escapeHtml(t("Change")) + "\">" +
              escapeHtml(t(c[1])) + (c[2] ? " — " + c[2] : "") + "</td></tr>";
          }).join("");
        }).join("");
        out.innerHTML = "<p>" + escapeHtml(t("{n} keys changed from {a} to {b}.").replace("{n}", order.length)
          .replace("{a}", data.versions[a]).replace("{b}", data.versions[b])) + "</p>" +
          (rows ? "<table class=\"dsf-table\"><thead><tr><th>" + escapeHtml(t("Key")) + "</th><th>" + escapeHtml(t("Release")) +
            "</th><th>" + escapeHtml(t("Change")) + "</th></tr></thead><tbody>" + rows + "</tbody></table>" : "");
      }
      from.addEventListener("change", draw);
      to.addEventListener("change", draw);
      draw();
    });
  }

  // ------------------------------------------------------------ errors and warnings
  // One page for every release (dsfields/docs/planning.py, ONE_PAGE) lists every release's messages, each with
  // the runs of releases that have it (data-runs: "first-last" indexes of the site's releases); the reader's
  // release's are shown. An entry the address names (#DS…) is shown even where that release lacks it, saying so.
  function errorsPage(data, shown) {
    var box = document.getElementById("dsf-errors");
    if (!box) return;
    var at = data.versions.indexOf(shown.version), wanted = decodeURIComponent(location.hash.slice(1)), total = 0;
    function inRunsOf(element) { return inRuns(element.dataset.runs, at); }
    // the raising line of the reader's release (data-lines: "first-last:line" runs; DeepSpeed's edits move it)
    function raisedAt(variant) {
      var a = variant.querySelector("a[data-lines]"), v = variant.querySelector(".dsf-error__v");
      if (!a || !v || !a.dataset.lines) return;
      a.dataset.lines.split(" ").forEach(function (run) {
        var parts = run.split(/[-:]/), line = parts[2];
        if (Number(parts[0]) > at || at > Number(parts[1])) return;
        var label = a.textContent, cut = label.lastIndexOf(":");
        a.textContent = (cut < 0 ? label : label.slice(0, cut)) + ":" + line;
        a.href = a.href.replace(/\/blob\/v[^/]+\//, "/blob/v" + shown.version + "/").replace(/#L\d+$/, "#L" + line);
        v.textContent = shown.version;
      });
    }
    document.querySelectorAll("section.dsf-error[data-runs]").forEach(function (entry) {
      var has = inRunsOf(entry);
      var named = entry.id === wanted;
      entry.hidden = !has && !named;
      // the keys, source and fix of the reader's release (an entry named but not in it: its newest variant)
      var variants = entry.querySelectorAll(".dsf-error__variant[data-runs]");
      variants.forEach(function (variant, i) {
        variant.hidden = has ? !inRunsOf(variant) : i !== variants.length - 1;
        if (has && !variant.hidden) raisedAt(variant);
      });
      // the minimal config, for the releases whose check reports the message for it: named with the reader's
      entry.querySelectorAll(".dsf-error__config[data-runs]").forEach(function (config) {
        config.hidden = !has || !inRunsOf(config);
        var code = config.querySelector("summary code");
        if (code && !config.hidden) code.textContent = code.textContent.replace(/--version \S+/, "--version " + shown.version);
      });
      if (has) total += 1;
      if (!has && named) {
        var note = document.createElement("p");
        note.className = "dsf-notice";
        note.textContent = t("Not in DeepSpeed {v}: the releases that have it are listed below.").replace("{v}", shown.version);
        entry.insertBefore(note, entry.firstChild);
      }
    });
    document.querySelectorAll(".dsf-errors-group").forEach(function (group) {
      var empty = !group.querySelector("section.dsf-error:not([hidden])");
      group.hidden = empty;
      var heading = group.previousElementSibling;
      if (heading && /^H[1-6]$/.test(heading.tagName)) {
        heading.hidden = empty;
        document.querySelectorAll(".md-nav--secondary a[href='#" + heading.id + "']").forEach(function (a) {
          if (a.parentNode) a.parentNode.hidden = empty;
        });
      }
    });
    var count = document.getElementById("dsf-errors-count");
    if (count) {
      count.textContent = t("{n} of the {m} messages are in DeepSpeed {v}.").replace("{n}", total)
        .replace("{m}", box.dataset.count).replace("{v}", shown.version);
    }
    if (wanted && document.getElementById(wanted)) document.getElementById(wanted).scrollIntoView();
  }

  // ------------------------------------------------------------ added since <date>
  function addedSince() {
    var input = document.getElementById("dsf-since");
    if (!input) return;
    var count = document.getElementById("dsf-since-count");
    function apply() {
      var total = 0;
      document.querySelectorAll(".dsf-added").forEach(function (block) {
        var keep = !input.value || (block.dataset.date && block.dataset.date >= input.value);
        block.hidden = !keep;
        var heading = block.previousElementSibling;
        if (heading && /^H[1-6]$/.test(heading.tagName)) heading.hidden = !keep;
        if (keep) total += Number(block.dataset.count || 0);
      });
      count.textContent = input.value ? t("{n} keys").replace("{n}", total) : "";
    }
    input.addEventListener("input", apply);
    apply();
  }

  // Narrow screens show each table row as a card whose cells name their column (dsfields.css): the names
  // come from the table's head here, not repeated in every cell of the page.
  function tableLabels() {
    document.querySelectorAll("table.dsf-table").forEach(function (table) {
      var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) { return th.textContent.trim(); });
      if (!heads.length) return;
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.prototype.forEach.call(row.children, function (cell, i) {
          if (heads[i] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", heads[i]);
        });
      });
    });
  }

  // A guide is written for the newest release and stored once; its reader's release may lack a name it uses
  // (issue 39). Each paragraph, list item, table row and code block naming one is marked for that reader, with the
  // release each name exists from or until (site-data.json "guide_scope": name -> the releases lacking it, as
  // runs of indexes into "versions", found by dsfields/docs/guide_scope.py with the prose claim finder).
  function scopeGuide(data, version) {
    var path = sitePath(new URL(location.href)) || "";
    var scope = data.guide_scope || {}, quoted = data.guide_messages || {}, at = data.versions.indexOf(version);
    if (!/^guides\//.test(path) || at < 0 || version === data.newest) return;
    function since(runs) {
      for (var later = at + 1; later < data.versions.length; later++) {
        if (!inRuns(runs, later)) return t("from {v} on").replace("{v}", data.versions[later]);
      }
      for (var earlier = at - 1; earlier >= 0; earlier--) {
        if (!inRuns(runs, earlier)) return t("until {v}").replace("{v}", data.versions[earlier]);
      }
      return "";
    }
    var names = Object.keys(scope).filter(function (name) { return inRuns(scope[name], at); }).map(function (name) {
      var escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return {name: name, pattern: new RegExp("(^|[^A-Za-z0-9_.])" + escaped + "(?![A-Za-z0-9_])"),
              since: since(scope[name])};
    });
    // A message the guide quotes that the release's catalogue lacks: its block says so.
    var messages = {};
    Object.keys(quoted).forEach(function (text) {
      if (inRuns(quoted[text], at)) messages[text.replace(/\s+/g, " ")] = since(quoted[text]);
    });
    var blocks = ".md-content article p, .md-content article li, .md-content article tr, .md-content article pre";
    document.querySelectorAll(blocks).forEach(function (block) {
      if (block.querySelector("p, li, tr, pre") || block.closest(".dsf-lacking-note")) return;  // the innermost block
      var text = (block.tagName === "TR"  // its cells apart: a name ends where its cell does
        ? Array.prototype.map.call(block.children, function (cell) { return cell.textContent; }).join(" ")
        : block.textContent) + Array.prototype.map.call(block.querySelectorAll("a[data-key]"), function (a) {
          return " " + a.dataset.key;  // a link's whole key path ("ratio" links zero_optimization.offload_optimizer.ratio)
        }).join("");
      var found = names.filter(function (n) { return n.pattern.test(text); });
      var flat = text.trim().replace(/\s+/g, " ");
      if (block.tagName === "PRE" && flat in messages) found.unshift({name: null, since: messages[flat]});
      if (!found.length) return;
      block.classList.add("dsf-lacking");
      var note = document.createElement("span");
      note.className = "dsf-lacking-note";
      note.appendChild(document.createTextNode(t("Not in DeepSpeed {v}:").replace("{v}", version)));
      found.forEach(function (n, index) {
        if (n.name === null) {  // the quoted message itself
          note.appendChild(document.createTextNode(" " + t("this message") + (n.since ? " " + n.since : "")));
          return;
        }
        note.appendChild(document.createTextNode(index ? " · " : " "));
        var code = document.createElement("code");
        code.textContent = n.name;
        note.appendChild(code);
        if (n.since) note.appendChild(document.createTextNode(" " + n.since));
      });
      if (block.tagName === "TR") {
        block.lastElementChild.appendChild(note);
      } else if (block.tagName === "PRE") {
        var wrap = document.createElement("p");
        wrap.className = "dsf-lacking";
        wrap.appendChild(note);
        (block.closest("div.highlight") || block).before(wrap);
      } else {
        block.appendChild(note);
      }
    });
  }

  tableLabels();
  // Printed pages show every example (a reader may have closed one on screen).
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.dsf-example:not([open])").forEach(function (d) { d.open = true; });
  });
  dataPromise.then(function (data) {
    // The home page is the newest release's overview: asked for another release (?v=, as a page of that release
    // links home), it is that release's overview instead.
    var home = sitePath(new URL(location.href)), asked = params().get("v");
    if ((home === "" || home === "zh/") && asked && asked !== data.newest && data.versions.indexOf(asked) >= 0) {
      location.replace(new URL(home + asked + "/", root).href);
      return;
    }
    T = data.words || {};
    TERMS = data.terms || {};
    var m = marker();
    var shown = currentVersion(data);
    var from = m ? m.dataset.version : data.newest;
    Promise.all([releaseData(shown), releaseData(from)]).then(function (both) {
      shownVersion = shown;
      shownFields = both[0].fields;
      scopeRelease(data, both[0], both[1]);
      languageLinks();
      selector(data);
      notice(data, both[0]);
      searchHook(data);
      scopeSearchHits(data, both[0]);
      comparePage(data);
      addedSince();
      errorsPage(data, both[0]);
      scopeGuide(data, shown);
      document.documentElement.classList.remove("dsf-scoping");
    }).catch(function (error) {
      document.documentElement.classList.remove("dsf-scoping");
      console.error("dsfields:", error);
    });
  });
})();
