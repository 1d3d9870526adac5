"""The markdown of a pull request's benchmark comment, from the stored results of two commits.

usage: python -m rmsnorm_bench.prcomment --base REV --head REV [--machine NAME]
                                         [--threshold 1.1] [--public-time] [--results DIR]
                                         [--known-steps FILE] [--out FILE]

What `scripts/compare BASE HEAD` measured on one machine (`asv continuous` stores both
commits' results), as a comment: the verdict of the gate (rmsnorm_bench.regressions, the same
rule: this package's device time and peak memory, slower by more than --threshold and
significant by asv's test; a known step of docs/known-steps.json does not fail it), the gated
figures that changed by more than the threshold either way with their ratio head/base and
significance, then every gated figure in a folded table; ours against each peer at the head
(device time, a peer's over ours: above 1, ours is faster); the machine (GPU, torch, Triton,
CUDA, driver) and both commits. The workflow .github/workflows/benchmark-pr.yml posts it.

--machine defaults to the only machine under --results that holds both commits. Exit status
0 with the comment written (whatever the verdict: scripts/compare's exit status is the gate);
2 where the input is bad (no such commit, results or machine, named; a bad threshold).
"""

import math
import sys
from pathlib import Path

from . import ROOT, argument_parser, knownsteps, revision
from .asvfiles import BadCommit, BadFile, figure_stats, figures, load_runs, pick_commit, versions
from .regressions import OURS, RATIO, figure_name, gates, worse

DEVICE = "track_device_time"  # ours against the peers, at the head


class CommentError(ValueError):
    pass


def significance(old_stats, new_stats) -> str:
    """ "yes"/"no" by asv's test where both commits recorded samples of more than one repeat,
    else "n/a"."""
    if old_stats and new_stats and old_stats[0] and new_stats[0]:
        if old_stats[0].get("repeat", 0) != 1 and new_stats[0].get("repeat", 0) != 1:
            from asv import _stats

            different = _stats.is_different(old_stats[1], new_stats[1], old_stats[0], new_stats[0])
            return "yes" if different else "no"
    return "n/a"


def pretty(value: float, bench: str) -> str:
    if figure_name(bench) == "track_peak_memory":
        return f"{value / 2**20:.2f} MiB"
    if "time" in figure_name(bench):
        return f"{value * 1e6:.2f} us"
    return f"{value:.4g}"


def label(key) -> str:
    bench, params = key
    suite = ".".join(bench.split(".")[1:])
    return f"`{suite}` {params[0]}" if params else f"`{suite}`"


def gated_rows(old: dict, new: dict, threshold: float, public_time: bool, steps, machine: str):
    """[(key, base, head, ratio, significance, verdict)] of every gating figure of ours
    measured in both commits by the same method; verdict "regression", "known step", "faster",
    "slower, not significant", or "" (within the threshold)."""
    before, after = figures(old), figures(new)
    old_stats, new_stats = figure_stats(old), figure_stats(new)
    old_versions, new_versions = versions(old), versions(new)
    rows = []
    for key in sorted(set(before) & set(after)):
        if not gates(key, public_time) or old_versions[key[0]] != new_versions[key[0]]:
            continue
        a, b = before[key], after[key]
        ratio = b / a if a else math.inf if b else 1.0
        sig = significance(old_stats.get(key), new_stats.get(key))
        # the public ratio (torch's time over ours) is higher where ours is faster
        old_cost, new_cost = (b, a) if figure_name(key[0]) == RATIO else (a, b)
        verdict = ""
        if worse(key, a, b, old_stats.get(key), new_stats.get(key), threshold):
            name = f"{key[0]}({', '.join(map(repr, key[1]))})"
            step = knownsteps.explain(steps, name, old["commit_hash"], new["commit_hash"], machine)
            verdict = f"known step: {step['reason']}" if step else "regression"
        elif new_cost > threshold * old_cost:
            verdict = "slower, not significant"
        elif old_cost > threshold * new_cost and sig != "no":
            verdict = "faster"
        rows.append((key, a, b, ratio, sig, verdict))
    return rows


def peer_rows(run: dict) -> tuple[list[str], list[list[str]]]:
    """(peers, [[suite and case, ours, peer/ours for each peer]]) of the device time at `run`."""
    values = figures(run)
    ours = {(b, p[0]): v for (b, p), v in values.items() if p and p[-1] == OURS}
    peers = sorted({p[-1] for (b, p) in values if p and p[-1] != OURS and figure_name(b) == DEVICE})
    rows = []
    for (bench, case), mine in sorted(ours.items()):
        if figure_name(bench) != DEVICE:
            continue
        cells = []
        for peer in peers:
            theirs = values.get((bench, (case, peer)))
            cells.append(f"{theirs / mine:.2f}x" if theirs and mine else "")
        rows.append([label((bench, (case,))), pretty(mine, bench), *cells])
    return peers, rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def comment(
    results: Path,
    base: str,
    head: str,
    machine: str | None = None,
    threshold: float = 1.1,
    public_time: bool = False,
    steps=(),
) -> str:
    """The markdown; CommentError names what is missing."""
    folders = sorted(p for p in results.glob("*") if p.is_dir())
    if machine is not None:
        folders = [p for p in folders if p.name == machine]
        if not folders:
            raise CommentError(f"no results for machine {machine!r} under {results}")
    loaded = {f.name: load_runs(f) for f in folders}
    hashes = [r["commit_hash"] for runs in loaded.values() for r in runs]
    try:
        base = pick_commit(base, hashes, "--base", results)
        head = pick_commit(head, hashes, "--head", results)
    except BadCommit as e:
        raise CommentError(str(e)) from None
    if base == head:
        raise CommentError(f"--base and --head name one commit, {base[:10]}: give two")
    both = [m for m, runs in loaded.items() if {base, head} <= {r["commit_hash"] for r in runs}]
    if len(both) != 1:
        where = f"machines {both}" if both else "no machine"
        raise CommentError(
            f"{where} under {results} hold(s) results of both {base[:8]} and {head[:8]}: "
            "name one with --machine"
        )
    name = both[0]
    old = next(r for r in loaded[name] if r["commit_hash"] == base)
    new = next(r for r in loaded[name] if r["commit_hash"] == head)
    rows = gated_rows(old, new, threshold, public_time, list(steps), name)
    if not rows:
        raise CommentError(
            f"{name}: no gating figure of {OURS} measured in both {base[:8]} and {head[:8]} "
            "by the same method: nothing to compare"
            + ("" if public_time else " (public time is compared with --public-time only)")
        )
    regressed = [r for r in rows if r[5] == "regression"]
    known = [r for r in rows if r[5].startswith("known step")]
    faster = [r for r in rows if r[5] == "faster"]
    params = new["params"]
    if regressed:
        verdict = f"**Regression**: {len(regressed)} figure(s) of ours slower than {threshold}x"
    else:
        verdict = f"**No regression** in {len(rows)} figures of ours (threshold {threshold}x)"
    verdict += f"; {len(faster)} faster" + (f"; {len(known)} known step(s)" if known else "")

    def row(r):
        key, a, b, ratio, sig, what = r
        return [label(key), pretty(a, key[0]), pretty(b, key[0]), f"{ratio:.3f}", sig, what]

    header = ["figure", "base", "head", "head/base", "significant", "verdict"]
    changed = [row(r) for r in rows if r[5]]
    peers, versus = peer_rows(new)
    parts = [
        f"### Benchmark: `{head[:8]}` against `{base[:8]}` on {name}",
        verdict,
        table(header, changed)
        if changed
        else "No gated figure changed by more than the threshold.",
        f"<details><summary>All {len(rows)} gated figures (device time, peak memory"
        + (", public time" if public_time else "")
        + ")</summary>\n\n"
        + table(header, [row(r) for r in rows])
        + "\n\n</details>",
    ]
    if versus:
        parts.append(
            f"<details><summary>Ours against each peer at `{head[:8]}` (device time; a peer's "
            "over ours, above 1: ours faster)</summary>\n\n"
            + table(["case", "ours", *peers], versus)
            + "\n\n</details>"
        )
    facts = ", ".join(
        f"{k} {params[k]}" for k in ("gpu", "torch", "triton", "cuda", "driver") if params.get(k)
    )
    parts.append(
        f"Machine: {name} ({facts}). Commits: base {base}, head {head}. "
        "Gate: `python -m rmsnorm_bench.regressions` (docs/tracker.md)."
    )
    return "\n\n".join(parts) + "\n"


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--base", type=revision, required=True, help="the PR's base commit")
    ap.add_argument("--head", type=revision, required=True, help="the PR's head commit")
    ap.add_argument("--machine", help="default: the one machine holding both commits")
    ap.add_argument("--threshold", type=float, default=1.1, help="the gate's factor (1.1)")
    ap.add_argument("--public-time", action="store_true", help="gate public time too")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument("--known-steps", type=Path, default=knownsteps.FILE)
    ap.add_argument("--out", type=Path, help="write the markdown here (default: stdout)")
    args = ap.parse_args(argv)
    if not math.isfinite(args.threshold) or args.threshold < 1:
        ap.error(f"--threshold must be a number >= 1, got {args.threshold}")
    if not args.results.is_dir():
        ap.exit(2, f"prcomment: {args.results} is not a folder of results\n")
    try:
        text = comment(
            args.results,
            args.base,
            args.head,
            args.machine,
            args.threshold,
            args.public_time,
            knownsteps.load(args.known_steps),
        )
    except (CommentError, BadFile) as e:
        ap.exit(2, f"prcomment: {e}\n")
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
