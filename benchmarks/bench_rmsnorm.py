"""asv suites: RMSNorm and fused-add RMSNorm, forward and backward, Triton vs its peers.

Each suite measures all its cases once, in one warm process (``setup_cache``): inputs built,
every output and gradient checked against the fp32 reference, then timed under the seed's
contract (see rmsnorm_bench/instrument.py). The benchmarks below only report those figures:

- ``track_time``: seconds per public call (10 samples of 100 back-to-back calls each);
- ``track_device_time``: seconds per call replayed from a CUDA graph (no host overhead; short
  calls captured several times over, so that the host's replay rate never sets the figure);
- ``track_peak_memory``: GPU bytes allocated at the peak of one call.

A backend that cannot run here is skipped (n/a); a wrong result fails the benchmark.
"""

import sys

from rmsnorm_bench import instrument

CASE_PARAMS = {
    phase: [s.label for s in instrument.shapes_for(phase)] for phase in ("forward", "backward")
}


def _log(message):
    print(message, file=sys.stderr, flush=True)


class _Suite:
    """What the four suites share. Each suite defines its own ``setup_cache``: asv keys that
    cache by the function's source line, so one inherited definition would make all four
    suites share one measurement."""

    param_names = ["case", "backend"]
    rounds = 1  # every figure comes from setup_cache's one run: a second round would repeat it
    repeat = 1
    number = 1
    timeout = 120
    # bump by hand when the method of measuring changes (asv does not hash rmsnorm_bench)
    version = "seed-contract-1"
    op = phase = ""  # each suite's

    def __init_subclass__(cls):
        cls.params = [CASE_PARAMS[cls.phase], instrument.BACKENDS]
        cls.setup_cache.timeout = 1800

    def measure(self):
        """Every case of this suite, measured once (the suite's setup_cache)."""
        return instrument.measure_suite(self.op, self.phase, log=_log)

    def setup(self, results, case, backend):
        m = results[(case, backend)]
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


# Extra setups of two benchmarks, run after the class's setup (asv passes no self to them).
def _gpu_figure(results, case, backend):
    """Device time exists on GPUs only, and where CUDA-graph capture works."""
    reason = results[(case, backend)].device_time_skipped
    if reason:
        raise NotImplementedError(reason)


def _gpu_memory(results, case, backend):
    if results[(case, backend)].peak_memory is None:
        raise NotImplementedError("GPU memory is measured on GPUs only")


_Suite.track_device_time.setup = _gpu_figure
_Suite.track_peak_memory.setup = _gpu_memory


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
