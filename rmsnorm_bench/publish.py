"""Publish every result under results/ as the dashboard in html/, made to work offline.

usage: python -m rmsnorm_bench.publish [--html-dir DIR] [--branch REV] [--preview [PORT]]

One way, from asv's results to the pages: results/ is copied to a temporary folder, whose
benchmarks.json then lists every machine's parameter values (`asvfiles.union_benchmarks`:
asv shows only the values listed there, which are those of the last run on this clone);
`asv publish` writes the site into a temporary folder; the site is then copied to html/ (or
--html-dir), its index.html loading the CDN scripts and styles from vendor/ instead
(`vendor.offline_page`). Nothing under results/ changes. html/vendor/ is the one copy of
those files: publishing to html/ keeps it, publishing elsewhere copies it in. --preview then
serves the dashboard on 127.0.0.1 only (port 8080 by default).

The graphs follow the branches of asv.conf.json (main); --branch plots the history of
another (e.g. HEAD in a CI clone that has no local main; the graphs' folders are named
after it, so publish html/ with the configured branches only).
"""

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import ROOT, argument_parser, asvfiles, vendor


class PublishError(Exception):
    pass


def check_results(results: Path) -> None:
    if not any(results.glob("*/*.json")):
        raise PublishError(f"no results under {results}; run scripts/run first")
    if not (results / "benchmarks.json").is_file():
        raise PublishError(f"{results / 'benchmarks.json'} is missing; run scripts/run first")


def check_branches(branches: list[str]) -> None:
    for branch in branches:
        rev = ["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", f"{branch}^{{commit}}"]
        if subprocess.run(rev, capture_output=True).returncode:
            raise PublishError(
                f"branch {branch!r} is not in this clone: create it (git branch {branch} "
                f"origin/{branch}) or publish another's history with --branch"
            )


def asv_publish(results: Path, site: Path, branches: list[str]) -> None:
    """`asv publish` of a copy of `results` (every machine's parameters listed) into `site`,
    with graphs along `branches`."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "results"
        shutil.copytree(results, copy)
        union = asvfiles.union_benchmarks(copy)
        (copy / "benchmarks.json").write_text(json.dumps(union, indent=4))
        # asv takes results_dir from its config only; the copy of the config lives beside
        # asv.conf.json, since asv resolves the config's paths from its folder
        fd, conf = tempfile.mkstemp(dir=ROOT, prefix=".asv-publish-", suffix=".json")
        os.close(fd)
        try:
            asvfiles.write_conf(Path(conf), {"results_dir": str(copy), "branches": branches})
            cmd = [sys.executable, "-m", "asv", "publish", "--config", conf]
            subprocess.run([*cmd, "--html-dir", str(site)], check=True)
        finally:
            os.unlink(conf)


def install(site: Path, out: Path, assets: Path = vendor.DIR) -> None:
    """Replace the dashboard in `out` with `site`, index.html pointed at out/vendor/."""
    page = vendor.offline_page((site / "index.html").read_text(), assets)
    keep = out / "vendor" if (out / "vendor").resolve() == assets.resolve() else None
    if out.is_dir() and any(out.iterdir()) and not (out / "index.json").is_file():
        raise PublishError(f"{out} is not empty and holds no dashboard; not replacing it")
    out.mkdir(parents=True, exist_ok=True)
    for child in out.iterdir():
        if child == keep:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    shutil.copytree(site, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns("index.html"))
    (out / "index.html").write_text(page)
    if keep is None:
        shutil.copytree(assets, out / "vendor")


def publish(out: Path, branches: list[str], results: Path = ROOT / "results") -> None:
    check_results(results)
    check_branches(branches)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        asv_publish(results, site, branches)
        install(site, out)


def serve(directory: Path, port: int) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"publish: serving {directory} on http://127.0.0.1:{port}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    conf = asvfiles.read_conf()
    ap.add_argument("--html-dir", type=Path, default=ROOT / conf["html_dir"], help="html/")
    ap.add_argument("--branch", help=f"default: {', '.join(conf['branches'])}")
    ap.add_argument("--preview", type=int, nargs="?", const=8080, metavar="PORT")
    args = ap.parse_args(argv)
    out = args.html_dir.resolve()
    try:
        publish(out, [args.branch] if args.branch else conf["branches"])
    except (PublishError, vendor.NoLocalCopy) as e:
        ap.exit(1, f"publish: {e}\n")
    except subprocess.CalledProcessError as e:
        ap.exit(1, f"publish: asv publish failed (exit status {e.returncode})\n")
    print(f"publish: dashboard in {out} (served by a local server: scripts/publish --preview)")
    if args.preview is not None:
        serve(out, args.preview)
    return 0


if __name__ == "__main__":
    sys.exit(main())
