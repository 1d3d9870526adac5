"""How much the public call's time moves between fresh processes (GPU machines).

usage: python -m rmsnorm_bench.spread [--processes 6] [--backends triton,torch] [CASE ...]

Each CASE is OP:PHASE:M,N,dtype (default: rms_norm:forward:1,4096,bf16 and
rms_norm:backward:4096,4096,bf16). Every process imports the package afresh and times each
case and backend with the suites' contract (outputs and gradients checked first), backends
side by side in the same process. Printed: each process's median, then per case and backend
the smallest and largest median over the processes and their ratio (the spread).
Without a GPU it runs only in the CPU smoke mode (RMSNORM_BENCH_DEVICE=cpu: Triton's
interpreter, the smoke contract; slow at the default cases), a check of the tool, not a figure.
"""

import json
import subprocess
import sys

from . import ROOT, argument_parser, instrument, require_gpu

DEFAULT_CASES = ("rms_norm:forward:1,4096,bf16", "rms_norm:backward:4096,4096,bf16")


def parse_case(text: str):
    try:
        op, phase, shape = text.split(":")
    except ValueError:
        raise ValueError(f"case {text!r}: expected OP:PHASE:M,N,dtype") from None
    if op not in instrument.OPS or phase not in ("forward", "backward"):
        raise ValueError(f"case {text!r}: OP is one of {instrument.OPS}, PHASE forward/backward")
    return op, phase, instrument.parse_shapes(shape, "case")[0]


def measure(cases, backends) -> dict:
    """{case: {backend: median microseconds}} in this process."""
    c = instrument.device_contract()
    out = {}
    for text in cases:
        op, phase, shape = parse_case(text)
        out[text] = {}
        for backend in backends:
            m = instrument.measure_case(op, phase, shape, backend, c)
            if m.failed or m.skipped:
                raise SystemExit(f"spread: {text} {backend}: {m.failed or m.skipped}")
            out[text][backend] = instrument.median(m.time) * 1e6
    return out


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--processes", type=int, default=6, help="fresh processes (default 6)")
    ap.add_argument("--backends", default="triton,torch", help="comma-separated backends")
    ap.add_argument("--child", action="store_true", help=argparse_hidden())
    ap.add_argument("cases", nargs="*", metavar="CASE")
    args = ap.parse_args(argv)
    cases = args.cases or list(DEFAULT_CASES)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    try:
        for text in cases:
            parse_case(text)
    except ValueError as e:
        ap.error(str(e))
    unknown = [b for b in backends if b not in instrument.BACKENDS]
    if unknown or not backends:
        ap.error(f"--backends: unknown {unknown}; known: {', '.join(instrument.BACKENDS)}")
    if args.processes < 2:
        ap.error("--processes: at least 2")
    require_gpu(ap, smoke_mode=True)  # the processes would each fail on it, one by one
    if args.child:
        print(json.dumps(measure(cases, backends)))
        return 0
    runs = []
    for i in range(args.processes):
        cmd = [sys.executable, "-m", __spec__.name, "--child", "--backends", ",".join(backends)]
        done = subprocess.run(cmd + cases, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            sys.stderr.write(done.stderr)
            return done.returncode
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        line = "; ".join(
            f"{case} " + " ".join(f"{b} {runs[-1][case][b]:.1f}" for b in backends)
            for case in cases
        )
        print(f"process {i + 1}: {line} (us)", flush=True)
    print("case | backend | min us | max us | max/min")
    for case in cases:
        for b in backends:
            values = [r[case][b] for r in runs]
            lo, hi = min(values), max(values)
            print(f"{case} | {b} | {lo:.1f} | {hi:.1f} | {hi / lo:.2f}")
    return 0


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
