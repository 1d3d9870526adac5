"""What one call launches: the kernel variants of a cache key and the rules that map rows to grids.

A plan is built once per key (N bucket, dtypes, flags, device) from ``_config`` and cached.
It is data: the kernel launches the call may make (``KernelLaunch``: a kernel, its
constexprs and warps) and the numbers of its grid rule. Both host paths take it from here:
the compiled one (``csrc/rmsnorm.cpp``) receives it as a tuple of integers (``native()``)
and applies the same rules in C++; the Python path applies them below.

A compiled variant is decided by its launch, ALIGN, the per-call constexpr ``flags`` and
what Triton specialises on: the width of each integer (the kernels specialise on no integer
value) and whether each pointer is 16-byte aligned.
"""

import functools
from dataclasses import dataclass

import torch

from . import _config
from ._config import RowConfig, cdiv
from ._kernels import (
    _rms_norm_bwd_kernel,
    _rms_norm_bwd_small_kernel,
    _rms_norm_bwd_walk_kernel,
    _rms_norm_fwd_kernel,
    _rms_norm_fwd_split_kernel,
    _row_dot_kernel,
    _row_sum_sq_kernel,
    _sum_partials_kernel,
)

# Per-call constexpr flags of each kernel, bit i of a launch's ``flags`` setting the i-th
BACKWARD_FLAGS = ("HAS_DRES", "REDUCE_DW", "HAS_DX_COPY")
HAS_DRES, REDUCE_DW, HAS_DX_COPY = 1, 2, 4

LAUNCHES: list["KernelLaunch"] = []  # by id: the compiled host path names launches by index


@dataclass(frozen=True, eq=False)
class KernelLaunch:
    """One kernel with the constexprs and warps a plan gives it; ALIGN and ``flags`` vary."""

    id: int
    kernel: object
    constexprs: tuple  # (name, value) pairs
    num_warps: int
    flags: tuple = ()  # names of the constexpr flags set per call (None: a bit not used)

    def options(self, align: int, flags: int = 0) -> dict:
        options = dict(self.constexprs)
        options.update({name: bool(flags >> i & 1) for i, name in enumerate(self.flags) if name})
        # FP fusion (a * b + c as one FMA) stated, not left to a default that Triton 3.10 changes
        return dict(options, ALIGN=align, num_warps=self.num_warps, enable_fp_fusion=True)

    def __call__(self, grid, args, align: int, flags: int = 0) -> None:
        """The Python path's launch: Triton's own launcher."""
        self.kernel[grid](*args, **self.options(align, flags))


@functools.cache
def _launch(kernel, constexprs: tuple, num_warps: int, flags: tuple = ()) -> KernelLaunch:
    launch = KernelLaunch(len(LAUNCHES), kernel, constexprs, num_warps, flags)
    LAUNCHES.append(launch)
    return launch


# --------------------------------------------------------------------------------------------
# Forward
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowLaunch:
    """A forward launch over row blocks of ``block_m`` rows."""

    launch: KernelLaunch
    block_m: int
    max_programs: int  # a persistent grid of at most this many programs; 0: one per block

    def grid(self, m: int) -> tuple[int]:
        blocks = cdiv(m, self.block_m)
        return (min(blocks, self.max_programs) if self.max_programs else blocks,)


@dataclass(frozen=True)
class SplitForward:
    """The forward of few rows past one block, each row over segments of columns: the sums of
    squares of each segment (``sum_sq``), then each segment scaled (``scale``)."""

    sum_sq: KernelLaunch
    scale: KernelLaunch
    max_m: int  # for up to this many rows
    programs: int  # the target grid of either pass
    block_n: int  # columns a program takes at a time; a segment is a multiple of it
    max_segments: int  # per row

    def segments(self, m: int, n: int) -> tuple[int, int]:
        """(columns per segment, segments) for m rows of n elements."""
        return row_segments(m, n, self.block_n, self.programs, self.max_segments)


def row_segments(m: int, n: int, block_n: int, programs: int, max_segments: int):
    """(columns per segment, segments) where m rows of n elements are split over segments of
    whole blocks of block_n columns, about `programs` programs in all, at most max_segments
    a row (the segment kernels' grid; csrc/rmsnorm.cpp's row_segments is the same rule)."""
    chunks = cdiv(n, block_n)
    segments = max(1, min(cdiv(programs, m), max_segments, chunks))
    segment_n = block_n * cdiv(chunks, segments)
    return segment_n, cdiv(n, segment_n)


@dataclass(frozen=True)
class ForwardPlan:
    main: RowLaunch
    few: RowLaunch | None = None  # for few_min_m < m <= few_max_m rows
    few_min_m: int = -1
    few_max_m: int = -1
    split: SplitForward | None = None  # for up to split.max_m rows

    def for_rows(self, m: int) -> RowLaunch:
        return self.few if self.few_min_m < m <= self.few_max_m else self.main

    def split_for(self, m: int) -> SplitForward | None:
        return self.split if self.split and m <= self.split.max_m else None

    def native(self) -> tuple:
        few = self.few or RowLaunch(self.main.launch, 1, 0)
        split = self.split
        return (
            self.main.launch.id, self.main.block_m, self.main.max_programs,
            few.launch.id if self.few else -1, few.block_m, few.max_programs,
            self.few_min_m, self.few_max_m,
            split.max_m if split else -1, split.sum_sq.id if split else -1,
            split.scale.id if split else -1, split.programs if split else 0,
            split.block_n if split else 0, split.max_segments if split else 0,
        )  # fmt: skip


def _tile(config: RowConfig) -> tuple:
    """The tile constexprs of both kernels: rows and columns a program takes at a time."""
    return ("BLOCK_M", config.block_m), ("BLOCK_N", config.block_n)


def _forward_launch(config: RowConfig, has_weight, has_residual, stream, persistent, prefetch):
    constexprs = (
        ("HAS_WEIGHT", has_weight),
        ("HAS_RESIDUAL", has_residual),
        ("SINGLE_BLOCK", config.single_block),
        *_tile(config),
        ("CHUNK_STAGES", config.chunk_stages),
        ("STREAM", "evict_first" if stream and not config.single_block else ""),
        ("PERSISTENT", persistent),
        ("PREFETCH", prefetch),
    )
    return _launch(_rms_norm_fwd_kernel, constexprs, config.num_warps)


@functools.cache
def forward_plan(
    bucket: int, x_dtype: torch.dtype, w_dtype, has_residual: bool, device: torch.device
) -> ForwardPlan:
    """The forward of one cache key. ``w_dtype`` is None without a weight; ``bucket`` is
    ``_config.shape_bucket(N)``; rows of at least STREAM_MIN_N have a bucket of their own."""
    stream = bucket < 0
    f32 = x_dtype == torch.float32
    per_warp = _config.F32_FORWARD_ELEMENTS_PER_WARP if f32 else _config.ELEMENTS_PER_WARP
    config = RowConfig.from_heuristic(bucket if bucket > 0 else _config.MAX_SINGLE_BLOCK_N + 1,
                                      per_warp=per_warp)  # fmt: skip
    has_weight = w_dtype is not None

    def row_launch(programs=0, prefetch=False):
        launch = _forward_launch(config, has_weight, has_residual, stream, programs > 0, prefetch)
        return RowLaunch(launch, config.block_m, programs)

    if not config.single_block:
        split = _split_forward(has_weight, has_residual, device, _config.FORWARD_SPLIT_MAX_M)
        return ForwardPlan(row_launch(), split=split)
    if _config.FORWARD_FEW_ROWS_PROGRAMS_PER_SM <= 0:
        return ForwardPlan(row_launch())
    programs = _programs(device, _config.FORWARD_FEW_ROWS_PROGRAMS_PER_SM)
    per_program = _config.FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM
    if has_residual and f32:
        per_program = _config.FUSED_F32_FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM
    return ForwardPlan(
        row_launch(),
        few=row_launch(programs, _config.FORWARD_PREFETCH),
        few_min_m=programs * config.block_m,
        few_max_m=per_program * programs * config.block_m,
    )


def _split_forward(has_weight: bool, has_residual: bool, device, max_m: int):
    """The split forward of up to max_m rows past one block (None where max_m is 0)."""
    if max_m <= 0:
        return None
    block_n = _config.FORWARD_SPLIT_BLOCK_N
    warps = min(_config.MAX_WARPS, max(1, block_n // _config.ELEMENTS_PER_WARP))
    segments = _config.FORWARD_SPLIT_SEGMENTS
    sum_sq = _launch(
        _row_sum_sq_kernel, (("HAS_RESIDUAL", has_residual), ("BLOCK_N", block_n)), warps
    )
    scale = _launch(
        _rms_norm_fwd_split_kernel,
        (("HAS_WEIGHT", has_weight), ("BLOCK_N", block_n),
         ("MAX_SEGMENTS", _config.next_power_of_2(segments))),
        warps,
    )  # fmt: skip
    programs = _programs(device, _config.FORWARD_SPLIT_PROGRAMS_PER_SM)
    return SplitForward(sum_sq, scale, max_m, programs, block_n, segments)


# --------------------------------------------------------------------------------------------
# Backward
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TileLaunch:
    """A backward launch over tiles of ``block_m`` rows by ``block_n`` columns."""

    launch: KernelLaunch
    block_m: int
    block_n: int


@dataclass(frozen=True)
class SmallBackward:
    """The one-launch backward of few rows: row programs of ``block_m`` rows (dx), then
    column programs of ``dw_block_n`` columns (dweight over all rows). Segmented (rows past
    one block: ``segment_block_n`` > 0), each row over segments of whole chunks of that
    many columns, about ``programs`` row programs in all, at most ``max_segments`` a row."""

    launch: KernelLaunch
    block_m: int
    dw_block_n: int  # 0: no dweight, no column programs
    max_m: int  # for up to this many rows
    segment_block_n: int = 0  # 0: each row in one block
    programs: int = 0
    max_segments: int = 0

    def grid(self, m: int, n: int) -> tuple[int, int, int, int]:
        """(programs, row programs, columns per segment, segments per row) for m rows of n
        elements. Rows in one block: one segment of n, and one row program alone writes
        dweight itself (1x4096 bf16 on an H100: 64 column programs each reading the one row
        made it 2.3 us, against 2.0 for one program)."""
        columns = cdiv(n, self.dw_block_n) if self.dw_block_n else 0
        if self.segment_block_n:
            segment_n, segments = row_segments(
                m, n, self.segment_block_n, self.programs, self.max_segments
            )  # fmt: skip
            return m * segments + columns, m * segments, segment_n, segments
        rows = cdiv(m, self.block_m)
        return rows + (columns if rows > 1 else 0), rows, n, 1


@dataclass(frozen=True)
class WalkBackward:
    """The persistent backward of many rows past one block: ``programs`` programs walk the
    rows, one row at a time, each adding its dweight share to its own row of partials."""

    launch: KernelLaunch
    programs: int

    def grid(self, m: int) -> int:
        return min(m, self.programs)


@dataclass(frozen=True)
class BackwardPlan:
    main: TileLaunch
    max_programs: int  # the persistent grid's size (split rows: over all column blocks)
    reduce: KernelLaunch  # the dweight partials' column sums
    reduce_block_n: int
    split_row: bool = False  # rows past one block: the row-dot pass, then column blocks
    dot_programs: int = 1  # the row-dot pass's target grid
    row_dot: KernelLaunch | None = None
    few: TileLaunch | None = None  # for up to few_max_m rows
    few_max_m: int = -1
    small: SmallBackward | None = None  # for up to small.max_m rows, before the others
    walk: WalkBackward | None = None  # split rows past small.max_m, in place of the split

    def small_for(self, m: int) -> SmallBackward | None:
        return self.small if self.small and m <= self.small.max_m else None

    def walk_for(self, m: int) -> WalkBackward | None:
        return self.walk if self.walk and not self.small_for(m) else None

    def for_rows(self, m: int, n: int) -> TileLaunch:
        """The tile of m rows of n elements: the few rows' where it applies, and where split
        rows' column blocks of its width fit a grid (the main tile's, of 8,192, fit every row
        the package takes: ops.MAX_ROW_ELEMENTS)."""
        few = self.few is not None and m <= self.few_max_m
        if few and self.split_row and cdiv(n, self.few.block_n) > _config.MAX_GRID_Y:
            few = False
        return self.few if few else self.main

    def grid(self, tile: TileLaunch, m: int, n: int) -> tuple[int, int]:
        """(row groups, column blocks): a persistent grid over m rows (one row group writes
        dweight itself); for split rows, as many row groups as fill max_programs with every
        column block."""
        if self.split_row:
            blocks = cdiv(n, tile.block_n)
            return min(cdiv(m, tile.block_m), max(1, self.max_programs // blocks)), blocks
        return min(cdiv(m, tile.block_m), self.max_programs), 1

    def dot_segments(self, m: int, n: int) -> tuple[int, int]:
        """(columns per segment, segments) of the row-dot pass for m rows of n elements."""
        return row_segments(m, n, _config.DOT_BLOCK_N, self.dot_programs, _config.DOT_SEGMENTS)

    def native(self) -> tuple:
        few, small = self.few or self.main, self.small
        return (
            self.main.launch.id, self.main.block_m, self.main.block_n,
            few.launch.id if self.few else -1, few.block_m, few.block_n, self.few_max_m,
            int(self.split_row), self.max_programs, self.dot_programs,
            self.row_dot.id if self.row_dot else -1, self.reduce.id, self.reduce_block_n,
            small.launch.id if small else -1, small.block_m if small else 0,
            small.dw_block_n if small else 0, small.max_m if small else -1,
            small.segment_block_n if small else 0, small.programs if small else 0,
            small.max_segments if small else 0,
            self.walk.launch.id if self.walk else -1, self.walk.programs if self.walk else 0,
        )  # fmt: skip


def _backward_launch(
    config: RowConfig,
    has_weight: bool,
    compute_dw: bool,
    split_row: bool,
    long: bool = False,
    held_bytes: int = 0,
):
    """The main backward's launch; ``long``: a one-block row past _config.LONG_ROW_N;
    ``held_bytes``: the bytes of a row block (x, dy and, fused, d_residual_out), which a
    one-block row holds across its row sum: past BACKWARD_PREFETCH_MAX_BYTES of them the next
    block is not prefetched (split rows, whose row sum the row-dot pass took, hold none there;
    long rows follow LONG_ROW_BACKWARD_PREFETCH alone)."""
    if long:
        prefetch = _config.LONG_ROW_BACKWARD_PREFETCH
    else:
        held = 0 if split_row else held_bytes
        prefetch = _config.BACKWARD_PREFETCH and held <= _config.BACKWARD_PREFETCH_MAX_BYTES
    constexprs = (
        ("HAS_WEIGHT", has_weight),
        ("COMPUTE_DW", compute_dw),
        ("SPLIT_ROW", split_row),
        ("DOT_BLOCK", _config.DOT_SEGMENTS),
        ("PREFETCH", prefetch),
        ("WEIGHT_PER_BLOCK", long and _config.LONG_ROW_BACKWARD_WEIGHT_PER_BLOCK),
        ("DW_FIRST", config.block_n > _config.BACKWARD_DW_FIRST_ABOVE_N),
        *_tile(config),
    )
    launch = _launch(_rms_norm_bwd_kernel, constexprs, config.num_warps, BACKWARD_FLAGS)
    return TileLaunch(launch, config.block_m, config.block_n)


@functools.cache
def backward_plan(
    bucket: int,
    x_dtype: torch.dtype,
    w_dtype,
    compute_dw: bool,
    device: torch.device,
    has_dres: bool,
) -> BackwardPlan:
    """The backward of one cache key; ``has_dres``: the fused backward's, which also reads
    d_residual_out (a third row to hold; its one-block width is set apart from the plain
    backward's, though both are 16,384 today). Float32 rows take the narrower of that and
    their own width (SPLIT_F32_BACKWARD_ABOVE_N)."""
    split_above = (
        _config.SPLIT_BACKWARD_ABOVE_N if has_dres else _config.SPLIT_PLAIN_BACKWARD_ABOVE_N
    )
    if x_dtype.itemsize > 2:
        split_above = min(split_above, _config.SPLIT_F32_BACKWARD_ABOVE_N)
    split_row = bucket <= 0 or bucket > split_above  # past one block
    tile = _config.BACKWARD_TILE_BYTES // x_dtype.itemsize
    short = not split_row and bucket <= _config.SHORT_ROW_N and x_dtype.itemsize == 2
    long = not split_row and bucket > _config.LONG_ROW_N
    per_warp = _config.SHORT_ROW_BACKWARD_ELEMENTS_PER_WARP if short else None
    per_warp = _config.LONG_ROW_BACKWARD_ELEMENTS_PER_WARP if long else per_warp
    max_warps = _config.LONG_ROW_MAX_WARPS if long else _config.MAX_WARPS
    if torch.version.hip:
        max_warps = min(max_warps, _config.ROCM_MAX_WARPS)
    config = RowConfig.from_heuristic(_config.SPLIT_BLOCK_N if split_row else bucket, tile,
                                      per_warp, max_warps)  # fmt: skip
    max_programs = _programs(device, _config.BACKWARD_PROGRAMS_PER_SM)
    rows_held = 3 if has_dres else 2  # x, dy and d_residual_out

    def held_bytes(tile: RowConfig) -> int:
        return rows_held * tile.block_m * tile.block_n * x_dtype.itemsize

    has_weight = w_dtype is not None
    compute_dw = compute_dw and has_weight
    reduce_block_n = _config.REDUCE_SPLIT_BLOCK_N if split_row else _config.REDUCE_BLOCK_N
    reduce = _launch(
        _sum_partials_kernel, (("BLOCK_P", _config.REDUCE_BLOCK_P), ("BLOCK_N", reduce_block_n)), 4
    )
    plan = functools.partial(
        BackwardPlan,
        _backward_launch(config, has_weight, compute_dw, split_row, long, held_bytes(config)),
        max_programs=max_programs,
        reduce=reduce,
        reduce_block_n=reduce_block_n,
    )
    if split_row:
        dot_warps = min(_config.MAX_WARPS, max(1, _config.DOT_BLOCK_N // _config.ELEMENTS_PER_WARP))
        row_dot = _launch(
            _row_dot_kernel, (("HAS_WEIGHT", has_weight), ("BLOCK_N", _config.DOT_BLOCK_N)),
            dot_warps,
        )  # fmt: skip
        dot_programs = _programs(device, _config.DOT_PROGRAMS_PER_SM)
        small = _segmented_backward(bucket, x_dtype, has_weight, compute_dw, device)
        plan = functools.partial(
            plan, split_row=True, dot_programs=dot_programs, row_dot=row_dot, small=small,
            walk=_walk_backward(has_weight, compute_dw, device),
        )  # fmt: skip
        if _config.SPLIT_FEW_MAX_M <= 0:
            return plan()
        few = RowConfig.from_heuristic(_config.SPLIT_FEW_BLOCK_N, _config.SPLIT_FEW_BLOCK_N)
        return plan(few=_backward_launch(few, has_weight, compute_dw, True),
                    few_max_m=_config.SPLIT_FEW_MAX_M)  # fmt: skip
    small = (
        _segmented_backward(bucket, x_dtype, has_weight, compute_dw, device)
        if bucket >= _config.SEGMENT_MIN_BUCKET
        else _small_backward(bucket, has_weight, compute_dw)
    )
    plan = functools.partial(plan, small=small)
    if short or x_dtype.itemsize != 2:
        return plan()
    few_tile = _config.FEW_ROWS_TILE_BYTES // x_dtype.itemsize
    few = RowConfig.from_heuristic(bucket, few_tile, per_warp, max_warps)
    if few == config:  # one row per block at either tile size
        return plan()
    return plan(
        few=_backward_launch(few, has_weight, compute_dw, False, long, held_bytes(few)),
        few_max_m=_config.FEW_ROWS_BLOCKS_PER_PROGRAM * max_programs * config.block_m,
    )


def _small_backward(bucket: int, has_weight: bool, compute_dw: bool) -> SmallBackward | None:
    """The one-launch backward of few rows of up to ``bucket`` columns (None where the
    constants give it no rows)."""
    config = RowConfig.from_heuristic(bucket, _config.SMALL_TILE_ELEMENTS)
    tile = config.block_m * config.block_n
    share = max(_config.SMALL_DW_MIN_BLOCK_N, bucket // _config.SMALL_DW_ROW_SHARE)
    dw_block_n = min(_config.SMALL_DW_BLOCK_N, share, bucket)
    dw_block_m = max(1, tile // dw_block_n)
    max_m = min(_config.SMALL_DW_STEPS * dw_block_m, _config.SMALL_MAX_ELEMENTS // bucket)
    if max_m <= 0:
        return None
    launch = _small_launch(config, has_weight, compute_dw, False, dw_block_m, dw_block_n)
    return SmallBackward(launch, config.block_m, dw_block_n if compute_dw else 0, max_m)


def _segmented_backward(bucket: int, x_dtype, has_weight: bool, compute_dw: bool, device):
    """The one-launch backward of few rows of ``bucket`` columns, each walked in chunks: one
    block of at least SEGMENT_MIN_BUCKET columns, or with SEGMENT_LONG_ROWS rows past one
    block (bucket 0 or -1); None otherwise, and where its rows (SEGMENT_MAX_M, float32 rows
    SEGMENT_F32_MAX_M) are 0."""
    max_m = _config.SEGMENT_MAX_M
    if x_dtype.itemsize > 2:
        max_m = min(max_m, _config.SEGMENT_F32_MAX_M)
    if max_m <= 0 or 0 < bucket < _config.SEGMENT_MIN_BUCKET:
        return None
    if bucket <= 0 and not _config.SEGMENT_LONG_ROWS:
        return None
    block_n = _config.SEGMENT_BLOCK_N
    config = RowConfig.from_heuristic(block_n, block_n)  # one row of one chunk
    dw_block_n = _config.SMALL_DW_BLOCK_N
    dw_block_m = max(1, block_n // dw_block_n)
    launch = _small_launch(config, has_weight, compute_dw, True, dw_block_m, dw_block_n)
    return SmallBackward(
        launch, 1, dw_block_n if compute_dw else 0, max_m, block_n,
        _programs(device, _config.SEGMENT_PROGRAMS_PER_SM), _config.SEGMENT_MAX_SEGMENTS,
    )  # fmt: skip


def _walk_backward(has_weight: bool, compute_dw: bool, device) -> WalkBackward | None:
    """The persistent row walk for split rows (None where WALK_BACKWARD is off)."""
    if not _config.WALK_BACKWARD:
        return None
    launch = _walk_launch(has_weight, compute_dw)
    return WalkBackward(launch, _programs(device, _config.WALK_PROGRAMS_PER_SM))


def _walk_launch(has_weight: bool, compute_dw: bool) -> KernelLaunch:
    block_n = _config.WALK_BLOCK_N
    config = RowConfig.from_heuristic(block_n, block_n)  # for its warps: one chunk of a row
    constexprs = (("HAS_WEIGHT", has_weight), ("COMPUTE_DW", compute_dw), ("BLOCK_N", block_n))
    return _launch(_rms_norm_bwd_walk_kernel, constexprs, config.num_warps,
                   ("HAS_DRES", None, "HAS_DX_COPY"))  # fmt: skip


def _small_launch(config: RowConfig, has_weight, compute_dw, segmented, dw_block_m, dw_block_n):
    constexprs = (
        ("HAS_WEIGHT", has_weight),
        ("COMPUTE_DW", compute_dw),
        ("SEGMENTED", segmented),
        *_tile(config),
        ("DW_BLOCK_M", dw_block_m),
        ("DW_BLOCK_N", dw_block_n),
    )
    return _launch(_rms_norm_bwd_small_kernel, constexprs, config.num_warps,
                   ("HAS_DRES", None, "HAS_DX_COPY"))  # fmt: skip


def _programs(device: torch.device, per_sm: int) -> int:
    """per_sm programs on each multiprocessor of a GPU; under Triton's interpreter (CPU
    tensors) a few programs, enough to exercise the persistent grids."""
    if device.type == "cpu":
        return _config.INTERPRETER_PROGRAMS
    return per_sm * _multiprocessors(device)


@functools.cache
def _multiprocessors(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def bucket_of(n: int) -> int:
    """The part of N that decides the plan: its block width; for rows past one block 0, or -1
    from STREAM_MIN_N on (those stream their last touches)."""
    if n <= _config.MAX_SINGLE_BLOCK_N:
        return _config.next_power_of_2(n)
    return -1 if n >= _config.STREAM_MIN_N else 0


def of_call(build, x, weight, flag: bool, *flags: bool):
    """The plan ``build`` (forward_plan or backward_plan) makes for a call on 2-D rows x."""
    w_dtype = None if weight is None else weight.dtype
    return build(bucket_of(x.shape[1]), x.dtype, w_dtype, flag, x.device, *flags)


def clear_caches() -> None:
    """Forget every plan (tests count compilations from zero); the compiled host path's
    caches are cleared by ``_extension.clear_caches``."""
    forward_plan.cache_clear()
    backward_plan.cache_clear()
