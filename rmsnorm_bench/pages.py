"""What publish adds to asv's site: default views that keep machines apart, readable graphs,
known steps, and reports.

A library module of rmsnorm_bench.publish, not a tool: `python -m rmsnorm_bench.pages` says
so and exits with status 2 (publish writes these pages; its --help describes them).

asv's graph page starts from every machine and the first 8 values of the first parameter
(graphdisplay.js, `setup_benchmark_params`), on a linear axis: the CPU smoke mode's times
(up to a second a call) flatten a GPU's microseconds, and most of the first 8 cases are
smoke shapes the GPU never ran. It takes a selection from the page's hash instead
(`#BENCH?machine=M&p-case='C'&y-axis-scale=log`), so `views.js`, loaded by index.html,
rewrites the hash of a benchmark page that names no machine into the default view: every GPU
machine side by side (the H100 and the H200, once both have results), the cases they
measured on the most commits (8 at most), ours (backend triton) or, for a public ratio
(recorded under the peer it compares), torch's, on a log axis where those values span a
decade or more. A `view=...` parameter marks a hash as chosen (asv keeps parameters it does
not know), so choosing every machine by hand is left alone; the navigation bar links each
view of the benchmark shown.

views.js (its code: rmsnorm_bench/views.js) also wraps flot's $.plot, which draws every
graph of asv's: a series with no figure is left out; ours is drawn thick and marked, the
peers thin; the legend goes beside the plot, never over it; a log axis gets 1-2-5 ticks in
readable units over the data's range instead of whole decades; a ratio gets a line at 1.0.
It draws the front page's graphs with an axis, inside their frame, one line per GPU machine
(named below the graph); colours a rise in the benchmark list as an improvement for the
figures better when higher (`HIGHER_IS_BETTER`); shows the known steps (`split_known`,
docs/known-steps.json) on the Regressions page; and shows commits as text where no commit URL
is known (the placeholder `publish.NO_COMMIT_URL`).

The front page: asv draws one small graph per benchmark from graphs/summary/, the geometric
mean of every series of every machine, so CPU smoke times (milliseconds) and peers' figures
moved a GPU's line of ours by 50% and more between commits. `add_summaries` rewrites them as
the first machine's figures of ours (GPU machines first, as the default views; for a ratio
peer/ours, torch's over ours): the geometric mean, per commit, over the cases measured on the
most commits, at the commits that measured all of them (a subset leaves a gap, not a jump);
views.js draws each GPU machine's (`machine_summaries`) in place of it.

The benchmark list leaves out rows without a value (`drop_empty_rows`).

Reports: for each machine's newest commit, report/<machine>/<commit>/ holds the report of
`rmsnorm_bench.report` (tables, per-op pictures) as a page; report/index.html lists them,
with the commits each machine's graphs draw beside those with results (`graphed_commits`),
and the navigation bar links to it. The shape grid committed in docs/grid (written by
`rmsnorm_bench.grid`) is copied to report/grid/, and the index shows its summary and links
its heatmaps; a grid file that cannot be read is named in a warning and left out.
"""

import ast
import html
import itertools
import json
import math
import shutil
import sys
from pathlib import Path
from urllib.parse import quote
from xml.etree import ElementTree

from . import ROOT, asvfiles, gridfile, gridview, knownsteps, report
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


# figures better when higher, by their unit (benchmarks/bench_rmsnorm.py's `figure`): asv
# 0.6.6 knows a unit per benchmark but no direction, and colours every rise as a slowdown
HIGHER_IS_BETTER = ("GB/s", "peer/ours")
RATIO_UNIT = "peer/ours"  # a peer's time over ours: recorded under each peer, 1.0 is a tie


def backends_shown(bench: dict, runs: list) -> list[str]:
    """The backends a machine's view of one benchmark shows: ours, or for a ratio (recorded
    under the peer it compares) torch (the front page's, `RATIO_BACKEND`) where it has a
    figure, else every peer with one (a backend's button adds the others)."""
    if bench.get("unit") != RATIO_UNIT:
        return [OURS]
    names = bench.get("param_names") or []
    column = names.index("backend")
    found = {
        params[column]
        for run in runs
        for (name, params), _ in asvfiles.figures(run).items()
        if name == bench["name"] and params[column] != OURS
    }
    if RATIO_BACKEND in found:
        return [RATIO_BACKEND]
    listed = [json.loads(v.replace("'", '"')) for v in bench["params"][column]]
    return [b for b in listed if b in found]


def view_hash(machine: str | list[str], bench: dict, runs: list) -> str:
    """The query of `machine`'s view of one benchmark (index.json's entry `bench`; `runs`:
    the machine's): of several machines side by side where given a list (and their runs)."""
    name, names = bench["name"], bench.get("param_names") or []
    version = bench.get("version")
    chosen_machines = [machine] if isinstance(machine, str) else list(machine)
    machine = "+".join(chosen_machines)
    query = [("machine", m) for m in chosen_machines]
    values = []
    if "case" in names and "backend" in names:
        backends = backends_shown(bench, runs)
        counts = {}
        for run in runs:
            for (bench_name, params), value in asvfiles.figures(run).items():
                if version is not None and asvfiles.versions(run).get(name) != version:
                    continue  # asv shows figures of the current version only
                if bench_name == name and params[names.index("backend")] in backends:
                    case = params[names.index("case")]
                    counts[case] = counts.get(case, 0) + 1
                    values.append(value)
        listed = [json.loads(v.replace("'", '"')) for v in bench["params"][names.index("case")]]
        best = sorted(counts, key=lambda c: (-counts[c], listed.index(c) if c in listed else 0))
        chosen = set(best[:MAX_CURVES])
        query += [("p-case", repr(c)) for c in listed if c in chosen]
        query += [("p-backend", repr(b)) for b in backends]
    positive = [v for v in values if isinstance(v, (int, float)) and v > 0]
    if positive and max(positive) >= 10 * min(positive):
        query.append(("y-axis-scale", "log"))
    query.append(("view", machine))
    return "&".join(f"{encode(k)}={encode(v)}" for k, v in query)


def views(index: dict, runs: dict, summaries: dict | None = None, known=(), no_link=None):
    """The data of views.js: {"default": view, "machines": [views...], "benchmarks": {name:
    {view: query}}} (a view: a machine, or every GPU machine side by side, "A+B", the default
    where there are several), the benchmarks better when higher, the ratios, the front page's graph
    of each GPU machine, the known steps, and the commit URL that is no link (or None)}."""
    gpus = [m for m, r in runs.items() if r and is_gpu(r[-1]["params"])]
    both = "+".join(gpus) if len(gpus) > 1 else None  # every GPU machine, side by side
    keys = ([both] if both else []) + list(runs)
    out = {"default": keys[0] if keys else None, "machines": keys, "benchmarks": {}}
    for name, bench in index["benchmarks"].items():
        bench = {"name": name, **bench}
        queries = {m: view_hash(m, bench, r) for m, r in runs.items()}
        if both:
            together = [run for m in gpus for run in runs[m]]
            queries = {both: view_hash(gpus, bench, together), **queries}
        out["benchmarks"][name] = queries
    benchmarks = index["benchmarks"]
    out["ours"] = OURS
    out["higher_is_better"] = sorted(
        n for n, b in benchmarks.items() if b.get("unit") in HIGHER_IS_BETTER
    )
    out["ratio"] = sorted(n for n, b in benchmarks.items() if b.get("unit") == RATIO_UNIT)
    out["summaries"] = summaries or {}
    out["known"] = list(known)
    out["no_commit_url"] = no_link
    return out


SCRIPT = Path(__file__).with_name("views.js")  # views.js's code; the data is put before it


NAV_AFTER = '<li id="nav-li-regressions"><a href="#/regressions">Regressions</a></li>'
NAV = (
    '\n\t<li id="nav-li-reports"><a href="report/">Reports</a></li>'
    '\n\t<li id="nav-li-views" style="display: none"><p class="navbar-text"></p></li>'
)


class PageError(ValueError):
    pass


STYLE = """  <style>
    /* the front page's graphs: room for their axis and the machines' legend */
    .benchmark-container { height: 158px; }
    .benchmark-plot { height: 108px; }
    .rb-thumb-legend { font-size: 10px; height: 18px; overflow: hidden; }
    .rb-thumb-legend table { margin: 0 auto; }
    /* a commit shown without a link (no repository URL known) reads as text */
    a:not([href]) { color: inherit; }
  </style>
"""


def add_views(site: Path, runs: dict, known=(), no_link=None) -> None:
    """views.js beside asv's index.html, which loads it; the navigation links; the front
    page's graphs of each GPU machine (`machine_summaries`)."""
    index = json.loads((site / "index.json").read_text())
    data = views(index, runs, machine_summaries(site, index, runs), known, no_link)
    code = "// written by rmsnorm_bench.publish from rmsnorm_bench/views.js\nvar VIEWS = "
    (site / VIEWS_JS).write_text(code + json.dumps(data, indent=1) + ";\n" + SCRIPT.read_text())
    page = (site / "index.html").read_text()
    if NAV_AFTER not in page or "</head>" not in page:
        raise PageError(f"{site / 'index.html'}: not the page of asv 0.6.6 (no Regressions link)")
    page = page.replace(NAV_AFTER, NAV_AFTER + NAV, 1)
    script = f'  <script src="{VIEWS_JS}"></script>\n'
    page = page.replace("</head>", STYLE + script + "  </head>", 1)
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


def machine_summaries(site: Path, index: dict, runs: dict) -> dict:
    """{benchmark: {machine: [[revision, value]]}}: the front page's graph of each GPU
    machine (`summary_points`), drawn side by side in one small graph; the first machine's
    alone where none has a GPU."""
    gpus = [m for m, r in runs.items() if is_gpu(r[-1]["params"])] or list(runs)[:1]
    files = {m: graph_files(site, m) for m in gpus}
    out = {}
    for name, bench in index["benchmarks"].items():
        out[name] = {m: summary_points(bench, files[m].get(name, [])) for m in gpus}
    return out


def drop_empty_rows(site: Path) -> int:
    """The benchmark list (graphs/.../summary.json, one per set of machine facts) without
    the rows that have no value (a case or backend that machine never measured); returns how
    many were dropped."""
    dropped = 0
    for path in (site / "graphs").rglob("summary.json"):
        if "summary" in path.parent.parts[-1:]:
            continue
        rows = json.loads(path.read_text())
        if not isinstance(rows, list):
            continue
        kept = [r for r in rows if not isinstance(r, dict) or r.get("last_value") is not None]
        dropped += len(rows) - len(kept)
        path.write_text(json.dumps(kept))
    return dropped


def split_known(site: Path, steps: list[dict]) -> list[dict]:
    """Take the regressions asv found that a known step explains (docs/known-steps.json,
    `knownsteps.explain`) out of regressions.json and its feed; returns them, each
    {name, machine, commits, before, after, reason, link}, for the Regressions page."""
    path = site / "regressions.json"
    if not steps or not path.is_file():
        return []
    index = json.loads((site / "index.json").read_text())
    hashes = index["revision_to_hash"]
    data = json.loads(path.read_text())
    kept, known = [], []
    for entry in data.get("regressions", []):
        name, _, params, _, _, _, jumps = entry[:7]
        machine = params.get("machine", "")
        found = [
            knownsteps.explain(
                steps,
                name,
                hashes.get(str(a)) if a is not None else None,
                hashes.get(str(b), ""),
                machine,
            )
            for a, b, *_ in jumps
        ]
        if not jumps or not all(found):
            kept.append(entry)
            continue
        a, b, before, after = jumps[-1][:4]
        pair = f"{hashes[str(a)][:8]}..{hashes[str(b)][:8]}"
        bench = name.split("(", 1)[0]
        unit = index["benchmarks"].get(bench, {}).get("unit")
        span = f"{hashes[str(a)]}-{hashes[str(b)]}"
        query = [("machine", machine), ("view", machine), ("commits", span)]
        names = index["benchmarks"].get(bench, {}).get("param_names") or []
        values = ast.literal_eval(name[len(bench) :] or "()")
        values = values if isinstance(values, tuple) else (values,)
        query += [(f"p-{k}", repr(v)) for k, v in zip(names, values, strict=False)]
        link = encode(bench) + "?" + "&".join(f"{encode(k)}={encode(v)}" for k, v in query)
        known.append(
            {
                "name": name,
                "machine": machine,
                "commits": pair,
                "before": _pretty(before, unit),
                "after": _pretty(after, unit),
                "reason": knownsteps.describe(found[-1]),
                "link": link,
            }
        )
    data["regressions"] = kept
    path.write_text(json.dumps(data))
    _drop_feed_entries(site / "regressions.xml", {k["name"] for k in known})
    return known


def _pretty(value, unit) -> str:
    if not isinstance(value, (int, float)):
        return str(value)
    if unit == "seconds":
        return f"{value * 1e6:.1f} us"
    if unit == "bytes":
        return f"{value / 2**20:.2f} MiB"
    return f"{value:.3g} {unit or ''}".strip()


def _drop_feed_entries(feed: Path, names: set[str]) -> None:
    """The Atom feed without the entries of `names` (asv titles an entry "PERCENT NAME")."""
    if not feed.is_file() or not names:
        return
    ns = "http://www.w3.org/2005/Atom"
    ElementTree.register_namespace("", ns)
    tree = ElementTree.parse(feed)
    root = tree.getroot()
    for entry in root.findall(f"{{{ns}}}entry"):
        title = entry.findtext(f"{{{ns}}}title") or ""
        if title.split(" ", 1)[-1] in names:
            root.remove(entry)
    tree.write(feed, encoding="utf-8", xml_declaration=True)


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


def graphed_commits(site: Path, runs: dict) -> dict:
    """{machine: how many commits its graphs draw}: those with a figure in any of its graph
    files (asv leaves out figures of an older version of a benchmark and commits off the
    branches published, so this can be fewer than the commits with results)."""
    out = {}
    for machine in runs:
        revisions = set()
        for files in graph_files(site, machine).values():
            for path in files:
                for revision, values, *_ in json.loads(path.read_text()):
                    values = values if isinstance(values, list) else [values]
                    if any(isinstance(v, (int, float)) and v == v for v in values):
                        revisions.add(revision)
        out[machine] = len(revisions)
    return out


def commit_link(commit_url: str | None, sha: str) -> str:
    """A commit's short hash, linked to `commit_url` + hash where a URL is known."""
    if not commit_url:
        return f'<span title="{sha}">{sha[:8]}</span>'
    return f'<a href="{html.escape(commit_url + sha)}">{sha[:8]}</a>'


def add_reports(site: Path, runs: dict, commit_url: str | None, grid: Path = GRID) -> list[Path]:
    """report/<machine>/<commit>/ of each machine's newest commit, the shape grid, and
    report/index.html; returns the report folders."""
    folder, rows, written = site / "report", [], []
    graphed = graphed_commits(site, runs)
    for machine, machine_runs in runs.items():
        run = machine_runs[-1]
        sha = run["commit_hash"]
        out = folder / machine / sha[:8]
        link = commit_link(commit_url, sha)
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
            f"<td>{graphed.get(machine, 0)}</td><td>{len(machine_runs)}</td></tr>"
        )
    folder.mkdir(parents=True, exist_ok=True)
    grid_section = add_grid(folder, grid)
    (folder / "index.html").write_text(
        '<!doctype html>\n<html><head><meta charset="utf-8"><title>Reports</title>'
        "<style>body{font-family:sans-serif;margin:1.5em}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd}</style></head><body>\n"
        '<p><a href="../">dashboard</a></p><h1>Reports of each machine\'s newest commit</h1>\n'
        "<table><tr><th>machine</th><th></th><th>newest commit</th><th></th>"
        "<th>commits in its graphs</th><th>commits with results</th></tr>\n"
        + "\n".join(rows)
        + "\n</table>\n<p>A commit with results is missing from the graphs where each of its "
        "figures was measured by an older method of its benchmark, or it is off the branch "
        "published; its results stay in results/.</p>\n" + grid_section + "</body></html>\n"
    )
    return written


if __name__ == "__main__":
    print(
        "rmsnorm_bench.pages: a library module of rmsnorm_bench.publish, not a tool; the pages "
        "are written by python -m rmsnorm_bench.publish (--help)",
        file=sys.stderr,
    )
    sys.exit(2)
