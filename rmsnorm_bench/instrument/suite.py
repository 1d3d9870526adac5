"""One measurement of every case of a run: validation first, then the figures of each case.

The asv suites share one setup_cache (benchmarks/bench_rmsnorm.py), which calls
measure_suites: one process measures all four suites, so that what a process costs before it
measures (torch imported, CUDA initialised, the extension and kernels loaded, torch.compile's
and Liger's imports) is paid once per round, not once per suite. Within it, each op, shape and
backend is set up and validated once for both phases: the backward's case reuses the
forward's backend (and torch.compile's graphs, compiled for both passes when validating).
Every figure is sampled as before (contract), in a process of its own per round.
"""

import contextlib
import os
import time
from dataclasses import dataclass, field

from .. import progress
from . import matrix
from .backends import Unavailable, make_backend
from .backends.torch_compile import compile_cache_counts
from .contract import (
    Contract,
    device_contract,
    interleaved_ratio,
    public_contract,
    ratio_contract,
    seconds_per_call,
)
from .graphs import COLD_SAMPLES, device_seconds, peak_memory
from .matrix import BACKENDS, OPS, OURS, Shape, shapes_for
from .problem import make_problem, reference, timed_call, validate


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


PHASES = ("forward", "backward")
SUITES = [(op, phase) for op in OPS for phase in PHASES]  # the asv suites, in order measured


def measure_case(
    op: str, phase: str, shape: Shape, backend: str, c: Contract, ours: dict | None = None
) -> Measurement:
    """The figures of one case (measure_phases with one phase)."""
    return measure_phases(op, [phase], shape, backend, c, ours)[phase]


def measure_phases(
    op: str, phases: list, shape: Shape, backend: str, c: Contract, ours: dict | None = None
) -> dict:
    """{phase: Measurement} of one op, shape and backend: the backend made, the inputs drawn
    and every output and gradient validated once, then each phase's figures in turn. `ours`
    (one per op and shape) holds what its backends share: the fp32 reference's values
    (computed once), and, per phase, backend OURS's validated public call, against which a
    peer measured after it gets its public ratio (interleaved_ratio); without it, no ratio.

    Each phase's seconds go to its Measurement's `seconds`: the set-up counted once, in the
    first phase's (the backend made: imports, the package's extension, torch.compile's
    wrapper; the inputs; validation: the first calls, kernel variants compiled or loaded,
    torch.compile's graphs of both passes), then the public figures (time, ratio) and the
    device figures (peak memory, CUDA graphs) of each phase."""
    shared = {}
    timed = Phases(shared)
    caches = compile_cache_counts() if backend == "torch_compile" else None
    try:  # an error in one backend fails its cases; the run goes on
        with timed("backend"):
            fn = make_backend(backend, op)
        with timed("inputs"):
            p = make_problem(op, shape)
        with timed("validation"):
            if ours is not None and "reference" not in ours:
                ours["reference"] = reference(p)
            validate(fn, p, (ours or {}).get("reference"))
    except Unavailable as e:
        return _not_measured(phases, shared, skipped=str(e))
    except Exception as e:
        return _not_measured(phases, shared, failed=f"{type(e).__name__}: {e}")
    if caches is not None:  # validation made the first calls, which compile
        after = compile_cache_counts()
        caches = {k: n - caches.get(k, 0) for k, n in after.items() if n != caches.get(k, 0)}
    out = {}
    for i, phase in enumerate(phases):
        seconds = _first(i, shared)
        mine = None if ours is None else ours.setdefault(phase, {})
        validated = p if i == 0 else None
        out[phase] = _figures(fn, op, phase, shape, backend, c, mine, seconds, validated)
        out[phase].compile_cache = caches if i == 0 else None
    return out


def _not_measured(phases: list, shared: dict, **why) -> dict:
    """Every phase skipped or failed, for why the set-up or validation could not be done."""
    _free()
    return {ph: Measurement(**why, seconds=_first(i, shared)) for i, ph in enumerate(phases)}


def _first(i: int, shared: dict) -> dict:
    """The set-up's seconds for the first phase's Measurement; a fresh dict for the others."""
    return dict(shared) if i == 0 else {}


def _free():
    if matrix.DEVICE == "cuda":
        import torch

        torch.cuda.empty_cache()


def _figures(fn, op, phase, shape, backend, c, ours, seconds, p=None) -> Measurement:
    """One phase's figures of a validated backend (`p`: the validated inputs, else drawn
    afresh with the same seed)."""
    import torch

    timed = Phases(seconds)
    try:
        with timed("inputs"):
            p = p or make_problem(op, shape)
        with timed("public"):
            call = timed_call(fn, p, phase)
            m = Measurement(time=seconds_per_call(call, public_contract(c)), seconds=seconds)
            m.public_ratio_skipped = _public_ratio(m, backend, call, ours)
        if matrix.DEVICE == "cpu":
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
    except Exception as e:
        return Measurement(failed=f"{type(e).__name__}: {e}", seconds=seconds)
    finally:
        _free()


def _public_ratio(m: Measurement, backend: str, call, ours: dict | None) -> str | None:
    """Keep our call in `ours` (this phase's), or measure a peer's ratio against it into `m`;
    returns why there is no ratio (None when there is one)."""
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


def measure_suites(suites=SUITES, backends=BACKENDS, log=None) -> dict:
    """{(op, phase): {(shape label, backend): Measurement}} for every case of `suites`, in
    this process: op by op, shape by shape (the forward's shapes, then any only the backward
    measures), backend by backend, each phase of a shape that its suite measures.

    Each case's line goes to the progress log, and its phases' seconds, then the process's
    own (torch imported, CUDA initialised; the whole run), to the run's timing record."""
    started, start = time.time(), time.perf_counter()
    process = {}
    with Phases(process)("import torch"):
        import torch
    if matrix.DEVICE == "cuda":
        with Phases(process)("CUDA initialised"), contextlib.suppress(Exception):
            # the context, which the first case would make; where it cannot be made, each
            # case fails with its own error, as before
            torch.zeros(1, device="cuda")
    c = device_contract()
    results = {suite: {} for suite in suites}
    for op in dict.fromkeys(op for op, _ in suites):
        shapes = {phase: shapes_for(phase) for o, phase in suites if o == op}
        for shape in dict.fromkeys(s for listed in shapes.values() for s in listed):
            ours = {}  # what this shape's backends share; freed with the next shape
            phases = [phase for phase, listed in shapes.items() if shape in listed]
            for backend in backends:
                measured = measure_phases(op, phases, shape, backend, c, ours=ours)
                for phase, m in measured.items():
                    results[(op, phase)][(shape.label, backend)] = m
                    of = (shapes[phase].index(shape) + 1, len(shapes[phase]))
                    _report(f"{op} {phase}", of, shape, backend, m, log)
    progress.record_times(
        suites=[f"{op} {phase}" for op, phase in suites], process=os.getpid(),
        started=started, seconds=time.perf_counter() - start, phases=process,
    )  # fmt: skip
    return results


def measure_suite(op: str, phase: str, backends=BACKENDS, log=None) -> dict:
    """{(shape label, backend): Measurement} for every case of one suite (measure_suites)."""
    return measure_suites([(op, phase)], backends, log)[(op, phase)]


def _report(suite: str, of: tuple, shape: Shape, backend: str, m: Measurement, log) -> None:
    """The case's line in the progress log, and its phases in the run's timing record; its
    seconds are its phases' (the set-up shared by an op's phases counted in the first's)."""
    status = m.skipped and "skipped" or m.failed and "FAILED" or "ok"
    seconds = sum(m.seconds.values())
    op, phase = suite.split()
    line = progress.line(op, phase, *of, shape.label, backend, status, seconds)
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
