"""The tracker's self-test: plant regressions on scratch commits and check what it flags.

usage: python -m rmsnorm_bench.selftest --machine NAME [--conf FILE] [--factor F]
                                        [--pairs N] [--find] [--full] [--json FILE]
                                        [--keep] [-- ASV_ARGS...]

(`bash scripts/compare --self-test` sets up the environment and calls it.) Scratch commits
are made on top of the current commit with git plumbing (the working tree, the index and the
branches are left alone; branches selftest/<hash>-* hold them while the test runs, --keep
leaves them), and their results are stored apart (.asv/selftest/results, never results/):

- unchanged (--pairs of them, default 1): empty commits. No gating figure may be flagged
  against the current commit (a false alarm otherwise): device time and peak memory of ours
  on GPU machines, as rmsnorm_bench.regressions gates; in the CPU smoke mode, which has
  neither, our public time;
- device (GPU machines): the public calls copy rows of x (forward) and of dy (backward)
  once more, as many as add a quarter to the bytes each call moves (plants.BYTES_IN_X,
  DEVICE_FRACTION): every gating device-time figure of a shape of >= 1M elements must be
  flagged. The plant's effect on each of them is measured (its value over the current
  commit's) against the factor plus the noise (the figure's largest move in the unchanged
  pairs): where it fell short, the plant is doubled on a new scratch commit and measured
  again with the current commit, up to DEVICE_FRACTION_MAX; a figure still short of it is
  "plant too small" (exit 2: the gate was not tested there), never a miss;
- host: each public call, once done, waits on the host a tenth of the time it took (4 times
  it in the smoke mode, where the interpreter's time varies more): our public time, or the
  public ratio of a peer over ours, must be flagged at the smallest forward shape.

All of them are measured in one `asv run` with the current commit, their rounds interleaved
(instrument.PROCESSES processes per commit, in the order A B C ..., then ... C B A): the
current commit is measured once for every pair, and the host's drift hits every commit
alike. Each pair is then judged as rmsnorm_bench.regressions judges (`asv continuous`'s
test: slower by more than --factor, 1.05 on GPU machines, 2 in the smoke mode, and
significant). Printed: per pair, the figures flagged, split into detections and false alarms
(gating figures flagged in an unchanged pair; peers' figures flagged anywhere, and ours in
the device pair at shapes the plant does not reach, count neither way).

--find then checks `asv find`, which measures each commit once (one process, no
statistics) and names the commit with the largest step of one benchmark's values, taken
over all its cases. So that chance cannot decide it, it searches one figure of ours at one
case (the peers' figures and other cases are left out: their noise would compete with the
plant): in the smoke mode our forward's public time at the smallest shape, under a host
delay of a fixed time; on GPU machines its device time at the largest shape, under the
device plant. The plant's step is FIND_MARGIN times the noise measured above (the largest
relative spread of that figure's samples in the current and unchanged commits), at least
FIND_FLOOR; a machine too noisy for that margin within FIND_CAP is an error (exit 2). The
commit asv names is then confirmed as a user would next: measured against its parent in
PROCESSES interleaved processes each, and judged by the gate. It passes only where asv
names the planted commit (the fourth of a chain of 8) and the gate flags it. Every chain
commit's value is printed.

On a GPU it measures a reduced matrix by default: triton and torch, 1x4096 and 16384x4096
bf16 in every suite (RMSNORM_BENCH_BACKENDS, RMSNORM_BENCH_SHAPES and
RMSNORM_BWD_BENCH_SHAPES set where they are unset); --full measures what a plain run
would. Those variables narrow what is measured in the smoke mode too (the ratio needs torch
beside triton). ASV_ARGS (e.g. -b '\\.RMSNormForward\\.') go to every asv run. A pair with no
gating figure of ours measured in both commits, or a device pair with no device time at
>= 1M elements, is an error (exit 2), never a pass.

The verdict is written as JSON (--json; by default results/<machine>/selftest-<commit8>.json
on GPU machines, .asv/selftest/ in the smoke mode; an existing file is never overwritten:
a -2, -3 ... suffix is added): machine, commit, factor, seconds, the pairs' counts and
find's planted and named commits, the noise and the plant's step.

Exit status: 0 when there is no false alarm on a gating figure and every planted regression
was detected; 1 otherwise; 2 when the device plant was too small (see above) or it could not
run (a dirty package tree is fine: the plants
start from the commit, not the working tree; a working tree whose instrument differs from
HEAD's is refused, the files named: every commit would be measured by it).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from .. import (
    ROOT,
    argument_parser,
    asvargs,
    asvfiles,
    asvrun,
    instrument,
    machine,
    provenance,
    user_path,
)
from ..instrument import fingerprint
from .find import check_find, host_case, plan_find
from .plants import (
    DEVICE_FRACTION,
    DEVICE_FRACTION_MAX,
    FRACTION,
    SMOKE_DELAY,
    SelfTestError,
    commit,
    device_plant,
    git,
    host_plant,
    planted_init,
)
from .verdicts import Verdict, judge, report

STATE = ROOT / ".asv" / "selftest"
# its runs interleave the rounds of several commits: each round one measuring process, not
# a pooled set of them (instrument.processes), whatever the caller's environment says
ONE_PROCESS_A_ROUND = {instrument.PROCESSES_VAR: "1"}
# --factor's default. The smoke mode checks the gate's mechanics, not its resolution: the
# interpreter's public time on a 2-core host with other work on it drifted by up to 1.8x
# between processes of one code (seen here), so it flags only a doubling, and its host
# plant (SMOKE_DELAY) makes calls 5x as long
FACTOR = {"cuda": 1.05, "cpu": 2.0}
# the GPU's reduced matrix: a short case where host time shows, one of >= 1M elements
REDUCED = {
    instrument.BACKENDS_VAR: "triton,torch",
    instrument.FWD_SHAPES_VAR: "1,4096,bf16;16384,4096,bf16",
    instrument.BWD_SHAPES_VAR: "1,4096,bf16;16384,4096,bf16",
}


def without_bench(asv_args: list[str]) -> list[str]:
    """asv options less their benchmark selections (-b/--bench): for runs that select their
    own benchmark."""
    out, skip = [], False
    for arg in asv_args:
        if skip:
            skip = False
        elif arg in ("-b", "--bench"):
            skip = True
        elif not asvargs.gives_bench(arg):
            out.append(arg)
    return out


class Runner:
    """asv runs against the self-test's own results folder, as scripts/compare runs them."""

    def __init__(self, conf: Path, machine: str, asv_args: list[str]):
        self.machine, self.asv_args = machine, asv_args
        STATE.mkdir(parents=True, exist_ok=True)
        self.results = STATE / "results"
        settings = asvfiles.read_conf(conf)
        self.env_dir = settings["env_dir"]
        # the copy lives beside the config: asv resolves its paths from the config's folder
        self.conf = conf.resolve().parent / f".asv-selftest-{machine}.json"
        changes = {"results_dir": str(self.results), "html_dir": str(STATE / "html")}
        asvfiles.write_conf(self.conf, changes, conf)

    def measure(self, commits: list[str], env: dict | None = None, bench: str = "") -> dict:
        """{hash: its stored run} of `commits`, measured by one `asv run` whose rounds are
        interleaved between them (`env`: variables set for it; `bench`: one benchmark
        selection in place of ASV_ARGS' own)."""
        hashes = STATE / "commits.txt"
        hashes.write_text("".join(f"{c}\n" for c in commits))
        # the cases measured only (asvargs.measured_only), unless ASV_ARGS select their own
        args = without_bench(self.asv_args) + ["-b", bench] if bench else self.asv_args
        asv_args = ["run", "--config", str(self.conf), "--machine", self.machine]
        asv_args += ["--show-stderr", "--record-samples", *args, f"HASHFILE:{hashes}"]
        asv_args = asvargs.with_rounds(asvargs.measured_only(asv_args))
        command = [sys.executable, "-m", "asv", *asv_args]
        # the locks are the normal runs' (one run per environment at a time); the copy kept
        # around the run is the self-test's own, so that nothing crosses to results/
        status = asvrun.run_guarded(
            command,
            self.machine,
            self.results,
            ROOT / ".asv",
            self.env_dir,
            env={**os.environ, **ONE_PROCESS_A_ROUND, **(env or {})},
            keep_in=STATE,
        )
        if status > 1:
            raise SelfTestError(f"asv run of {len(commits)} commit(s) failed ({status})")
        return {c: self.run_of(c) for c in commits}

    def find(self, revisions: str, bench: str, env: dict) -> str:
        """What `asv find` printed for `bench` over `revisions` (its results are stored)."""
        command = [sys.executable, "-m", "asv", "find", revisions, bench, "--config"]
        command += [str(self.conf), "--machine", self.machine, "--show-stderr"]
        with asvrun.Locks(ROOT / ".asv", [f"lock-{Path(self.env_dir).name}"]):
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                env={**os.environ, **ONE_PROCESS_A_ROUND, **env},
            )
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        return done.stdout + done.stderr

    def stored(self, commit_hash: str) -> dict | None:
        runs = asvfiles.load_runs(self.results / self.machine) if self.has_results() else []
        runs = [r for r in runs if r["commit_hash"] == commit_hash]
        return runs[-1] if runs else None

    def has_results(self) -> bool:
        return (self.results / self.machine).is_dir()

    def run_of(self, commit_hash: str) -> dict:
        run = self.stored(commit_hash)
        if run is None:
            raise SelfTestError(f"no results of {commit_hash[:8]} in {self.results / self.machine}")
        return run

    def close(self):
        self.conf.unlink(missing_ok=True)


def branch_name(base: str) -> str:
    return f"selftest/{base[:8]}"


def verdict_path(args, machine: str, base: str) -> Path:
    """Where the verdict goes: --json, else the machine's results (GPU) or the self-test's
    own folder (smoke mode); an existing file gets a numbered sibling, never overwritten."""
    if args.json:
        path = args.json
    elif instrument.DEVICE == "cpu":
        path = STATE / f"selftest-{machine}-{base[:8]}.json"
    else:
        path = ROOT / "results" / machine / f"selftest-{base[:8]}.json"
    n, candidate = 1, path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def verdict_json(args, base: str, seconds: float, verdicts: list, found: dict | None) -> dict:
    def counts(v: Verdict) -> dict:
        kind = v.name.split()[0]
        n = {"false_alarms": len(v.false_alarms), "detections": len(v.detected)}
        return {"kind": kind, **n, "misses": len(v.missed), "plant_too_small": len(v.too_small)}

    pairs = [counts(v) for v in verdicts if v.name != "find"]
    find = None
    if found is not None:
        find = {key: found[key] for key in ("planted", "named")}
        find["ok"] = next(v.ok for v in verdicts if v.name == "find")
        find.update({key: found[key] for key in ("bench", "case", "noise", "step")})
    return {
        "machine": args.machine,
        "commit": base,
        "factor": args.factor,
        "seconds": round(seconds, 1),
        "passed": all(v.ok and not v.too_small for v in verdicts),
        "measured": {var: os.environ.get(var, "") for var in REDUCED},
        "pairs": pairs,
        "find": find,
    }


def main(argv=None) -> int:
    ap = argument_parser("rmsnorm_bench.selftest", __doc__)
    ap.add_argument("--machine", required=True, help="the machine's name (asv's --machine)")
    ap.add_argument("--conf", type=Path, default=ROOT / "asv.conf.json", help="asv's config")
    ap.add_argument("--factor", type=float, help="the slowdown factor (1.05; smoke mode 2)")
    ap.add_argument("--pairs", type=int, default=1, help="unchanged pairs compared (1)")
    ap.add_argument("--find", action="store_true", help="also check asv find (8 commits)")
    ap.add_argument("--full", action="store_true", help="GPU: the default matrix, not the reduced")
    ap.add_argument("--json", type=user_path, help="where the verdict is written (see above)")
    ap.add_argument("--keep", action="store_true", help="keep the selftest/ branches")
    ap.add_argument("asv_args", nargs=argparse.REMAINDER, help="-- then options for asv")
    args = ap.parse_args(argv)
    # it names files and folders (the config's copy, results/<machine>/), as compare checks it
    if not machine.NAME.fullmatch(args.machine):
        ap.error(f"machine name {machine.shown(args.machine)}: {machine.NAME_RULE}")
    if args.factor is None:
        args.factor = FACTOR[instrument.DEVICE]
    if not math.isfinite(args.factor) or args.factor < 1:
        ap.error(f"--factor must be a number >= 1, got {args.factor}")
    if args.pairs < 1:
        ap.error(f"--pairs must be at least 1, got {args.pairs}")
    if args.json is not None and (args.json.is_dir() or not args.json.parent.is_dir()):
        ap.error(f"--json {args.json}: not a file in an existing folder")
    asv_args = args.asv_args[1:] if args.asv_args[:1] == ["--"] else args.asv_args
    try:
        return run(args, asv_args)
    except (SelfTestError, ValueError, OSError, asvfiles.BadFile) as e:
        ap.exit(2, f"selftest: {e}\n")
    except asvrun.Busy as e:
        ap.exit(2, f"selftest: refused, another run is on: {e}\n")


def run(args, asv_args: list[str]) -> int:
    start = time.monotonic()
    gpu = instrument.DEVICE != "cpu"
    if gpu and not args.full:
        for var, value in REDUCED.items():
            os.environ.setdefault(var, value)
    asvargs.check_options()
    # the plants start from the commit (a dirty package is fine), but every commit is measured
    # by this working tree's instrument, and the verdict is stored as the commit's
    changed = provenance.changed_files(ROOT, provenance.MEASURING)
    if changed:
        raise SelfTestError(provenance.refusal(changed, "the self-test", flag=False))
    if problem := fingerprint.undeclared(ROOT):
        raise SelfTestError(f"refused: {problem}")
    base = git("rev-parse", "HEAD")
    runner = Runner(args.conf, args.machine, asv_args)
    prefix = branch_name(base)
    branches = []
    verdicts, found = [], None
    try:
        pairs = [(f"unchanged pair {i + 1}", None) for i in range(args.pairs)]
        if gpu:
            pairs.append(("device", device_plant(DEVICE_FRACTION)))
        pairs.append(("host", host_plant(fraction=FRACTION if gpu else SMOKE_DELAY)))
        heads = []
        for name, plant in pairs:
            changes = planted_init(base, plant) if plant else None
            heads.append(commit(base, f"selftest: {name}", changes))
            branches.append(f"{prefix}-{name.split()[0]}{len(branches)}")
            git("branch", "-f", branches[-1], heads[-1])
        case = host_case()
        print(f"selftest: {len(heads)} scratch commit(s) measured with {base[:8]}", flush=True)
        runs = runner.measure([base, *heads])
        same = [runs[h] for (n, _), h in zip(pairs, heads, strict=True) if n[0] == "u"]
        for (name, _), head in zip(pairs, heads, strict=True):
            kind = name.split()[0]
            verdicts.append(judge(kind, runs[base], runs[head], args.factor, case, same))
            verdicts[-1].name = name
        if gpu:
            fraction = size_device_plant(runner, base, verdicts, args.factor, same, branches)
        if args.find:
            same = [runs[base]] + [
                runs[h] for (n, _), h in zip(pairs, heads, strict=True) if n[0] == "u"
            ]
            plan = plan_find(gpu, same, runs[base])
            branches.append(f"{prefix}-find")
            v, found = check_find(runner, base, plan, args.factor, branches[-1])
            found.update(bench=plan.bench, case=plan.case, noise=plan.noise, step=plan.step)
            verdicts.append(v)
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
    small = [item for v in verdicts for item in v.too_small]
    seconds = time.monotonic() - start
    # under the results' lock: a run settling beside it restores the folder it had copied
    with asvrun.Locks(ROOT / ".asv", [f"lock-results-{args.machine}"]):
        path = verdict_path(args, args.machine, base)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = verdict_json(args, base, seconds, verdicts, found)
        record["device_fraction"] = fraction if gpu else None
        text = json.dumps(record, indent=1) + "\n"
        path.write_text(text)
    print(f"selftest: verdict written to {path}")
    if small:  # the gate was not tested there: neither a pass nor a miss
        print(f"selftest: plant too small: at {len(small)} figure(s) the device plant, at "
              f"{fraction:.0%} more bytes, moved the figure by less than the factor plus the "
              "noise, so the gate could not be tested there (exit 2)")  # fmt: skip
        return 2
    result = "FAILED: " + ", ".join(bad) if bad else "passed"
    print(f"selftest: {result} (factor {args.factor}, {seconds:.0f} s)")
    return 1 if bad else 0


def size_device_plant(runner, base, verdicts, factor, same, branches) -> float:
    """The device plant sized by its measured effect: while it moved a gated figure by less
    than the factor plus the noise (the device verdict's too_small), plant twice the bytes
    on a new scratch commit, measure it with the base again, and judge it in place of the
    last; up to DEVICE_FRACTION_MAX. Returns the fraction of the plant judged last."""
    at = next(i for i, v in enumerate(verdicts) if v.name == "device")
    fraction = DEVICE_FRACTION
    while verdicts[at].too_small and fraction * 2 <= DEVICE_FRACTION_MAX:
        fraction *= 2
        print(f"selftest: the device plant moved {len(verdicts[at].too_small)} figure(s) by "
              f"less than the factor plus the noise; planting {fraction:.0%} more bytes",
              flush=True)  # fmt: skip
        changes = planted_init(base, device_plant(fraction))
        head = commit(base, f"selftest: device, {fraction:.0%} more bytes", changes)
        branches.append(f"{branch_name(base)}-device{fraction:.0%}".replace("%", "pc"))
        git("branch", "-f", branches[-1], head)
        runs = runner.measure([base, head])
        verdicts[at] = judge("device", runs[base], runs[head], factor, None, same)
        verdicts[at].name = "device"
        verdicts[at].notes.append(f"the plant: {fraction:.0%} more bytes (sized by its effect)")
    return fraction
