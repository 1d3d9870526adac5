"""What the torch_compile peer costs to set up, case by case, in fresh processes as asv's.

usage: python -m rmsnorm_bench.compile_cost [--rounds N] [--cache DIR] [--json FILE]

Each suite's shapes (instrument.shapes_for: the CPU smoke mode's with RMSNORM_BENCH_DEVICE=cpu)
run in a fresh process per suite and round (the suites' processes before they shared one per
round, so that each suite's compiles show apart): the peer made
(instrument.backends.torch_compile), the inputs, validation (its first calls: dynamo's trace,
inductor's graphs compiled or loaded) and one timed call; no timing contract. Every process
shares one inductor cache (--cache; by default an empty folder made here, so that the first
round compiles as on a fresh machine and the next ones load). Printed: seconds per case, the
first case of each process apart, and the inductor and AOT autograd caches' hits and misses.
On the CPU inductor compiles C++, not Triton: the figures show the structure, not an H200's.

Exit status: 0; 1 where a case failed; 2 for bad options or RMSNORM_BENCH_DEVICE.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import ROOT, argument_parser, require_gpu

SUITES = [
    ("fused_add", "backward"),
    ("fused_add", "forward"),
    ("rms_norm", "backward"),
    ("rms_norm", "forward"),
]  # fmt: skip  (asv's order: by class name)


def child(op: str, phase: str) -> None:
    """One process: every case of one suite, one JSON line each, then the process's."""
    start = time.perf_counter()
    import torch  # noqa: F401  (main imported the instrument first: TRITON_INTERPRET)

    from . import instrument

    imported = time.perf_counter() - start
    for shape in instrument.shapes_for(phase):
        before, t0 = instrument.compile_cache_counts(), time.perf_counter()
        fact = {"suite": f"{op} {phase}", "case": shape.label}
        try:
            fn = instrument.backends.torch_compile.make(op)
            p = instrument.make_problem(op, shape)
            instrument.validate(fn, p)
            instrument.timed_call(fn, p, phase)()
        except Exception as e:
            fact["failed"] = f"{type(e).__name__}: {e}"
        after = instrument.compile_cache_counts()
        caches = {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}
        print(json.dumps(dict(fact, seconds=time.perf_counter() - t0, caches=caches)), flush=True)
    total = time.perf_counter() - start
    print(json.dumps({"suite": f"{op} {phase}", "import torch": imported, "process": total}))


def measure(rounds: int, cache: Path) -> list[dict]:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    rows = []
    for round_ in range(1, rounds + 1):
        for op, phase in SUITES:
            command = [sys.executable, "-m", __spec__.name, "--child", op, phase]
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            facts = [json.loads(t) for t in done.stdout.splitlines() if t.startswith("{")]
            if done.returncode or not facts or "process" not in facts[-1]:
                tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
                facts.append({"suite": f"{op} {phase}", "failed": f"the process: {tail[0]}"})
            rows += [dict(f, round=round_) for f in facts]
    return rows


def table(rows: list[dict]) -> str:
    out = ["round  suite               first case   other cases   process   caches (hit/miss)"]
    processes = [r for r in rows if "process" in r]
    for proc in processes:
        cases = [r for r in rows if r.get("case") and (r["round"], r["suite"]) ==
                 (proc["round"], proc["suite"])]  # fmt: skip
        hits = sum(n for r in cases for k, n in r["caches"].items() if k.endswith("_hit"))
        misses = sum(n for r in cases for k, n in r["caches"].items() if k.endswith("_miss"))
        first, rest = cases[0]["seconds"], sum(r["seconds"] for r in cases[1:])
        out.append(f"{proc['round']:>5}  {proc['suite']:<18}  {first:>8.2f} s  {rest:>10.2f} s  "
                   f"{proc['process']:>6.1f} s   {hits}/{misses}")  # fmt: skip
    failed = [r for r in rows if "failed" in r]
    out += [f"FAILED: {r['suite']} {r.get('case', '')}: {r['failed']}" for r in failed]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--rounds", type=int, default=2, help="processes per suite (default 2)")
    ap.add_argument("--cache", type=Path, help="inductor's cache folder (default: a new one)")
    ap.add_argument("--json", type=Path, help="also write every fact to this file")
    ap.add_argument("--child", nargs=2, metavar=("OP", "PHASE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    from . import asvargs, instrument

    if args.child:  # a process of the parent's, which checked all this
        instrument.check_device()
        child(*args.child)
        return 0
    require_gpu(ap, smoke_mode=True)  # before: 30 s, then every case failed on a CUDA error
    try:
        asvargs.check_options()  # RMSNORM_BENCH_SHAPES too, before any process starts
    except ValueError as e:
        ap.exit(2, f"compile_cost: {e}\n")
    if args.rounds < 1:
        ap.exit(2, "compile_cost: --rounds must be at least 1\n")
    if args.json and args.json.exists():
        ap.exit(2, f"compile_cost: {args.json} exists; name a new file\n")
    cache = args.cache or Path(tempfile.mkdtemp(prefix="inductor-cache-"))
    rows = measure(args.rounds, cache)
    print(f"inductor cache: {cache} ({instrument.DEVICE})")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any("failed" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
