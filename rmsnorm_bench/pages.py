"""What publish adds to asv's site: default views that keep machines apart, and reports.

A library module of rmsnorm_bench.publish, not a tool: `python -m rmsnorm_bench.pages` says
so and exits with status 2 (publish writes these pages; its --help describes them).

asv's graph page starts from every machine and the first 8 values of the first parameter
(graphdisplay.js, `setup_benchmark_params`), on a linear axis: the CPU smoke mode's times
(up to a second a call) flatten a GPU's microseconds, and most of the first 8 cases are
smoke shapes the GPU never ran. It takes a selection from the page's hash instead
(`#BENCH?machine=M&p-case='C'&y-axis-scale=log`), so `views.js`, loaded by index.html,
rewrites the hash of a benchmark page that names no machine into the view of the first GPU
machine: the cases it measured on the most commits (8 at most), ours (backend triton), on
a log axis where those values span a decade or more. A `view=MACHINE` parameter marks a
hash as chosen (asv keeps parameters it does not know), so choosing every machine by hand
is left alone; the navigation bar links each machine's view of the benchmark shown.

The front page: asv draws one small graph per benchmark from graphs/summary/, the geometric
mean of every series of every machine, so CPU smoke times (milliseconds) and peers' figures
moved a GPU's line of ours by 50% and more between commits. `add_summaries` rewrites them as
the first machine's figures of ours (GPU machines first, as the default views; for a ratio
peer/ours, torch's over ours): the geometric mean, per commit, over the cases measured on the
most commits, at the commits that measured all of them (a subset leaves a gap, not a jump).

Reports: for each machine's newest commit, report/<machine>/<commit>/ holds the report of
`rmsnorm_bench.report` (tables, per-op pictures) as a page; report/index.html lists them
and the navigation bar links to it. The shape grid committed in docs/grid (written by
`rmsnorm_bench.grid`) is copied to report/grid/, and the index shows its summary and links
its heatmaps; a grid file that cannot be read is named in a warning and left out.
"""

import html
import itertools
import json
import math
import shutil
import sys
from pathlib import Path
from urllib.parse import quote

from . import ROOT, asvfiles, gridfile, gridview, report
from .regressions import OURS

GRID = ROOT / "docs" / "grid" / "grid.json"  # the committed shape grid, with its heatmaps

MAX_CURVES = 8  # asv's own default number of lines
VIEWS_JS = "views.js"


def is_gpu(params: dict) -> bool:
    return str(params.get("gpu", "none")).lower() not in ("", "none", "null")


def machines(results: Path) -> dict:
    """{machine: its runs, oldest first}, GPU machines first (each group by name)."""
    runs = {f.name: asvfiles.load_runs(f) for f in sorted(results.glob("*/"))}
    runs = {m: r for m, r in runs.items() if r}
    return dict(sorted(runs.items(), key=lambda mr: (not is_gpu(mr[1][-1]["params"]), mr[0])))


def encode(value: str) -> str:
    """As JavaScript's encodeURIComponent, which asv's hash parser undoes."""
    return quote(value, safe="-_.!~*'()")


def view_hash(machine: str, bench: dict, runs: list) -> str:
    """The query of `machine`'s view of one benchmark (index.json's entry `bench`)."""
    name, names = bench["name"], bench.get("param_names") or []
    version = bench.get("version")
    query = [("machine", machine)]
    values = []
    if "case" in names and "backend" in names:
        counts = {}
        for run in runs:
            for (bench_name, params), value in asvfiles.figures(run).items():
                if version is not None and asvfiles.versions(run).get(name) != version:
                    continue  # asv shows figures of the current version only
                if bench_name == name and params[names.index("backend")] == "triton":
                    case = params[names.index("case")]
                    counts[case] = counts.get(case, 0) + 1
                    values.append(value)
        listed = [json.loads(v.replace("'", '"')) for v in bench["params"][names.index("case")]]
        best = sorted(counts, key=lambda c: (-counts[c], listed.index(c) if c in listed else 0))
        chosen = set(best[:MAX_CURVES])
        query += [("p-case", repr(c)) for c in listed if c in chosen]
        query += [("p-backend", "'triton'")]
    positive = [v for v in values if isinstance(v, (int, float)) and v > 0]
    if positive and max(positive) >= 10 * min(positive):
        query.append(("y-axis-scale", "log"))
    query.append(("view", machine))
    return "&".join(f"{encode(k)}={encode(v)}" for k, v in query)


def views(index: dict, runs: dict) -> dict:
    """{"default": machine, "machines": [...], "benchmarks": {name: {machine: query}}}."""
    out = {"default": next(iter(runs), None), "machines": list(runs), "benchmarks": {}}
    for name, bench in index["benchmarks"].items():
        bench = {"name": name, **bench}
        out["benchmarks"][name] = {m: view_hash(m, bench, r) for m, r in runs.items()}
    return out


SCRIPT = """// written by rmsnorm_bench.publish (rmsnorm_bench/pages.py): default views per machine
(function () {
  var VIEWS = %s;
  function split() {
    var h = window.location.hash.replace(/^#\\/?/, "");
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
  apply();
  window.addEventListener("hashchange", function () { apply(); links(); });
  document.addEventListener("DOMContentLoaded", links);
})();
"""

NAV_AFTER = '<li id="nav-li-regressions"><a href="#/regressions">Regressions</a></li>'
NAV = (
    '\n\t<li id="nav-li-reports"><a href="report/">Reports</a></li>'
    '\n\t<li id="nav-li-views" style="display: none"><p class="navbar-text"></p></li>'
)


class PageError(ValueError):
    pass


def add_views(site: Path, runs: dict) -> None:
    """views.js beside asv's index.html, which loads it; the navigation links."""
    index = json.loads((site / "index.json").read_text())
    (site / VIEWS_JS).write_text(SCRIPT % json.dumps(views(index, runs), indent=1))
    page = (site / "index.html").read_text()
    if NAV_AFTER not in page or "</head>" not in page:
        raise PageError(f"{site / 'index.html'}: not the page of asv 0.6.6 (no Regressions link)")
    page = page.replace(NAV_AFTER, NAV_AFTER + NAV, 1)
    page = page.replace("</head>", f'  <script src="{VIEWS_JS}"></script>\n  </head>', 1)
    (site / "index.html").write_text(page)


RATIO_BACKEND = "torch"  # a ratio benchmark's (unit peer/ours) series on the front page


def summary_points(bench: dict, graph_files: list[Path]) -> list:
    """[[revision, value]] of one benchmark's front-page graph (see the module's doc) from its
    graph files of one machine (asv's [[revision, [value per parameter set]]])."""
    names, params = bench.get("param_names") or [], bench.get("params") or []
    if "backend" not in names:
        return []
    backend = RATIO_BACKEND if bench.get("unit") == "peer/ours" else OURS
    column = names.index("backend")
    combos = list(itertools.product(*params))
    ours = [i for i, combo in enumerate(combos) if combo[column] == repr(backend)]
    by_revision = {}  # {revision: {parameter set: value}}
    for path in graph_files:
        for revision, values, *_ in json.loads(path.read_text()):
            if not isinstance(values, list):
                continue
            row = by_revision.setdefault(revision, {})
            for i in ours:
                if i < len(values) and isinstance(values[i], (int, float)) and values[i] > 0:
                    row[i] = values[i]
    counts = {i: sum(i in row for row in by_revision.values()) for i in ours}
    most = max(counts.values(), default=0)
    cases = [i for i, n in counts.items() if n == most and n]
    points = [
        [revision, math.exp(sum(math.log(row[i]) for i in cases) / len(cases))]
        for revision, row in sorted(by_revision.items())
        if cases and all(i in row for i in cases)
    ]
    from asv.graph import resample_data  # as asv thins its own summaries

    return [list(point) for point in resample_data(points)]


def add_summaries(site: Path, runs: dict) -> None:
    """Rewrite graphs/summary/*.json from the first machine's figures of ours (GPU machines
    first: the front page's graphs; see the module's doc). Without a machine, asv's are
    left."""
    machine = next(iter(runs), None)
    summary = site / "graphs" / "summary"
    if machine is None or not summary.is_dir():
        return
    index = json.loads((site / "index.json").read_text())
    files = graph_files(site, machine)
    for name, bench in index["benchmarks"].items():
        points = summary_points(bench, files.get(name, []))
        (summary / f"{name}.json").write_text(json.dumps(points))


def graph_files(site: Path, machine: str) -> dict:
    """{benchmark: its graph files of `machine`} of a published site (one per set of the
    machine's facts, every branch)."""
    files = {}
    for path in sorted((site / "graphs").rglob("*.json")):
        if "summary" not in path.parts and f"machine-{machine}" in path.parts:
            files.setdefault(path.stem, []).append(path)
    return files


def add_grid(folder: Path, grid: Path = GRID) -> str:
    """The grid file and its heatmaps copied into folder/grid/; the index's section on it
    ("" where there is no grid file; a warning on stderr, and nothing copied, where it
    cannot be read or lacks what the section shows)."""
    if not grid.exists():
        return ""
    try:
        data = gridfile.load(grid)
    except gridfile.BadGridFile as e:
        print(f"publish: warning: the shape grid is left out: {e}", file=sys.stderr)
        return ""
    title, summary = gridview.where(data), gridview.summary(data)
    names = [f"{op}_{phase}" for op in data["grid"]["ops"] for phase in data["grid"]["phases"]]
    pngs = [grid.parent / f"{name}.png" for name in names if "/" not in name]
    out = folder / "grid"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(grid, out / "grid.json")
    links = []
    for png in (p for p in pngs if p.is_file()):
        shutil.copy2(png, out / png.name)
        label = html.escape(png.stem.replace("_", " "))
        links.append(f'<a href="grid/{html.escape(quote(png.name))}">{label}</a>')
    return (
        f"<h1>Shape grid ({html.escape(title)})</h1>\n"
        f"<pre>{html.escape(summary)}</pre>\n"
        f"<p>Heatmaps, the best peer over ours (above 1: ours ahead): "
        f"{' | '.join(links) or 'none'}; "
        '<a href="grid/grid.json">grid.json</a></p>\n'
    )


def add_reports(site: Path, runs: dict, commit_url: str, grid: Path = GRID) -> list[Path]:
    """report/<machine>/<commit>/ of each machine's newest commit, the shape grid, and
    report/index.html; returns the report folders."""
    folder, rows, written = site / "report", [], []
    for machine, machine_runs in runs.items():
        run = machine_runs[-1]
        sha = run["commit_hash"]
        out = folder / machine / sha[:8]
        link = f'<a href="{html.escape(commit_url + sha)}">{sha[:8]}</a>'
        nav = '<a href="../../../">dashboard</a> | <a href="../../">reports</a>'
        intro = f"<p>{nav} | commit {link}</p>"
        report.write(run, out, page=True, intro=intro)
        written.append(out)
        kind = (
            f"GPU: {html.escape(str(run['params'].get('gpu')))}"
            if is_gpu(run["params"])
            else "no GPU"
        )
        rows.append(
            f"<tr><td>{html.escape(machine)}</td><td>{kind}</td><td>{link}</td>"
            f'<td><a href="{html.escape(machine)}/{sha[:8]}/">report</a></td>'
            f"<td>{len(machine_runs)}</td></tr>"
        )
    folder.mkdir(parents=True, exist_ok=True)
    grid_section = add_grid(folder, grid)
    (folder / "index.html").write_text(
        '<!doctype html>\n<html><head><meta charset="utf-8"><title>Reports</title>'
        "<style>body{font-family:sans-serif;margin:1.5em}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd}</style></head><body>\n"
        '<p><a href="../">dashboard</a></p><h1>Reports of each machine\'s newest commit</h1>\n'
        "<table><tr><th>machine</th><th></th><th>commit</th><th></th><th>commits</th></tr>\n"
        + "\n".join(rows)
        + "\n</table>\n"
        + grid_section
        + "</body></html>\n"
    )
    return written


if __name__ == "__main__":
    print(
        "rmsnorm_bench.pages: a library module of rmsnorm_bench.publish, not a tool; the pages "
        "are written by python -m rmsnorm_bench.publish (--help)",
        file=sys.stderr,
    )
    sys.exit(2)
