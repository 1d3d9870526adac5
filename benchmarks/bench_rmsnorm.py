"""asv suites: RMSNorm and fused-add RMSNorm, forward and backward, Triton vs its peers.

Each suite measures all its cases in one warm process (``setup_cache``): inputs built, every
output and gradient checked against the fp32 reference, then timed under the seed's contract
(see rmsnorm_bench/instrument/). Run with ``-a rounds=3`` (scripts/run and scripts/compare
pass instrument.PROCESSES), asv repeats that in fresh processes, one per round, and pools their
samples, so that the spread between processes enters its statistics; ``asv continuous``
interleaves the rounds of its two commits. (asv reads a ``rounds`` attribute of time_*
benchmarks only, so the option is what sets it for these track_* ones.) The benchmarks below
only report those figures:

- ``track_time``: seconds per public call (samples of 100 back-to-back calls: at least 4 per
  process, up to 16 while the median is not known to 1%, instrument.Contract.enough);
- ``track_device_time``: seconds per call replayed from a CUDA graph (no host overhead; short
  calls captured several times over, so that the host's replay rate never sets the figure);
- ``track_peak_memory``: GPU bytes allocated at the peak of one call;
- ``track_public_ratio``: a peer's public-call time over ours (higher: ours faster), from
  samples interleaved in one process (ours, peer, ours, peer ...) so that the host's speed
  divides out; peers only;
- ``track_device_time_cold``: seconds of one call replayed from a CUDA graph right after L2
  was flushed (as triton.testing.do_bench does), beside the hot-L2 ``track_device_time``;
- ``track_bandwidth``: GB/s, instrument.ideal_bytes over ``track_device_time``'s samples.

Higher is better for the ratio and the bandwidth, which asv (0.6.6) cannot be told: neither is
judged for regressions, by asv.conf.json or by rmsnorm_bench/regressions.py.

The parameter lists are the same on every machine (instrument.param_shapes): a case this
machine does not measure (the CPU smoke mode's shapes on a GPU, the GPU's in the smoke mode, a
shape left out by RMSNORM_BENCH_SHAPES) is skipped (n/a), as is a backend that cannot run
here; a wrong result fails the benchmark.
"""

import sys

from rmsnorm_bench import instrument

CASE_PARAMS = {
    phase: [s.label for s in instrument.param_shapes(phase)] for phase in ("forward", "backward")
}


def _log(message):
    print(message, file=sys.stderr, flush=True)


class _Suite:
    """What the four suites share. Each suite defines its own ``setup_cache``: asv keys that
    cache by the function's source line, so one inherited definition would make all four
    suites share one measurement."""

    param_names = ["case", "backend"]
    # no `rounds` here: asv ignores it on track_* benchmarks (see above); each round that
    # `-a rounds=N` asks for runs setup_cache afresh in a new process
    repeat = 1
    number = 1
    timeout = 120
    # bump by hand when the method of measuring changes (asv does not hash rmsnorm_bench):
    # what one sample is and which statistic is reported. Not for the number of samples: since
    # the noise sets it (at least the 4 per process of before, more where noisy), a figure that
    # is not noisy is sampled exactly as before, and a noisy one gets more samples of the same
    # kind, so figures of either kind stay comparable (as asv's own timing benchmarks vary
    # their repeats by the time they take, under one version)
    version = "seed-contract-1"
    op = phase = ""  # each suite's

    def __init_subclass__(cls):
        cls.params = [CASE_PARAMS[cls.phase], instrument.BACKENDS]
        cls.setup_cache.timeout = 1800

    def measure(self):
        """Every case of this suite, measured once (the suite's setup_cache)."""
        return instrument.measure_suite(self.op, self.phase, log=_log)

    def setup(self, results, case, backend):
        m = results.get((case, backend))
        if m is None:
            raise NotImplementedError(f"{case} is not in the shapes measured on this machine")
        if m.skipped:
            raise NotImplementedError(m.skipped)
        if m.failed:
            raise AssertionError(m.failed)
        self.m = m

    def track_time(self, results, case, backend):
        return {"samples": self.m.time, "number": 1}

    track_time.unit = "seconds"

    def track_device_time(self, results, case, backend):
        return {"samples": self.m.device_time, "number": 1}

    track_device_time.unit = "seconds"
    # 2: graphs of several calls where one call is short (instrument.GRAPH_MIN_SECONDS); before,
    # one call per graph, whose replays were host-bound below about 5 us
    track_device_time.version = "seed-contract-1, device-graph-2"

    def track_peak_memory(self, results, case, backend):
        return self.m.peak_memory

    track_peak_memory.unit = "bytes"

    def track_public_ratio(self, results, case, backend):
        return {"samples": self.m.public_ratio, "number": 1}

    track_public_ratio.unit = "peer/ours"
    track_public_ratio.version = "seed-contract-1, ratio-1"

    def track_device_time_cold(self, results, case, backend):
        return {"samples": self.m.device_time_cold, "number": 1}

    track_device_time_cold.unit = "seconds"
    track_device_time_cold.version = "seed-contract-1, cold-1"

    def track_bandwidth(self, results, case, backend):
        nbytes = instrument.ideal_bytes(self.op, self.phase, instrument.Shape.from_label(case))
        return {"samples": [nbytes / s / 1e9 for s in self.m.device_time], "number": 1}

    track_bandwidth.unit = "GB/s"
    track_bandwidth.version = "seed-contract-1, device-graph-2, bandwidth-1"


# Extra setups of two benchmarks, run after the class's setup (asv passes no self to them).
def _gpu_figure(results, case, backend):
    """Device time exists on GPUs only, and where CUDA-graph capture works."""
    reason = results[(case, backend)].device_time_skipped
    if reason:
        raise NotImplementedError(reason)


def _gpu_cold(results, case, backend):
    _gpu_figure(results, case, backend)
    if not results[(case, backend)].device_time_cold:
        raise NotImplementedError("no cold-L2 device time was measured")


def _peer_ratio(results, case, backend):
    reason = results[(case, backend)].public_ratio_skipped
    if reason:
        raise NotImplementedError(reason)


def _gpu_memory(results, case, backend):
    if results[(case, backend)].peak_memory is None:
        raise NotImplementedError("GPU memory is measured on GPUs only")


_Suite.track_device_time.setup = _gpu_figure
_Suite.track_peak_memory.setup = _gpu_memory
_Suite.track_public_ratio.setup = _peer_ratio
_Suite.track_device_time_cold.setup = _gpu_cold
_Suite.track_bandwidth.setup = _gpu_figure


class RMSNormForward(_Suite):
    op, phase = "rms_norm", "forward"

    def setup_cache(self):  # one per suite: see _Suite
        return self.measure()


class RMSNormBackward(_Suite):
    op, phase = "rms_norm", "backward"

    def setup_cache(self):
        return self.measure()


class FusedAddRMSNormForward(_Suite):
    op, phase = "fused_add", "forward"

    def setup_cache(self):
        return self.measure()


class FusedAddRMSNormBackward(_Suite):
    op, phase = "fused_add", "backward"

    def setup_cache(self):
        return self.measure()
