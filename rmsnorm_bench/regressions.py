"""The gate: exit 1 when this package's figures got slower, between a machine's two newest
commits or between two commits given.

usage: python -m rmsnorm_bench.regressions [--machine NAME] [--threshold 1.1] [--public-time]
                                            [--cold] [--bench REGEX] [--base REV --head REV]
                                            [--results DIR]

For every machine (or --machine), takes the newest commit with results and the one before it
(by commit date), or with --base and --head those two commits (what scripts/compare judges
after `asv continuous`), and compares the figures measured in both, where the benchmark's
version (its method of measuring) is the same in both.

What gates: the figures of backend `triton` (this package) only, and by default three of them:
`track_device_time` (the kernels, replayed from a CUDA graph), `track_peak_memory`, and
`track_public_ratio` against torch (torch's public call over ours, timed side by side in one
process: a fall is ours' public call got slower; it counts only where larger than its own
noise floor, RATIO_NOISE = 1.3, as well as THRESHOLD; the other peers' ratios are shown).
--public-time adds `track_time`, the public call's time, which on GPU machines moves between
processes by up to 3x with no code changed (docs/perf-notes.md): judge it only when both
commits were measured side by side. `track_device_time_cold` (one call after an L2 flush, 7
single replays per process) is compared and shown for every backend ("not gating") until its spread
between runs is known; --cold lets ours gate. `track_bandwidth` is not compared: higher is
better there, and it is another view of device time. --bench keeps, of those, the
benchmarks whose name matches REGEX. The peers' figures (torch, torch_compile, liger, quack,
flydsl) are compared and shown ("peer, not gating"), and never fail the gate: their code is
not this commit's.

A slower figure of ours that docs/known-steps.json explains (--known-steps: the step's
commits hold the two compared, its pattern names the figure) is printed as a "known step"
with its reason and does not fail the gate.

A figure regressed when it is more than THRESHOLD times its old value and, where both
commits recorded samples, the difference is significant by asv's own test (Mann-Whitney U,
else 99% confidence intervals), as `asv compare` judges it. A gating figure of ours that the
base measured and the head recorded as failed (asv's null) fails the gate too, as asv compare
counts a new failure; one the head skipped or did not run (a subset of the matrix) is named as
not checked. Each is named with its benchmark and parameters.

Exit status: 0 when figures of ours were compared and none regressed, 1 when one regressed or
failed,
2 when nothing of ours could be checked (no results, no machine with two commits, no gating
figure in common: in the CPU smoke mode there is public time only, so pass --public-time) or
the input is bad (an unreadable results file, named; a threshold that is not a number >= 1;
a --base or --head that names no commit with results, or several: a prefix is resolved as
report --commit resolves it, across the machines compared; --base and --head that name one
commit). Results are read by the rule every tool reads them by (asvfiles.load_runs): one
file per machine and commit, figures finite numbers >= 0 or null.
"""

import math
import re
import sys
from pathlib import Path

from . import ROOT, argument_parser, knownsteps, machine_name, revision
from .asvfiles import (
    BadCommit,
    BadFile,
    clone_lacks,
    failed,
    figure_stats,
    figures,
    load_runs,
    pick_commit,
    versions,
)

OURS = "triton"  # the backend whose figures gate; the others are peers
GATING = ("track_device_time", "track_peak_memory")  # by default
PUBLIC = "track_time"  # with --public-time
COLD = "track_device_time_cold"  # shown; gates with --cold
# Our public call against a peer's, timed side by side in one process (peer / ours, higher
# is better): the host's speed divides out, so it gates by default where track_time cannot.
# Against torch's eager call only: the peer whose own call changes least (no compiled
# variants, no third-party code), one gating figure per case; the other peers' are shown.
RATIO = "track_public_ratio"
RATIO_PEER = "torch"
# The ratio's own noise floor: a fall counts only where larger than this factor too (and the
# gate's). Measured on the H200's committed history (6690e88, 33dc0b7, ca5ceda, dc468b4,
# 61ebc07: 176 steps between consecutive runs of the torch ratio over 44 cases): median
# 1.015, 95th percentile 1.09, largest 1.26 (the backward and fused-add backward of 4096x4096
# f32, whose ratio moves between 1.05 and 1.97 from run to run), so that none of those runs
# would have been flagged against the one before.
RATIO_NOISE = 1.3


def figure_name(bench: str) -> str:
    return bench.rsplit(".", 1)[-1]


def gating_kinds(public_time: bool = False, cold: bool = False) -> tuple:
    return GATING + ((PUBLIC,) if public_time else ()) + ((COLD,) if cold else ())


def gates(key, public_time: bool = False, cold: bool = False) -> bool:
    """Whether a figure ((benchmark, params), params ending in the backend) can fail the
    gate: this package's, of a gating benchmark, or the public ratio against RATIO_PEER."""
    bench, params = key
    if not params:
        return False
    if figure_name(bench) == RATIO:
        return params[-1] == RATIO_PEER
    return params[-1] == OURS and figure_name(bench) in gating_kinds(public_time, cold)


def shown(key, public_time: bool = False) -> bool:
    """Whether a figure is compared at all: one of the gating kinds, the cold device time or
    the public ratio, of any backend."""
    return figure_name(key[0]) in (*gating_kinds(public_time, cold=True), RATIO)


def worse(key, old, new, old_stats, new_stats, threshold: float) -> bool:
    """Whether figure `key` got worse from `old` to `new`: slower (`slower`), or for the public
    ratio, where higher is better, lower by the same test turned round and by more than its
    own noise floor (RATIO_NOISE) as well as `threshold`."""
    if figure_name(key[0]) == RATIO:
        return slower(new, old, new_stats, old_stats, max(threshold, RATIO_NOISE))
    return slower(old, new, old_stats, new_stats, threshold)


def slower(old, new, old_stats, new_stats, threshold: float) -> bool:
    """`new` regressed from `old`: asv compare's test (asv.commands.compare._is_result_better):
    larger than the factor, and significant where both have samples of more than one repeat."""
    if not new > threshold * old:  # a figure of 0 (peak memory; no time is 0) grows from 0
        return False
    if old_stats and new_stats and old_stats[0] and new_stats[0]:
        if old_stats[0].get("repeat", 0) != 1 and new_stats[0].get("repeat", 0) != 1:
            from asv import _stats

            return bool(_stats.is_different(old_stats[1], new_stats[1], old_stats[0], new_stats[0]))
    return True


def ratio(old, new) -> str:
    return f"{new / old:.2f}x" if old else "from 0"


def compare_runs(
    name: str,
    old: dict,
    new: dict,
    threshold: float,
    bench_pattern="",
    public_time=False,
    cold=False,
    steps=(),
):
    """(ours that regressed, others that did (each line prefixed "peer" or "ours", or "known
    step" for a regression of ours that `steps` (docs/known-steps.json) explains), summary,
    count of our figures compared)."""
    before, after = figures(old), figures(new)
    old_stats, new_stats = figure_stats(old), figure_stats(new)
    shared = {
        key
        for key in set(before) & set(after)
        if shown(key, public_time) and re.search(bench_pattern, key[0])
    }
    old_versions, new_versions = versions(old), versions(new)
    common = {key for key in shared if old_versions[key[0]] == new_versions[key[0]]}
    ours, peers, known = [], [], []
    for key in sorted(common):
        if worse(key, before[key], after[key], old_stats.get(key), new_stats.get(key), threshold):
            bench, params = key
            line = (
                f"{name}: {bench}({', '.join(map(repr, params))}): {before[key]:.4g} -> "
                f"{after[key]:.4g} ({ratio(before[key], after[key])})"
            )
            figure = f"{bench}({', '.join(map(repr, params))})"
            step = knownsteps.explain(
                list(steps), figure, old["commit_hash"], new["commit_hash"], name
            )
            if gates(key, public_time, cold) and step:
                known.append(f"known step, not gating: {line}: {knownsteps.describe(step)}")
            elif gates(key, public_time, cold):
                ours.append(line)
            else:
                peers.append(("ours" if params[-1] == OURS else "peer") + ", not gating: " + line)
    # ours measured in the base, not in the head (by the same method): a case that failed
    # there (null) fails the gate, as asv compare counts a new failure; one skipped or not run
    # (a subset of the matrix) is named, since the gate could not check it
    failures, unmeasured = [], []
    failed_in_head = failed(new)
    for key in sorted(set(before) - set(after)):
        bench, params = key
        same_method = new_versions.get(bench, old_versions[bench]) == old_versions[bench]
        if gates(key, public_time, cold) and same_method and re.search(bench_pattern, bench):
            line = f"{name}: {bench}({', '.join(map(repr, params))}): {before[key]:.4g} -> "
            if key in failed_in_head:
                failures.append(line + "failed")
            else:
                unmeasured.append(line + "not measured")
    ours += failures
    compared = sum(1 for key in common if gates(key, public_time, cold))
    counted = compared + len(failures)  # a failure was checked: it fails the gate
    kinds = ", ".join((*gating_kinds(public_time, cold), f"{RATIO} against {RATIO_PEER}"))
    summary = (
        f"{name}: {new['commit_hash'][:8]} vs {old['commit_hash'][:8]}: {counted} figures of "
        f"{OURS} compared ({kinds}), {len(ours)} regression(s)"
        + (f" ({len(failures)} failed in the head)" if failures else "")
        + f"; {len(common) - compared} peer or non-gating figures shown, {len(peers)} slower "
        "(not gating)"
    )
    if known:
        summary += f"; {len(known)} known step(s) of ours (docs/known-steps.json), not gating"
        peers = known + peers
    if unmeasured:
        summary += f"; {len(unmeasured)} of ours measured in the base not measured in the head"
        peers += ["ours, not checked: " + line for line in unmeasured]
    if len(shared) > len(common):
        summary += f"; {len(shared) - len(common)} not compared (measured by another method)"
    return ours, peers, summary, counted


def check_machine(
    folder: Path,
    threshold: float,
    bench_pattern="",
    public_time=False,
    pair=None,
    cold=False,
    runs=None,
    steps=(),
):
    """Compare a machine's newest commit with its predecessor, or `pair` (base, head: full
    hashes or prefixes) with each other; `runs`: the folder's, where already loaded."""
    runs = load_runs(folder) if runs is None else runs
    if pair:
        found = []
        for rev in pair:
            match = [r for r in runs if r["commit_hash"].startswith(rev)]
            if not match:
                return [], [], f"{folder.name}: no results for commit {rev[:10]}", 0
            found.append(match[-1])
        old, new = found
    elif len(runs) < 2:
        return [], [], f"{folder.name}: {len(runs)} commit(s) with results, nothing to compare", 0
    else:
        old, new = runs[-2], runs[-1]
    return compare_runs(folder.name, old, new, threshold, bench_pattern, public_time, cold, steps)


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--machine", type=machine_name, help="default: every machine under --results")
    ap.add_argument("--threshold", type=float, default=1.1, help="a slowdown factor (1.1)")
    ap.add_argument("--public-time", action="store_true", help="let track_time gate too")
    ap.add_argument("--cold", action="store_true", help="let track_device_time_cold gate too")
    ap.add_argument("--bench", default="", help="only benchmarks whose name matches this regex")
    ap.add_argument("--base", type=revision,
                    help="the old commit (with --head; default: the newest but one)")  # fmt: skip
    ap.add_argument("--head", type=revision, help="the new commit (with --base)")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument("--known-steps", type=Path, default=knownsteps.FILE,
                    help="steps explained, not gating (docs/known-steps.json)")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        re.compile(args.bench)
    except re.error as e:
        ap.error(f"--bench {args.bench!r} is not a regular expression ({e})")
    if not math.isfinite(args.threshold) or args.threshold < 1:
        ap.error(f"--threshold must be a number >= 1, got {args.threshold}")
    if bool(args.base) != bool(args.head):
        ap.error("--base and --head go together")
    if not args.results.is_dir():
        ap.exit(2, f"regressions: {args.results} is not a folder of results\n")
    folders = sorted(p for p in args.results.glob("*") if p.is_dir())
    if args.machine:
        folders = [p for p in folders if p.name == args.machine]
        if not folders:
            ap.exit(2, f"regressions: no results for machine {args.machine!r}\n")
    if not folders:
        ap.exit(2, f"regressions: no machine's results under {args.results}: nothing checked\n")
    try:
        loaded = {folder: load_runs(folder) for folder in folders}
        steps = knownsteps.load(args.known_steps)
    except BadFile as e:
        ap.exit(2, f"regressions: {e}\n")
    pair = None
    if args.base:
        # one commit each, the same on every machine: a prefix of several is refused
        hashes = [run["commit_hash"] for runs in loaded.values() for run in runs]
        try:
            pair = tuple(
                pick_commit(rev, hashes, option, args.results)
                for option, rev in (("--base", args.base), ("--head", args.head))
            )
        except BadCommit as e:
            ap.exit(2, f"regressions: {e}\n")
        if pair[0] == pair[1]:  # a commit against itself: nothing could be found slower
            ap.exit(2, f"regressions: --base {args.base} and --head {args.head} name one commit, "
                    f"{pair[0][:10]}: give two\n")  # fmt: skip
    compared_commits = pair or {r["commit_hash"] for runs in loaded.values() for r in runs[-2:]}
    for sha in sorted(compared_commits):  # the newest two of each machine, or the pair given
        if warning := clone_lacks(sha):
            print(f"regressions: {warning}", file=sys.stderr)
    ours, peers, compared = [], [], 0
    for folder, runs in loaded.items():
        found, others, summary, count = check_machine(
            folder, args.threshold, args.bench, args.public_time, pair, args.cold, runs, steps
        )
        print(summary)
        ours += found
        peers += others
        compared += count
    for line in peers:
        print(line)
    for line in ours:
        print("REGRESSION", line)
    if not compared:
        hint = "" if args.public_time else " (public time is judged with --public-time only)"
        ap.exit(2, f"regressions: no figure of {OURS} compared: nothing checked{hint}\n")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
