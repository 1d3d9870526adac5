"""Triton kernels for RMSNorm and fused residual-add RMSNorm.

Forward, for one row x of length N (with ``s = x + residual`` in place of x when fused)::

    rstd = 1 / sqrt(mean(x * x) + eps)          # fp32, saved for the backward
    y    = (x * rstd) * w                       # computed in fp32, stored in x's dtype

Backward, with g = dy * w and xhat = x * rstd::

    dx   = rstd * (g - xhat * mean(g * xhat))   # + d(residual_out) when fused
    dw   = sum over rows of dy * xhat           # fp32 partials, one row per row group

Every kernel reads rows through a row stride (the last dimension must be contiguous) and
accumulates in fp32. A row that fits one block (``SINGLE_BLOCK``, N up to 16K) is held in
registers, several rows per program for small N. Longer rows: the forward walks each row in
``BLOCK_N`` chunks, twice (for few rows it may instead split each row over segments:
``_row_sum_sq_kernel``, then ``_rms_norm_fwd_split_kernel``). The backward of rows past 16K
(``_config.SPLIT_BACKWARD_ABOVE_N``, ``SPLIT_PLAIN_BACKWARD_ABOVE_N`` without a gradient of
residual_out; float32 rows past 8K, ``SPLIT_F32_BACKWARD_ABOVE_N``) is split in two
passes, ``_row_dot_kernel`` summing g * x over segments of each row, then
``_rms_norm_bwd_kernel`` with ``SPLIT_ROW`` on column blocks of the rows, so that one
program's dweight partial covers many rows of its columns.
The backward of few rows is one launch, ``_rms_norm_bwd_small_kernel``: row programs compute
dx while column programs sum dweight over all rows, with no partials (rows past one block:
each row program sums g * x over its whole row, then writes dx of one segment of it).
"""

import triton
import triton.language as tl


@triton.jit
def _aligned(value, ALIGN: tl.constexpr):
    """value, known to the compiler as a multiple of ALIGN (which the caller guarantees).

    Triton learns the alignment of integer arguments only up to "divisible by 16"; a row of
    N = 3000 bf16 elements is 16-byte aligned (N is a multiple of 8), but without this hint
    its loads and stores are not vectorised (half the bandwidth, measured on an H200).
    """
    return value // ALIGN * ALIGN


@triton.jit
def _load_fwd_block(X, stride_x, R, stride_r, row_start, cols, M, N, HAS_RESIDUAL: tl.constexpr,
                    BLOCK_M: tl.constexpr):  # fmt: skip
    """x (and the residual, else x again) of one block of rows; rows past M read nothing."""
    rows = row_start + tl.arange(0, BLOCK_M)
    mask = (rows < M)[:, None] & (cols < N)
    rows = rows.to(tl.int64)[:, None]
    x = tl.load(X + rows * stride_x + cols, mask=mask, other=0.0)
    r = x
    if HAS_RESIDUAL:
        r = tl.load(R + rows * stride_r + cols, mask=mask, other=0.0)
    return x, r


@triton.jit
def _load_fwd_weight(W, cols, N, HAS_WEIGHT: tl.constexpr):
    """The weight's columns (1.0 without one), for _fwd_row_block.

    Loaded before the row's sum, not after it: a load after the stores of rstd (and of
    residual_out) cannot be moved above them, as the pointers may alias, so its latency
    would add to every row block's.
    """
    w = 1.0
    if HAS_WEIGHT:
        w = tl.load(W + cols, mask=cols < N, other=0.0)
    return w


@triton.jit
def _fwd_row_block(x, r, w, Y, stride_y, S, stride_s, RSTD, row_start, cols, M, N, eps,
                   HAS_WEIGHT: tl.constexpr, HAS_RESIDUAL: tl.constexpr,
                   BLOCK_M: tl.constexpr):  # fmt: skip
    """The forward of one block of rows held in registers (x and r from _load_fwd_block, w
    from _load_fwd_weight)."""
    rows = row_start + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    rows = rows.to(tl.int64)[:, None]
    mask = row_mask[:, None] & (cols < N)
    if HAS_RESIDUAL:
        # residual_out is rounded to the input dtype, and the norm sees that rounded value
        x = (x.to(tl.float32) + r.to(tl.float32)).to(S.dtype.element_ty)
        tl.store(S + rows * stride_s + cols, x, mask=mask)
    x = x.to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=1) / N + eps)
    tl.store(RSTD + rows.reshape(BLOCK_M), rstd, mask=row_mask)
    y = x * rstd[:, None]
    if HAS_WEIGHT:
        y = y * w.to(tl.float32)
    tl.store(Y + rows * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


# Integer arguments are not specialised (rmsnorm_kernels._launch says why); ALIGN carries
# what the kernels need to know of their divisibility.
@triton.jit(do_not_specialize=["stride_x", "stride_r", "stride_y", "stride_s", "M", "N"])
def _rms_norm_fwd_kernel(
    X,  # input rows [M, N]
    stride_x,  # elements between rows of X
    R,  # residual rows [M, N] (None unless HAS_RESIDUAL)
    stride_r,
    W,  # weight [N] (None unless HAS_WEIGHT)
    Y,  # output rows [M, N]
    stride_y,
    S,  # residual_out = X + R, [M, N] (None unless HAS_RESIDUAL)
    stride_s,
    RSTD,  # fp32 [M], 1 / rms of each row
    M,
    N,
    eps,
    HAS_WEIGHT: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
    SINGLE_BLOCK: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
    CHUNK_STAGES: tl.constexpr,  # chunks in flight at once on the chunked path (pipelining)
    STREAM: tl.constexpr,  # L2 eviction policy of chunks read or written for the last time
    PERSISTENT: tl.constexpr,  # one block: program pid takes row blocks pid, pid + P, ...
    PREFETCH: tl.constexpr,  # persistent: load the next row block before working on this one
):
    N = _aligned(N, ALIGN)
    stride_x, stride_r = _aligned(stride_x, ALIGN), _aligned(stride_r, ALIGN)
    stride_y, stride_s = _aligned(stride_y, ALIGN), _aligned(stride_s, ALIGN)
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)[None, :]
    if SINGLE_BLOCK and PERSISTENT:
        # Row blocks pid, pid + P, pid + 2P, ..., with PREFETCH the next block's rows loaded
        # while this one computes.
        step = tl.num_programs(0) * BLOCK_M
        w = _load_fwd_weight(W, cols, N, HAS_WEIGHT)
        if PREFETCH:
            nx, nr = _load_fwd_block(
                X, stride_x, R, stride_r, pid * BLOCK_M, cols, M, N, HAS_RESIDUAL, BLOCK_M
            )  # fmt: skip
        for row_start in range(pid * BLOCK_M, M, step):
            if PREFETCH:
                x, r = nx, nr
                nx, nr = _load_fwd_block(
                    X, stride_x, R, stride_r, row_start + step, cols, M, N, HAS_RESIDUAL, BLOCK_M
                )  # fmt: skip
            else:
                x, r = _load_fwd_block(
                    X, stride_x, R, stride_r, row_start, cols, M, N, HAS_RESIDUAL, BLOCK_M
                )  # fmt: skip
            _fwd_row_block(
                x, r, w, Y, stride_y, S, stride_s, RSTD, row_start, cols, M, N, eps,
                HAS_WEIGHT, HAS_RESIDUAL, BLOCK_M,
            )  # fmt: skip
    elif SINGLE_BLOCK:  # one row block per program
        x, r = _load_fwd_block(
            X, stride_x, R, stride_r, pid * BLOCK_M, cols, M, N, HAS_RESIDUAL, BLOCK_M
        )  # fmt: skip
        w = _load_fwd_weight(W, cols, N, HAS_WEIGHT)
        _fwd_row_block(
            x, r, w, Y, stride_y, S, stride_s, RSTD, pid * BLOCK_M, cols, M, N, eps,
            HAS_WEIGHT, HAS_RESIDUAL, BLOCK_M,
        )  # fmt: skip
    else:
        rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        row_mask = rows < M
        rows = rows.to(tl.int64)[:, None]
        # Pass 1: sum of squares, and residual_out when fused, stored as it is computed.
        # Pass 2: read the row again (residual_out when fused: one tensor, not two, and just
        # written, so likely still in L2) and write y. Both passes give a chunk the same
        # offsets, so every thread reads back what it stored itself. (Fused forward on an
        # H200, against reading x and residual again: 256x65536 bf16 51.3 -> 43.7 us,
        # 1024x65536 200.4 -> 160.9, 64x262144 74.4 -> 59.7, 4096x20000 239.4 -> 227.8.)
        sum_sq = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in tl.range(0, N, BLOCK_N, num_stages=CHUNK_STAGES):
            c = start + cols
            mask = row_mask[:, None] & (c < N)
            if HAS_RESIDUAL:
                x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0, eviction_policy=STREAM)
                r = tl.load(R + rows * stride_r + c, mask=mask, other=0.0, eviction_policy=STREAM)
                x = (x.to(tl.float32) + r.to(tl.float32)).to(S.dtype.element_ty)
                tl.store(S + rows * stride_s + c, x, mask=mask)
            else:
                x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0)
            x = x.to(tl.float32)
            sum_sq += x * x
        rstd = tl.math.rsqrt(tl.sum(sum_sq, axis=1) / N + eps)
        tl.store(RSTD + rows.reshape(BLOCK_M), rstd, mask=row_mask)
        if HAS_RESIDUAL:
            X, stride_x = S, stride_s
            tl.debug_barrier()  # the stores above are visible to the whole program
        for start in tl.range(0, N, BLOCK_N, num_stages=CHUNK_STAGES):
            c = start + cols
            mask = row_mask[:, None] & (c < N)
            x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0, eviction_policy=STREAM)
            y = x.to(tl.float32) * rstd[:, None]
            if HAS_WEIGHT:
                w = tl.load(W + c, mask=c < N, other=0.0)
                y = y * w.to(tl.float32)
            tl.store(
                Y + rows * stride_y + c, y.to(Y.dtype.element_ty), mask=mask, eviction_policy=STREAM
            )


@triton.jit
def _segment(segments, segment_n):
    """(row, first column, end) of the segment this program takes, of the segment kernels'
    grid: program row * segments + segment, each segment segment_n columns."""
    pid = tl.program_id(0)
    start = pid % segments * segment_n
    return (pid // segments).to(tl.int64), start, start + segment_n


# The split forward of few long rows: a row's sum of squares over segments, then each segment
# scaled by its row's rstd, so that a few rows still occupy many programs.


@triton.jit(do_not_specialize=["stride_x", "stride_r", "stride_s", "N", "segment_n", "segments"])
def _row_sum_sq_kernel(
    X,  # input rows [M, N]
    stride_x,
    R,  # residual rows [M, N] (None unless HAS_RESIDUAL)
    stride_r,
    S,  # residual_out = X + R, [M, N] (None unless HAS_RESIDUAL)
    stride_s,
    SQ,  # fp32 [M, segments]: sum of squares over each segment of each row
    N,
    segment_n,  # columns per segment, a multiple of BLOCK_N
    segments,
    HAS_RESIDUAL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
):
    """The split forward's first pass: program row * segments + segment sums the squares of
    that segment of that row (of x + residual when fused, rounded to x's dtype and stored
    as residual_out, as the one-pass forward does), BLOCK_N columns at a time."""
    N = _aligned(N, ALIGN)
    stride_x, stride_r, stride_s = (
        _aligned(stride_x, ALIGN), _aligned(stride_r, ALIGN), _aligned(stride_s, ALIGN)
    )  # fmt: skip
    row, start, end = _segment(segments, _aligned(segment_n, BLOCK_N))
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for offset in tl.range(start, end, BLOCK_N, num_stages=1):
        c = offset + cols
        mask = (c < end) & (c < N)
        x = tl.load(X + row * stride_x + c, mask=mask, other=0.0)
        if HAS_RESIDUAL:
            r = tl.load(R + row * stride_r + c, mask=mask, other=0.0)
            x = (x.to(tl.float32) + r.to(tl.float32)).to(S.dtype.element_ty)
            tl.store(S + row * stride_s + c, x, mask=mask)
        x = x.to(tl.float32)
        acc += x * x
    tl.store(SQ + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit(do_not_specialize=["stride_x", "stride_y", "N", "segment_n", "segments"])
def _rms_norm_fwd_split_kernel(
    X,  # the rows to normalise [M, N]: the input, or residual_out when fused
    stride_x,
    W,  # weight [N] (None unless HAS_WEIGHT)
    Y,  # output rows [M, N]
    stride_y,
    RSTD,  # fp32 [M], 1 / rms of each row
    SQ,  # fp32 [M, segments], from _row_sum_sq_kernel
    N,
    segment_n,
    segments,
    eps,
    HAS_WEIGHT: tl.constexpr,
    BLOCK_N: tl.constexpr,
    MAX_SEGMENTS: tl.constexpr,  # at least segments: the partial sums loaded at once
    ALIGN: tl.constexpr,
):
    """The split forward's second pass: program row * segments + segment adds up its row's
    sums of squares (the same ones in the same order in every segment, so all agree on
    rstd), writes y over its segment and stores rstd once (segment 0), last: no load then
    follows a store, which it could not be moved above (the pointers may alias)."""
    N = _aligned(N, ALIGN)
    stride_x, stride_y = _aligned(stride_x, ALIGN), _aligned(stride_y, ALIGN)
    row, start, end = _segment(segments, _aligned(segment_n, BLOCK_N))
    parts = tl.arange(0, MAX_SEGMENTS)
    sq = tl.load(SQ + row * segments + parts, mask=parts < segments, other=0.0)
    rstd = tl.math.rsqrt(tl.sum(sq, axis=0) / N + eps)
    cols = tl.arange(0, BLOCK_N)
    for offset in tl.range(start, end, BLOCK_N, num_stages=1):
        c = offset + cols
        mask = (c < end) & (c < N)
        y = tl.load(X + row * stride_x + c, mask=mask, other=0.0).to(tl.float32) * rstd
        if HAS_WEIGHT:
            y = y * tl.load(W + c, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * stride_y + c, y.to(Y.dtype.element_ty), mask=mask)
    if start == 0:
        tl.store(RSTD + row, rstd)


@triton.jit
def _block_start(i, last, REVERSE: tl.constexpr):
    """The first row of the i-th row block (i a multiple of BLOCK_M), or with REVERSE of the
    i-th from the last one (whose first row is ``last``): negative past the first block."""
    if REVERSE:
        return last - i
    return i


@triton.jit
def _load_row_block(
    DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, DOT, dot_segments, row_start, cols, M,
    N, HAS_DRES: tl.constexpr, SPLIT_ROW: tl.constexpr, BLOCK_M: tl.constexpr,
    DOT_BLOCK: tl.constexpr,
):  # fmt: skip
    """One block of rows of the backward's inputs; rows outside [0, M) read as zeros. With
    SPLIT_ROW, also each row's sum of g * x, from the partial sums of _row_dot_kernel."""
    rows = row_start + tl.arange(0, BLOCK_M)
    row_mask = (rows < M) & (rows >= 0)
    rstd = tl.load(RSTD + rows, mask=row_mask, other=0.0)[:, None]
    rows = rows.to(tl.int64)
    dot = tl.zeros([BLOCK_M], dtype=tl.float32)
    if SPLIT_ROW:
        # one vector per segment, added in a fixed order (deterministic); a 2-D load of
        # [BLOCK_M, DOT_BLOCK] instead made Triton compute dx in that tensor's layout, with
        # every thread on one whole row (20x slower, measured on an H200)
        for s in tl.static_range(DOT_BLOCK):
            # the segment test as a vector: Triton 3.9's interpreter refuses a scalar mask term
            in_row = tl.full([BLOCK_M], s, dtype=tl.int32) < dot_segments
            segment = tl.load(DOT + rows * dot_segments + s, mask=row_mask & in_row, other=0.0)
            dot += segment
    rows = rows[:, None]
    mask = row_mask[:, None] & (cols < N)
    x = tl.load(X + rows * stride_x + cols, mask=mask, other=0.0)
    dy = tl.load(DY + rows * stride_dy + cols, mask=mask, other=0.0)
    dres = tl.zeros([BLOCK_M, 1], dtype=tl.float32)  # broadcasts against dx
    if HAS_DRES:
        dres = tl.load(DRES + rows * stride_dres + cols, mask=mask, other=0.0)
    return x, dy, dres, rstd, dot[:, None]


@triton.jit
def _load_dot_chunk(DY, stride_dy, X, stride_x, W, row, c, end, N, HAS_WEIGHT: tl.constexpr):
    """x and g = dy * w (fp32) of one chunk of one row, zeros at or past ``end`` or N (two
    tests, so that the compiler sees each bound's alignment)."""
    mask = (c < end) & (c < N)
    x = tl.load(X + row * stride_x + c, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(DY + row * stride_dy + c, mask=mask, other=0.0).to(tl.float32)
    if HAS_WEIGHT:
        g = g * tl.load(W + c, mask=mask, other=0.0).to(tl.float32)
    return x, g


@triton.jit
def _dx_block(x, dy, dres, rstd, dot, w, DX, stride_dx, DX_COPY, row_start, cols, col_mask, M, N,
              HAS_WEIGHT: tl.constexpr, HAS_DX_COPY: tl.constexpr, SPLIT_ROW: tl.constexpr,
              BLOCK_M: tl.constexpr):  # fmt: skip
    """dx of one block of rows (from _load_row_block), stored (twice with HAS_DX_COPY: a
    write, where a copy made by autograd would read and write); returns the block's share of
    dweight (_dw_share)."""
    rows = row_start + tl.arange(0, BLOCK_M)
    mask = (rows < M)[:, None] & col_mask
    rows = rows.to(tl.int64)[:, None]
    xhat = x.to(tl.float32) * rstd
    dy = dy.to(tl.float32)
    g = dy
    if HAS_WEIGHT:
        g = dy * w
    if SPLIT_ROW:  # the row's sum of g * x, over all of its segments
        mean_gx = dot * rstd / N
    else:
        mean_gx = tl.sum(g * xhat, axis=1)[:, None] / N
    dx = (g - xhat * mean_gx) * rstd + dres.to(tl.float32)
    dx = dx.to(DX.dtype.element_ty)
    tl.store(DX + rows * stride_dx + cols, dx, mask=mask)
    if HAS_DX_COPY:
        tl.store(DX_COPY + rows * stride_dx + cols, dx, mask=mask)
    return _dw_share(x, dy, rstd)


@triton.jit
def _dw_share(x, dy, rstd):
    """A block of rows' share of dweight, dy * xhat in fp32 (summed over its rows by the
    caller)."""
    return dy.to(tl.float32) * (x.to(tl.float32) * rstd)


@triton.jit(do_not_specialize=["stride_dy", "stride_x", "N", "segment_n", "segments"])
def _row_dot_kernel(
    DY,  # gradient of the output [M, N]
    stride_dy,
    X,  # the rows that were normalised [M, N]
    stride_x,
    W,  # weight [N] (None unless HAS_WEIGHT)
    DOT,  # fp32 [M, segments]: sum of dy * w * x over each segment of each row
    N,
    segment_n,  # columns per segment, a multiple of BLOCK_N
    segments,
    HAS_WEIGHT: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
):
    """The split-row backward's first pass: program row * segments + segment sums g * x over
    that segment of that row (so rows are read in order, and the last stay in L2 longest),
    BLOCK_N columns at a time, loading the next chunk before adding up this one.
    The second pass (_rms_norm_bwd_kernel with SPLIT_ROW) adds up a row's segments."""
    N = _aligned(N, ALIGN)
    stride_dy, stride_x = _aligned(stride_dy, ALIGN), _aligned(stride_x, ALIGN)
    # segment_n aligned: else no load is vectorised (measured: 2x)
    row, start, end = _segment(segments, _aligned(segment_n, BLOCK_N))
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    nx, ng = _load_dot_chunk(
        DY, stride_dy, X, stride_x, W, row, start + cols, end, N, HAS_WEIGHT
    )  # fmt: skip
    # one stage: the prefetch above and below is the pipelining; Triton's own would stage
    # every load through shared memory
    for offset in tl.range(start, end, BLOCK_N, num_stages=1):
        x, g = nx, ng
        nx, ng = _load_dot_chunk(
            DY, stride_dy, X, stride_x, W, row, offset + BLOCK_N + cols, end, N, HAS_WEIGHT
        )
        acc += g * x
    tl.store(DOT + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit(
    do_not_specialize=[
        "stride_dy",
        "stride_x",
        "stride_dres",
        "stride_dx",
        "M",
        "N",
        "dot_segments",
    ]
)
def _rms_norm_bwd_kernel(
    DY,  # gradient of the output [M, N]
    stride_dy,
    X,  # the rows that were normalised (x, or residual_out when fused) [M, N]
    stride_x,
    W,  # weight [N] (None unless HAS_WEIGHT)
    RSTD,  # fp32 [M], saved by the forward
    DRES,  # gradient of residual_out [M, N] (None unless HAS_DRES)
    stride_dres,
    DX,  # gradient of the input [M, N]
    stride_dx,
    DX_COPY,  # dx again, for a second input that needs its own buffer (None unless HAS_DX_COPY)
    DW_PARTIAL,  # fp32 [row groups, N]: each program's share of dweight (None unless REDUCE_DW)
    DW,  # dweight [N], written directly in its dtype (None unless COMPUTE_DW and not REDUCE_DW)
    DOT,  # fp32 [M, dot_segments], _row_dot_kernel's partial sums (None unless SPLIT_ROW)
    M,
    N,
    dot_segments,
    HAS_WEIGHT: tl.constexpr,
    HAS_DRES: tl.constexpr,  # fused backward with a gradient of residual_out
    COMPUTE_DW: tl.constexpr,
    REDUCE_DW: tl.constexpr,  # several row groups: partials, summed by _sum_partials_kernel
    SPLIT_ROW: tl.constexpr,  # program (g, j) takes columns j * BLOCK_N... of row group g
    HAS_DX_COPY: tl.constexpr,  # fused backward whose x and residual are both leaves
    DOT_BLOCK: tl.constexpr,  # a power of two, at least dot_segments (when SPLIT_ROW)
    PREFETCH: tl.constexpr,  # load the next row block before working on this one
    WEIGHT_PER_BLOCK: tl.constexpr,  # load the weight with each row block, not once: registers
    DW_FIRST: tl.constexpr,  # add dweight's share before dx, not after: registers
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
):
    N = _aligned(N, ALIGN)
    stride_dy, stride_x = _aligned(stride_dy, ALIGN), _aligned(stride_x, ALIGN)
    stride_dres, stride_dx = _aligned(stride_dres, ALIGN), _aligned(stride_dx, ALIGN)
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    # a split row's columns are shared out over the grid's second dimension (else it is 1)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    col_mask = cols < N
    w = 1.0  # unused without a weight
    if HAS_WEIGHT and not WEIGHT_PER_BLOCK:
        w = tl.load(W + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    step = num_programs * BLOCK_M
    # Persistent loop: this program takes row blocks pid, pid + P, pid + 2P, ... (counted
    # from the last block back for split rows: the row-dot pass read rows in order, so the
    # last are the likeliest to be in L2; 30.2 -> 24.2 us at 256x65536 bf16 on an H200).
    # With PREFETCH the loads of the next block are issued before this block's
    # reduction, so they are in flight while it computes.
    last = (M - 1) // BLOCK_M * BLOCK_M
    if PREFETCH:
        nx, ndy, ndres, nrstd, ndot = _load_row_block(
            DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, DOT, dot_segments,
            _block_start(pid * BLOCK_M, last, SPLIT_ROW), cols, M, N, HAS_DRES,
            SPLIT_ROW, BLOCK_M, DOT_BLOCK,
        )  # fmt: skip
    for i in range(pid * BLOCK_M, M, step):
        row_start = _block_start(i, last, SPLIT_ROW)
        if PREFETCH:
            x, dy, dres, rstd, dot = nx, ndy, ndres, nrstd, ndot
            nx, ndy, ndres, nrstd, ndot = _load_row_block(
                DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, DOT, dot_segments,
                _block_start(i + step, last, SPLIT_ROW), cols, M, N, HAS_DRES,
                SPLIT_ROW, BLOCK_M, DOT_BLOCK,
            )  # fmt: skip
        else:
            x, dy, dres, rstd, dot = _load_row_block(
                DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, DOT, dot_segments,
                row_start, cols, M, N, HAS_DRES, SPLIT_ROW, BLOCK_M, DOT_BLOCK,
            )  # fmt: skip
        w_block = w
        if HAS_WEIGHT and WEIGHT_PER_BLOCK:  # from L1/L2, with this block's rows
            w_block = tl.load(W + cols, mask=col_mask, other=0.0).to(tl.float32)
        # DW_FIRST: dweight's share before dx, so that dy is dead across the barriers of dx's
        # row sum, where holding it beside dw_acc spilled dw_acc around every row (ptxas for
        # sm_90a: 96-180 bytes a thread at 16,384 columns, 8-16 at 4,096); else after, where
        # the compiler can reuse the xhat dx computed
        if COMPUTE_DW and DW_FIRST:
            dw_acc += _dw_share(x, dy, rstd)
        dw_share = _dx_block(
            x, dy, dres, rstd, dot, w_block, DX, stride_dx, DX_COPY, row_start, cols, col_mask,
            M, N, HAS_WEIGHT, HAS_DX_COPY, SPLIT_ROW, BLOCK_M,
        )  # fmt: skip
        if COMPUTE_DW and not DW_FIRST:
            dw_acc += dw_share
    if COMPUTE_DW:
        partial = tl.sum(dw_acc, axis=0)[None, :]
        if REDUCE_DW:
            tl.store(DW_PARTIAL + pid.to(tl.int64) * N + cols, partial, mask=col_mask)
        else:  # one row group: the whole sum, no reduction launch follows
            tl.store(DW + cols, partial.to(DW.dtype.element_ty), mask=col_mask)


@triton.jit(
    do_not_specialize=[
        "stride_dy",
        "stride_x",
        "stride_dres",
        "stride_dx",
        "M",
        "N",
        "row_programs",
        "segment_n",
        "segments",
    ]
)
def _rms_norm_bwd_small_kernel(
    DY,  # gradient of the output [M, N]
    stride_dy,
    X,  # the rows that were normalised (x, or residual_out when fused) [M, N]
    stride_x,
    W,  # weight [N] (None unless HAS_WEIGHT)
    RSTD,  # fp32 [M], saved by the forward
    DRES,  # gradient of residual_out [M, N] (None unless HAS_DRES)
    stride_dres,
    DX,  # gradient of the input [M, N]
    stride_dx,
    DX_COPY,  # dx again (None unless HAS_DX_COPY)
    DW,  # dweight [N], in the weight's dtype (None unless COMPUTE_DW)
    M,
    N,
    row_programs,  # programs below this take rows; the others (COMPUTE_DW) take columns
    segment_n,  # SEGMENTED: the columns of dx a row program writes, a multiple of BLOCK_N
    segments,  # SEGMENTED: row programs per row
    HAS_WEIGHT: tl.constexpr,
    HAS_DRES: tl.constexpr,
    COMPUTE_DW: tl.constexpr,
    HAS_DX_COPY: tl.constexpr,
    SEGMENTED: tl.constexpr,  # rows past one block, walked BLOCK_N columns at a time
    BLOCK_M: tl.constexpr,  # rows of a row program (1 when SEGMENTED)
    BLOCK_N: tl.constexpr,  # at least N: a row fits one block (SEGMENTED: a chunk)
    DW_BLOCK_M: tl.constexpr,  # rows a column program adds up at a time
    DW_BLOCK_N: tl.constexpr,  # columns of a column program
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
):
    """The backward of few rows in one launch, with no dweight partials. Program
    p < row_programs computes dx of rows p * BLOCK_M...; with COMPUTE_DW, program
    row_programs + j sums dy * xhat over all M rows of columns j * DW_BLOCK_N... and writes
    them to dweight (a fixed order: deterministic); a grid of one row program alone writes
    dweight itself. dweight needs rstd, x and dy only, not dx, so both kinds run side by
    side; the column programs read x and dy once more, which is cheaper than a second launch
    while the problem is small (the plan's max_m).

    SEGMENTED (rows past one block): row program row * segments + s sums g * x over the
    whole row, BLOCK_N columns at a time, then writes dx of its segment s, reading those
    columns again (from L2). A row's segments each read the row for the sum: a few rows
    still fill the GPU, in one launch where the split backward takes three."""
    N = _aligned(N, ALIGN)
    stride_dy, stride_x = _aligned(stride_dy, ALIGN), _aligned(stride_x, ALIGN)
    stride_dres, stride_dx = _aligned(stride_dres, ALIGN), _aligned(stride_dx, ALIGN)
    pid = tl.program_id(0)
    if SEGMENTED and pid < row_programs:
        row, start, end = _segment(segments, _aligned(segment_n, BLOCK_N))
        _dx_row(
            DY, stride_dy, X, stride_x, W, RSTD, DRES, stride_dres, DX, stride_dx, DX_COPY, None,
            row, start, end, False, M, N, HAS_WEIGHT, HAS_DRES, HAS_DX_COPY, False, BLOCK_N,
        )  # fmt: skip
    elif pid < row_programs:
        cols = tl.arange(0, BLOCK_N)[None, :]
        col_mask = cols < N
        w = 1.0  # unused without a weight
        if HAS_WEIGHT:
            w = tl.load(W + cols, mask=col_mask, other=0.0).to(tl.float32)
        row_start = pid * BLOCK_M
        x, dy, dres, rstd, dot = _load_row_block(
            DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, None, 0, row_start, cols, M, N,
            HAS_DRES, False, BLOCK_M, 1,
        )  # fmt: skip
        dw_share = _dx_block(
            x, dy, dres, rstd, dot, w, DX, stride_dx, DX_COPY, row_start, cols, col_mask, M, N,
            HAS_WEIGHT, HAS_DX_COPY, False, BLOCK_M,
        )  # fmt: skip
        if COMPUTE_DW:
            if tl.num_programs(0) == 1:  # one row program and no column programs
                dw = tl.sum(dw_share, axis=0)[None, :].to(DW.dtype.element_ty)
                tl.store(DW + cols, dw, mask=col_mask)
    elif COMPUTE_DW:
        _dw_columns(
            DY, stride_dy, X, stride_x, RSTD, DW, pid - row_programs, M, N, DW_BLOCK_M, DW_BLOCK_N
        )  # fmt: skip


@triton.jit
def _dx_row(DY, stride_dy, X, stride_x, W, RSTD, DRES, stride_dres, DX, stride_dx, DX_COPY,
            DW_PARTIAL, row, start, end, add_partial, M, N, HAS_WEIGHT: tl.constexpr,
            HAS_DRES: tl.constexpr, HAS_DX_COPY: tl.constexpr, HAS_PARTIAL: tl.constexpr,
            BLOCK_N: tl.constexpr):  # fmt: skip
    """dx of columns [start, end) of one row walked in chunks: the row's sum of g * x over all
    of its columns first, the next chunk loaded before this one is added (as _row_dot_kernel),
    then dx chunk by chunk (_dx_block's rule), the columns read again (from L2). With
    HAS_PARTIAL, dy * xhat is also stored to this row of DW_PARTIAL (a program's own fp32 row
    of N), added to what is there where add_partial."""
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    nx, ng = _load_dot_chunk(DY, stride_dy, X, stride_x, W, row, cols, N, N, HAS_WEIGHT)
    for offset in tl.range(0, N, BLOCK_N, num_stages=1):
        x, g = nx, ng
        nx, ng = _load_dot_chunk(
            DY, stride_dy, X, stride_x, W, row, offset + BLOCK_N + cols, N, N, HAS_WEIGHT
        )  # fmt: skip
        acc += g * x
    dot = tl.sum(acc, axis=0)
    rstd = tl.load(RSTD + row)
    for offset in tl.range(start, end, BLOCK_N, num_stages=1):
        c = (offset + cols)[None, :]
        col_mask = (c < end) & (c < N)
        x = tl.load(X + row * stride_x + c, mask=col_mask, other=0.0)
        dy = tl.load(DY + row * stride_dy + c, mask=col_mask, other=0.0)
        dres = tl.zeros([1, 1], dtype=tl.float32)
        if HAS_DRES:
            dres = tl.load(DRES + row * stride_dres + c, mask=col_mask, other=0.0)
        w = 1.0  # unused without a weight
        if HAS_WEIGHT:
            w = tl.load(W + c, mask=col_mask, other=0.0).to(tl.float32)
        share = _dx_block(
            x, dy, dres, rstd, dot, w, DX, stride_dx, DX_COPY, row, c, col_mask, M, N,
            HAS_WEIGHT, HAS_DX_COPY, True, 1,
        )  # fmt: skip
        if HAS_PARTIAL:
            if add_partial:
                share += tl.load(DW_PARTIAL + c, mask=col_mask, other=0.0)
            tl.store(DW_PARTIAL + c, share, mask=col_mask)


@triton.jit(
    do_not_specialize=[
        "stride_dy",
        "stride_x",
        "stride_dres",
        "stride_dx",
        "M",
        "N",
    ]
)
def _rms_norm_bwd_walk_kernel(
    DY,  # gradient of the output [M, N]
    stride_dy,
    X,  # the rows that were normalised (x, or residual_out when fused) [M, N]
    stride_x,
    W,  # weight [N] (None unless HAS_WEIGHT)
    RSTD,  # fp32 [M], saved by the forward
    DRES,  # gradient of residual_out [M, N] (None unless HAS_DRES)
    stride_dres,
    DX,  # gradient of the input [M, N]
    stride_dx,
    DX_COPY,  # dx again (None unless HAS_DX_COPY)
    DW_PARTIAL,  # fp32 [programs, N]: each program's share of dweight (None unless COMPUTE_DW)
    M,
    N,
    HAS_WEIGHT: tl.constexpr,
    HAS_DRES: tl.constexpr,
    COMPUTE_DW: tl.constexpr,
    HAS_DX_COPY: tl.constexpr,
    BLOCK_N: tl.constexpr,  # columns of a chunk
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
):
    """The backward of many rows past one block, persistent: program p walks rows p, p + P,
    ..., each in chunks (_dx_row), its dweight share added up in its own row of DW_PARTIAL
    (summed by _sum_partials_kernel). A program holds one row at a time, so each row is read
    from memory once: its second read (for dx) comes from L2, where the split backward reads
    it twice from memory (row-dot pass, then column blocks)."""
    N = _aligned(N, ALIGN)
    stride_dy, stride_x = _aligned(stride_dy, ALIGN), _aligned(stride_x, ALIGN)
    stride_dres, stride_dx = _aligned(stride_dres, ALIGN), _aligned(stride_dx, ALIGN)
    pid = tl.program_id(0)
    partial = DW_PARTIAL
    if COMPUTE_DW:
        partial = DW_PARTIAL + pid.to(tl.int64) * N
    for row in range(pid, M, tl.num_programs(0)):
        _dx_row(
            DY, stride_dy, X, stride_x, W, RSTD, DRES, stride_dres, DX, stride_dx, DX_COPY,
            partial, tl.cast(row, tl.int64), 0, N, row != pid, M, N, HAS_WEIGHT, HAS_DRES,
            HAS_DX_COPY, COMPUTE_DW, BLOCK_N,
        )  # fmt: skip


@triton.jit
def _dw_columns(DY, stride_dy, X, stride_x, RSTD, DW, block, M, N, DW_BLOCK_M: tl.constexpr,
                DW_BLOCK_N: tl.constexpr):  # fmt: skip
    """dweight of columns block * DW_BLOCK_N...: the sum of dy * x * rstd over all M rows,
    DW_BLOCK_M rows at a time, written in dweight's dtype."""
    cols = block * DW_BLOCK_N + tl.arange(0, DW_BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros([DW_BLOCK_M, DW_BLOCK_N], dtype=tl.float32)
    for start in range(0, M, DW_BLOCK_M):
        rows = start + tl.arange(0, DW_BLOCK_M)
        row_mask = rows < M
        rstd = tl.load(RSTD + rows, mask=row_mask, other=0.0)[:, None]
        rows = rows.to(tl.int64)[:, None]
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(X + rows * stride_x + cols[None, :], mask=mask, other=0.0)
        dy = tl.load(DY + rows * stride_dy + cols[None, :], mask=mask, other=0.0)
        acc += dy.to(tl.float32) * (x.to(tl.float32) * rstd)
    tl.store(DW + cols, tl.sum(acc, axis=0).to(DW.dtype.element_ty), mask=col_mask)


@triton.jit(do_not_specialize=["P", "N"])
def _sum_partials_kernel(
    PARTIAL,  # fp32 [P, N]
    DW,  # dweight [N], in the weight's dtype
    P,
    N,
    BLOCK_P: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,  # N is a multiple of this (see _aligned)
):
    """Column sums of the dweight partials in a fixed order, cast once to the weight dtype."""
    N = _aligned(N, ALIGN)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for start in range(0, P, BLOCK_P):
        rows = start + tl.arange(0, BLOCK_P)
        mask = (rows < P)[:, None] & col_mask[None, :]
        acc += tl.load(
            PARTIAL + rows.to(tl.int64)[:, None] * N + cols[None, :], mask=mask, other=0.0
        )
    tl.store(DW + cols, tl.sum(acc, axis=0).to(DW.dtype.element_ty), mask=col_mask)
