"""Load a published dashboard in headless Chromium with the network cut off, and check it.

usage: python -m rmsnorm_bench.dashboard HTML_DIR [--commit SHA] [--machines N] [--min-commits N]
                                        [--gpu-history [MACHINE=]N] [--commit-url URL]
                                        [--screenshots DIR] [--results DIR]

Serves HTML_DIR on 127.0.0.1, sends every other request to a dead proxy, and checks that the
page lists the benchmarks, draws a history graph (flot's canvas) whose data holds the commit
(default: HEAD) and at least --min-commits commits, and offers the machine selection with at
least --machines machines; that a benchmark opens on GPU machines only (no machine without a
GPU selected), that each suite's device-time graph of each GPU machine holds at least
--gpu-history commits (its longest series: a machine's facts that changed start a new one;
MACHINE=N for one machine, repeatable, N alone for the others),
that index.json has a show_commit_url (--commit-url: that one) and the benchmark list or the
reports link a published commit with it, a hash this repository resolves to a commit, and
that every machine's report page (report/) loads with its pictures, and that each machine's
newest commit with results under --results (default results/: what report and regressions
take as the newest) is published. Exits non-zero, saying what is missing (status 2 where
HTML_DIR is no published dashboard: missing, a file, no readable index.json; or where a
results file is unusable, read by the rule every tool reads them by).

It also checks that each suite's public-ratio graph opens with data (a legend of the
peers), and that every link of the front page, a graph, the benchmark list, the Regressions
page and report/ that stays on the dashboard resolves (links out of it are not fetched: the
network is cut), none to the placeholder of no commit URL or to the old placeholder host.
Where publish knew no commit URL, commits are shown without links, and that passes.

--screenshots DIR also saves what Chromium drew at 1400x1000: the front page (front.png),
the device-time graph of the fused-add backward (graph.png), its public ratio (ratio.png),
the Regressions page (regressions.png) and the first GPU machine's report (report.png)
(README's pictures: docs/dashboard/).
"""

import functools
import html
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from pathlib import Path

from . import ROOT, argument_parser, asvfiles, folder_problem
from .publish import LEGACY_PLACEHOLDER, NO_COMMIT_URL

BENCH = "bench_rmsnorm.RMSNormBackward.track_time"
SUITES = ("RMSNormForward", "RMSNormBackward", "FusedAddRMSNormForward", "FusedAddRMSNormBackward")
SHOWN = "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time"  # graph.png
RATIO = "bench_rmsnorm.FusedAddRMSNormBackward.track_public_ratio"  # ratio.png


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory: Path):
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def chromium_run(chromium: str, url: str, *action: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}",
            # the network is off: anything not on 127.0.0.1 goes to a port nobody listens on
            "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
            "--virtual-time-budget=20000", *action, url,
        ]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode:
        sys.exit(f"dashboard: chromium failed on {url}: {out.stderr[-2000:]}")
    return out


def dump_dom(chromium: str, url: str) -> str:
    return chromium_run(chromium, url, "--dump-dom").stdout


def screenshot(chromium: str, url: str, path: Path) -> None:
    chromium_run(chromium, url, "--window-size=1400,1000", f"--screenshot={path}")
    if not path.is_file() or path.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"dashboard: chromium drew no picture of {url}")


def gpu_history(html_dir: Path, machines: list[str]) -> dict:
    """{(machine, suite): commits in the longest series of its device-time graph}."""
    out = {}
    for machine in machines:
        for suite in SUITES:
            name = f"bench_rmsnorm.{suite}.track_device_time.json"
            series = [
                g
                for g in (html_dir / "graphs").rglob(name)
                if f"machine-{machine}" in g.parts and "summary" not in g.parts
            ]
            out[machine, suite] = max(
                (
                    sum(1 for _, values in json.loads(g.read_text()) if _has_value(values))
                    for g in series
                ),
                default=0,
            )
    return out


def history_wanted(values: list[str]) -> dict:
    """--gpu-history's values, N or MACHINE=N, as {machine or None (every other): N}."""
    wanted = {}
    for value in values:
        machine, _, count = value.rpartition("=")
        if not count.isdigit() or (machine == "" and "=" in value):
            raise ValueError(f"{value!r} is neither N nor MACHINE=N (N a whole number)")
        if (machine or None) in wanted:
            raise ValueError(f"{machine or 'N'} given twice")
        wanted[machine or None] = int(count)
    return wanted


def _has_value(values) -> bool:
    values = values if isinstance(values, list) else [values]
    return any(isinstance(v, (int, float)) and v == v for v in values)


def is_commit(sha: str) -> bool:
    cmd = ["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"]
    return subprocess.run(cmd, capture_output=True).returncode == 0


BUTTON = re.compile(r'<a class="btn btn-default btn-xs( active)?" role="button"[^>]*>([^<]*)</a>')


def selected_machines(graph: str, machines: list[str]) -> list[str]:
    """The machines whose button is active on a graph page's DOM."""
    return [m for active, m in BUTTON.findall(graph) if active and m in machines]


def check_reports(chromium: str, base: str, index: dict) -> tuple[list[str], str]:
    """Every machine's newest report is listed on report/, and its page shows its pictures,
    each of which the server gives as a PNG; returns the problems and report/'s DOM."""
    problems = []
    listing = dump_dom(chromium, base + "report/")
    pages = re.findall(r'href="([^"/]+/[0-9a-f]{8}/)"', listing)
    if len(pages) < len(index["params"].get("machine", [])):
        problems.append(f"report/ lists {len(pages)} report(s); want one per machine")
    for page in pages:
        dom = dump_dom(chromium, base + "report/" + page)
        images = re.findall(r'<img src="([^"]+)"', dom)
        if "<table>" not in dom or not images:
            problems.append(f"report/{page} shows no table or no picture")
        for image in images:
            with urllib.request.urlopen(base + "report/" + page + image, timeout=30) as r:
                if r.read()[:8] != b"\x89PNG\r\n\x1a\n":
                    problems.append(f"report/{page}{image} is not a PNG")
    return problems, listing


HREF = re.compile(r'<a\b[^>]*?\bhref="([^"]*)"')


def check_links(base: str, pages: dict, no_link: str) -> tuple[list[str], int]:
    """Every link of the pages ({page's URL: its DOM}) that stays on the dashboard is
    fetched (a path) or names a benchmark, a machine's report or one of asv's pages (a
    hash); a link to the placeholder of no commit URL, to the placeholder host publish once
    wrote, or an empty one, is a problem. Returns the problems and how many links were
    checked; links out of the dashboard (commit pages, asv's home) are not fetched."""
    problems, checked, seen, fetched = [], 0, set(), set()
    for page, dom in pages.items():
        for href in HREF.findall(dom):
            href = html.unescape(href)
            if (page, href) in seen:
                continue
            seen.add((page, href))
            if no_link and href.startswith(no_link):
                problems.append(f"{page}: a link to nowhere ({href[:40]})")
                continue
            target = urllib.parse.urljoin(page, href)
            if href.startswith(LEGACY_PLACEHOLDER) or href in ("", "#"):
                problems.append(f"{page}: a dead link {href!r}")
                continue
            if not target.startswith(base):
                continue  # outside the dashboard: not fetched with the network cut
            checked += 1
            path = urllib.parse.urlsplit(target)._replace(fragment="", query="").geturl()
            if path in fetched:
                continue
            fetched.add(path)
            try:
                with urllib.request.urlopen(path, timeout=30) as r:
                    r.read(1)
            except OSError as e:
                problems.append(f"{page}: link {href[:80]!r} does not resolve ({e})")
    return problems, checked


def read_index(ap, html_dir: Path) -> dict:
    """The dashboard's index.json; a HTML_DIR that is no published dashboard (missing, a
    file, no readable index.json of asv's) exits with status 2, saying which."""
    if not html_dir.is_dir():
        what = "is not a folder" if html_dir.exists() else "does not exist"
        ap.exit(2, f"dashboard: {html_dir} {what}: give the folder of a published dashboard\n")
    try:
        index = asvfiles.read_json(html_dir / "index.json")
    except asvfiles.BadFile as e:
        ap.exit(2, f"dashboard: {e}: {html_dir} is not a published dashboard\n")
    keys = ("revision_to_hash", "params", "machines")
    if not isinstance(index, dict) or not all(isinstance(index.get(k), dict) for k in keys):
        ap.exit(2, f"dashboard: {html_dir / 'index.json'}: not the index of asv's dashboard\n")
    return index


def read_newest(ap, results: Path) -> dict:
    """{machine: its newest commit with results} under `results`, read as every tool reads
    them (asvfiles.load_runs): a bad file exits with status 2, naming it."""
    if not results.is_dir():
        ap.exit(2, f"dashboard: --results {results} is not a folder of results\n")
    try:
        runs = {f.name: asvfiles.load_runs(f) for f in sorted(results.glob("*/"))}
    except asvfiles.BadFile as e:
        ap.exit(2, f"dashboard: {e}\n")
    return {machine: r[-1]["commit_hash"] for machine, r in runs.items() if r}


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("html_dir", type=Path, help="a published dashboard")
    ap.add_argument("--commit", help="a commit that must be shown (default: HEAD)")
    ap.add_argument("--machines", type=int, default=1, help="machines it must offer (1)")
    ap.add_argument("--min-commits", type=int, default=1, help="commits it must plot (1)")
    ap.add_argument(
        "--gpu-history", action="append", default=[], metavar="[MACHINE=]N",
        help="device-time commits of every GPU machine, or of MACHINE (repeatable)",
    )  # fmt: skip
    ap.add_argument("--commit-url", help="the commit links it must have (URL + hash)")
    ap.add_argument("--screenshots", type=Path, help="save the pictures here too")
    ap.add_argument("--results", type=Path, default=ROOT / "results", help="what was published")
    args = ap.parse_args(argv)
    try:
        history = history_wanted(args.gpu_history)
    except ValueError as e:
        ap.exit(2, f"dashboard: --gpu-history: {e}\n")
    # found before the browser runs, not after it
    if args.screenshots and (problem := folder_problem(args.screenshots, "--screenshots")):
        ap.exit(2, f"dashboard: {problem}\n")
    index = read_index(ap, args.html_dir)
    newest = read_newest(ap, args.results)
    head = ["git", "-C", str(ROOT), "rev-parse", "HEAD"]
    commit = args.commit or subprocess.check_output(head, text=True).strip()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("dashboard: chromium is not installed (Debian: apt-get install chromium)")
    problems = []

    revisions = {h: r for r, h in index["revision_to_hash"].items()}
    commit = next((h for h in revisions if h.startswith(commit)), commit)  # a prefix will do
    if commit not in revisions:
        problems.append(f"commit {commit[:8]} is not in the published index")
    machines = index["params"].get("machine", [])
    if len(machines) < args.machines:
        problems.append(f"{len(machines)} machine(s) published ({machines}); want {args.machines}")
    graphs = list((args.html_dir / "graphs").rglob(f"{BENCH}.json"))
    points = {int(p[0]) for g in graphs for p in json.loads(g.read_text())}
    if revisions.get(commit) is not None and int(revisions[commit]) not in points:
        problems.append(f"no point of commit {commit[:8]} in the graphs of {BENCH}")
    if len(points) < args.min_commits:
        want = args.min_commits
        problems.append(f"the graphs of {BENCH} hold {len(points)} commit(s); want {want}")

    for machine, sha in newest.items():  # what report and regressions take as the newest
        if machine not in machines or sha not in revisions:
            problems.append(
                f"{machine}'s newest commit with results, {sha[:8]} (report's and the gate's), "
                f"is not published: publish {args.results} again (on a branch that has it)"
            )

    gpus = [m for m in machines if str(index["machines"][m].get("gpu", "none")) != "none"]
    if history:
        for machine in set(history) - {None} - set(gpus):
            problems.append(f"--gpu-history names {machine}, which is no published GPU machine")
        for (machine, suite), count in gpu_history(args.html_dir, gpus).items():
            want = history.get(machine, history.get(None, 0))
            if count < want:
                problems.append(
                    f"{machine}'s device-time graph of {suite} holds {count} commit(s); want {want}"
                )
        if not gpus:
            problems.append("no GPU machine is published: no device-time history to check")

    server = serve(args.html_dir)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        listing = dump_dom(chromium, base)
        graph = dump_dom(chromium, base + "#" + BENCH)
        summary = dump_dom(chromium, base + "#/summarylist")
        regressions = dump_dom(chromium, base + "#/regressions")
        found, reports = check_reports(chromium, base, index)
        problems += found
        ratios = {}
        for suite in SUITES:  # each opens with data: the peers' ratios, a legend of them
            name = f"bench_rmsnorm.{suite}.track_public_ratio"
            if name in index["benchmarks"]:
                ratios[name] = dump_dom(chromium, base + "#" + name)
                if not re.search(r'id="rb-legend".*?class="legendLabel"', ratios[name], re.S):
                    problems.append(f"the graph of {name} opens with no data")
        pages = {base: listing, base + "#" + BENCH: graph, base + "#/summarylist": summary,
                 base + "#/regressions": regressions, base + "report/": reports}  # fmt: skip
        pages.update({base + "#" + name: dom for name, dom in ratios.items()})
        found, links = check_links(base, pages, NO_COMMIT_URL)
        problems += found
        if args.screenshots:
            try:
                args.screenshots.mkdir(parents=True, exist_ok=True)
            except OSError as e:  # no permission, say
                ap.exit(2, f"dashboard: --screenshots {args.screenshots}: {e.strerror or e}\n")
            screenshot(chromium, base, args.screenshots / "front.png")
            screenshot(chromium, base + "#" + SHOWN, args.screenshots / "graph.png")
            screenshot(chromium, base + "#" + RATIO, args.screenshots / "ratio.png")
            screenshot(chromium, base + "#/regressions", args.screenshots / "regressions.png")
            first = re.findall(r'href="([^"/]+/[0-9a-f]{8}/)"', reports)
            if first:
                screenshot(chromium, base + "report/" + first[0], args.screenshots / "report.png")
    finally:
        server.shutdown()
    if "bench_rmsnorm.RMSNormForward" not in listing or "FusedAddRMSNormBackward" not in listing:
        problems.append("the front page does not list the benchmarks")
    if 'class="flot-base"' not in graph:
        problems.append(f"the page of {BENCH} draws no graph")
    missing = [m for m in machines if m not in graph]
    if missing or "machine" not in graph:
        problems.append(f"the graph page offers no selection of machine(s) {missing}")
    shown = selected_machines(graph, machines)
    if gpus and sorted(shown) != sorted(gpus):
        problems.append(f"the page of {BENCH} opens on {shown}; want the GPU machines {gpus}")
    url = index.get("show_commit_url") or "#"
    unlinked = url == NO_COMMIT_URL  # no URL known: hashes shown as text (views.js)
    if url.startswith("#") and not unlinked:  # asv's default: a page of the dashboard, none
        problems.append("no show_commit_url: commit links lead nowhere")
    if args.commit_url and url != args.commit_url:
        problems.append(f"commit links go to {url}HASH; want {args.commit_url}HASH")
    # asv's benchmark list links a commit where it found a change (not always); the reports
    # link theirs
    linked = re.findall(r'href="' + re.escape(url) + r'([0-9a-f]{7,40})"', summary + reports)
    if not unlinked and not any(h.startswith(c) for c in linked for h in revisions):
        problems.append(f"neither the benchmark list nor report/ links a commit as {url}HASH")
    unresolved = sorted({c for c in linked if not is_commit(c)})
    if unresolved:
        problems.append(f"commit links to hashes that are no commit here: {unresolved[:3]}")
    if problems:
        sys.exit("dashboard: " + "; ".join(problems))
    print(
        f"dashboard: ok: benchmarks listed, graph drawn for {commit[:8]}, "
        f"{len(points)} commit(s), machines {machines}, opened on {shown}, commit links "
        f"{'none (no repository URL)' if unlinked else url + 'HASH'}, reports with pictures, "
        f"{links} links on the dashboard resolve, {len(ratios)} ratio graph(s) with data"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
