"""One measurement of every case: validation first, then the figures of each case."""

import contextlib
import os
import time
from dataclasses import dataclass, field

from .. import progress
from . import matrix
from .backends import Unavailable, make_backend
from .backends.torch_compile import compile_cache_counts
from .contract import Contract, device_contract, interleaved_ratio, ratio_contract, seconds_per_call
from .graphs import COLD_SAMPLES, device_seconds, peak_memory
from .matrix import BACKENDS, OURS, Shape, shapes_for
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
    except Unavailable as e:
        return Measurement(skipped=str(e), seconds=seconds)
    except Exception as e:
        return Measurement(failed=f"{type(e).__name__}: {e}", seconds=seconds)
    finally:
        if matrix.DEVICE == "cuda":
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
    if matrix.DEVICE == "cuda":
        with Phases(process)("CUDA initialised"), contextlib.suppress(Exception):
            # the context, which the first case would make; where it cannot be made, each
            # case fails with its own error, as before
            torch.zeros(1, device="cuda")
    c = device_contract()
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
