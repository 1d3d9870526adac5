"""Reading asv's files: its commented config, and the results of a machine.

Imported by the Python scripts beside it; `python scripts/asvfiles.py conf-copy OUT KEY=VALUE...`
and `python scripts/asvfiles.py conf-get CONF KEY` serve the shell scripts.
"""

import itertools
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def main(argv):
    if argv[:1] == ["conf-copy"] and len(argv) >= 2:
        conf = read_conf()
        for item in argv[2:]:
            key, _, value = item.partition("=")
            conf[key] = value
        Path(argv[1]).write_text(json.dumps(conf, indent=4))
    elif argv[:1] == ["conf-get"] and len(argv) == 3:
        print(read_conf(argv[1])[argv[2]])
    else:
        sys.exit("usage: asvfiles.py conf-copy OUT KEY=VALUE... | conf-get CONF KEY")


if __name__ == "__main__":
    main(sys.argv[1:])
