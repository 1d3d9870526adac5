"""Exit non-zero when a machine's latest commit is slower than its predecessor.

usage: python -m rmsnorm_bench.regressions [--machine NAME] [--threshold 1.1] [--bench REGEX]
                                            [--results DIR]

For every machine (or --machine), takes the newest commit with results and the one before it
(by commit date), and compares every tracked figure (public time, device time, peak memory)
of every case and backend measured in both, where the benchmark's version (its method of
measuring) is the same in both. A figure more than THRESHOLD times its predecessor's is a
regression: each is named with its benchmark and parameters. --bench keeps
the benchmarks whose name matches REGEX, e.g. `track_device_time` on a machine whose host
makes public-call times noisy between runs (see docs/perf-notes.md).

Exit status: 0 when figures were compared and none regressed, 1 when one regressed, 2 when
nothing could be checked (no results, no machine with two commits, no figure in common) or the
input is bad (an unreadable results file, named; a threshold that is not a number >= 1).
"""

import math
import re
import sys
from pathlib import Path

from . import ROOT, argument_parser
from .asvfiles import BadFile, figures, load_runs, versions


def check_machine(folder: Path, threshold: float, bench_pattern: str = ""):
    runs = load_runs(folder)
    if len(runs) < 2:
        return [], f"{folder.name}: {len(runs)} commit(s) with results, nothing to compare", 0
    old, new = runs[-2], runs[-1]
    before, after = figures(old), figures(new)
    shared = {key for key in set(before) & set(after) if re.search(bench_pattern, key[0])}
    old_versions, new_versions = versions(old), versions(new)
    common = {key for key in shared if old_versions[key[0]] == new_versions[key[0]]}
    found = []
    for key in sorted(common):
        if before[key] > 0 and after[key] > threshold * before[key]:
            bench, params = key
            found.append(
                f"{folder.name}: {bench}({', '.join(map(repr, params))}): {before[key]:.4g} -> "
                f"{after[key]:.4g} ({after[key] / before[key]:.2f}x)"
            )
    summary = (
        f"{folder.name}: {new['commit_hash'][:8]} vs {old['commit_hash'][:8]}: "
        f"{len(common)} figures compared, {len(found)} regression(s)"
    )
    if len(shared) > len(common):
        summary += f"; {len(shared) - len(common)} not compared (measured by another method)"
    return found, summary, len(common)


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--machine", help="default: every machine under --results")
    ap.add_argument("--threshold", type=float, default=1.1, help="a slowdown factor (1.1)")
    ap.add_argument("--bench", default="", help="only benchmarks whose name matches this regex")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    args = ap.parse_args(argv)
    try:
        re.compile(args.bench)
    except re.error as e:
        ap.error(f"--bench {args.bench!r} is not a regular expression ({e})")
    if not math.isfinite(args.threshold) or args.threshold < 1:
        ap.error(f"--threshold must be a number >= 1, got {args.threshold}")
    if not args.results.is_dir():
        ap.exit(2, f"regressions: {args.results} is not a folder of results\n")
    folders = sorted(p for p in args.results.glob("*") if p.is_dir())
    if args.machine:
        folders = [p for p in folders if p.name == args.machine]
        if not folders:
            ap.exit(2, f"regressions: no results for machine {args.machine!r}\n")
    if not folders:
        ap.exit(2, f"regressions: no machine's results under {args.results}: nothing checked\n")
    regressions, compared = [], 0
    for folder in folders:
        try:
            found, summary, count = check_machine(folder, args.threshold, args.bench)
        except BadFile as e:
            ap.exit(2, f"regressions: {e}\n")
        print(summary)
        regressions += found
        compared += count
    for line in regressions:
        print("REGRESSION", line)
    if not compared:
        ap.exit(2, "regressions: no figure compared: nothing checked (see above)\n")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
