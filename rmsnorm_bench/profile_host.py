"""Where the host time of a small public call goes (GPU machines).

usage: python -m rmsnorm_bench.profile_host [M,N,dtype]
       python -m rmsnorm_bench.profile_host --cprofile [OP] [PHASE] [M,N,dtype]
       python -m rmsnorm_bench.profile_host --trace [OP] [PHASE] [M,N,dtype]
       python -m rmsnorm_bench.profile_host --steps [M,N,dtype ...]

Without an option: a table of routes and their parts (default shape 1,4096,bf16).
--cprofile: cProfile of one public call; --trace: torch.profiler, host and GPU time per op
(OP rms_norm or fused_add, PHASE forward or backward; default rms_norm backward).

The table gives wall time per call over back-to-back calls, synchronised at the end: for
small shapes that is host time. Routes: torch eager, this package's public functions, the
same through the custom ops that torch.compile sees (what the registration would cost the
eager path), a do-nothing autograd.Function (the floor any Function pays), and the pieces
of the backward launcher called directly from the main thread.

--steps times the public backward (the suites' timed call) by its steps, with wrappers
around this package's functions: the hand-over from the main thread to autograd's device
thread (which runs every CUDA backward), our backward node on that thread (its launches, the
rest of rms_norm_backward, the node's own code), the hand-back, and clearing .grad; then
the same call through a Function whose backward only allocates its result (the floor of
any Function), and torch eager's backward.
"""

import cProfile
import functools
import pstats
import sys
import time

from . import argument_parser, instrument


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


def per_call_us(call, n=2000) -> float:
    import torch

    for _ in range(50):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e6


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


def steps(shapes):
    import torch

    from rmsnorm_kernels import _config, ops

    spent, marks = {}, {}

    def add(name, seconds):
        spent[name] = spent.get(name, 0.0) + seconds

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                add(name, time.perf_counter() - t)

        return wrapper

    node = ops.RMSNormFunction.backward

    def timed_node(ctx, dy):
        t = time.perf_counter()
        add("hand-over, main thread -> autograd thread", t - marks["call"])
        try:
            return node(ctx, dy)
        finally:
            marks["node_end"] = time.perf_counter()
            add("our backward node, all of it", marks["node_end"] - t)

    ops.RMSNormFunction.backward = staticmethod(timed_node)
    ops.rms_norm_backward = timed("  rms_norm_backward", ops.rms_norm_backward)
    for cls, name in ((_config.BackwardLauncher, "main"), (_config.ReduceLauncher, "reduction")):
        cls.__call__ = timed(f"    {name} kernel launch", cls.__call__)

    for shape in shapes:
        p = instrument.make_problem("rms_norm", shape)
        p.outputs = instrument.run_forward(instrument.make_backend("triton", "rms_norm"), p)

        def call(p=p):
            marks["call"] = time.perf_counter()
            torch.autograd.backward(p.outputs, p.grads, retain_graph=True)
            t = time.perf_counter()
            add("hand-back, autograd thread -> main thread", t - marks["node_end"])
            p.clear_grads()
            add("clearing .grad", time.perf_counter() - t)

        n = 500
        per_call_us(call, 50)
        spent.clear()
        total = per_call_us(call, n)
        print(f"{shape.label}: our public backward {total:.1f} us per call, of which (us):")
        for name, seconds in spent.items():
            print(f"  {name:44} {seconds / (n + 50) * 1e6:8.1f}")
        peer_backwards(p, n)


def peer_backwards(p, n):
    """The floor any autograd.Function pays, and torch eager's backward, on p's inputs."""
    import torch

    x, w, dy = p.x, p.weight, p.grads[0]
    Floor = floor_function(torch.empty_like)

    for name, out in (
        ("Function whose backward allocates dx", Floor.apply(x, w)),
        ("torch eager backward", torch.nn.functional.rms_norm(x, (x.shape[-1],), w)),
    ):

        def call(out=out):
            torch.autograd.backward(out, dy, retain_graph=True)
            x.grad = w.grad = None

        print(f"{name:46} {per_call_us(call, n):8.1f} us per call")


def table(shape):
    import torch

    import rmsnorm_kernels
    from rmsnorm_kernels import _config, ops

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

    routes = {
        "fwd torch F.rms_norm": lambda: torch.nn.functional.rms_norm(x, (shape.n,), w, eps),
        "fwd ours, public": lambda: rmsnorm_kernels.rms_norm(x, w, eps),
        "fwd ours, Function.apply": lambda: ops.RMSNormFunction.apply(x, w, eps),
        "fwd ours, custom op": lambda: torch.ops.rmsnorm_kernels.rms_norm_fwd(x, w, eps),
        "fwd floor: Function, one elementwise op": lambda: Floor.apply(x, w),
        "bwd torch F.rms_norm": backward_of(
            lambda: torch.nn.functional.rms_norm(x, (shape.n,), w, eps)
        ),
        "bwd floor: Function, one elementwise op": backward_of(lambda: Floor.apply(x, w)),
        "bwd ours, public": backward_of(lambda: rmsnorm_kernels.rms_norm(x, w, eps)),
        "bwd ours, custom op": backward_of(
            lambda: torch.ops.rmsnorm_kernels.rms_norm_fwd(x, w, eps)[0]
        ),
    }
    with torch.no_grad():
        _, _, rstd = ops.rms_norm_forward(x, w, eps)
    xd, wd = x.detach(), w.detach()
    launcher = _config.backward_launcher(
        _config.shape_bucket(shape.n), x.dtype, w.dtype, True, x.device
    )
    if shape.m <= launcher.few_rows_max_m:  # the launcher rms_norm_backward takes
        launcher = launcher.few_rows
    grid = launcher.grid(shape.m, shape.n)
    partial = torch.empty((grid[0], shape.n), dtype=torch.float32, device=x.device)
    segments = launcher.dot_segments(shape.m, shape.n)[1] if launcher.split_row else 0
    dot = torch.zeros((shape.m, segments), dtype=torch.float32, device=x.device)
    dx = torch.empty_like(xd)
    dw = torch.empty_like(wd)

    routes.update(
        {
            "part: rms_norm_backward, called alone": lambda: ops.rms_norm_backward(
                dy, xd, wd, rstd
            ),
            "part: three torch.empty": lambda: (
                torch.empty_like(xd),
                torch.empty_like(wd),
                torch.empty((grid[0], shape.n), dtype=torch.float32, device=x.device),
            ),
            "part: empty Triton kernel launch": lambda: empty_kernel()[(1,)](xd, BLOCK=16),
        }
    )
    args = (dy, dy.stride(0), xd, xd.stride(0), wd, rstd, dy, dy.stride(0), dx, dx.stride(0))
    args += (partial, dw, dot, shape.m, shape.n, 0, segments)
    reduce = _config.reduce_launcher(wd.dtype, x.device, launcher.split_row)
    for path, direct in (("Triton's path", False), ("direct", True)):
        routes[f"part: backward kernel launch, {path}"] = functools.partial(
            launcher, grid, *args, align=16, direct=direct
        )
        routes[f"part: dweight reduction launch, {path}"] = functools.partial(
            reduce, partial, dw, grid[0], shape.n, align=16, direct=direct
        )
    print(f"host time per call, {shape.label} (back-to-back calls, wall time / call)")
    for name, call in routes.items():
        print(f"{name:44} {per_call_us(call):8.1f} us")


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    mode = ap.add_mutually_exclusive_group()
    for flag in ("--cprofile", "--trace", "--steps"):
        mode.add_argument(flag, dest="mode", action="store_const", const=flag[2:])
    ap.add_argument("args", nargs="*", metavar="ARG", help="[OP] [PHASE] M,N,dtype, see above")
    args = ap.parse_args(argv)
    rest = args.args
    try:
        if args.mode == "steps":
            chosen = instrument.parse_shapes(";".join(rest) or "1,4096,bf16", "shape")
        elif args.mode:
            op, phase, shape = (rest + ["rms_norm", "backward", "1,4096,bf16"][len(rest) :])[:3]
            if op not in instrument.OPS or phase not in ("forward", "backward") or len(rest) > 3:
                raise ValueError(f"expected [OP] [PHASE] [M,N,dtype], got {' '.join(rest)}")
            chosen = instrument.parse_shapes(shape, "shape")
        else:
            if len(rest) > 1:
                raise ValueError(f"expected one M,N,dtype, got {' '.join(rest)}")
            chosen = instrument.parse_shapes(rest[0] if rest else "1,4096,bf16", "shape")
    except ValueError as e:
        ap.error(str(e))
    if args.mode == "steps":
        steps(chosen)
    elif args.mode:
        (cprofile if args.mode == "cprofile" else trace)(op, phase, chosen[0])
    else:
        table(chosen[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
