"""asv suites: RMSNorm and fused-add RMSNorm, forward and backward, Triton vs its peers.

The four suites share one ``setup_cache`` (instrument.measure_suites): one warm process
measures every case of all four (inputs built, every output and gradient checked against the
fp32 reference, once per op, shape and backend for both phases, then timed under the seed's
contract, see rmsnorm_bench/instrument/), so that a process's start (torch, CUDA, the
extension, the peers' imports) is paid once, not once per suite. Each commit is measured in
3 fresh processes (instrument.PROCESSES), whose samples are pooled, so that the spread between
processes enters asv's statistics: where scripts/run measures one commit, asv runs one round
and its setup_cache measures in the 3 processes one after another (instrument.processes);
where the rounds of several commits interleave (``asv continuous``, the self-test, a range),
asv runs 3 rounds (``-a rounds=3 --interleave-rounds``), each a fresh setup_cache process, and
pools their samples itself. (asv reads a ``rounds`` attribute of time_* benchmarks only, so
the option is what sets it for these track_* ones.) A run of one suite (``asv run --bench
RMSNormForward``) still measures all four; RMSNORM_BENCH_SHAPES and RMSNORM_BENCH_BACKENDS
narrow what is measured. The benchmarks below only report those figures:

- ``track_time``: seconds per public call (samples of 100 back-to-back calls: at least 4 per
  process, up to 16 while the median is not known to 1%, within a twentieth of a second,
  instrument.Contract.enough and public_contract);
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
import types

from rmsnorm_bench import instrument
from rmsnorm_bench.instrument.fingerprint import declared

# Every figure's asv version starts with the method's name, declared in benchmarks/method.json
# with the fingerprint of the instrument that measures by it (instrument/fingerprint.py): a
# change of the instrument's code is refused until a commit declares it the same method or
# names a new one (what one sample is or which statistic is reported; not the number of
# samples, see _Suite.version).
METHOD = declared()["method"]

CASE_PARAMS = {
    phase: [s.label for s in instrument.param_shapes(phase)] for phase in ("forward", "backward")
}


def _log(message):
    print(message, file=sys.stderr, flush=True)


def figure(unit: str, version: str | None = None):
    """A figure's unit, and its own version where its method differs from the class's."""

    def declare(track):
        track.unit = unit
        if version is not None:
            track.version = version
        return track

    return declare


def samples(values: list) -> dict:
    """A figure of several samples, as asv's track_* benchmarks return one (each sample one
    value; asv computes the statistics)."""
    return {"samples": values, "number": 1}


class _Suite:
    """What the four suites share, their one setup_cache included: asv keys that cache by the
    function's source line, so this one inherited definition is measured once per round for
    all four suites, which each read their own part of it."""

    param_names = ["case", "backend"]
    # no `rounds` here: asv ignores it on track_* benchmarks (see above); each round that
    # `-a rounds=N` asks for runs setup_cache afresh in a new process
    repeat = 1
    number = 1
    timeout = 120
    # METHOD: a new name in benchmarks/method.json when the method of measuring changes:
    # what one sample is and which statistic is reported. Not for the number of samples:
    # since the noise sets it (at least the 4 per process of before, more where noisy), a
    # figure that is not noisy is sampled exactly as before, and a noisy one gets more
    # samples of the same kind, so figures of either kind stay comparable (as asv's own
    # timing benchmarks vary their repeats by the time they take, under one version). Nor for
    # which suites share a process: each round is still a fresh process, and each sample the
    # same calls timed.
    version = METHOD
    op = phase = ""  # each suite's

    def __init_subclass__(cls):
        cls.params = [CASE_PARAMS[cls.phase], instrument.BACKENDS]
        for name, check in FIGURE_CHECKS.items():
            setattr(cls, name, _checked(getattr(_Suite, name), check, (cls.op, cls.phase)))

    def setup_cache(self):
        """Every case of the four suites, measured once per round: in this process, or where
        asvrun measures one commit in one round, in its processes one after another, pooled
        (instrument.processes)."""
        return instrument.measure_in_processes(log=_log)

    # asv ends a set-up that prints nothing for this long (each case prints its line)
    setup_cache.timeout = 1800

    def setup(self, results, case, backend):
        m = results.get((self.op, self.phase), {}).get((case, backend))
        if m is None:
            raise NotImplementedError(f"{case} is not in the shapes measured on this machine")
        if m.skipped:
            raise NotImplementedError(m.skipped)
        if m.failed:
            raise AssertionError(m.failed)
        self.m = m

    @figure("seconds")
    def track_time(self, results, case, backend):
        return samples(self.m.time)

    # 2: graphs of several calls where one call is short (instrument.GRAPH_MIN_SECONDS); before,
    # one call per graph, whose replays were host-bound below about 5 us
    @figure("seconds", f"{METHOD}, device-graph-2")
    def track_device_time(self, results, case, backend):
        return samples(self.m.device_time)

    @figure("bytes")
    def track_peak_memory(self, results, case, backend):
        return self.m.peak_memory

    @figure("peer/ours", f"{METHOD}, ratio-1")
    def track_public_ratio(self, results, case, backend):
        return samples(self.m.public_ratio)

    @figure("seconds", f"{METHOD}, cold-1")
    def track_device_time_cold(self, results, case, backend):
        return samples(self.m.device_time_cold)

    @figure("GB/s", f"{METHOD}, device-graph-2, bandwidth-1")
    def track_bandwidth(self, results, case, backend):
        nbytes = instrument.ideal_bytes(self.op, self.phase, instrument.Shape.from_label(case))
        return samples([nbytes / s / 1e9 for s in self.m.device_time])


# Why a figure may be missing where the case itself was measured: each check raises the
# reason (NotImplementedError: asv's "skipped") for the Measurement of one case.
def gpu_figure(m):
    """Device time exists on GPUs only, and where CUDA-graph capture works."""
    if m.device_time_skipped:
        raise NotImplementedError(m.device_time_skipped)


def gpu_cold(m):
    gpu_figure(m)
    if not m.device_time_cold:
        raise NotImplementedError("no cold-L2 device time was measured")


def peer_ratio(m):
    if m.public_ratio_skipped:
        raise NotImplementedError(m.public_ratio_skipped)


def gpu_memory(m):
    if m.peak_memory is None:
        raise NotImplementedError("GPU memory is measured on GPUs only")


FIGURE_CHECKS = {
    "track_device_time": gpu_figure,
    "track_peak_memory": gpu_memory,
    "track_public_ratio": peer_ratio,
    "track_device_time_cold": gpu_cold,
    "track_bandwidth": gpu_figure,
}


def _checked(figure, check, suite):
    """A copy of `figure` (the same code, hence the same source shown by asv) for one suite,
    with `check` as its extra setup, run after the class's setup; asv passes no self to it,
    hence the suite, (op, phase), bound here."""

    def setup(results, case, backend):
        m = results.get(suite, {}).get((case, backend))
        if m is not None:  # a case not measured: the class's setup has said so
            check(m)

    own = types.FunctionType(figure.__code__, figure.__globals__, figure.__name__)
    own.__qualname__ = figure.__qualname__
    own.__dict__.update(vars(figure))
    own.setup = setup
    return own


class RMSNormForward(_Suite):
    op, phase = "rms_norm", "forward"


class RMSNormBackward(_Suite):
    op, phase = "rms_norm", "backward"


class FusedAddRMSNormForward(_Suite):
    op, phase = "fused_add", "forward"


class FusedAddRMSNormBackward(_Suite):
    op, phase = "fused_add", "backward"
