"""The instrument: shape matrix, inputs, peer adapters, validation and timing.

Every suite, the tools of this package and the opt-in pytest comparison use this one copy.
It stays the same for every commit measured; the package under test is what changes: asv runs
today's benchmarks/ against old commits, so this module imports nothing of rmsnorm_kernels
at module level, and no torch either (asv's discovery imports the suites without them).

Timing contract (the seed PR's): the public autograd call of each backend; the forward graph
is built (and compiled) before timing; allocations, dweight zeroing and casts are inside the
timed region; 10 warm-ups, then CUDA events around 100 back-to-back calls, seconds per call.
Several such samples are kept per case so that asv judges differences from statistics: at
least 4 per process, more where they are noisy (Contract.enough: until the median is known to
1%, at most 16 samples or a quarter of a second more).
Every backend's outputs and gradients are checked against the fp32 reference first.
"""

import contextlib
import math
import os
import time
from dataclasses import dataclass, field

from . import progress

DEVICE_VAR = "RMSNORM_BENCH_DEVICE"
FWD_SHAPES_VAR = "RMSNORM_BENCH_SHAPES"
BWD_SHAPES_VAR = "RMSNORM_BWD_BENCH_SHAPES"

# "cpu": the smoke mode (Triton's interpreter, tiny shapes); "cuda" (or unset): the GPU.
# Any other value is an error (check_device), raised where a suite or tool would measure.
DEVICE_VALUES = ("cuda", "cpu")
DEVICE = "cpu" if os.environ.get(DEVICE_VAR, "cuda") == "cpu" else "cuda"
if DEVICE == "cpu":
    # must be set before triton is imported, here or by rmsnorm_kernels
    os.environ.setdefault("TRITON_INTERPRET", "1")

DTYPE_NAMES = ("bf16", "f16", "f32")

# The default matrix: the seed PR's six shapes, then large shapes where bandwidth shows.
# Must not be changed, only appended, so that history stays comparable.
DEFAULT_SHAPES = [
    (1, 4096, "bf16"),
    (128, 4096, "bf16"),
    (4096, 4096, "bf16"),
    (512, 2048, "bf16"),
    (512, 3000, "f32"),
    (1024, 8192, "bf16"),
    (16384, 4096, "bf16"),
    (8192, 8192, "bf16"),
    (32768, 8192, "bf16"),
    (4096, 4096, "f16"),
    (4096, 4096, "f32"),
]
# CPU smoke mode: small enough for the interpreter, covering one row, several rows per
# program, unaligned N and the chunked path for rows past one block.
SMOKE_SHAPES = [(1, 256, "bf16"), (16, 1000, "f32"), (3, 20000, "bf16")]

BACKENDS = ["triton", "torch", "torch_compile", "liger", "quack", "flydsl"]
OURS = "triton"  # this package; the others are peers (first in BACKENDS: measured first)
# An ad-hoc run may measure fewer backends (the others are skipped): "triton,torch".
BACKENDS_VAR = "RMSNORM_BENCH_BACKENDS"
OPS = ("rms_norm", "fused_add")
EPS = 1e-6


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    dtype: str

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}-{self.dtype}"

    @classmethod
    def from_label(cls, label: str) -> "Shape":
        mn, dtype = label.split("-")
        m, n = mn.split("x")
        return cls(int(m), int(n), dtype)


def parse_shapes(value: str, var: str) -> list[Shape]:
    """Parse "M,N,dtype;M,N,dtype;..." (the seed's override format)."""
    shapes = []
    for entry in value.split(";"):
        if not entry.strip():
            continue
        parts = [p.strip() for p in entry.split(",")]
        ok = len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit()
        if not ok or parts[2] not in DTYPE_NAMES or int(parts[1]) < 1:
            raise ValueError(
                f"{var}: bad entry {entry!r}; expected M,N,dtype with M >= 0, N >= 1 and "
                f"dtype one of {', '.join(DTYPE_NAMES)} (entries separated by ';')"
            )
        shape = Shape(int(parts[0]), int(parts[1]), parts[2])
        if shape in shapes:  # asv would store two figures under one parameter value
            raise ValueError(f"{var}: {shape.label} is given twice")
        shapes.append(shape)
    if not shapes:
        raise ValueError(f"{var}: no shapes in {value!r}")
    return shapes


def selected_backends() -> list[str]:
    """The backends named by RMSNORM_BENCH_BACKENDS (all where it is unset), in BACKENDS'
    order. An unknown name is an error, never a backend silently skipped."""
    value = os.environ.get(BACKENDS_VAR, "")
    if not value.strip():
        return list(BACKENDS)
    names = [name.strip() for name in value.split(",")]
    unknown = [name for name in names if name not in BACKENDS]
    if unknown:
        raise ValueError(
            f"{BACKENDS_VAR}={value!r}: unknown backend(s) {', '.join(map(repr, unknown))}; "
            f"expected a comma-separated list of {', '.join(BACKENDS)}"
        )
    return [name for name in BACKENDS if name in names]


def check_device() -> None:
    """Raise ValueError, naming RMSNORM_BENCH_DEVICE and its values, where it is set to
    anything but those: a typo ("gpu", "CPU") would otherwise mean CUDA without a word."""
    value = os.environ.get(DEVICE_VAR, "")
    if value and value not in DEVICE_VALUES:
        raise ValueError(
            f"{DEVICE_VAR}={value!r}: expected cpu (the CPU smoke mode, Triton's interpreter) "
            "or cuda (a CUDA or ROCm GPU, the default where it is unset)"
        )


def shapes_for(phase: str) -> list[Shape]:
    """The shapes the forward or backward suites measure on this machine."""
    check_device()  # every suite asks here first, at import (param_shapes) and when measuring
    var = FWD_SHAPES_VAR if phase == "forward" else BWD_SHAPES_VAR
    if os.environ.get(var):
        return parse_shapes(os.environ[var], var)
    return [Shape(*s) for s in (SMOKE_SHAPES if DEVICE == "cpu" else DEFAULT_SHAPES)]


def param_shapes(phase: str) -> list[Shape]:
    """The shapes of a suite's parameter list: the same on every machine, since asv keeps one
    benchmarks.json for all of them (stock `asv show`, `compare` and `publish` read it). The
    GPU matrix, the smoke mode's shapes, then any shape an override adds; a machine measures
    shapes_for(phase), and its suites skip the rest (n/a)."""
    shapes = [Shape(*s) for s in DEFAULT_SHAPES + SMOKE_SHAPES]
    return shapes + [s for s in shapes_for(phase) if s not in shapes]


# ---------------------------------------------------------------------------------------------
# Backends: each makes the public call of one implementation, or says why it cannot run here
# ---------------------------------------------------------------------------------------------


class Unavailable(NotImplementedError):
    """This backend cannot run on this machine; asv records the case as skipped."""


def _torch_eager(op):
    import torch.nn.functional as F

    if op == "rms_norm":
        return lambda x, w: F.rms_norm(x, (x.shape[-1],), w, EPS)

    def fused_add(x, r, w):
        s = x + r
        return F.rms_norm(s, (s.shape[-1],), w, EPS), s

    return fused_add


def make_backend(name: str, op: str):
    """The callable (x, w) -> y for rms_norm, or (x, r, w) -> (y, residual_out) for fused_add."""
    import torch

    if name in BACKENDS and name not in selected_backends():  # an unknown name: below
        raise Unavailable(f"not among {BACKENDS_VAR}={os.environ[BACKENDS_VAR]}")
    if name == "triton":
        import rmsnorm_kernels

        if op == "rms_norm":
            return lambda x, w: rmsnorm_kernels.rms_norm(x, w, EPS)
        return lambda x, r, w: rmsnorm_kernels.fused_add_rms_norm(x, r, w, EPS)
    if name == "torch":
        return _torch_eager(op)
    if DEVICE == "cpu":
        raise Unavailable(f"{name} runs on GPUs only; the CPU smoke mode measures triton and torch")
    if name == "torch_compile":
        return _torch_compile(op)
    if name == "liger":
        return _liger(op)
    if name == "quack":
        return _quack(op)
    if name == "flydsl":
        if torch.version.hip is None:
            raise Unavailable("FlyDSL runs on ROCm GPUs only")
        return _flydsl(op)
    raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")


def _torch_compile(op):
    """torch.compile of torch's eager call (_torch_eager), as a model with fixed shapes gets it:
    a graph specialised to the case's shape (dynamic=False), inductor's default options.

    Each case starts afresh (torch._dynamo.reset()): recompiling one function for shape after
    shape would pass dynamo's recompile limit (8), after which it silently runs eager; a higher
    limit would leave every earlier shape's guards to be checked on each call, in the host time
    measured. What a case costs to set up (docs/perf-notes.md, "Where a benchmark process's
    time goes"): dynamo's trace of the call in every case, and inductor's graphs, compiled once
    per machine and op (the forward suite's validation runs the backward too, so both suites of
    an op compile the same graphs) and loaded from TORCHINDUCTOR_CACHE_DIR by every later
    process; measure_case records the caches' hits and misses of each case."""
    import torch
    import torch._functorch.config  # not loaded by `import torch`

    # the timed backward keeps its graph (retain_graph=True): no donated buffers then
    torch._functorch.config.donated_buffer = False
    torch._dynamo.reset()
    return torch.compile(_torch_eager(op), dynamic=False)


def compile_cache_counts() -> dict:
    """torch.compile's cache hits and misses so far in this process (inductor's FX graph cache,
    AOT autograd's cache), from dynamo's counters; {} before torch._dynamo is loaded."""
    import sys

    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", {})
    return {
        f"{group}.{name}": count
        for group in ("inductor", "aot_autograd")
        for name, count in counters.get(group, {}).items()
        if "cache" in name
    }


def _liger(op):
    """Liger-Kernel 0.8.5's autograd Functions, with its nn.Module drop-ins' defaults.

    liger_kernel/ops/rms_norm.py: LigerRMSNormFunction.apply(X, W, eps, offset, casting_mode,
    in_place, row_mode) -> Y. liger_kernel/ops/fused_add_rms_norm.py:
    LigerFusedAddRMSNormFunction.apply(X, R, W, eps, offset, casting_mode, in_place) -> (Y, S),
    S = X + R in X's dtype (our residual_out), Y the norm of S. Offset 0 and casting mode
    "llama" (rstd in fp32, x * rstd cast back to x's dtype before the weight) compute our
    function; that cast rounds once more than our kernels do, within the dtype's tolerance.
    """
    try:
        if op == "rms_norm":
            from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        else:
            from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    except ImportError as e:
        raise Unavailable(f"Liger-Kernel is not installed ({e})") from None
    if op == "rms_norm":
        # LigerRMSNorm's defaults: offset 0, casting mode "llama", in-place backward
        return lambda x, w: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", True)
    # LigerFusedAddRMSNorm's defaults: offset 0, casting mode "llama", in_place=False (its
    # backward writes dx to a new tensor, not over dy)
    return lambda x, r, w: LigerFusedAddRMSNormFunction.apply(x, r, w, EPS, 0.0, "llama", False)


def _quack(op):
    """quack-kernels 0.6.5 (quack/rmsnorm.py): rmsnorm(x, weight=None, bias=None, residual=None,
    out_dtype=None, residual_dtype=None, eps=1e-6, prenorm=False, weight_offset=0.0), autograd
    included. With a residual and prenorm=True it returns (out, residual_out), residual_out =
    x + residual in residual's dtype; the norm is taken of the fp32 sum. (`rmsnorm_fwd` is
    its forward alone, without autograd: not the public call.)"""
    import inspect

    try:
        from quack.rmsnorm import rmsnorm
    except (ImportError, OSError, RuntimeError) as e:  # also: cutlass or CUDA libs missing
        raise Unavailable(f"quack (CuTe DSL) is not installed or does not load ({e})") from None
    if op == "rms_norm":
        return lambda x, w: rmsnorm(x, w, eps=EPS)
    if not {"residual", "prenorm"} <= inspect.signature(rmsnorm).parameters.keys():
        raise Unavailable("this quack's rmsnorm takes no residual (quack-kernels 0.6.5 does)")
    return lambda x, r, w: rmsnorm(x, w, residual=r, eps=EPS, prenorm=True)


def _flydsl(op):
    """FlyDSL's public autograd entry points, from a checkout named by FLYDSL_ROOT (its
    `kernels/` is not part of the installed `flydsl` package, which they need too).

    kernels/norm/rmsnorm_kernel.py: rmsnorm(x, weight=None, eps=EPS) -> out and
    fused_add_rmsnorm(x, residual, weight, eps=EPS, prenorm=True) -> (out, residual_out),
    the calls of its own test_rmsnorm_backward_torch_benchmark. Their default eps is 1e-5:
    ours is passed. Both exist only where torch imports.
    """
    import sys
    from pathlib import Path

    root = os.environ.get("FLYDSL_ROOT")
    if not root:
        raise Unavailable("FlyDSL needs FLYDSL_ROOT naming a checkout of it")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import kernels

        # another package named `kernels` (e.g. Hugging Face's) may have been imported first
        found = Path(kernels.__file__ or next(iter(kernels.__path__))).resolve()
        if not found.is_relative_to(Path(root).resolve()):
            raise Unavailable(f"`kernels` was imported from {found}, not from FLYDSL_ROOT={root}")
        from kernels.norm.rmsnorm_kernel import fused_add_rmsnorm, rmsnorm
    except ImportError as e:
        raise Unavailable(
            f"FlyDSL's kernels/norm/rmsnorm_kernel.py could not be imported from "
            f"FLYDSL_ROOT={root} ({e})"
        ) from None
    if op == "rms_norm":
        return lambda x, w: rmsnorm(x, w, eps=EPS)
    return lambda x, r, w: fused_add_rmsnorm(x, r, w, eps=EPS, prenorm=True)


# ---------------------------------------------------------------------------------------------
# Inputs and validation
# ---------------------------------------------------------------------------------------------


def torch_dtype(name):
    import torch

    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[name]


@dataclass
class Problem:
    """Inputs of one case, on the benchmark device, with the forward already run."""

    op: str
    shape: Shape
    x: object
    residual: object
    weight: object
    grads: list  # gradients for the outputs: [dy] or [dy, d_residual_out]
    outputs: list = field(default_factory=list)

    @property
    def leaves(self):
        return [t for t in (self.x, self.residual, self.weight) if t is not None]

    def clear_grads(self):
        for t in self.leaves:
            t.grad = None


def make_problem(op: str, shape: Shape, seed: int = 0) -> Problem:
    import torch

    # Drawn on the benchmark device: on the CPU, the inputs of a 32768x8192 case took seconds
    # each, and every case makes them twice for each backend.
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    dtype = torch_dtype(shape.dtype)

    def rand(*size, scale=1.0, offset=0.0):
        t = torch.randn(*size, generator=g, device=DEVICE).mul_(scale).add_(offset)
        return t.to(dtype)

    x = rand(shape.m, shape.n).requires_grad_()
    weight = rand(shape.n, scale=0.1, offset=1.0).requires_grad_()
    residual = rand(shape.m, shape.n).requires_grad_() if op == "fused_add" else None
    grads = [rand(shape.m, shape.n)]
    if op == "fused_add":
        grads.append(rand(shape.m, shape.n))
    return Problem(op, shape, x, residual, weight, grads)


def run_forward(fn, p: Problem):
    out = fn(p.x, p.weight) if p.op == "rms_norm" else fn(p.x, p.residual, p.weight)
    return [out] if p.op == "rms_norm" else list(out)


def reference(p: Problem) -> tuple[list, list]:
    """(names, expected values) of every output and gradient of `p`: the fp32 reference's,
    the same for every backend of one case (measure_suite computes it once per shape)."""
    import torch

    from rmsnorm_kernels import reference as fp32

    leaves = [t.detach().clone().requires_grad_() for t in p.leaves]
    if p.op == "rms_norm":
        x, w = leaves
        expected = [fp32.rms_norm_reference(x, w, EPS)]
        names = ["out", "dx", "dweight"]
    else:
        x, r, w = leaves
        expected = list(fp32.fused_add_rms_norm_reference(x, r, w, EPS))
        names = ["out", "residual_out", "dx", "dresidual", "dweight"]
    torch.autograd.backward(expected, [g.float() for g in p.grads])
    expected = [e.detach() for e in expected] + [t.grad for t in leaves]
    return names, expected


def validate(fn, p: Problem, expected: tuple | None = None) -> dict:
    """Check outputs and every gradient against the fp32 reference (`expected`: reference(p),
    computed here where not given); raise AssertionError.

    Returns {name: largest absolute error} for the record.
    """
    import torch

    from rmsnorm_kernels import reference as fp32

    names, expected = expected or reference(p)
    p.clear_grads()
    outputs = run_forward(fn, p)
    torch.autograd.backward(outputs, [g.clone() for g in p.grads])  # clone: Liger writes dy
    got = [o.detach() for o in outputs] + [t.grad for t in p.leaves]
    p.clear_grads()
    tol = fp32.tolerance(torch_dtype(p.shape.dtype))
    errors = {}
    for name, actual, exp in zip(names, got, expected, strict=True):
        if actual is None:
            raise AssertionError(f"{p.op} {p.shape.label}: no {name} was produced")
        atol = tol["atol"] * (max(1.0, exp.abs().max().item()) if name == "dweight" else 1.0)
        try:
            torch.testing.assert_close(actual.float(), exp.float(), atol=atol, rtol=tol["rtol"])
        except AssertionError as e:
            raise AssertionError(f"{p.op} {p.shape.label}: {name} is wrong: {e}") from None
        errors[name] = (actual.float() - exp.float()).abs().max().item() if exp.numel() else 0.0
    return errors


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contract:
    """How one figure is sampled: `warmup` calls, then samples of `iters` back-to-back calls,
    at least `samples` of them. Where `max_samples` is more, sampling goes on while the
    samples are noisy (Contract.enough), as asv's own timing benchmarks go on to max_repeat
    within max_time: the median's 95% confidence interval is wider than `target` of it, at
    most `max_samples` samples, and no more once the samples have taken `max_seconds`. The
    first `samples` samples are the fixed contract's: a figure that is not noisy is measured
    exactly as with it, and a noisy one gets more samples of the same kind."""

    warmup: int
    iters: int
    samples: int
    max_samples: int = 0  # 0 (or not more than `samples`): exactly `samples`
    target: float = 0.0  # the 95% CI's half-width of the median, a share of the median
    max_seconds: float = math.inf

    def enough(self, samples: list[float], seconds: float) -> bool:
        """Whether sampling stops with these `samples`, taken in `seconds`."""
        n = len(samples)
        if n < self.samples:
            return False
        if n >= max(self.samples, self.max_samples) or seconds >= self.max_seconds:
            return True
        return median_ci_share(samples) <= self.target


# Student's t, 97.5% quantile, by degrees of freedom (beyond the table: the normal's 1.96)
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)  # the median's standard error over the mean's (normal)


def median_ci_share(samples) -> float:
    """The half-width of the median's 95% confidence interval as a share of the median: t(n-1)
    times the median's standard error (sqrt(pi/2) times the mean's, s / sqrt(n), for normal
    noise; a sample of `iters` calls is a mean of many, close to normal). inf below 2
    samples or where the median is not positive."""
    n = len(samples)
    mid = median(samples) if n else 0.0
    if n < 2 or mid <= 0:
        return math.inf
    mean = sum(samples) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1))
    t = T_975[n - 2] if n - 2 < len(T_975) else 1.96
    return t * MEDIAN_EFFICIENCY * sd / math.sqrt(n) / mid


# Each suite is measured in PROCESSES fresh processes (asv's rounds, which rmsnorm_bench.asvrun
# asks for; `asv continuous` interleaves them between its two commits: A, B, B, A, A, B), so
# that the spread between processes, which on a GPU host moves public-call times by up to 3x,
# enters asv's statistics and host drift hits both commits alike. Contracts are per process.
PROCESSES = 3
# At least 4 samples of 100 calls per process (12 in all: enough for asv's Mann-Whitney test,
# which needs 6 a side to reach its p < 0.002), up to 16 where the median is not known to 1%.
# A sample of a short call costs 100 x a few us, so noisy short cases get more for little; a
# long one, rarely noisy, costs 100 x up to 1 ms, hence the quarter of a second.
GPU_CONTRACT = Contract(warmup=10, iters=100, samples=4, max_samples=16, target=0.01,
                        max_seconds=0.25)  # fmt: skip
# The interpreter is slow and its timing means nothing: a fixed count, enough to run every code
# path of the tracker end to end.
SMOKE_CONTRACT = Contract(warmup=1, iters=2, samples=3)


def contract() -> Contract:
    return SMOKE_CONTRACT if DEVICE == "cpu" else GPU_CONTRACT


# The public-call ratio (peer / ours): few samples, each a pair of short blocks, ours then
# the peer's, so that both see the same host state; the figure is their quotient. At least 2
# pairs per process (6 in all), up to 8 where the quotient is not known to 1%.
GPU_RATIO_CONTRACT = Contract(warmup=3, iters=20, samples=2, max_samples=8, target=0.01,
                              max_seconds=0.25)  # fmt: skip


def ratio_contract() -> Contract:
    return SMOKE_CONTRACT if DEVICE == "cpu" else GPU_RATIO_CONTRACT


# Cold-L2 device time: this many replays of a one-call graph, each after a flush of L2
# (per process: 21 in all).
COLD_SAMPLES = 7
FLUSH_BYTES = 256 * 2**20  # triton.testing.do_bench's buffer; 2x L2 where L2 is larger


def timed_call(fn, p: Problem, phase: str):
    """The call that is timed: the public forward, or the public autograd backward."""
    import torch

    if phase == "forward":
        return lambda: run_forward(fn, p)
    p.outputs = run_forward(fn, p)  # the forward graph is built before timing

    def backward():
        torch.autograd.backward(p.outputs, p.grads, retain_graph=True)
        p.clear_grads()

    return backward


def seconds_per_call(call, c: Contract, block=None, clock=time.perf_counter) -> list[float]:
    """Seconds per call: one sample per `c.iters` back-to-back calls, after `c.warmup` calls,
    until the contract has enough (Contract.enough). `block(call, iters)` times a block
    (block_seconds; a fake in tests), `clock` the sampling (for max_seconds)."""
    block = block or block_seconds
    for _ in range(c.warmup):
        call()
    samples, start = [], clock()
    while not c.enough(samples, clock() - start):
        samples.append(block(call, c.iters))
    return samples


def block_seconds(call, iters: int) -> float:
    """Seconds per call of `iters` back-to-back calls: CUDA events around them on the GPU."""
    if DEVICE == "cpu":
        start = time.perf_counter()
        for _ in range(iters):
            call()
        return (time.perf_counter() - start) / iters
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def interleaved_ratio(ours, peer, c: Contract, block=None, clock=time.perf_counter) -> list[float]:
    """Peer time / our time of the public call, one entry per sample (higher: ours faster).

    Warm-ups and samples alternate ours, peer, ours, peer...: each sample is a block of
    `c.iters` calls of ours and the next block of the peer's, both in this process a moment
    apart, so that the host's speed (which moves public times between processes by up to 3x
    on GPU machines) divides out of their quotient; pairs are taken until the contract has
    enough quotients (Contract.enough). `block(call, iters)` times a block (block_seconds; a
    fake in tests), `clock` the sampling.
    """
    block = block or block_seconds
    for _ in range(c.warmup):
        ours()
        peer()
    samples, start = [], clock()
    while not c.enough(samples, clock() - start):
        mine = block(ours, c.iters)
        theirs = block(peer, c.iters)
        samples.append(theirs / mine)
    return samples


# A graph replay costs the host a few microseconds (up to 5-6 on an H200 host); replays of
# shorter graphs, back to back, wait on the host, and their time would be the host's. So the
# call is captured as many times over as make one replay last at least this long.
GRAPH_MIN_SECONDS = 100e-6
MAX_CALLS_PER_GRAPH = 64


def calls_per_graph(seconds_per_replay: float) -> int:
    """How many calls one graph holds, given a replay of a one-call graph."""
    wanted = math.ceil(GRAPH_MIN_SECONDS / max(seconds_per_replay, 1e-9))
    return min(MAX_CALLS_PER_GRAPH, max(1, wanted))


def device_seconds_per_call(make_call, c: Contract) -> list[float]:
    """Device-only seconds per call: the call captured in a CUDA graph, replays timed.

    Host work (Python, autograd, launch overhead) is out of this figure. A call shorter than
    GRAPH_MIN_SECONDS is captured several times back to back in one graph (its kernels run
    as back-to-back calls would, without the host in between), and each replay counts that
    many calls. `make_call` builds the call; it runs on the capturing stream, so a
    backward's forward graph does too (the autograd engine runs each backward op on its
    forward op's stream).
    """
    return device_seconds(make_call, c)[0]


def device_seconds(make_call, c: Contract, cold_samples: int = 0):
    """(hot, cold): device_seconds_per_call's samples, and where `cold_samples` is given,
    that many of one call with a cold L2 (cold_seconds, on the one-call graph captured
    first), else None."""
    import torch

    flush = flusher() if cold_samples else None
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call = make_call()
        for _ in range(3):
            call()
        graph = _captured(call, 1, stream)
        estimate = median(seconds_per_call(graph.replay, Contract(warmup=2, iters=10, samples=3)))
        cold = cold_seconds(graph.replay, flush, cold_samples) if cold_samples else None
        calls = calls_per_graph(estimate)
        if calls > 1:
            del graph
            graph = _captured(call, calls, stream)
    torch.cuda.current_stream().wait_stream(stream)
    return [s / calls for s in seconds_per_call(graph.replay, c)], cold


_flush_buffer = []  # one per process, made on first use


def flusher():
    """A call that evicts L2 as triton.testing.do_bench does: write a buffer larger than it
    (FLUSH_BYTES, or twice L2 where that is more)."""
    import torch

    if not _flush_buffer:
        l2 = getattr(
            torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0
        )
        nbytes = max(FLUSH_BYTES, 2 * l2)
        _flush_buffer.append(torch.empty(nbytes // 4, dtype=torch.int32, device="cuda"))
    return _flush_buffer[0].zero_


def cold_seconds(replay, flush, samples: int, event=None) -> list[float]:
    """Seconds of single replays, each right after `flush()`: the call with a cold L2.

    Events are recorded around the replay only, so the flush is not timed; all are read after
    one synchronisation at the end. `event()` makes a timing event (a CUDA event; a fake in
    tests).
    """
    if event is None:
        import torch

        event = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    pairs = []
    for _ in range(samples):
        flush()
        start, end = event(), event()
        start.record()
        replay()
        end.record()
        pairs.append((start, end))
    if pairs:
        pairs[-1][1].synchronize()
    return [start.elapsed_time(end) / 1e3 for start, end in pairs]


def _captured(call, times: int, stream):
    """A CUDA graph of `times` back-to-back calls."""
    import torch

    graph = torch.cuda.CUDAGraph()
    # thread_local: the autograd engine launches the backward from its own thread
    with torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
        for _ in range(times):
            call()
    return graph


def peak_memory(call) -> int:
    """Bytes allocated at the peak of one call, above what was allocated before it."""
    import torch

    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    call()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


# ---------------------------------------------------------------------------------------------
# One measurement of a whole suite: validation first, then the three figures per case
# ---------------------------------------------------------------------------------------------


@dataclass
class Measurement:
    time: list | None = None  # seconds per public call, one entry per sample
    device_time: list | None = None  # seconds per call, CUDA-graph replay
    device_time_cold: list | None = None  # seconds of one replayed call after an L2 flush
    public_ratio: list | None = None  # a peer's public time / ours, samples interleaved
    public_ratio_skipped: str | None = None  # why there is no ratio (always so for ours)
    peak_memory: int | None = None  # bytes
    skipped: str | None = None  # why this backend cannot run here
    failed: str | None = None  # why this case failed (wrong result or an error)
    device_time_skipped: str | None = None
    seconds: dict = field(default_factory=dict)  # where the case's time went (Phases)
    compile_cache: dict | None = None  # torch.compile's cache hits and misses in this case


class Phases:
    """Wall seconds per named phase of a case, kept in `into` (Measurement.seconds): where a
    benchmark process's time goes, written to the run's record (progress.record_times)."""

    def __init__(self, into: dict):
        self.into = into

    @contextlib.contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.into[name] = self.into.get(name, 0.0) + time.perf_counter() - start


def measure_case(
    op: str, phase: str, shape: Shape, backend: str, c: Contract, ours: dict | None = None
) -> Measurement:
    """The figures of one case. `ours` (measure_suite's, one per shape) holds what the
    backends of one shape share: the fp32 reference's values (computed once), and backend
    OURS's validated public call, against which a peer measured after it gets its public
    ratio (interleaved_ratio); without it, no ratio.

    Each phase's seconds go to the Measurement's `seconds`: the backend made (imports, the
    package's extension, torch.compile's wrapper), the inputs, validation (the first calls:
    kernel variants compiled or loaded, torch.compile's graphs), the public figures (time,
    ratio), the device figures (peak memory, CUDA graphs)."""
    import torch

    seconds = {}
    timed = Phases(seconds)
    caches = compile_cache_counts() if backend == "torch_compile" else None
    try:  # an error in one backend fails its case; the suite goes on
        with timed("backend"):
            fn = make_backend(backend, op)
        with timed("inputs"):
            p = make_problem(op, shape)
        with timed("validation"):
            if ours is not None and "reference" not in ours:
                ours["reference"] = reference(p)
            validate(fn, p, (ours or {}).get("reference"))
        if caches is not None:  # validation made the first calls, which compile
            after = compile_cache_counts()
            caches = {k: n - caches.get(k, 0) for k, n in after.items() if n != caches.get(k, 0)}
        with timed("public"):
            call = timed_call(fn, p, phase)
            m = Measurement(time=seconds_per_call(call, c), seconds=seconds, compile_cache=caches)
            m.public_ratio_skipped = _public_ratio(m, backend, call, ours)
        if DEVICE == "cpu":
            m.device_time_skipped = "device time and GPU memory are measured on GPUs only"
            return m
        with timed("device"):
            m.peak_memory = peak_memory(call)
            try:
                # a fresh problem (same seed): its leaves too are made on the capturing stream
                fresh = lambda: timed_call(fn, make_problem(op, shape), phase)  # noqa: E731
                m.device_time, m.device_time_cold = device_seconds(fresh, c, COLD_SAMPLES)
            except Exception as e:  # capture is not possible for every backend
                torch.cuda.synchronize()
                m.device_time_skipped = f"CUDA graph capture failed: {type(e).__name__}: {e}"
        return m
    except Unavailable as e:
        return Measurement(skipped=str(e), seconds=seconds)
    except Exception as e:
        return Measurement(failed=f"{type(e).__name__}: {e}", seconds=seconds)
    finally:
        if DEVICE == "cuda":
            torch.cuda.empty_cache()


def _public_ratio(m: Measurement, backend: str, call, ours: dict | None) -> str | None:
    """Keep our call in `ours`, or measure a peer's ratio against it into `m`; returns why
    there is no ratio (None when there is one)."""
    if backend == OURS:
        if ours is not None:
            ours["call"] = call
        return "the ratio is a peer's public time over ours"
    if not ours or "call" not in ours:
        return f"no validated public call of {OURS} on this case to compare with"
    try:
        m.public_ratio = interleaved_ratio(ours["call"], call, ratio_contract())
    except Exception as e:  # the peer's own figures stand; only the ratio is missing
        return f"the interleaved timing failed: {type(e).__name__}: {e}"
    return None


def measure_suite(op: str, phase: str, backends=BACKENDS, log=None) -> dict:
    """{(shape label, backend): Measurement} for every case of one suite.

    Each case's line goes to the progress log, and its phases' seconds, then the process's
    own (torch imported, CUDA initialised; the whole suite), to the run's timing record."""
    suite = f"{op} {phase}"
    started, start = time.time(), time.perf_counter()
    process = {}
    with Phases(process)("import torch"):
        import torch
    if DEVICE == "cuda":
        with Phases(process)("CUDA initialised"), contextlib.suppress(Exception):
            # the context, which the first case would make; where it cannot be made, each
            # case fails with its own error, as before
            torch.zeros(1, device="cuda")
    c = contract()
    results = {}
    shapes = shapes_for(phase)
    for i, shape in enumerate(shapes):
        ours = {}  # what this shape's backends share (measure_case); freed with the next shape
        for backend in backends:
            t0 = time.perf_counter()
            m = measure_case(op, phase, shape, backend, c, ours=ours)
            results[(shape.label, backend)] = m
            status = m.skipped and "skipped" or m.failed and "FAILED" or "ok"
            seconds = time.perf_counter() - t0
            line = progress.line(
                op, phase, i + 1, len(shapes), shape.label, backend, status, seconds
            )
            if log:
                log(line)
            progress.record(line)
            extra = {"compile_cache": m.compile_cache} if m.compile_cache is not None else {}
            figures = ("time", "device_time", "public_ratio")
            counts = {f: len(getattr(m, f)) for f in figures if getattr(m, f)}
            extra.update({"samples": counts} if counts else {})
            progress.record_times(
                suite=suite, case=shape.label, backend=backend, status=status,
                seconds=seconds, phases=m.seconds, **extra,
            )  # fmt: skip
    progress.record_times(
        suite=suite, process=os.getpid(), started=started,
        seconds=time.perf_counter() - start, phases=process,
    )  # fmt: skip
    return results


def median(samples) -> float:
    s = sorted(samples)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def ideal_bytes(op: str, phase: str, shape: Shape) -> int:
    """Bytes an ideal kernel moves, the figure bandwidths are quoted against.

    forward: read x (+ residual), write y (+ residual_out), read w, write fp32 rstd;
    backward: read dy, x (+ d_residual_out), write one input gradient, read w and rstd,
    write dw. dweight partials and re-reads are the implementation's cost, not counted.
    """
    e = {"bf16": 2, "f16": 2, "f32": 4}[shape.dtype]
    mn, n, m = shape.m * shape.n, shape.n, shape.m
    if phase == "forward":
        tensors = 2 if op == "rms_norm" else 4  # x, y (+ residual, residual_out)
        return tensors * mn * e + n * e + 4 * m
    tensors = 3 if op == "rms_norm" else 4  # dy, x, dx (+ d_residual_out)
    return tensors * mn * e + 2 * n * e + 4 * m


if __name__ == "__main__":
    import sys

    print(
        "rmsnorm_bench.instrument is the library that the asv suites in benchmarks/ and the\n"
        "tracker's tools import; it has no command line. Run a tool instead, from the\n"
        "repository root: python -m rmsnorm_bench.TOOL --help, TOOL one of validate, sweep,\n"
        "copy_ceiling, profile_host, spread, training_step, asvrun, report (README.md).",
        file=sys.stderr,
    )
    sys.exit(2)
