"""Load a published dashboard in headless Chromium with the network cut off, and check it.

usage: python -m rmsnorm_bench.dashboard HTML_DIR [--commit SHA] [--machines N] [--min-commits N]

Serves HTML_DIR on 127.0.0.1, sends every other request to a dead proxy, and checks that the
page lists the benchmarks, draws a history graph (flot's canvas) whose data holds the commit
(default: HEAD) and at least --min-commits commits, and offers the machine selection with at
least --machines machines. Exits non-zero, saying what is missing.
"""

import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from . import ROOT, argument_parser

BENCH = "bench_rmsnorm.RMSNormBackward.track_time"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory: Path):
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def dump_dom(chromium: str, url: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}",
            # the network is off: anything not on 127.0.0.1 goes to a port nobody listens on
            "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
            "--virtual-time-budget=20000", "--dump-dom", url,
        ]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode:
        sys.exit(f"dashboard: chromium failed on {url}: {out.stderr[-2000:]}")
    return out.stdout


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("html_dir", type=Path, help="a published dashboard")
    ap.add_argument("--commit", help="a commit that must be shown (default: HEAD)")
    ap.add_argument("--machines", type=int, default=1, help="machines it must offer (1)")
    ap.add_argument("--min-commits", type=int, default=1, help="commits it must plot (1)")
    args = ap.parse_args(argv)
    head = ["git", "-C", str(ROOT), "rev-parse", "HEAD"]
    commit = args.commit or subprocess.check_output(head, text=True).strip()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("dashboard: chromium is not installed (Debian: apt-get install chromium)")
    problems = []

    index = json.loads((args.html_dir / "index.json").read_text())
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

    server = serve(args.html_dir)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        listing = dump_dom(chromium, base)
        graph = dump_dom(chromium, base + "#" + BENCH)
    finally:
        server.shutdown()
    if "bench_rmsnorm.RMSNormForward" not in listing or "FusedAddRMSNormBackward" not in listing:
        problems.append("the front page does not list the benchmarks")
    if 'class="flot-base"' not in graph:
        problems.append(f"the page of {BENCH} draws no graph")
    missing = [m for m in machines if m not in graph]
    if missing or "machine" not in graph:
        problems.append(f"the graph page offers no selection of machine(s) {missing}")
    if problems:
        sys.exit("dashboard: " + "; ".join(problems))
    print(
        f"dashboard: ok: benchmarks listed, graph drawn for {commit[:8]}, "
        f"{len(points)} commit(s), machines {machines}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
