"""The instrument: what the asv suites and the GPU tools measure with, the same for every commit.

The package under test is what changes: asv runs today's benchmarks/ against old commits, so
nothing here imports rmsnorm_kernels or torch at module level (asv's discovery imports the
suites without them). A measurement flows through these modules in this order:

- matrix: what is measured (the shapes, ops, backends, the device; ideal bytes);
- backends/: how each implementation is called, ours and each peer in its own module;
- problem: one case's inputs, the fp32 reference, validation, the call that is timed;
- contract: how a figure is sampled, and the host-clock timings (public call, ratio);
- graphs: device time (CUDA-graph replay, hot and cold L2) and GPU memory;
- suite: every case of a run measured in one process;
- processes: that, in several fresh processes one after another, pooled (what the suites'
  setup_cache returns).

Timing contract (the seed PR's): the public autograd call of each backend; the forward graph
is built (and compiled) before timing; allocations, dweight zeroing and casts are inside the
timed region; 10 warm-ups, then CUDA events around 100 back-to-back calls, seconds per call.
Several such samples are kept per case so that asv judges differences from statistics: at
least 4 per process, more where they are noisy (Contract.enough: until the median is known to
1%, at most 16 samples or a tenth of a second more; a twentieth for public-call times).
Every backend's outputs and gradients are checked against the fp32 reference first.

The names below are the instrument's interface (`instrument.make_problem` ...). DEVICE lives
in matrix (`instrument.matrix.DEVICE`, which tests set); `instrument.DEVICE` reads it.
"""

from . import backends, contract, graphs, matrix, problem, suite
from .backends import make_backend
from .backends.torch_compile import compile_cache_counts
from .contract import (
    GPU_CONTRACT,
    GPU_RATIO_CONTRACT,
    PROCESSES,
    SMOKE_CONTRACT,
    Contract,
    block_seconds,
    device_contract,
    interleaved_ratio,
    median,
    median_ci_share,
    public_contract,
    ratio_contract,
    seconds_per_call,
)
from .graphs import (
    COLD_SAMPLES,
    GRAPH_MIN_SECONDS,
    MAX_CALLS_PER_GRAPH,
    calls_per_graph,
    cold_seconds,
    device_seconds,
    device_seconds_per_call,
    flusher,
    peak_memory,
)
from .matrix import (
    BACKENDS,
    BACKENDS_VAR,
    BWD_SHAPES_VAR,
    DEFAULT_SHAPES,
    DEVICE_VAR,
    DTYPE_NAMES,
    EPS,
    FWD_SHAPES_VAR,
    OPS,
    OURS,
    SMOKE_SHAPES,
    Shape,
    Unavailable,
    check_device,
    ideal_bytes,
    param_shapes,
    parse_shapes,
    selected_backends,
    shapes_for,
)
from .problem import (
    Problem,
    make_problem,
    reference,
    run_forward,
    timed_call,
    torch_dtype,
    validate,
)
from .processes import PROCESSES_VAR, measure_in_processes, pool, processes_per_round
from .suite import (
    SUITES,
    Measurement,
    Phases,
    measure_case,
    measure_phases,
    measure_suite,
    measure_suites,
)


def __getattr__(name):
    if name == "DEVICE":  # read where it is set: matrix, at the time of asking
        return matrix.DEVICE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
