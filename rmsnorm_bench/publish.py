"""Publish every result under results/ as the dashboard in html/, made to work offline.

usage: python -m rmsnorm_bench.publish [--html-dir DIR] [--branch REV] [--preview [PORT]]

One way, from asv's results to the pages: results/ is copied to a temporary folder, whose
benchmarks.json then lists every machine's parameter values (`asvfiles.union_benchmarks`:
asv shows only the values listed there, which are those of the last run on this clone);
`asv publish` writes the site into a temporary folder; the site is then copied to html/ (or
--html-dir), its index.html loading the CDN scripts and styles from vendor/ instead
(`vendor.offline_page`), built beside html/ and swapped in at once: html/ is the old
dashboard or the new one, whenever publishing stops. Nothing under results/ changes; every
results and machine file is checked first (a bad one is named, exit status 2), and figures
the graphs will not show (measured by another version of their benchmark) are counted in a
warning.
html/vendor/ is the one copy of those files: each dashboard carries a copy of it along.
--preview then
serves the dashboard on 127.0.0.1 only (port 8080 by default; 0: any free port).

Beside asv's pages (rmsnorm_bench/pages.py): each benchmark opens on the first GPU machine's
view (its cases, on a log axis where they span decades; the navigation bar links every
machine's view, the CPU smoke mode's included), and report/ holds the report of each
machine's newest commit (tables and per-op pictures), linked as "Reports".

Commit links (a graph's point, the lists, the reports) go to COMMIT_URL + the hash: the
first set of --commit-url, $RMSNORM_BENCH_COMMIT_URL, asv.conf.json's show_commit_url,
pyproject.toml's [project.urls] Repository, the web page of the `origin` remote (ssh or
https, credentials dropped; + /commit/). Where none is known, commits are shown as hashes
without links (with a warning), never as links that lead nowhere. The navigation bar's
project link goes to the repository's page (its README), else to the dashboard itself.

Series: asv draws one line per case and set of machine facts; a run recorded before a fact
was (the host CPU of the H200's first runs) takes the facts its machine's other runs agree
on, in the copy published (`merge_series`), so a case is one line.

The graphs follow the branches of asv.conf.json (main); --branch plots the history of
another (e.g. HEAD in a CI clone that has no local main; the graphs' folders are named
after it, so publish html/ with the configured branches only).
"""

import ctypes
import functools
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from . import (
    ROOT,
    argument_parser,
    asvfiles,
    atomic,
    knownsteps,
    pages,
    report,
    user_path,
    vendor,
)
from .locks import results_lock

COMMIT_URL_ENV = "RMSNORM_BENCH_COMMIT_URL"
# what earlier asv.conf.json files held where no repository was known: treated as unset
LEGACY_PLACEHOLDER = "https://repository-url-not-set.invalid/commit/"
# asv's pages get this as show_commit_url where no URL is known; views.js and
# `unlink_feed` turn every link that starts with it into plain text
NO_COMMIT_URL = "#no-commit-url/"


class PublishError(Exception):
    pass


def check_results(results: Path, branches: list[str] | None = None) -> list[str]:
    """Every results file, machine file (machine.json) and benchmarks.json checked before
    asv publish reads them (PublishError names a bad one), and with `branches` the commits
    they hold (one this clone does not have is refused: asv would drop it); returns what the
    dashboard will not show: figures of a benchmark benchmarks.json does not list, or
    measured by a version of their benchmark other than benchmarks.json's (asv publishes
    those of the current version only), and commits off
    the published branches' first-parent history (asv plots those only)."""
    if not any(results.glob("*/*.json")):
        raise PublishError(f"no results under {results}; run scripts/run first")
    if not (results / "benchmarks.json").is_file():
        raise PublishError(f"{results / 'benchmarks.json'} is missing; run scripts/run first")
    try:
        current = asvfiles.read_json(results / "benchmarks.json")
        if not isinstance(current, dict):
            raise asvfiles.BadFile(f"{results / 'benchmarks.json'}: not a JSON object")
        for path in sorted(results.glob("*/machine.json")):  # each machine's, as asv reads them
            asvfiles.load_machine(path)
        runs = {f.name: asvfiles.load_runs(f) for f in sorted(results.glob("*/"))}
    except asvfiles.BadFile as e:
        raise PublishError(str(e)) from None
    left_out, unlisted = {}, {}
    for machine, machine_runs in runs.items():
        for run in machine_runs:
            measured = {}
            for bench, _ in asvfiles.figures(run):
                measured[bench] = measured.get(bench, 0) + 1
            for bench, version in asvfiles.versions(run).items():
                if bench not in current and measured.get(bench):  # asv shows listed ones only
                    unlisted.setdefault((machine, bench), []).append(measured[bench])
                    continue
                want = current.get(bench, {}).get("version") if bench in current else None
                if want is not None and version != want and measured.get(bench):
                    key = (machine, bench, version, want)
                    left_out.setdefault(key, []).append(measured[bench])
    warnings = [
        f"{machine}: {bench}: {sum(counts)} figure(s) of {len(counts)} commit(s) are not shown: "
        f"{results / 'benchmarks.json'} lists no such benchmark (they stay in results/)"
        for (machine, bench), counts in sorted(unlisted.items())
    ] + [
        f"{machine}: {bench}: {sum(counts)} figure(s) of {len(counts)} commit(s), measured by "
        f"version {version!r}, are not shown (the current version is {want!r}; they stay in "
        "results/)"
        for (machine, bench, version, want), counts in sorted(left_out.items())
    ]
    return warnings + (check_commits(runs, branches) if branches else [])


def git(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def check_commits(runs: dict, branches: list[str]) -> list[str]:
    """The commits of `runs` ({machine: runs}) as asv publish finds them: on a branch's
    first-parent history or tagged. One this clone does not have is refused (PublishError):
    the report and the gate read its figures, and the dashboard would leave them out. One it
    has elsewhere is left out of the graphs by asv: returned as a warning each."""
    shown = set()
    for branch in branches:
        shown.update(git("rev-list", "--first-parent", branch, "--").stdout.split())
    tags = git("for-each-ref", "--format=%(objectname) %(*objectname)", "refs/tags")
    shown.update(tags.stdout.split())
    missing, elsewhere = [], []
    for machine, machine_runs in runs.items():
        for run in machine_runs:
            sha = run["commit_hash"]
            if sha in shown:
                continue
            known = git("cat-file", "-e", f"{sha}^{{commit}}").returncode == 0
            (elsewhere if known else missing).append(f"{machine}: {sha[:8]}")
    if missing:
        raise PublishError(
            f"results of commit(s) this clone does not have ({', '.join(missing)}): the "
            "dashboard would leave them out while report and regressions read them; fetch "
            "those commits (git fetch), or move their files out of results/"
        )
    return [
        f"{where}: not on the first-parent history of {', '.join(branches)}: asv publish "
        "leaves this commit out of the graphs (its file stays in results/)"
        for where in elsewhere
    ]


def check_branches(branches: list[str]) -> None:
    for branch in branches:
        rev = ["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", f"{branch}^{{commit}}"]
        if subprocess.run(rev, capture_output=True).returncode:
            raise PublishError(
                f"branch {branch!r} is not in this clone: create it (git branch {branch} "
                f"origin/{branch}) or publish another's history with --branch"
            )


def repository_url(pyproject: Path = ROOT / "pyproject.toml") -> str | None:
    """pyproject.toml's [project.urls] Repository (or Source, Homepage), if any."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return None
    try:
        urls = tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {})
    except (OSError, ValueError):
        return None
    lowered = {k.lower(): v for k, v in urls.items()}
    return next((lowered[k] for k in ("repository", "source", "homepage") if k in lowered), None)


# git@host:owner/repo(.git), ssh://[user@]host[:port]/owner/repo(.git),
# http(s)://[user[:secret]@]host/owner/repo(.git): the web page is https://host/owner/repo
_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)/?(.+?)(?:\.git)?/?$")
_URL = re.compile(
    r"^(?:ssh|git\+ssh|https?|git)://(?:[^@/]+@)?([\w.-]+)(?::\d+)?/(.+?)(?:\.git)?/?$"
)


def web_url(remote: str) -> str | None:
    """The web page of a git remote's repository (https://host/owner/repo), from its ssh,
    scp-like or http(s) form, credentials dropped; None for a local path or another form."""
    remote = remote.strip()
    match = _URL.match(remote) or (None if "://" in remote else _SCP.match(remote))
    if not match or "/" not in match.group(2):
        return None
    return f"https://{match.group(1)}/{match.group(2)}"


def origin_url() -> str | None:
    """The web page of this clone's `origin` remote, if it has one on a web host."""
    out = git("remote", "get-url", "origin")
    return web_url(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


def commit_url(option: str | None, conf: dict, pyproject: Path = ROOT / "pyproject.toml",
               origin=origin_url):  # fmt: skip
    """(the URL a commit hash is appended to, or None, and a warning or None): --commit-url,
    then $RMSNORM_BENCH_COMMIT_URL, asv.conf.json's show_commit_url, the repository of
    pyproject.toml, the `origin` remote's web page (each + /commit/); None where none is
    set: the dashboard then shows hashes without links (no link leads nowhere)."""
    configured = conf.get("show_commit_url") or ""
    if configured in ("#", LEGACY_PLACEHOLDER):
        configured = ""
    repository = repository_url(pyproject) or origin()
    from_repo = repository.rstrip("/") + "/commit/" if repository else ""
    url = option or os.environ.get(COMMIT_URL_ENV) or configured or from_repo
    if url:
        return url, None
    return None, (
        "no repository URL is known (no origin remote, no show_commit_url in asv.conf.json, "
        f"no ${COMMIT_URL_ENV}, no --commit-url): commits are shown without links"
    )


def project_url(url: str | None) -> str:
    """The navigation bar's project link: the repository's page (its README) where commit
    links go to REPOSITORY/commit/, else the dashboard's own front page."""
    if url and url.endswith("/commit/"):
        return url[: -len("commit/")]
    return "./"


def fill_facts(runs: list[dict]) -> dict:
    """{index in `runs`: the facts to add to that run's params}: a run that lacks facts
    (results written before the host CPU was recorded) takes those of the machine's other
    runs that agree with every fact it has, where all of them that recorded a missing one
    agree on its value. asv
    draws one series per set of facts, so without this one case is drawn twice."""
    out = {}
    for i, run in enumerate(runs):
        params = run["params"]
        alike = [
            r["params"]
            for j, r in enumerate(runs)
            if j != i and all(r["params"].get(k) == v for k, v in params.items())
        ]
        missing = {k for r in alike for k in r} - set(params)
        facts = {}
        for key in sorted(missing):  # the runs that recorded the fact agree on its value
            values = {r[key] for r in alike if key in r}
            if len(values) == 1:
                facts[key] = values.pop()
        if facts:
            out[i] = facts
    return out


def merge_series(results: Path) -> list[str]:
    """Give the results files of a copy of results/ the facts their machine's other runs
    agree on (`fill_facts`); returns what was added, a line per file. Never for results/
    itself: what was recorded stays as it was."""
    added = []
    for folder in sorted(p for p in results.glob("*/") if p.is_dir()):
        files = asvfiles.results_files(folder)
        runs = [asvfiles.read_json(f) for f in files]
        for i, facts in fill_facts(runs).items():
            runs[i]["params"].update(facts)
            files[i].write_text(json.dumps(runs[i]))
            added.append(f"{folder.name}/{files[i].name}: {facts}")
    return added


def asv_publish(results: Path, site: Path, branches: list[str], url: str | None = None) -> None:
    """`asv publish` of a copy of `results` (every machine's parameters listed, a run's
    missing facts filled in from its machine's others) into `site`, with graphs along
    `branches` and commit links to `url` + hash (None: no links)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "results"
        shutil.copytree(results, copy)
        merge_series(copy)
        union = asvfiles.union_benchmarks(copy)
        (copy / "benchmarks.json").write_text(json.dumps(union, indent=4))
        # asv takes results_dir from its config only; the copy of the config lives beside
        # asv.conf.json, since asv resolves the config's paths from its folder
        fd, conf = tempfile.mkstemp(dir=ROOT, prefix=".asv-publish-", suffix=".json")
        os.close(fd)
        try:
            changes = {
                "results_dir": str(copy),
                "branches": branches,
                "show_commit_url": url or NO_COMMIT_URL,
                "project_url": project_url(url),
            }
            asvfiles.write_conf(Path(conf), changes)
            cmd = [sys.executable, "-m", "asv", "publish", "--config", conf]
            subprocess.run([*cmd, "--html-dir", str(site)], check=True)
        finally:
            os.unlink(conf)


_FEED_LINK = re.compile(r'&lt;a href="' + re.escape(NO_COMMIT_URL) + r'[^"]*"&gt;(.*?)&lt;/a&gt;')


def unlink_feed(site: Path) -> None:
    """Where no commit URL is known, the Regressions feed names commits without links."""
    feed = site / "regressions.xml"
    if feed.is_file():
        feed.write_text(_FEED_LINK.sub(r"\1", feed.read_text(encoding="utf-8")), encoding="utf-8")


# what asv publish writes into every dashboard: a folder holding all of them is one (an
# index.json alone is not: a project's folder may have one, and would be replaced whole)
DASHBOARD_FILES = ("index.html", "index.json", "asv.js", "graphs")


def holds_dashboard(folder: Path) -> bool:
    return (
        all((folder / name).exists() for name in DASHBOARD_FILES) and (folder / "graphs").is_dir()
    )


def install(site: Path, out: Path, assets: Path = vendor.DIR) -> None:
    """Replace the dashboard in `out` with `site`, index.html pointed at out/vendor/, in one
    step: the new dashboard is built beside `out` and swapped in, so `out` holds either the
    old dashboard or the new one, whenever this stops."""
    page = vendor.offline_page((site / "index.html").read_text(), assets)
    if out.exists() and not out.is_dir():
        raise PublishError(f"{out} is not a folder; not replacing it")
    if out.is_dir() and any(out.iterdir()) and not holds_dashboard(out):
        raise PublishError(f"{out} is not empty and holds no dashboard; not replacing it")
    out.parent.mkdir(parents=True, exist_ok=True)
    for left in out.parent.glob(f".{out.name}.publish-*"):  # of a publish that was killed
        shutil.rmtree(left, ignore_errors=True)
    new = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.publish-"))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(new, 0o777 & ~umask)
        # asv's index.html is written below; the reports' own pages are copied
        top = lambda folder, names: ["index.html"] if Path(folder) == site else []  # noqa: E731
        shutil.copytree(site, new, dirs_exist_ok=True, ignore=top)
        (new / "index.html").write_text(page)
        shutil.copytree(assets, new / "vendor")  # the one copy moves with the dashboard
        swap(new, out)
    finally:
        shutil.rmtree(new, ignore_errors=True)  # after the swap: the old dashboard


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux's renameat2 with RENAME_EXCHANGE); False where
    that is not available."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def swap(new: Path, out: Path) -> None:
    """`new` becomes `out`; the old `out`, if any, is left at `new`'s path."""
    if not out.exists():
        os.rename(new, out)
        new.mkdir()
    elif not _exchange(new, out):  # two renames: `out` is missing between them only
        old = new.with_name(new.name + "-old")
        os.rename(out, old)
        os.rename(new, out)
        os.rename(old, new)


def publish(
    out: Path, branches: list[str], results: Path = ROOT / "results", url: str | None = None
) -> None:
    """The dashboard of `results` into `out`; commit links to `url` + hash (default: as
    `commit_url` finds it; where none is found, hashes without links)."""
    url, warning = (url, None) if url else commit_url(None, asvfiles.read_conf())
    check_branches(branches)
    try:
        steps = knownsteps.load()
    except asvfiles.BadFile as e:
        raise PublishError(str(e)) from None
    for line in check_results(results, branches) + ([warning] if warning else []):
        print(f"publish: warning: {line}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        asv_publish(results, site, branches, url)
        if url is None:
            unlink_feed(site)
        runs = pages.machines(results)
        pages.drop_empty_rows(site)
        known = pages.split_known(site, steps)
        pages.add_views(site, runs, known, None if url else NO_COMMIT_URL)
        pages.add_summaries(site, runs)
        pages.add_reports(site, runs, url)
        install(site, out)


def html_dir_problem(html_dir: Path, results: Path = ROOT / "results") -> str | None:
    """Why --html-dir cannot take the dashboard, or None: the places report --out refuses
    (report.out_problem: a file, a folder in the results, whose every folder report, publish
    and merge read as a machine's), less the repository's html/, which is the dashboard's."""
    if html_dir.resolve().is_relative_to((ROOT / "html").resolve()):
        return None
    problem = report.out_problem(html_dir, results)
    if problem is None:
        return None
    why = problem.removeprefix(f"--out {html_dir}: ").removesuffix("; write the report elsewhere")
    return f"--html-dir {html_dir}: {why}; publish the dashboard elsewhere"


def server(directory: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server of `directory` on 127.0.0.1 (port 0: a free one), bound before publishing, so
    that a port in use is found first."""
    if not 0 <= port <= 65535:
        raise PublishError(f"--preview port {port} is not a port (0-65535; 0: any free one)")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as e:
        raise PublishError(
            f"cannot serve on 127.0.0.1:{port} ({e.strerror or e}); is the port in use? "
            "give another: --preview PORT"
        ) from None


def serve(httpd: http.server.ThreadingHTTPServer, directory: Path) -> None:
    with httpd:
        port = httpd.server_address[1]
        print(f"publish: serving {directory} on http://127.0.0.1:{port}/ (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass


def _terminated(signum, frame):
    sys.exit(128 + signum)  # as an exception: temporary files and folders are removed


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    try:
        conf = asvfiles.read_conf()
    except asvfiles.BadFile as e:
        ap.exit(2, f"publish: {e}\n")
    ap.add_argument("--html-dir", type=user_path, default=ROOT / conf["html_dir"], help="html/")
    ap.add_argument("--branch", help=f"default: {', '.join(conf['branches'])}")
    ap.add_argument("--preview", type=int, nargs="?", const=8080, metavar="PORT")
    ap.add_argument(
        "--commit-url",
        metavar="URL",
        help=f"commit links: URL + hash (default: ${COMMIT_URL_ENV}, asv.conf.json's "
        "show_commit_url, pyproject.toml's repository + /commit/)",
    )
    args = ap.parse_args(argv)
    if problem := html_dir_problem(args.html_dir):
        ap.exit(2, f"publish: {problem}\n")
    out = args.html_dir.resolve()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        httpd = server(out, args.preview) if args.preview is not None else None
        branches = [args.branch] if args.branch else conf["branches"]
        with results_lock(ROOT / conf["results_dir"], tool="publish"):  # never mid-run
            publish(out, branches, url=args.commit_url)
    except (PublishError, vendor.NoLocalCopy, pages.PageError) as e:
        ap.exit(2, f"publish: {e}\n")
    except atomic.WriteFailed as e:
        ap.exit(2, f"publish: {e}; {out} unchanged\n")
    except shutil.Error as e:  # a copy of many files: its first failure
        src, dst, why = e.args[0][0] if e.args and e.args[0] else ("", "", e)
        ap.exit(2, f"publish: copying to {dst} failed: {why}; {out} unchanged\n")
    except OSError as e:  # a full disk, a read-only folder: named, never a traceback
        where = f" {e.filename}" if e.filename else ""
        ap.exit(2, f"publish: writing{where} failed: {atomic.cause(e)}; {out} unchanged\n")
    except subprocess.CalledProcessError as e:  # (not 1: that is a regression's status)
        ap.exit(2, f"publish: asv publish failed (exit status {e.returncode}, see above); "
                f"{out} unchanged\n")  # fmt: skip
    print(f"publish: dashboard in {out} (served by a local server: scripts/publish --preview)")
    if httpd is not None:
        serve(httpd, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
