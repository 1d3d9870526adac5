"""The torch_compile peer: torch.compile of torch eager's call, and its caches' counters."""

from . import torch_eager


def make(op):
    """torch.compile of torch's eager call (torch_eager.make), as a model with fixed shapes gets it:
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
    return torch.compile(torch_eager.make(op), dynamic=False)


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
