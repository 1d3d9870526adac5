"""Device time: the call replayed from a CUDA graph, hot and cold L2; GPU memory."""

import dataclasses
import math

from .contract import Contract, median, seconds_per_call

# Cold-L2 device time: this many replays of a one-call graph, each after a flush of L2
# (per process: 21 in all).
COLD_SAMPLES = 7
FLUSH_BYTES = 256 * 2**20  # triton.testing.do_bench's buffer; 2x L2 where L2 is larger


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


def device_seconds(make_call, c: Contract, cold_samples: int = 0, sample_seconds=None):
    """(hot, cold): device_seconds_per_call's samples, and where `cold_samples` is given,
    that many of one call with a cold L2 (cold_seconds, on the one-call graph captured
    first), else None.

    `sample_seconds` (the grid's; the suites give none): a sample of long replays holds fewer
    than `c.iters` of them, as many as last about that long (at least one), and a call that
    long is estimated from one replay rather than 30, so that a call of milliseconds is
    replayed about 15 times, not 150 (sampled_iters)."""
    import torch

    flush = flusher() if cold_samples else None
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call = make_call()
        for _ in range(3):
            call()
        graph = _captured(call, 1, stream)
        estimate = None
        if sample_seconds:  # a call at least a sample long needs no finer estimate
            one = seconds_per_call(graph.replay, Contract(warmup=1, iters=1, samples=1))[0]
            estimate = one if one >= sample_seconds else None
        if estimate is None:
            replays = Contract(warmup=2, iters=10, samples=3)
            estimate = median(seconds_per_call(graph.replay, replays))
        cold = cold_seconds(graph.replay, flush, cold_samples) if cold_samples else None
        calls = calls_per_graph(estimate)
        if calls > 1:
            del graph
            graph = _captured(call, calls, stream)
        if sample_seconds:
            iters = sampled_iters(c.iters, estimate * calls, sample_seconds)
            c = dataclasses.replace(c, iters=iters)
    torch.cuda.current_stream().wait_stream(stream)
    return [s / calls for s in seconds_per_call(graph.replay, c)], cold


def sampled_iters(iters: int, seconds_per_replay: float, sample_seconds: float) -> int:
    """Replays in one sample: enough to last at least `sample_seconds` (so that the host's
    launch latency inside a sample stays a small share of it), at most `iters`."""
    wanted = math.ceil(sample_seconds / max(seconds_per_replay, 1e-9))
    return max(1, min(iters, wanted))


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
