"""Time the Triton kernels under alternative launch heuristics (GPU only; a tuning aid).

usage: python -m rmsnorm_bench.sweep [--forward | --backward] [--current | --try NAME=V1,V2 ...]
                                     [--peer BACKEND ...] [--rounds R] [SHAPE ...]

For each setting of the constants in rmsnorm_kernels._config listed in SETTINGS it prints
the device-only time (CUDA-graph replay, the suites' method) of the public forward and
backward of both ops (--forward or --backward: only that phase), and the bandwidth over
ideal bytes. --current times the constants as they are, without the alternatives (e.g. to
compare shapes); --try (repeatable) times every combination of the values given instead.
--peer (repeatable) also times that backend of the suites (e.g. torch_compile) at each shape,
in the same process, so that a setting can be judged against it side by side.
--rounds R times every case of a shape R times, in turns (each setting and peer once a
round), and prints the median and the spread (largest less smallest, over the median): one
measurement of a case can be off by more than the difference between two settings.
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


def report(op, phase, shape, times, error, setting) -> bool:
    """Print one row, the median of its rounds' times; True where the case has a time."""
    if error is not None:
        print(f"{op:9} {phase:9} {shape.label:16} FAILED  {setting}: {error}", flush=True)
        return False
    t = instrument.median(times)
    gbs = instrument.ideal_bytes(op, phase, shape) / t / 1e9
    spread = f"{(max(times) - min(times)) / t:6.1%}" if len(times) > 1 else f"{'-':>6}"
    row = f"{op:9} {phase:9} {shape.label:16} {t * 1e6:10.2f} {gbs:6.0f} {spread}  {setting}"
    print(row, flush=True)
    return True


def time_shape(op, shape, cases, defaults, rounds) -> list:
    """Each case's (times, error) at one shape: every case once a round, in turns, so that a
    drift of the GPU's clock or temperature reaches every case alike. A case that fails once
    is not timed again. Ours' cases run under their overrides of ``defaults``, which are the
    constants again afterwards."""
    from rmsnorm_kernels import _config, ops

    def configure(overrides):
        for name, value in {**defaults, **overrides}.items():
            setattr(_config, name, value)
        ops.clear_caches()

    times, errors = [[] for _ in cases], [None for _ in cases]
    try:
        for _ in range(rounds):
            for i, (phase, backend, overrides) in enumerate(cases):
                if errors[i] is not None:
                    continue
                if backend == "triton":
                    configure(overrides)
                t, errors[i] = time_case(backend, op, phase, shape)
                if t is not None:
                    times[i].append(t)
    finally:
        configure({})
    return list(zip(times, errors, strict=True))


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--forward", action="store_true", help="time the forward only")
    only.add_argument("--backward", action="store_true", help="time the backward only")
    ap.add_argument("--current", action="store_true", help="the constants as they are")
    ap.add_argument("--try", dest="tried", action="append", default=[], metavar="NAME=V1,V2")
    peers = [b for b in instrument.BACKENDS if b != "triton"]
    ap.add_argument("--peer", action="append", default=[], choices=peers, metavar="BACKEND")
    ap.add_argument("--rounds", type=int, default=1, metavar="R", help="rounds of every case")
    ap.add_argument("shapes", nargs="*", metavar="SHAPE", help="M,N,dtype")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: expected 1 or more")
    try:
        tried = dict(map(parse_try, args.tried))
        shapes = instrument.parse_shapes(";".join(args.shapes), "SHAPE") if args.shapes else None
    except ValueError as e:
        ap.error(str(e))
    shapes = shapes or [instrument.Shape(*s) for s in BIG]
    phases = ("forward",) if args.forward else ("backward",) if args.backward else None
    phases = phases or ("forward", "backward")

    from rmsnorm_kernels import _config

    unknown = [name for name in tried if not hasattr(_config, name)]
    if unknown:
        ap.error(f"--try: rmsnorm_kernels._config has no {', '.join(unknown)}")
    require_gpu(ap)  # without one every case would fail, each with the same error
    chosen = settings(phases, args.current, tried)
    defaults = {name: getattr(_config, name) for _, o in chosen for name in o}
    cases = [(phase, "triton", overrides) for phase, overrides in chosen]
    cases += [(phase, peer, {}) for phase, peer in itertools.product(phases, args.peer)]
    print(f"{'op':9} {'phase':9} {'shape':16} {'device us':>10} {'GB/s':>6} {'spread':>6}  setting")
    timed = []  # one entry per case: whether it has a time
    for shape, op in itertools.product(shapes, instrument.OPS):
        measured = time_shape(op, shape, cases, defaults, args.rounds)
        for (phase, backend, overrides), (times, error) in zip(cases, measured, strict=True):
            setting = " ".join(f"{k}={v}" for k, v in overrides.items())
            setting = setting if backend == "triton" else f"peer {backend}"
            timed.append(report(op, phase, shape, times, error, setting))
    failed = timed.count(False)
    if failed:  # a setting that computes wrong results has no time; the others still count
        print(f"sweep: {failed} of {len(timed)} cases FAILED", file=sys.stderr)
    return 1 if timed and not any(timed) else 0


if __name__ == "__main__":
    sys.exit(main())
