"""Where the host time of a small public call goes (GPU machines).

usage: python -m rmsnorm_bench.profile_host [--sequential] [M,N,dtype]
       python -m rmsnorm_bench.profile_host --cprofile [OP] [PHASE] [M,N,dtype]
       python -m rmsnorm_bench.profile_host --trace [OP] [PHASE] [M,N,dtype]

Without an option: a table of routes and their parts (default shape 1,4096,bf16).
--cprofile: cProfile of one public call; --trace: torch.profiler, host and GPU time per op
(OP rms_norm or fused_add, PHASE forward or backward; default rms_norm backward).

The table gives wall time per call over blocks of back-to-back calls, synchronised at each
block's end: for small shapes that is host time. Routes: torch eager and this package's
public functions, forward and backward (on the host path in use: RMSNORM_KERNELS_HOST=python
for the other), a do-nothing autograd.Function (the floor any Python Function pays), and
parts: our backward called from the main thread, two allocations and an empty Triton launch.
Each backward route times the backward alone (its forward graph built once, retain_graph,
the gradients set to None after each call: their allocation inside), as the suites'
public-call figures do.

The routes are timed in turns, a block of each in every round (ROUNDS rounds of BLOCK
calls), and the table gives each route's median over the rounds, with torch's over ours
from the blocks of one round (the suites' track_public_ratio takes its quotients so): the
host's speed drifts within a process, by up to 1.4x between a route timed now and one timed
a second later, and interleaving makes the drift hit every route alike. --sequential times
each route's calls in one stretch, one route after another (this tool's method before; its
rows are not comparable with each other, shown for that comparison).
"""

import cProfile
import functools
import pstats
import sys
import time

from . import argument_parser, instrument, require_gpu


@functools.cache
def empty_kernel():
    """A Triton kernel that does nothing: the floor of a launch."""
    import triton
    import triton.language as tl

    @triton.jit
    def _empty_kernel(X, BLOCK: tl.constexpr):
        tl.program_id(0)

    return _empty_kernel


def floor_function(backward):
    """A do-nothing autograd.Function: its forward clones x, its backward returns
    ``backward(g)`` as dx. The floor of what any Function costs the host."""
    import torch

    class Floor(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return backward(g), None

    return Floor


ROUNDS = 20  # blocks of each route, in turns
BLOCK = 100  # calls a block


def block_us(call, n: int) -> float:
    """Wall time per call of `n` back-to-back calls, the GPU synchronised at the end."""
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e6


def interleaved_us(routes: dict, rounds: int = ROUNDS, calls: int = BLOCK, block=None) -> dict:
    """{route: [us per call of each round's block]}: after a warm-up block of each route,
    `rounds` rounds of one block of every route, in turns (the order rotated each round, so
    that no route always follows the same one). `block(call, n)` times a block (block_us; a
    fake in tests)."""
    block = block or block_us
    names = list(routes)
    for name in names:
        block(routes[name], max(1, calls // 2))
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(block(routes[name], calls))
    return times


def per_call_us(call, n=2000) -> float:
    """block_us of `n` calls after a warm-up of 50."""
    for _ in range(50):
        call()
    return block_us(call, n)


def cprofile(op, phase, shape):
    p = instrument.make_problem(op, shape)
    call = instrument.timed_call(instrument.make_backend("triton", op), p, phase)
    print(f"{op} {phase} {shape.label}: {per_call_us(call, 500):.1f} us per call (host)")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(500):
        call()
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(18)


def trace(op, phase, shape):
    """Where the wall time of back-to-back public calls goes, host and GPU side by side."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for backend in ("triton", "torch"):
        p = instrument.make_problem(op, shape)
        call = instrument.timed_call(instrument.make_backend(backend, op), p, phase)
        print(f"{backend} {op} {phase} {shape.label}: {per_call_us(call, 200):.1f} us per call")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                call()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=12))


def table(shape, sequential: bool = False):
    import torch

    import rmsnorm_kernels
    from rmsnorm_kernels import ops

    eps = instrument.EPS
    p = instrument.make_problem("rms_norm", shape)
    x, w, dy = p.x, p.weight, p.grads[0]
    Floor = floor_function(lambda g: g.mul(2))

    def backward_of(make):
        out = make()

        def run():
            torch.autograd.backward(out, dy, retain_graph=True)
            x.grad = w.grad = None

        return run

    with torch.no_grad():
        _, _, rstd = ops.rms_norm_forward(x, w, eps)
    xd, wd = x.detach(), w.detach()
    routes = {
        "fwd torch F.rms_norm": lambda: torch.nn.functional.rms_norm(x, (shape.n,), w, eps),
        "fwd ours, public": lambda: rmsnorm_kernels.rms_norm(x, w, eps),
        "fwd floor: Function, one elementwise op": lambda: Floor.apply(x, w),
        "bwd torch F.rms_norm": backward_of(
            lambda: torch.nn.functional.rms_norm(x, (shape.n,), w, eps)
        ),
        "bwd ours, public": backward_of(lambda: rmsnorm_kernels.rms_norm(x, w, eps)),
        "bwd floor: Function, one elementwise op": backward_of(lambda: Floor.apply(x, w)),
        "part: the backward alone, main thread": lambda: ops.rms_norm_backward(dy, xd, wd, rstd),
        "part: two torch.empty": lambda: (torch.empty_like(xd), torch.empty_like(wd)),
        "part: empty Triton kernel launch": lambda: empty_kernel()[(1,)](xd, BLOCK=16),
    }
    if sequential:
        print(f"host time per call, {shape.label}, host path {ops.HOST_PATH} (each route "
              "timed in one stretch, one after another: rows not comparable)")  # fmt: skip
        for name, call in routes.items():
            print(f"{name:44} {per_call_us(call):8.1f} us")
        return
    times = interleaved_us(routes)
    print(f"host time per call, {shape.label}, host path {ops.HOST_PATH} (median of "
          f"{ROUNDS} rounds of {BLOCK} calls a route, the routes in turns; min-max)")  # fmt: skip
    for name, values in times.items():
        print(
            f"{name:44} {instrument.median(values):8.1f} us  ({min(values):.1f}-{max(values):.1f})"
        )
    for phase in ("fwd", "bwd"):
        torch_, ours = times[f"{phase} torch F.rms_norm"], times[f"{phase} ours, public"]
        quotient = instrument.median([t / o for t, o in zip(torch_, ours, strict=True)])
        print(f"{phase}: torch / ours, blocks of one round: {quotient:.2f} (higher: ours faster;"
              " the suites' track_public_ratio)")  # fmt: skip


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    mode = ap.add_mutually_exclusive_group()
    for flag in ("--cprofile", "--trace"):
        mode.add_argument(flag, dest="mode", action="store_const", const=flag[2:])
    ap.add_argument("args", nargs="*", metavar="ARG", help="[OP] [PHASE] M,N,dtype, see above")
    ap.add_argument(
        "--sequential", action="store_true", help="the table's routes one after another"
    )
    args = ap.parse_args(argv)
    rest = args.args
    try:
        if args.mode:
            op, phase, shape = (rest + ["rms_norm", "backward", "1,4096,bf16"][len(rest) :])[:3]
            if op not in instrument.OPS or phase not in ("forward", "backward") or len(rest) > 3:
                raise ValueError(f"expected [OP] [PHASE] [M,N,dtype], got {' '.join(rest)}")
            chosen = instrument.parse_shapes(shape, "shape")
        else:
            if len(rest) > 1:
                raise ValueError(f"expected one M,N,dtype, got {' '.join(rest)}")
            chosen = instrument.parse_shapes(rest[0] if rest else "1,4096,bf16", "shape")
        if args.sequential and args.mode:
            raise ValueError(f"--sequential is the table's; it does not go with --{args.mode}")
    except ValueError as e:
        ap.error(str(e))
    require_gpu(ap)
    if args.mode:
        (cprofile if args.mode == "cprofile" else trace)(op, phase, chosen[0])
    else:
        table(chosen[0], args.sequential)
    return 0


if __name__ == "__main__":
    sys.exit(main())
