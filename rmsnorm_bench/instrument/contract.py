"""How a figure is sampled (Contract), and the host-clock timings: public call, ratio."""

import dataclasses
import math
import time
from dataclasses import dataclass

from . import matrix


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
# which needs 6 a side to reach its p < 0.002), up to 16 where the median is not known to 1%,
# the extra ones within a tenth of a second (public-call times: PUBLIC_MAX_SECONDS). A sample
# of a short call costs 100 x a few us, so noisy short cases get all 16 for little. A long
# call's public time drifts within a process rather than scatters, so that more samples do not
# narrow it: at 33dc0b7 on an H200, 59 of
# the 176 public times ran to 48 samples (then within a quarter of a second), most of them
# calls of 150-500 us, whose samples spread by 40-140% of their median; those extra samples
# took 55 of the run's 85 s of public-time sampling. Device times of long calls are rarely
# noisy (12.0-12.9 samples on average per figure there), so the cap seldom reaches them.
GPU_CONTRACT = Contract(warmup=10, iters=100, samples=4, max_samples=16, target=0.01,
                        max_seconds=0.1)  # fmt: skip
# The interpreter is slow and its timing means nothing: a fixed count, enough to run every code
# path of the tracker end to end.
SMOKE_CONTRACT = Contract(warmup=1, iters=2, samples=3)


def device_contract() -> Contract:
    """The contract of this device: the GPU's, or the smoke mode's."""
    return SMOKE_CONTRACT if matrix.DEVICE == "cpu" else GPU_CONTRACT


# The public-call time's extra samples stop at a twentieth of a second, the device time's at a
# tenth: a public backward costs 50-100 us a call on an H200 host, so most backward figures ran
# to the tenth, 15 of the 57 s a run (61ebc07, 3 processes) spent sampling public times, for a
# figure that is noisy between processes anyway and does not gate by default.
PUBLIC_MAX_SECONDS = 0.05


def public_contract(c: Contract) -> Contract:
    """The public-call time's contract: `c`, its extra samples cut at PUBLIC_MAX_SECONDS (a
    fixed count, such as the smoke mode's, stays as it is)."""
    if c.max_samples <= c.samples:
        return c
    return dataclasses.replace(c, max_seconds=min(c.max_seconds, PUBLIC_MAX_SECONDS))


# The public-call ratio (peer / ours): few samples, each a pair of short blocks, ours then
# the peer's, so that both see the same host state; the figure is their quotient. At least 2
# pairs per process (6 in all), up to 8 where the quotient is not known to 1%.
GPU_RATIO_CONTRACT = Contract(warmup=3, iters=20, samples=2, max_samples=8, target=0.01,
                              max_seconds=0.25)  # fmt: skip


def ratio_contract() -> Contract:
    return SMOKE_CONTRACT if matrix.DEVICE == "cpu" else GPU_RATIO_CONTRACT


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
    if matrix.DEVICE == "cpu":
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


def median(samples) -> float:
    s = sorted(samples)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
