"""Reading asv's files: its commented config, and the results of a machine.

Imported by the other tools; `python -m rmsnorm_bench.asvfiles conf-copy OUT KEY=VALUE...`
writes a copy of asv.conf.json with some keys changed, for the shell entry points.
"""

import itertools
import json
import math
import re
import sys
from pathlib import Path

from . import ROOT, argument_parser


def read_conf(path=ROOT / "asv.conf.json") -> dict:
    """asv.conf.json as a dict (asv allows // comment lines; json does not)."""
    return json.loads(re.sub(r"^\s*//.*$", "", Path(path).read_text(), flags=re.M))


def load_runs(folder: Path) -> list:
    """Every results file of one machine's folder, oldest commit first."""
    runs = [json.loads(f.read_text()) for f in folder.glob("*.json") if f.name != "machine.json"]
    return sorted(runs, key=lambda r: (r["date"], r["commit_hash"]))


def figures(run: dict, measured_only: bool = True) -> dict:
    """{(benchmark, params): value} of one results file, in the benchmarks' parameter order.

    params is the tuple of parameter values, e.g. ("4096x4096-bf16", "triton"). Skipped or
    failed figures are left out, or kept as None with measured_only=False.
    """
    out = {}
    for bench, entry in run["results"].items():
        row = dict(zip(run["result_columns"], entry, strict=False))
        params = [[json.loads(p.replace("'", '"')) for p in ps] for ps in row.get("params") or []]
        combos = itertools.product(*params) if params else [()]
        for combo, value in zip(combos, row["result"] or [], strict=False):
            missing = value is None or (isinstance(value, float) and math.isnan(value))
            if not missing:
                out[(bench, combo)] = value
            elif not measured_only:
                out[(bench, combo)] = None
    return out


def versions(run: dict) -> dict:
    """{benchmark: the version of its method} in one results file."""
    column = run["result_columns"].index("version")
    return {bench: entry[column] for bench, entry in run["results"].items()}


def union_benchmarks(results_dir: Path) -> dict:
    """benchmarks.json with each parameter list widened to every value some results file has.

    asv publish shows only the parameter values listed in benchmarks.json, which holds those
    of the last run on this clone: a machine measured with other shapes (the CPU smoke mode,
    a per-commit subset) would vanish from the dashboard. Listed values keep their order;
    values seen only in results are appended.
    """
    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    runs = [run for folder in sorted(results_dir.glob("*/")) for run in load_runs(folder)]
    for run in runs:
        for bench, entry in run["results"].items():
            row = dict(zip(run["result_columns"], entry, strict=False))
            listed = benchmarks.get(bench, {}).get("params")
            if not listed or not row.get("params"):
                continue
            for values, seen in zip(listed, row["params"], strict=False):
                values.extend(v for v in seen if v not in values)
    return benchmarks


def write_conf(out: Path, changes: dict, conf: Path = ROOT / "asv.conf.json") -> None:
    """A copy of asv's config with some keys changed. asv resolves the config's relative paths
    from the config's folder: write the copy beside asv.conf.json."""
    Path(out).write_text(json.dumps({**read_conf(conf), **changes}, indent=4))


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    copy = sub.add_parser("conf-copy", help="write asv.conf.json with some keys changed")
    copy.add_argument("out", type=Path)
    copy.add_argument("changes", nargs="*", metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    if not all("=" in item for item in args.changes):
        ap.error("conf-copy takes KEY=VALUE pairs")
    changes = dict(item.split("=", 1) for item in args.changes)
    write_conf(args.out, changes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
