// dsfields: the release selector, the "not in this release" notice, the language switch that stays on
// the page, the search hook (fields of this release, python names, "did you mean" with the same edit
// distance as `dsfields lookup`), and the pickers of the "changes between two releases" and "added
// since" pages. Data: releases/site-data.json, releases/keys/<version>.json, releases/changes.json
// (written by `dsfields docs build`). Everything is fetched from this site: no outside host.
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("__config").textContent);
  var root = new URL(config.base.replace(/\/?$/, "/"), location.href);
  var lang = (document.documentElement.lang || "en").slice(0, 2);
  var zh = lang === "zh";
  var T = zh ? {
    notIn: "在 DeepSpeed {v} 中不存在", history: "查看它在各版本中的历史", release: "DeepSpeed 版本",
    fields: "DeepSpeed {v} 中的字段", mean: "你是不是要找", none: "没有匹配的字段"
  } : {
    notIn: "does not exist in DeepSpeed {v}", history: "see its history across releases", release: "DeepSpeed release",
    fields: "Fields of DeepSpeed {v}", mean: "Did you mean", none: "No matching field"
  };
  var dataPromise = fetch(new URL("releases/site-data.json", root)).then(function (r) { return r.json(); });
  var keysCache = {};

  function marker() { return document.getElementById("dsf-page"); }
  function params() { return new URLSearchParams(location.search); }

  function currentVersion(data) {
    var m = marker();
    var wanted = params().get("v");
    if (m) {
      var covers = (m.dataset.covers || m.dataset.version).split(" ");
      return wanted && covers.indexOf(wanted) >= 0 ? wanted : m.dataset.version;
    }
    return wanted && data.versions.indexOf(wanted) >= 0 ? wanted : data.newest;
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; });
  }

  function fieldIn(data, anchor, version) {
    var entry = data.fields[anchor];
    return entry ? entry[1].charAt(data.versions.indexOf(version)) === "1" : null;
  }

  // ------------------------------------------------------------ release selector
  function targetUrl(data, version) {
    var m = marker();
    var key = m ? m.dataset.page : "index";
    var pages = data.pages[version] || {};
    var path = pages[key] || pages.index;
    var url = new URL(path, root);
    if (path !== pages.index || key === "index") {
      var owner = path.split("/")[0];
      if (owner !== version) url.searchParams.set("v", version);
    }
    var anchor = decodeURIComponent(location.hash.slice(1));
    if (anchor) {
      if (fieldIn(data, anchor, version) === false || (path === pages.index && key !== "index")) {
        url.searchParams.set("missing", anchor);
      }
      url.hash = location.hash;
    }
    return url.href;
  }

  function selector(data) {
    var current = currentVersion(data);
    var select = document.createElement("select");
    select.className = "dsf-version";
    select.id = "dsf-version";
    select.setAttribute("aria-label", T.release);
    data.versions.slice().reverse().forEach(function (v) {
      var option = document.createElement("option");
      option.value = v;
      option.textContent = v + (data.dates[v] ? " · " + data.dates[v] : "");
      if (v === current) option.selected = true;
      select.appendChild(option);
    });
    select.addEventListener("change", function () { location.href = targetUrl(data, select.value); });
    var header = document.querySelector(".md-header__inner");
    var search = header && header.querySelector(".md-search");
    if (header) header.insertBefore(select, search || null);
  }

  function notice(data) {
    var anchor = params().get("missing");
    var hash = decodeURIComponent(location.hash.slice(1));
    if (!anchor && hash && !document.getElementById(hash) && data.fields[hash]) anchor = hash;
    if (!anchor || !data.fields[anchor]) return;
    var version = currentVersion(data);
    var box = document.createElement("div");
    box.className = "dsf-notice";
    box.id = "dsf-missing";
    var history = new URL("releases/history/", root);
    history.hash = anchor;
    box.innerHTML = "<code>" + escapeHtml(data.fields[anchor][0]) + "</code> " +
      escapeHtml(T.notIn.replace("{v}", version)) + ": <a href=\"" + history.href + "\">" + escapeHtml(T.history) + "</a>.";
    var content = document.querySelector(".md-content__inner");
    if (content) content.insertBefore(box, content.firstChild);
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

  function match(keys, query) {
    var q = query.trim().toLowerCase().slice(0, 200);
    if (q.length < 2) return null;
    var words = q.split(/\s+/);
    var exact = [], containing = [], described = [];
    keys.forEach(function (entry) {
      var ns = names(entry);
      if (ns.indexOf(q) >= 0) exact.push(entry);
      else if (q.length >= 3 && ns.some(function (n) { return n.indexOf(q) >= 0; })) containing.push(entry);
      else if (entry[3] && words.every(function (w) { return entry[3].toLowerCase().indexOf(w) >= 0; })) described.push(entry);
    });
    var byDepth = function (a, b) { return a[0].split(".").length - b[0].split(".").length || (a[0] < b[0] ? -1 : 1); };
    containing.sort(byDepth);
    var found = exact.concat(containing, described);
    if (exact.length || containing.length) return {kind: "fields", entries: found.slice(0, 10)};
    var max = Math.max(2, Math.floor(q.length / 4)), scored = [];
    keys.forEach(function (entry) {
      var d = Math.min.apply(null, names(entry).map(function (n) { return editDistance(q, n, max); }));
      if (d <= max) scored.push([d, entry]);
    });
    scored.sort(function (a, b) { return a[0] - b[0] || byDepth(a[1], b[1]); });
    var suggested = scored.map(function (s) { return s[1]; });
    if (suggested.length) return {kind: "mean", entries: suggested.slice(0, 5).concat(described.slice(0, 5))};
    return {kind: "fields", entries: described.slice(0, 10)};
  }

  function keysOf(version) {
    if (!keysCache[version]) {
      keysCache[version] = fetch(new URL("releases/keys/" + version + ".json", root)).then(function (r) { return r.json(); });
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
        if (!found || !found.entries.length) { box.hidden = !found; box.innerHTML = found ? escapeHtml(T.none) : ""; return; }
        box.hidden = false;
        var title = found.kind === "mean" ? T.mean : T.fields.replace("{v}", version);
        box.innerHTML = "<strong>" + escapeHtml(title) + "</strong><ol>" + found.entries.map(function (e) {
          var url = new URL(e[2], root);
          if (e[2].split("/")[0] !== version && data.versions.indexOf(e[2].split("/")[0]) >= 0) url.searchParams.set("v", version);
          return "<li><a class=\"dsf-search__link\" href=\"" + url.href + "\"><code>" + escapeHtml(e[0]) + "</code></a>" +
            (e[3] ? "<small>" + escapeHtml(e[3]) + "</small>" : "") + "</li>";
        }).join("") + "</ol>";
      });
    }
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(show, 120); });
    document.addEventListener("click", function (event) {
      // Material's search overlay stays open on same-page links; close it like its own results do.
      if (event.target.closest && event.target.closest(".dsf-search__link")) {
        var toggle = document.querySelector("input[data-md-toggle=search]");
        if (toggle) toggle.checked = false;
      }
    });
  }

  // ------------------------------------------------------------ changes between two releases
  function comparePage(data) {
    var form = document.getElementById("dsf-compare");
    if (!form) return;
    var out = document.getElementById("dsf-compare-out");
    var from = document.getElementById("dsf-compare-from"), to = document.getElementById("dsf-compare-to");
    fetch(new URL("releases/changes.json", root)).then(function (r) { return r.json(); }).then(function (changes) {
      function draw() {
        var a = data.versions.indexOf(from.value), b = data.versions.indexOf(to.value);
        if (a > b) { var t = a; a = b; b = t; }
        var byPath = {}, order = [];
        data.versions.slice(a + 1, b + 1).forEach(function (v) {
          (changes[v] || []).forEach(function (c) {
            if (!byPath[c[1]]) { byPath[c[1]] = []; order.push(c[1]); }
            byPath[c[1]].push([v, c[0], c[2]]);
          });
        });
        order.sort();
        var rows = order.map(function (path) {
          return byPath[path].map(function (c, i) {
            return "<tr><td data-label=\"Key\">" + (i ? "" : "<code>" + escapeHtml(path || "top level").replace(/([._\/])/g, "$1<wbr>") + "</code>") +
              "</td><td data-label=\"Release\">" + c[0] + "</td><td data-label=\"Change\">" + escapeHtml(c[1]) +
              (c[2] ? " — " + escapeHtml(c[2]) : "") + "</td></tr>";
          }).join("");
        }).join("");
        out.innerHTML = "<p>" + order.length + " keys changed from " + data.versions[a] + " to " + data.versions[b] + ".</p>" +
          (rows ? "<table class=\"dsf-table\"><thead><tr><th>Key</th><th>Release</th><th>Change</th></tr></thead><tbody>" + rows + "</tbody></table>" : "");
      }
      from.addEventListener("change", draw);
      to.addEventListener("change", draw);
      draw();
    });
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
      count.textContent = input.value ? total + " keys" : "";
    }
    input.addEventListener("input", apply);
    apply();
  }

  languageLinks();
  addedSince();
  dataPromise.then(function (data) {
    selector(data);
    notice(data);
    searchHook(data);
    comparePage(data);
  });
})();
