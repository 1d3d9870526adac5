"""The scripts and styles asv's dashboard loads from CDNs, kept in html/vendor/ for offline use.

usage: python -m rmsnorm_bench.vendor [--fetch]

html/vendor/ is the only copy: html/ is the published dashboard, committed and served as it
is, so the files it loads live in it. `publish` writes its pages around that folder, copies it
into any other folder it publishes to, and points asv's index.html at it (`offline_page`).
--fetch re-creates html/vendor/ from the npm registry, at the versions asv 0.6.6 names
(stupidtable: 1.1.3, the only one on npm); run it by hand when asv changes. Without --fetch:
list what asv's page would load and the local copy of each.
"""

import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from . import ROOT, argument_parser

DIR = ROOT / "html" / "vendor"

# asv 0.6.6's CDN files (by their file name) -> our copies in DIR
LOCAL = {
    "jquery-3.3.1.min.js": "jquery.min.js",
    "jquery.flot.min.js": "jquery.flot.js",
    "jquery.flot.time.min.js": "jquery.flot.time.js",
    "jquery.flot.selection.min.js": "jquery.flot.selection.js",
    "jquery.flot.categories.min.js": "jquery.flot.categories.js",
    "jquery.flot.orderBars.js": "jquery.flot.orderBars.js",
    "stupidtable.min.js": "stupidtable.min.js",
    "md5.min.js": "md5.min.js",
    "bootstrap.min.js": "bootstrap.min.js",
    "bootstrap.min.css": "css/bootstrap.min.css",
}
# npm package -> (its files, flattened into DIR; its folders, copied as folders)
PACKAGES = {
    "jquery@3.3.1": (["dist/jquery.min.js"], {}),
    "flot@0.8.3": (
        [
            "jquery.flot.js",
            "jquery.flot.time.js",
            "jquery.flot.selection.js",
            "jquery.flot.categories.js",
        ],
        {},
    ),
    "flot-orderbars@1.0.0": (["js/jquery.flot.orderBars.js"], {}),
    "stupid-table-plugin@1.1.3": (["stupidtable.min.js"], {}),
    "blueimp-md5@2.19.0": (["js/md5.min.js"], {}),
    # the stylesheet finds its icon fonts at ../fonts/
    "bootstrap@3.1.1": (
        ["dist/js/bootstrap.min.js"],
        {"dist/css/bootstrap.min.css": "css", "dist/fonts": "fonts"},
    ),
}
CDN_TAG = re.compile(r'<(script|link)[^>]*?(?:src|href)="(https?://[^"]+)"[^>]*>')


class NoLocalCopy(ValueError):
    """The page loads something from the network that has no copy in DIR."""


def offline_page(text: str, vendor: Path = DIR) -> str:
    """asv's index.html with every CDN script and stylesheet loaded from vendor/ instead."""

    def local(match):
        tag, url = match.group(0), match.group(2)
        path = LOCAL.get(url.rsplit("/", 1)[1])
        if path is None or not (vendor / path).is_file():
            raise NoLocalCopy(f"no local copy of {url} in {vendor}")
        tag = tag.replace(url, f"vendor/{path}")
        return re.sub(r'\s(integrity|crossorigin|referrerpolicy)="[^"]*"', "", tag)

    text = CDN_TAG.sub(local, text)
    remote = [m.group(2) for m in CDN_TAG.finditer(text)]
    if remote:
        raise NoLocalCopy(f"still remote: {remote}")
    return text


def fetch(out: Path = DIR) -> None:
    """Re-create `out` from the npm registry (needs npm and the network)."""
    with tempfile.TemporaryDirectory() as tmp:
        new = Path(tmp) / "vendor"
        (new / "licenses").mkdir(parents=True)
        for spec, (files, folders) in PACKAGES.items():
            name = spec.rsplit("@", 1)[0]
            packed = subprocess.run(
                ["npm", "pack", "-q", spec], cwd=tmp, check=True, capture_output=True, text=True
            ).stdout.split()[-1]
            with tarfile.open(Path(tmp) / packed) as tar:
                tar.extractall(Path(tmp) / name, filter="data")
            package = Path(tmp) / name / "package"
            for f in files:
                shutil.copy(package / f, new)
            for src, dest in folders.items():
                (new / dest).mkdir(exist_ok=True)
                paths = (package / src).iterdir() if (package / src).is_dir() else [package / src]
                for path in paths:
                    shutil.copy(path, new / dest)
            for license_file in ("LICENSE", "LICENSE.txt"):
                if (package / license_file).is_file():
                    shutil.copy(package / license_file, new / "licenses" / f"{name}-{license_file}")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(new, out)


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--fetch", action="store_true", help="re-create html/vendor/ from npm")
    args = ap.parse_args(argv)
    if args.fetch:
        fetch()
    for cdn_name, path in LOCAL.items():
        state = "ok" if (DIR / path).is_file() else "MISSING"
        print(f"{cdn_name:32} {DIR.relative_to(ROOT) / path} {state}")
    return 0 if all((DIR / p).is_file() for p in LOCAL.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
