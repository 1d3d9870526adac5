"""Compare two commits (or branches) on this machine with `asv continuous`, print the seed-style
table of the second, then gate: exit 1 when this package's figures got significantly slower.

usage: bash scripts/compare [--machine NAME] [--gpu INDEX] [--factor F] [--public-time]
                            [--cpu-affinity LIST] [--no-wait] [--uncommitted]
                            BASE [HEAD] [-- ASV_ARGS...]

Each commit is measured in 3 processes (asv's rounds), interleaved A, B, B, A, A, B, so that
the host's drift between processes hits both alike. asv's own comparison of every figure is
printed as it is, but its exit status is not the verdict: it covers every backend. The gate
(python -m rmsnorm_bench.regressions --base --head) judges the two commits' stored results:
backend triton only (the peers' code did not change; their figures are shown, never gating),
by track_device_time and track_peak_memory; --public-time adds track_time (public-call times
drift between processes on GPU machines). A change counts when larger than F (--factor,
default 1.1, i.e. 10%) and significant by asv's statistics. Ratios < 1 are improvements.
--cpu-affinity LIST (0-3,8) pins the benchmark processes to those CPUs (asv's option). Stored
results of both commits are added to, never lost (see scripts/run). A working tree that
differs from HEAD in what measures or is measured is refused, the files named (exit 2; see
rmsnorm_bench.provenance); --uncommitted measures it anyway, both commits' figures stored in
.asv/uncommitted/results/ (never results/) and judged there.

--self-test [SELFTEST_OPTIONS...] plants regressions on scratch commits and prints what the
gate flags (python -m rmsnorm_bench.selftest --help; every option after --self-test goes to
it; --factor and --cpu-affinity given before it are passed on).

--find A..B BENCHMARK [-- ASV_ARGS...] bisects A..B with `asv find` for the commit that made
BENCHMARK (a full name, e.g. bench_rmsnorm.RMSNormForward.track_device_time) slower; what it
measures (one process per commit, no samples) is not stored.

scripts/compare runs this twice: with --check first, before anything is set up (the arguments
checked, and the machine and GPU printed as shell assignments for scripts/_env.sh), then, in
the environment _env.sh made, with --conf (asv's config for that GPU) and --machine.

Exit status: 0 when the gate finds no regression; 1 when it finds one (REGRESSION above); 2
for refused arguments or when the gate could not judge; asv's status (> 1) where it failed
and nothing was judged; --self-test and --find exit with the status of what they run.
"""

import argparse
import itertools
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from . import (
    ROOT,
    argument_parser,
    asvfiles,
    asvrun,
    machine,
    machine_name,
    provenance,
    regressions,
    report,
)

DEFAULT_FACTOR = 1.1


class Refused(ValueError):
    """Arguments that do not make a comparison; the message names the problem."""


def say(message: str) -> None:
    print(f"compare: {message}", file=sys.stderr, flush=True)


def factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 1):
        raise argparse.ArgumentTypeError(f"takes a number >= 1 (1.1: a 10% change), got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    ap = argument_parser(__spec__.name, __doc__)
    ap.usage = (
        "python -m rmsnorm_bench.compare [--machine NAME] [--gpu INDEX] [--factor F]\n"
        "         [--public-time] [--cpu-affinity LIST] [--no-wait] [--uncommitted]\n"
        "         BASE [HEAD] [-- ASV_ARGS...]\n"
        "       ... [--machine NAME] [--gpu INDEX] --self-test [SELFTEST_OPTIONS...]\n"
        "       ... [--machine NAME] [--gpu INDEX] --find A..B BENCHMARK [-- ASV_ARGS...]"
    )
    ap.allow_abbrev = False  # --self would be --self-test otherwise
    ap.add_argument(
        "--machine",
        type=machine_name,
        metavar="NAME",
        help="the machine's name (default: the GPU's, or cpu-smoke)",
    )
    ap.add_argument(
        "--gpu", metavar="INDEX", help="the index of the GPU to run on (CUDA_VISIBLE_DEVICES)"
    )
    ap.add_argument(
        "--factor", type=factor, metavar="F", help=f"the slowdown that counts ({DEFAULT_FACTOR})"
    )
    ap.add_argument("--public-time", action="store_true", help="let track_time gate too")
    ap.add_argument("--cpu-affinity", metavar="LIST", help="the CPUs benchmarks run on (0-3,8)")
    ap.add_argument("--no-wait", action="store_true", help="refuse if another run is on")
    ap.add_argument(
        "--uncommitted",
        action="store_true",
        help="measure a working tree that differs from HEAD; stored and judged apart",
    )
    ap.add_argument(
        "--self-test", action="store_true", help="plant regressions (the options after it are its)"
    )
    ap.add_argument("--find", nargs=2, metavar=("A..B", "BENCHMARK"), help="bisect with asv find")
    ap.add_argument(
        "--check", action="store_true", help="check, print machine= and gpu= (for _env.sh)"
    )
    ap.add_argument(
        "--conf", type=Path, metavar="FILE", help="asv's config (scripts/compare gives the GPU's)"
    )
    ap.add_argument(
        "revs", nargs="*", metavar="BASE [HEAD]", help="the commits (HEAD by default: HEAD)"
    )
    return ap


def split(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(this tool's arguments, ASV_ARGS, SELFTEST_OPTIONS): asv's follow the first `--`, unless
    --self-test comes before it; then everything after --self-test is the self-test's (a `--`
    of its own too), which argparse does not see."""
    for i, arg in enumerate(argv):
        if arg == "--self-test":
            return argv[: i + 1], [], argv[i + 1 :]
        if arg == "--":
            return argv[:i], argv[i + 1 :], []
    return argv, [], []


def is_commit(rev: str) -> bool:
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True
    )
    return found.returncode == 0


def commit_of(rev: str) -> str:
    return subprocess.run(
        ["git", "rev-parse", f"{rev}^{{commit}}"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def check(args) -> None:
    """Raise Refused where the arguments do not make one comparison, self-test or search."""
    if args.machine is not None and not machine.NAME.fullmatch(args.machine):
        raise Refused(f"machine name {args.machine!r}: {machine.NAME_RULE}")
    if args.gpu is not None and not args.gpu.isdigit():
        raise Refused(f"--gpu takes a GPU index, got {args.gpu!r}")
    if args.self_test is not None and args.find:
        raise Refused("--self-test and --find do not go together")
    what = "--self-test" if args.self_test is not None else "--find" if args.find else None
    if what:
        if args.revs:
            raise Refused(f"{what} takes no BASE/HEAD (got {' '.join(args.revs)})")
        if args.public_time:
            raise Refused(f"--public-time does not go with {what}")
        if args.no_wait and what == "--self-test":
            raise Refused("--no-wait does not go with --self-test")
        if args.uncommitted:
            raise Refused(f"--uncommitted does not go with {what} (--find stores nothing; "
                          "the self-test measures the commit's instrument only)")  # fmt: skip
    if args.find:
        span, bench = args.find
        if ".." not in span or not bench:
            raise Refused("--find needs A..B and a benchmark (see --help)")
        if args.cpu_affinity is not None:
            raise Refused("asv find takes no --cpu-affinity")
        if args.factor is not None:
            raise Refused("--factor does not go with --find")
        if problem := find_bench_problem(bench):
            raise Refused(problem)
    if what:
        return
    if not 1 <= len(args.revs) <= 2:
        raise Refused("give BASE and optionally HEAD (see --help)")
    for rev in args.revs:
        if not is_commit(rev):
            raise Refused(f"{rev!r} is not a commit here")


def find_bench_problem(bench: str, listing: Path = ROOT / "results" / "benchmarks.json"):
    """Why `asv find` would refuse BENCHMARK (a regular expression that must select one
    benchmark), judged from the committed benchmark list before asv builds anything; None
    where it would not, or where the list cannot be read (asv then judges)."""
    try:
        pattern = re.compile(bench)
    except re.error as e:
        return f"--find: {bench!r} is not a regular expression ({e})"
    try:
        listed = asvfiles.read_json(listing)
        names = {  # as asv matches them: name(parameter values) of each set, else the name
            name: [f"{name}({', '.join(combo)})" for combo in itertools.product(*params)]
            if (params := entry.get("params")) else [name]
            for name, entry in listed.items() if name != "version"
        }  # fmt: skip
    except (asvfiles.BadFile, TypeError, AttributeError):
        return None
    matches = [n for n, forms in names.items() if any(map(pattern.search, forms))]
    if not matches:
        return f"--find: {bench!r} selects no benchmark (e.g. RMSNormBackward.track_device_time)"
    if len(matches) > 1 and bench not in matches:
        shown = ", ".join(m.removeprefix("bench_rmsnorm.") for m in matches[:4])
        more = f" and {len(matches) - 4} more" if len(matches) > 4 else ""
        return f"--find: {bench!r} selects {len(matches)} benchmarks ({shown}{more}): name one"
    return None


def status_of(tool, argv: list[str]) -> int:
    """A tool's exit status, run in this process (its refusals exit through SystemExit)."""
    try:
        return tool.main(argv) or 0
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1


def selftest_command(args) -> list[str]:
    """python -m rmsnorm_bench.selftest with this machine, --factor if given, its own options,
    then `--` and asv's (--cpu-affinity added to those it was given after its own `--`)."""
    opts, tail = list(args.self_test), []
    if "--" in opts:
        at = opts.index("--")
        opts, tail = opts[:at], opts[at + 1 :]
    passed = ["--factor", str(args.factor)] if args.factor is not None else []
    affinity = ["--cpu-affinity", args.cpu_affinity] if args.cpu_affinity is not None else []
    return [sys.executable, "-m", "rmsnorm_bench.selftest", "--conf", str(args.conf),
            "--machine", args.machine, *passed, *opts, "--", *affinity, *tail]  # fmt: skip


def find(args) -> int:
    conf, name = str(args.conf), args.machine
    wait = ["--no-wait"] if args.no_wait else []
    asv = ["find", "--config", conf, "--machine", name, "--show-stderr", *args.find]
    return status_of(asvrun, ["--conf", conf, "--machine", name, *wait, "--", *asv, *args.asv])


def compare(args) -> int:
    """asv continuous, the report of HEAD, then the gate's verdict on BASE against HEAD."""
    conf, name = str(args.conf), args.machine
    base, head = args.revs[0], args.revs[1] if len(args.revs) > 1 else "HEAD"
    # the commits, fixed now: a checkout or a moved branch during the run (minutes, and the
    # wait for the lock) would otherwise have the gate judge other commits than asv measured
    base_commit, head_commit = commit_of(base), commit_of(head)
    f = str(args.factor if args.factor is not None else DEFAULT_FACTOR)
    wait = ["--no-wait"] if args.no_wait else []
    # a working tree unlike HEAD's: asvrun refuses it, or with --uncommitted stores both
    # commits' figures apart, where the report and the gate then read them
    apart = ["--uncommitted"] if args.uncommitted else []
    results = ["--results", str(provenance.UNCOMMITTED / "results")] if args.uncommitted else []
    affinity = ["--cpu-affinity", args.cpu_affinity] if args.cpu_affinity is not None else []
    asv = ["continuous", "--config", conf, "--machine", name, "--factor", f, "--split",
           "--show-stderr", *affinity, base_commit, head_commit, *args.asv]  # fmt: skip
    # one run at a time per environment and machine; both commits' stored results kept, merged
    status = status_of(asvrun, ["--conf", conf, "--machine", name, *wait, *apart, "--", *asv])
    if status > 1:
        say(f"failed (exit status {status}; see above): nothing judged")
        return status
    status_of(report, ["--machine", name, "--commit", head_commit, "--no-plot", *results])
    if status == 1:
        say("asv's comparison above flags a slowdown of some figure, of any backend; the gate "
            "judges ours:")  # fmt: skip
    public = ["--public-time"] if args.public_time else []
    gate = status_of(regressions, ["--machine", name, "--threshold", f, *public, *results,
                                   "--base", base_commit, "--head", head_commit])  # fmt: skip
    if gate == 1:
        say(f"{head} is significantly slower than {base} in figures of this package "
            "(REGRESSION above)")  # fmt: skip
    elif gate:
        say(f"the gate could not judge (exit status {gate}; see above)")
    return gate


def main(argv=None) -> int:
    ours, asv, selftest = split(list(sys.argv[1:] if argv is None else argv))
    ap = parser()
    args = ap.parse_args(ours)
    args.asv, args.self_test = asv, selftest if args.self_test else None
    try:
        check(args)
        if args.check and args.conf is not None:
            raise Refused("--conf is scripts/compare's to give (asv's config for the GPU used)")
        if not args.check and (args.conf is None or args.machine is None):
            raise Refused("--conf and --machine are needed: run it as bash scripts/compare")
        if args.check:  # asv's config as asv reads it, before anything is set up (asvrun
            asvfiles.read_conf()  # reads the one scripts/compare gives)
    except (Refused, asvfiles.BadFile) as e:
        ap.exit(2, f"compare: {e}\n")
    if args.check:  # for scripts/_env.sh, which reads `machine` and `gpu`
        print(f"machine={shlex.quote(args.machine or '')}\ngpu={shlex.quote(args.gpu or '')}")
        return 0
    if args.self_test is not None:
        command = selftest_command(args)
        os.execv(command[0], command)  # as exec in a shell: signals reach the self-test itself
    if args.find:
        return find(args)
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
