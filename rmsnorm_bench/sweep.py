"""Time the Triton kernels under alternative launch heuristics (GPU only; a tuning aid).

usage: python -m rmsnorm_bench.sweep [--forward | --backward] [--current | --try NAME=V1,V2 ...]
                                     [--peer BACKEND ...] [SHAPE ...]

For each setting of the constants in rmsnorm_kernels._config listed in SETTINGS it prints
the device-only time (CUDA-graph replay, the suites' method) of the public forward and
backward of both ops (--forward or --backward: only that phase), and the bandwidth over
ideal bytes. --current times the constants as they are, without the alternatives (e.g. to
compare shapes); --try (repeatable) times every combination of the values given instead.
--peer (repeatable) also times that backend of the suites (e.g. torch_compile) at each shape,
in the same process, so that a setting can be judged against it side by side.
SHAPE is M,N,dtype (default: the large default shapes). Exits 1 where no case has a time,
2 without a GPU (or in the CPU smoke mode, RMSNORM_BENCH_DEVICE=cpu).
The thresholds in _config.py cite the runs of this tool (formerly scripts/sweep-config) that
chose them.
"""

import functools
import itertools
import sys

from . import argument_parser, instrument, require_gpu

# (phase, overrides of _config constants); the forward grid ignores the backward's constants
SETTINGS = [
    ("forward", {"ELEMENTS_PER_WARP": 512}),
    ("forward", {"ELEMENTS_PER_WARP": 1024}),
]
for prefetch, tile, per_sm in itertools.product([False, True], [8192, 16384], [1, 2]):
    backward = {"BACKWARD_PREFETCH": prefetch, "BACKWARD_TILE_BYTES": tile}
    SETTINGS.append(("backward", {**backward, "BACKWARD_PROGRAMS_PER_SM": per_sm}))
BIG = [(16384, 4096, "bf16"), (8192, 8192, "bf16"), (32768, 8192, "bf16"), (4096, 4096, "f32")]
CONTRACT = instrument.Contract(warmup=3, iters=20, samples=5)


def parse_value(text):
    return text == "True" if text in ("True", "False") else int(text)


def parse_try(text: str):
    """NAME=V1,V2 -> (NAME, [V1, V2]) with ints or booleans."""
    name, sep, values = text.partition("=")
    try:
        if not (name and sep and values):
            raise ValueError
        return name, [parse_value(v) for v in values.split(",")]
    except ValueError:
        raise ValueError(f"--try {text}: expected NAME=V1,V2 of ints or True/False") from None


def settings(phases, current: bool, tried: dict) -> list:
    """(phase, overrides) to time: SETTINGS, the current constants only, or --try's grid."""
    chosen = SETTINGS
    if current:
        chosen = [("forward", {}), ("backward", {})]
    if tried:
        combos = [dict(zip(tried, c, strict=True)) for c in itertools.product(*tried.values())]
        chosen = [(phase, c) for phase in ("forward", "backward") for c in combos]
    return [(phase, overrides) for phase, overrides in chosen if phase in phases]


def time_case(backend, op, phase, shape):
    """(device seconds per call, None) or (None, why it has no time)."""
    try:
        fn = instrument.make_backend(backend, op)
        p = instrument.make_problem(op, shape)
        instrument.validate(fn, p)  # a setting that computes wrong results has no time
        make_call = functools.partial(instrument.timed_call, fn, p, phase)
        return instrument.median(instrument.device_seconds_per_call(make_call, CONTRACT)), None
    except Exception as e:  # report and go on with the other settings
        return None, f"{type(e).__name__}: {e}".splitlines()[0][:200]


def report(op, phase, shape, t, error, setting) -> bool:
    """Print one row; True where the case has a time."""
    if t is None:
        print(f"{op:9} {phase:9} {shape.label:16} FAILED  {setting}: {error}", flush=True)
        return False
    gbs = instrument.ideal_bytes(op, phase, shape) / t / 1e9
    print(f"{op:9} {phase:9} {shape.label:16} {t * 1e6:10.1f} {gbs:6.0f}  {setting}", flush=True)
    return True


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--forward", action="store_true", help="time the forward only")
    only.add_argument("--backward", action="store_true", help="time the backward only")
    ap.add_argument("--current", action="store_true", help="the constants as they are")
    ap.add_argument("--try", dest="tried", action="append", default=[], metavar="NAME=V1,V2")
    peers = [b for b in instrument.BACKENDS if b != "triton"]
    ap.add_argument("--peer", action="append", default=[], choices=peers, metavar="BACKEND")
    ap.add_argument("shapes", nargs="*", metavar="SHAPE", help="M,N,dtype")
    args = ap.parse_args(argv)
    try:
        tried = dict(map(parse_try, args.tried))
        shapes = instrument.parse_shapes(";".join(args.shapes), "SHAPE") if args.shapes else None
    except ValueError as e:
        ap.error(str(e))
    shapes = shapes or [instrument.Shape(*s) for s in BIG]
    phases = ("forward",) if args.forward else ("backward",) if args.backward else None
    phases = phases or ("forward", "backward")

    from rmsnorm_kernels import _config, ops

    unknown = [name for name in tried if not hasattr(_config, name)]
    if unknown:
        ap.error(f"--try: rmsnorm_kernels._config has no {', '.join(unknown)}")
    require_gpu(ap)  # without one every case would fail, each with the same error
    chosen = settings(phases, args.current, tried)
    defaults = {name: getattr(_config, name) for _, o in chosen for name in o}
    print("op        phase     shape            device us   GB/s  setting")
    timed = []  # one entry per case: whether it has a time
    for shape, op in itertools.product(shapes, instrument.OPS):
        for phase, overrides in chosen:
            for name, value in {**defaults, **overrides}.items():
                setattr(_config, name, value)
            ops.clear_caches()
            t, error = time_case("triton", op, phase, shape)
            setting = " ".join(f"{k}={v}" for k, v in overrides.items())
            timed.append(report(op, phase, shape, t, error, setting))
        for phase, peer in itertools.product(phases, args.peer):
            t, error = time_case(peer, op, phase, shape)
            timed.append(report(op, phase, shape, t, error, f"peer {peer}"))
    failed = timed.count(False)
    if failed:  # a setting that computes wrong results has no time; the others still count
        print(f"sweep: {failed} of {len(timed)} cases FAILED", file=sys.stderr)
    return 1 if timed and not any(timed) else 0


if __name__ == "__main__":
    sys.exit(main())
