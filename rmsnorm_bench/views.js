// What rmsnorm_bench/pages.py adds to asv's pages (views.js, after `var VIEWS = {...};`):
// default views per machine, readable graphs, front-page graphs per GPU machine, the
// benchmark list's colours for figures that are better when higher, known steps on the
// Regressions page, and no link where no commit URL is known. asv's own scripts are left
// as they are: this one wraps $.plot (flot), which every asv graph is drawn by.
(function () {
  "use strict";

  /* ---- the hash: a benchmark page that names no machine opens on the default view ---- */
  function split() {
    var h = window.location.hash.replace(/^#\/?/, "");
    var q = h.indexOf("?");
    return {name: decodeURIComponent(q < 0 ? h : h.slice(0, q)),
            query: q < 0 ? "" : h.slice(q + 1)};
  }
  function keys(query) {
    return query.split("&").map(function (p) { return decodeURIComponent(p.split("=")[0]); });
  }
  function apply() {
    var at = split(), views = VIEWS.benchmarks[at.name];
    if (!views || !VIEWS["default"]) return;
    var k = keys(at.query);
    if (k.indexOf("machine") >= 0 || k.indexOf("view") >= 0) return;
    var hash = "#" + encodeURIComponent(at.name) + "?" +
      (at.query ? at.query + "&" : "") + views[VIEWS["default"]];
    history.replaceState(null, "", hash);
  }
  function links() {
    var li = document.getElementById("nav-li-views");
    if (!li) return;
    var at = split(), views = VIEWS.benchmarks[at.name];
    li.style.display = views ? "" : "none";
    if (!views) return;
    var p = li.querySelector("p");
    p.textContent = "view: ";
    VIEWS.machines.forEach(function (m, i) {
      var a = document.createElement("a");
      a.className = "navbar-link";
      a.href = "#" + encodeURIComponent(at.name) + "?" + views[m];
      a.textContent = m;
      if (i) p.appendChild(document.createTextNode(" | "));
      p.appendChild(a);
    });
  }

  /* ---- the benchmark shown, its unit and direction ---- */
  function current() { return split().name; }
  function unitOf(name) {
    var b = window.$ && $.asv && $.asv.main_json && $.asv.main_json.benchmarks[name];
    return b ? b.unit : "";
  }
  function higherIsBetter(name) { return VIEWS.higher_is_better.indexOf(name) >= 0; }

  /* ---- commit links where no URL is known: plain text, never a link to nowhere ---- */
  function unlink(root) {
    if (!VIEWS.no_commit_url || !root.querySelectorAll) return;
    var found = root.querySelectorAll('a[href^="' + VIEWS.no_commit_url + '"]');
    Array.prototype.forEach.call(found, function (a) {
      a.removeAttribute("href");
      a.title = "commit " + a.textContent + " (no repository URL was set when publishing)";
    });
  }
  if (VIEWS.no_commit_url) {
    var open = window.open;
    window.open = function (url) {
      if (typeof url === "string" && url.indexOf(VIEWS.no_commit_url) === 0) return null;
      return open.apply(window, arguments);
    };
  }

  /* ---- axis ticks a reader can read values from ---- */
  function niceTicks(lo, hi) {
    // 1-2-5 steps of each decade between lo and hi (1-3 where they span many decades)
    var steps = Math.log(hi / lo) / Math.LN10 > 3 ? [1, 3] : [1, 2, 5];
    var ticks = [];
    for (var e = Math.floor(Math.log(lo) / Math.LN10); e <= Math.ceil(Math.log(hi) / Math.LN10); ++e) {
      steps.forEach(function (s) {
        var v = s * Math.pow(10, e);
        if (v >= lo && v <= hi) ticks.push(v);
      });
    }
    if (ticks.length < 2) ticks = [lo, Math.sqrt(lo * hi), hi];
    return ticks;
  }
  function short(v, unit) {
    if (!(v > 0 || v < 0)) return "0";
    // seconds and bytes scaled (us, MiB...); other units are on the axis's label
    var text = unit === "seconds" || unit === "bytes" ? $.asv.pretty_unit(v, unit) : "" + v.toPrecision(3);
    return text.replace(/(\.\d*?)0+(?=\D|$)/, "$1").replace(/\.(?=\D|$)/, "");
  }
  function extent(series) {
    var lo = Infinity, hi = -Infinity;
    series.forEach(function (s) {
      (s.data || []).forEach(function (p) {
        var y = p[1];
        if (y !== null && y === y && isFinite(y)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
      });
    });
    return [lo, hi];
  }
  function hasData(s) {
    return (s.data || []).some(function (p) { return p[1] !== null && p[1] === p[1]; });
  }

  /* ---- the main graph: ours apart from the peers, a legend beside the plot ---- */
  // twelve colours told apart (asv's list repeats within a graph of 8 cases)
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#ad494a"];
  var OURS = new RegExp("(^|; )backend-" + VIEWS.ours + "(;|$)");
  function legendBox() {
    var box = document.getElementById("rb-legend");
    if (box) return box;
    var graph = document.getElementById("main-graph");
    if (!graph) return null;
    box = document.createElement("div");
    box.id = "rb-legend";
    box.style.cssText = "position:absolute;top:48px;right:0;width:270px;bottom:100px;" +
      "overflow-y:auto;font-size:12px";
    graph.parentNode.style.right = "280px";
    graph.parentNode.parentNode.appendChild(box);
    return box;
  }
  function mainGraph(series, options) {
    var name = current(), unit = unitOf(name);
    // a backend with no figure is no entry of the legend; asv draws the same objects again
    // on every change of the view, so they are copied, not changed
    series = series.filter(hasData).map(function (s) {
      var label = (s.label || "").replace(/(^|; )commit-last(?=;|$)/, "");
      if (/(^|; )machine-/.test(label)) label = label.replace(/(^|; )gpu-[^;]*(?=;|$)/, "");
      label = label.replace(/^; /, "");
      var ours = OURS.test(label);
      return $.extend({}, s, {
        label: ours ? label + " (ours)" : label,
        lines: {show: true, lineWidth: ours ? 2.5 : 1},
        points: {show: true, radius: ours ? 3 : 1.5}
      });
    });
    options.colors = PALETTE;
    // ours drawn last, over the peers
    series.sort(function (a, b) { return /\(ours\)$/.test(a.label) - /\(ours\)$/.test(b.label); });
    var box = legendBox();
    if (box) {
      box.innerHTML = "";
      if (options.legend && options.legend.show !== false) {
        options.legend.container = $(box);
        options.legend.noColumns = 1;
      }
    }
    var range = extent(series), y = options.yaxis || (options.yaxis = {});
    if (isFinite(range[0]) && typeof y.transform === "function" && range[0] > 0) {
      // asv's log axis has a tick per decade; ticks a value can be read from, and the
      // range of the data rather than whole decades
      var lo = range[0] / 1.15, hi = range[1] * 1.15;
      y.min = lo; y.max = hi;
      y.ticks = niceTicks(lo, hi);
      y.tickFormatter = function (v) { return short(v, unit); };
    } else if (isFinite(range[0]) && !y.transform) {
      y.tickFormatter = function (v) { return short(v, unit); };
    }
    if (VIEWS.ratio.indexOf(name) >= 0 && isFinite(range[0])) {
      // peer over ours: 1.0 is the line between ahead and behind
      var grid = options.grid || (options.grid = {});
      grid.markings = (grid.markings || []).concat([
        {yaxis: {from: 1, to: 1}, color: "#000", lineWidth: 2}]);
      if (!y.transform) {
        var low = Math.min(range[0], 1), high = Math.max(range[1], 1), pad = (high - low) * 0.08 || 0.1;
        y.min = low - pad; y.max = high + pad;
      }
    }
    return series;
  }

  /* ---- the front page: each GPU machine's graph, with axes, inside the frame ---- */
  function thumbnail(name, series, options) {
    var per = VIEWS.summaries[name] || {};
    var machines = Object.keys(per).filter(function (m) { return per[m].length; });
    if (machines.length) {
      series = machines.map(function (m) { return {data: per[m], label: m}; });
    }
    var unit = unitOf(name);
    options.grid = $.extend(options.grid || {}, {borderWidth: 1, margin: {top: 4, right: 6, bottom: 2, left: 2}, labelMargin: 3, minBorderMargin: 4});
    options.yaxis = {ticks: 3, tickFormatter: function (v) { return short(v, unit); },
                     font: {size: 9, color: "#555"}};
    var r = extent(series);
    if (isFinite(r[0])) {
      var pad = (r[1] - r[0]) * 0.1 || r[0] * 0.05 || 1;
      options.yaxis.min = Math.max(0, r[0] - pad); options.yaxis.max = r[1] + pad;
    }
    if (VIEWS.ratio.indexOf(name) >= 0 && isFinite(r[0])) {  // 1.0: ours and the peer alike
      options.yaxis.min = Math.min(options.yaxis.min, 0.9);
      options.yaxis.max = Math.max(options.yaxis.max, 1.1);
      options.grid.markings = [{yaxis: {from: 1, to: 1}, color: "#333", lineWidth: 1}];
    }
    options.xaxis = {ticks: []};
    options.legend = {show: machines.length > 0, noColumns: machines.length || 1};
    return series;
  }
  function thumbnailLegend(div) {
    var box = div.parentNode && div.parentNode.querySelector(".rb-thumb-legend");
    if (!box && div.parentNode) {
      box = document.createElement("div");
      box.className = "rb-thumb-legend";
      div.parentNode.appendChild(box);
    }
    return box;
  }

  function wrapPlot() {
    if (!window.$ || !$.plot || $.plot.rbWrapped) return;
    var plot = $.plot;
    var wrapped = function (placeholder, series, options) {
      var el = $(placeholder)[0], id = (el && el.id) || "";
      options = $.extend(true, {}, options || {});
      if (id === "main-graph") {
        series = mainGraph(series, options);
      } else if (id.indexOf("summarygrid-") === 0) {
        var name = id.slice("summarygrid-".length);
        series = thumbnail(name, series, options);
        var box = thumbnailLegend(el);
        if (box) { box.innerHTML = ""; options.legend.container = $(box); }
      }
      return plot(placeholder, series, options);
    };
    $.extend(wrapped, plot);
    wrapped.rbWrapped = true;
    $.plot = wrapped;
  }

  /* ---- the benchmark list: a rise of a figure better when higher is no regression ---- */
  function recolour(root) {
    if (!root.querySelectorAll) return;
    var cells = root.querySelectorAll("td.change.positive-change, td.change.negative-change");
    Array.prototype.forEach.call(cells, function (td) {
      if (td.getAttribute("data-rb-direction")) return;
      var a = td.parentNode && td.parentNode.querySelector("td a");
      var name = a ? decodeURIComponent((a.getAttribute("href") || "").replace(/^#/, "").split("?")[0]) : "";
      td.setAttribute("data-rb-direction", higherIsBetter(name) ? "higher" : "lower");
      if (!higherIsBetter(name)) return;
      var up = td.classList.contains("positive-change");
      td.classList.toggle("positive-change", !up);
      td.classList.toggle("negative-change", up);
      td.title = "higher is better for this figure";
    });
  }

  /* ---- the Regressions page: steps explained in docs/known-steps.json ---- */
  function known() {
    var body = document.getElementById("regressions-body");
    if (!body || !VIEWS.known.length || document.getElementById("rb-known")) return;
    if (!body.querySelector("table")) return;  // asv has not drawn its list yet
    var section = document.createElement("div");
    section.id = "rb-known";
    var h = document.createElement("h2");
    h.textContent = "Known, explained steps (" + VIEWS.known.length + ", docs/known-steps.json): not regressions";
    section.appendChild(h);
    var table = document.createElement("table");
    table.className = "table table-hover";
    table.innerHTML = "<thead><tr><th>benchmark</th><th>machine</th><th>commits</th>" +
      "<th>before</th><th>after</th><th>reason</th></tr></thead>";
    var tbody = document.createElement("tbody");
    VIEWS.known.forEach(function (k) {
      var tr = document.createElement("tr");
      var cells = [k.name, k.machine, k.commits, k.before, k.after, k.reason];
      cells.forEach(function (text, i) {
        var td = document.createElement("td");
        if (i === 0) {
          var a = document.createElement("a");
          a.href = "#" + k.link;
          a.textContent = text;
          td.appendChild(a);
        } else {
          td.textContent = text;
        }
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    section.appendChild(table);
    body.appendChild(section);
  }

  function watch() {
    unlink(document);
    recolour(document);
    known();
    new MutationObserver(function (changes) {
      changes.forEach(function (c) {
        Array.prototype.forEach.call(c.addedNodes, function (n) { unlink(n); recolour(n); });
      });
      known();
    }).observe(document.body, {childList: true, subtree: true});
  }

  wrapPlot();
  apply();
  window.addEventListener("hashchange", function () { apply(); links(); });
  document.addEventListener("DOMContentLoaded", function () { wrapPlot(); links(); watch(); });
})();
