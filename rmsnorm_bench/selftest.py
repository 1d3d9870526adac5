"""The tracker's self-test: plant regressions on scratch commits and check what it flags.

usage: python -m rmsnorm_bench.selftest --machine NAME [--conf FILE] [--factor F]
                                        [--pairs N] [--find] [--keep] [-- ASV_ARGS...]

(`bash scripts/compare --self-test` sets up the environment and calls it.) On scratch commits
made on top of the current commit (git plumbing: the working tree, the index and the branches
are left alone; a branch selftest/<hash> holds them while the test runs, --keep leaves it),
with results stored apart (.asv/selftest/results, never under results/):

1. unchanged: an empty commit. Each of --pairs (default 1) `asv continuous` runs of the
   current commit against it must flag no gating figure (a false alarm otherwise): device
   time and peak memory of ours on GPU machines, as rmsnorm_bench.regressions gates; in the
   CPU smoke mode, which has neither, our public time;
2. device: the public calls copy a tenth of x's rows (forward) and of dy's (backward) once
   more, about 10% more bytes: every gating device-time figure of a shape of >= 1M
   elements should be flagged (GPU machines; the CPU smoke mode has no device time);
3. host: each public call first waits, on the host, a tenth of the current commit's public
   time of the forward at the smallest shape (as measured in step 1; half of it in the smoke
   mode, where the interpreter's time varies more): its public time, or the public ratio of
   a peer over ours, should be flagged at that shape.

--find then builds a chain of 8 commits (empty commits, the device plant (the host plant in
the smoke mode) fourth), runs `asv find` over it on our forward's device time (public time in
the smoke mode), and checks that asv names the planted commit.

The compares run as scripts/compare's do (asv continuous --factor F (1.05 on GPU machines,
1.25 in the smoke mode, which runs on shared CI hosts), samples of
instrument.PROCESSES processes per commit, interleaved between the two commits); each figure
is judged as rmsnorm_bench.regressions judges it. Printed: per pair, the figures flagged, split
into detections and false alarms (gating figures flagged in the unchanged pair; peers'
figures flagged anywhere; ours in the device pair at shapes the plant does not reach are
not counted either way). RMSNORM_BENCH_BACKENDS and RMSNORM_BENCH_SHAPES narrow what is
measured (the ratio needs torch beside triton); ASV_ARGS (e.g. -b '\\.RMSNormForward\\.') go
to every `asv continuous` (asv find takes its one benchmark from the self-test). A pair with
no gating figure of ours measured in both commits, or a device pair with no device time at
>= 1M elements, is an error (exit 2), never a pass.

Exit status: 0 when there is no false alarm on a gating figure and every planted regression
was detected; 1 otherwise; 2 when it could not run (a dirty package tree is fine: the plants
start from the commit, not the working tree).
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, argument_parser, asvfiles, asvrun, instrument, regressions

STATE = ROOT / ".asv" / "selftest"
PACKAGE_INIT = "rmsnorm_kernels/__init__.py"
PUBLIC = ("rms_norm", "fused_add_rms_norm")  # what the instrument calls
FRACTION = 0.1  # of the rows copied once more by the device plant; of the time the host waits
SMOKE_DELAY = 0.5  # the host plant's fraction in the smoke mode
FACTOR = {"cuda": 1.05, "cpu": 1.25}  # --factor's default
MIN_ELEMENTS = 2**20  # the device plant must be seen at shapes of at least this many elements
CHAIN = 8  # commits in the range asv find searches
RATIO = "track_public_ratio"

DEVICE_PLANT = """

# --- planted by rmsnorm_bench.selftest: a device regression; never merged ---
def _planted(public, fraction={fraction!r}):
    import functools
    import math

    def copy_rows(t):
        rows = t.detach().reshape(-1, t.shape[-1])
        return rows[: max(1, math.ceil(rows.shape[0] * fraction))].clone()

    @functools.wraps(public)
    def call(x, *args, **kwargs):
        copy_rows(x)
        out = public(x, *args, **kwargs)
        y = out[0] if isinstance(out, tuple) else out
        if y.requires_grad:
            y.register_hook(lambda grad: (copy_rows(grad), None)[1])  # grad unchanged
        return out

    return call
"""

HOST_PLANT = """

# --- planted by rmsnorm_bench.selftest: a host-side delay; never merged ---
def _planted(public, seconds={seconds!r}):
    import functools
    import time

    @functools.wraps(public)
    def call(*args, **kwargs):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return public(*args, **kwargs)

    return call
"""

WRAP = "".join(f"\n{name} = _planted({name})" for name in PUBLIC) + "\n"


class SelfTestError(Exception):
    """The self-test could not run (exit status 2)."""


def git(*args: str, stdin: str | None = None, env: dict | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if done.returncode:
        raise SelfTestError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


# commits of the self-test have an author of their own, whatever git's configuration
IDENTITY = {
    "GIT_AUTHOR_NAME": "rmsnorm_bench selftest",
    "GIT_AUTHOR_EMAIL": "selftest@rmsnorm-bench.invalid",
    "GIT_COMMITTER_NAME": "rmsnorm_bench selftest",
    "GIT_COMMITTER_EMAIL": "selftest@rmsnorm-bench.invalid",
}


def commit(parent: str, message: str, changes: dict[str, str] | None = None) -> str:
    """A new commit on `parent` whose tree is the parent's with `changes` (path: new text)
    written in; nothing outside git's object store changes."""
    tree = git("rev-parse", f"{parent}^{{tree}}")
    if changes:
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            git("read-tree", tree, env=env)
            for path, text in changes.items():
                blob = git("hash-object", "-w", "--stdin", stdin=text)
                git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = git("write-tree", env=env)
    return git("commit-tree", tree, "-p", parent, "-m", message, env=IDENTITY)


def planted_init(base: str, plant: str) -> dict[str, str]:
    """The package's __init__.py of `base` with a plant wrapped around the public calls."""
    text = git("show", f"{base}:{PACKAGE_INIT}") + "\n"
    missing = [name for name in PUBLIC if not re.search(rf"\b{name}\b", text)]
    if missing:
        raise SelfTestError(f"{PACKAGE_INIT} of {base[:8]} has no {', '.join(missing)} to plant in")
    return {PACKAGE_INIT: text + plant + WRAP}


@dataclass
class Verdict:
    """What one compare flagged."""

    name: str
    detected: list = field(default_factory=list)
    false_alarms: list = field(default_factory=list)
    other: list = field(default_factory=list)  # flagged, counted neither way
    missed: list = field(default_factory=list)  # expected and not flagged

    @property
    def ok(self) -> bool:
        return not self.false_alarms and not self.missed


def elements(params) -> int:
    shape = instrument.Shape.from_label(params[0])
    return shape.m * shape.n


def reached(params) -> bool:
    """Whether the device plant must show at this case: a shape of >= MIN_ELEMENTS."""
    return elements(params) >= MIN_ELEMENTS


def label(key) -> str:
    bench, params = key
    return f"{bench}({', '.join(map(repr, params))})"


def flagged(old: dict, new: dict, factor: float) -> dict:
    """{(benchmark, params): 'old -> new'} of every figure of either commit that got worse:
    slower by regressions.slower's test, or, for the public ratio (higher is better), lower by
    the same test turned round."""
    before, after = asvfiles.figures(old), asvfiles.figures(new)
    old_stats, new_stats = asvfiles.figure_stats(old), asvfiles.figure_stats(new)
    old_versions, new_versions = asvfiles.versions(old), asvfiles.versions(new)
    out = {}
    for key in sorted(set(before) & set(after)):
        if old_versions[key[0]] != new_versions[key[0]]:
            continue
        a, b, sa, sb = before[key], after[key], old_stats.get(key), new_stats.get(key)
        if regressions.figure_name(key[0]) == RATIO:
            a, b, sa, sb = b, a, sb, sa
        if regressions.slower(a, b, sa, sb, factor):
            out[key] = f"{before[key]:.4g} -> {after[key]:.4g}"
    return out


def gating(key) -> bool:
    """Whether a figure gates: as rmsnorm_bench.regressions judges by default, and our public
    time in the CPU smoke mode, which has no device figures."""
    return regressions.gates(key, public_time=instrument.DEVICE == "cpu")


def judge(kind: str, old: dict, new: dict, factor: float, host_case: str | None = None) -> Verdict:
    """Sort what the compare of `old` (the current commit) and `new` (a scratch commit)
    flagged, for a pair of `kind` unchanged, device or host."""
    v = Verdict(kind)
    found = flagged(old, new, factor)
    judged = [key for key in set(asvfiles.figures(old)) & set(asvfiles.figures(new)) if gating(key)]
    if not judged:
        raise SelfTestError(
            f"{kind} pair: no gating figure of ours was measured in both commits, so nothing "
            "could be judged (do ASV_ARGS or RMSNORM_BENCH_* leave our suites out?)"
        )
    for key, change in found.items():
        bench, params = key
        ours = params[-1] == regressions.OURS
        is_gating = gating(key)
        figure = regressions.figure_name(bench)
        line = f"{label(key)}: {change}"
        if kind == "unchanged":
            (v.false_alarms if is_gating else v.other).append(line)
        elif not ours and figure != RATIO:
            v.other.append(line)  # a peer's: its code did not change, and it never gates
        elif kind == "device" and figure == "track_device_time" and reached(params):
            v.detected.append(line)
        elif kind == "host" and params[0] == host_case and figure in ("track_time", RATIO):
            v.detected.append(line)  # a peer's public time went to v.other above
        else:
            v.other.append(line)
    if kind == "device":
        expected = {
            key
            for key in asvfiles.figures(old)
            if gating(key)
            and regressions.figure_name(key[0]) == "track_device_time"
            and reached(key[1])
        }
        if not expected:
            raise SelfTestError(
                "device pair: no device time of ours at a shape of >= 1M elements was "
                "measured: the plant cannot be judged (add such a shape)"
            )
        v.missed = [label(key) for key in sorted(expected - set(found))]
    if kind == "host":
        hits = [
            key
            for key in found
            if key[1][0] == host_case
            and (
                (key[1][-1] == regressions.OURS and regressions.figure_name(key[0]) == "track_time")
                or regressions.figure_name(key[0]) == RATIO
            )
        ]
        if not hits:
            v.missed = [f"our public time or a peer's ratio at {host_case}"]
    return v


def report(v: Verdict) -> str:
    lines = [
        f"{v.name}: {len(v.detected)} detection(s), {len(v.false_alarms)} false alarm(s), "
        f"{len(v.missed)} missed, {len(v.other)} other figure(s) flagged"
    ]
    for title, items in (
        ("detected", v.detected),
        ("FALSE ALARM", v.false_alarms),
        ("MISSED", v.missed),
        ("flagged, not judged", v.other),
    ):
        lines += [f"  {title}: {item}" for item in items]
    return "\n".join(lines)


class Runner:
    """asv runs against the self-test's own results folder, as scripts/compare runs them."""

    def __init__(self, conf: Path, machine: str, factor: float, asv_args: list[str]):
        self.machine, self.factor, self.asv_args = machine, factor, asv_args
        STATE.mkdir(parents=True, exist_ok=True)
        self.results = STATE / "results"
        settings = asvfiles.read_conf(conf)
        self.env_dir = settings["env_dir"]
        # the copy lives beside the config: asv resolves its paths from the config's folder
        self.conf = conf.resolve().parent / f".asv-selftest-{machine}.json"
        changes = {"results_dir": str(self.results), "html_dir": str(STATE / "html")}
        asvfiles.write_conf(self.conf, changes, conf)

    def asv(self, *args: str) -> int:
        asv_args = [*args, "--config", str(self.conf), "--machine", self.machine]
        asv_args += ["--show-stderr", *self.asv_args]
        command = [sys.executable, "-m", "asv", *asvrun.with_rounds(asv_args)]
        # the locks are the normal runs' (one run per environment at a time); the copy kept
        # around the run is the self-test's own, so that nothing crosses to results/
        return asvrun.run_guarded(
            command, self.machine, self.results, ROOT / ".asv", self.env_dir, keep_in=STATE
        )

    def compare(self, base: str, head: str) -> tuple[dict, dict]:
        status = self.asv("continuous", "--factor", str(self.factor), "--split", base, head)
        if status > 1:
            raise SelfTestError(f"asv continuous {base[:8]} {head[:8]} failed ({status})")
        return self.run_of(base), self.run_of(head)

    def run_of(self, commit_hash: str) -> dict:
        folder = self.results / self.machine
        runs = [r for r in asvfiles.load_runs(folder) if r["commit_hash"] == commit_hash]
        if not runs:
            raise SelfTestError(f"no results of {commit_hash[:8]} in {folder}")
        return runs[-1]

    def close(self):
        self.conf.unlink(missing_ok=True)


def host_delay(run: dict, fraction: float) -> tuple[str, float]:
    """(case, seconds): the smallest shape of our forward measured in `run`, and `fraction`
    of its public time."""
    times = {
        key[1][0]: value
        for key, value in asvfiles.figures(run).items()
        if key[0].endswith("RMSNormForward.track_time")
        and not key[0].endswith("FusedAddRMSNormForward.track_time")
        and key[1][-1] == regressions.OURS
    }
    if not times:
        raise SelfTestError(
            "no public time of our rms_norm forward was measured: the host plant needs one "
            "(leave RMSNormForward in what ASV_ARGS select)"
        )
    case = min(times, key=elements_of_label)
    return case, fraction * times[case]


def elements_of_label(case: str) -> int:
    return elements([case])


def find(runner: Runner, base: str, plant: str, bench: str) -> Verdict:
    """asv find over CHAIN commits whose fourth is planted: does it name that one?"""
    v = Verdict("find")
    tip, planted = base, None
    for i in range(1, CHAIN + 1):
        changes = planted_init(tip, plant) if i == 4 else None
        message = f"selftest: chain commit {i}" + (" (planted)" if changes else "")
        tip = commit(tip, message, changes)
        planted = tip if changes else planted
    git("branch", "-f", branch_name(base) + "-find", tip)
    command = [sys.executable, "-m", "asv", "find", f"{base}..{tip}", bench]
    command += ["--config", str(runner.conf), "--machine", runner.machine, "--show-stderr"]
    with asvrun.Locks(ROOT / ".asv", [f"lock-{Path(runner.env_dir).name}"]):
        done = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
    found = re.search(r"Greatest regression found: ([0-9a-f]{8})", done.stdout + done.stderr)
    if not found:
        raise SelfTestError(f"asv find named no commit (exit status {done.returncode})")
    line = f"asv find on {bench}: named {found.group(1)}, planted {planted[:8]}"
    (v.detected if planted.startswith(found.group(1)) else v.missed).append(line)
    return v


def branch_name(base: str) -> str:
    return f"selftest/{base[:8]}"


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--machine", required=True, help="the machine's name (asv's --machine)")
    ap.add_argument("--conf", type=Path, default=ROOT / "asv.conf.json", help="asv's config")
    ap.add_argument("--factor", type=float, help="the slowdown factor (1.05; smoke mode 1.25)")
    ap.add_argument("--pairs", type=int, default=1, help="unchanged pairs compared (1)")
    ap.add_argument("--find", action="store_true", help="also check asv find (8 commits)")
    ap.add_argument("--keep", action="store_true", help="keep the selftest/ branches")
    ap.add_argument("asv_args", nargs=argparse.REMAINDER, help="-- then options for asv")
    args = ap.parse_args(argv)
    if args.factor is None:
        args.factor = FACTOR[instrument.DEVICE]
    if not math.isfinite(args.factor) or args.factor < 1:
        ap.error(f"--factor must be a number >= 1, got {args.factor}")
    if args.pairs < 1:
        ap.error(f"--pairs must be at least 1, got {args.pairs}")
    asv_args = args.asv_args[1:] if args.asv_args[:1] == ["--"] else args.asv_args
    try:
        return run(args, asv_args)
    except (SelfTestError, ValueError, OSError, asvfiles.BadFile) as e:
        ap.exit(2, f"selftest: {e}\n")
    except asvrun.Busy as e:
        ap.exit(2, f"selftest: refused, another run is on: {e}\n")


def run(args, asv_args: list[str]) -> int:
    asvrun.check_options()
    base = git("rev-parse", "HEAD")
    runner = Runner(args.conf, args.machine, args.factor, asv_args)
    branches = [branch_name(base), branch_name(base) + "-find"]
    gpu = instrument.DEVICE != "cpu"
    verdicts = []
    try:
        for i in range(args.pairs):
            same = commit(base, f"selftest: unchanged (pair {i + 1})")
            git("branch", "-f", branches[0], same)
            old, new = runner.compare(base, same)
            verdicts.append(judge("unchanged", old, new, args.factor))
            verdicts[-1].name = f"unchanged pair {i + 1}"
        host_case, seconds = host_delay(old, FRACTION if gpu else SMOKE_DELAY)
        host_plant = HOST_PLANT.format(seconds=seconds)
        print(f"selftest: host plant: {seconds * 1e6:.3g} us per call ({host_case})", flush=True)
        pairs = [("host", host_plant)]
        if gpu:
            pairs.insert(0, ("device", DEVICE_PLANT.format(fraction=FRACTION)))
        for kind, plant in pairs:
            head = commit(base, f"selftest: planted {kind} regression", planted_init(base, plant))
            git("branch", "-f", branches[0], head)
            old, new = runner.compare(base, head)
            verdicts.append(judge(kind, old, new, args.factor, host_case))
        if args.find:
            figure = "track_device_time" if gpu else "track_time"
            plant = DEVICE_PLANT.format(fraction=FRACTION) if gpu else host_plant
            verdicts.append(find(runner, base, plant, f"bench_rmsnorm.RMSNormForward.{figure}"))
    finally:
        runner.close()
        if not args.keep:
            for name in branches:
                command = ["git", "-C", str(ROOT), "branch", "-q", "-D", name]
                subprocess.run(command, capture_output=True)
    print()
    for v in verdicts:
        print(report(v))
    bad = [v.name for v in verdicts if not v.ok]
    print(f"selftest: {'FAILED: ' + ', '.join(bad) if bad else 'passed'} (factor {args.factor})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
