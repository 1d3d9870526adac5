"""Triton kernels for RMSNorm and fused residual-add RMSNorm.

Forward, for one row x of length N (with ``s = x + residual`` in place of x when fused)::

    rstd = 1 / sqrt(mean(x * x) + eps)          # fp32, saved for the backward
    y    = (x * rstd) * w                       # computed in fp32, stored in x's dtype

Backward, with g = dy * w and xhat = x * rstd::

    dx   = rstd * (g - xhat * mean(g * xhat))   # + d(residual_out) when fused
    dw   = sum over rows of dy * xhat           # fp32 partials, one row per program

Every kernel reads rows through a row stride (the last dimension must be contiguous) and
accumulates in fp32. Two code paths live in each kernel, chosen by ``SINGLE_BLOCK``: when a
row fits one block it is held in registers (several rows per program for small N); above
that the row is walked in ``BLOCK_N`` chunks, twice.
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


# Integer arguments are not specialised (rmsnorm_kernels._launch says why); ALIGN carries
# what the kernels need to know of their divisibility.
@triton.jit(do_not_specialize=["stride_x", "stride_r", "stride_y", "stride_s", "M", "N"])
def _rms_norm_fwd_kernel(
    X,  # input rows [M, N]
    stride_x,  # elements between rows of X
    R,  # residual rows [M, N] (read when HAS_RESIDUAL)
    stride_r,
    W,  # weight [N] (read when HAS_WEIGHT)
    Y,  # output rows [M, N]
    stride_y,
    S,  # residual_out = X + R, [M, N] (written when HAS_RESIDUAL)
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
):
    N = _aligned(N, ALIGN)
    stride_x, stride_r = _aligned(stride_x, ALIGN), _aligned(stride_r, ALIGN)
    stride_y, stride_s = _aligned(stride_y, ALIGN), _aligned(stride_s, ALIGN)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    rows = rows.to(tl.int64)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    if SINGLE_BLOCK:
        mask = row_mask[:, None] & (cols < N)
        x = tl.load(X + rows * stride_x + cols, mask=mask, other=0.0)
        if HAS_RESIDUAL:
            r = tl.load(R + rows * stride_r + cols, mask=mask, other=0.0)
            # residual_out is rounded to the input dtype, and the norm sees that rounded value
            x = (x.to(tl.float32) + r.to(tl.float32)).to(S.dtype.element_ty)
            tl.store(S + rows * stride_s + cols, x, mask=mask)
        x = x.to(tl.float32)
        rstd = tl.math.rsqrt(tl.sum(x * x, axis=1) / N + eps)
        tl.store(RSTD + rows.reshape(BLOCK_M), rstd, mask=row_mask)
        y = x * rstd[:, None]
        if HAS_WEIGHT:
            w = tl.load(W + cols, mask=cols < N, other=0.0)
            y = y * w.to(tl.float32)
        tl.store(Y + rows * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)
    else:
        # Pass 1: sum of squares. Pass 2: recompute x (+ residual) and write. residual_out
        # is written in pass 2 only, so no pass reads what this program stored.
        sum_sq = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in tl.range(0, N, BLOCK_N, num_stages=CHUNK_STAGES):
            c = start + cols
            mask = row_mask[:, None] & (c < N)
            x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0)
            if HAS_RESIDUAL:
                r = tl.load(R + rows * stride_r + c, mask=mask, other=0.0)
                x = (x.to(tl.float32) + r.to(tl.float32)).to(S.dtype.element_ty)
            x = x.to(tl.float32)
            sum_sq += x * x
        rstd = tl.math.rsqrt(tl.sum(sum_sq, axis=1) / N + eps)
        tl.store(RSTD + rows.reshape(BLOCK_M), rstd, mask=row_mask)
        for start in tl.range(0, N, BLOCK_N, num_stages=CHUNK_STAGES):
            c = start + cols
            mask = row_mask[:, None] & (c < N)
            x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0)
            if HAS_RESIDUAL:
                r = tl.load(R + rows * stride_r + c, mask=mask, other=0.0)
                x = (x.to(tl.float32) + r.to(tl.float32)).to(S.dtype.element_ty)
                tl.store(S + rows * stride_s + c, x, mask=mask)
            y = x.to(tl.float32) * rstd[:, None]
            if HAS_WEIGHT:
                w = tl.load(W + c, mask=c < N, other=0.0)
                y = y * w.to(tl.float32)
            tl.store(Y + rows * stride_y + c, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _load_row_block(
    DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, row_start, M, N, has_dres,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """One block of rows of the backward's inputs; rows at or past M read as zeros."""
    rows = row_start + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    rstd = tl.load(RSTD + rows, mask=row_mask, other=0.0)[:, None]
    rows = rows.to(tl.int64)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    mask = row_mask[:, None] & (cols < N)
    x = tl.load(X + rows * stride_x + cols, mask=mask, other=0.0)
    dy = tl.load(DY + rows * stride_dy + cols, mask=mask, other=0.0)
    # has_dres == 0 masks every element off: no memory is read then
    dres = tl.load(DRES + rows * stride_dres + cols, mask=mask & (has_dres != 0), other=0.0)
    return x, dy, dres, rstd


@triton.jit(
    do_not_specialize=["stride_dy", "stride_x", "stride_dres", "stride_dx", "M", "N", "has_dres"]
)
def _rms_norm_bwd_kernel(
    DY,  # gradient of the output [M, N]
    stride_dy,
    X,  # the rows that were normalised (x, or residual_out when fused) [M, N]
    stride_x,
    W,  # weight [N] (read when HAS_WEIGHT)
    RSTD,  # fp32 [M], saved by the forward
    DRES,  # gradient of residual_out [M, N] (read when has_dres != 0)
    stride_dres,
    DX,  # gradient of the input [M, N]
    stride_dx,
    DW_PARTIAL,  # fp32 [num_programs, N]: this program's share of dweight (COMPUTE_DW)
    DW,  # dweight [N]: written directly, in its dtype, when the grid is one program
    M,
    N,
    has_dres,  # a run-time flag, so the fused backward compiles once with or without it
    HAS_WEIGHT: tl.constexpr,
    COMPUTE_DW: tl.constexpr,
    SINGLE_BLOCK: tl.constexpr,
    PREFETCH: tl.constexpr,  # load the next row block before working on this one
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ALIGN: tl.constexpr,  # N and every row stride are multiples of this (see _aligned)
    CHUNK_STAGES: tl.constexpr,  # chunks in flight at once on the chunked path (pipelining)
):
    N = _aligned(N, ALIGN)
    stride_dy, stride_x = _aligned(stride_dy, ALIGN), _aligned(stride_x, ALIGN)
    stride_dres, stride_dx = _aligned(stride_dres, ALIGN), _aligned(stride_dx, ALIGN)
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)[None, :]
    if SINGLE_BLOCK:
        col_mask = cols < N
        if HAS_WEIGHT:
            w = tl.load(W + cols, mask=col_mask, other=0.0).to(tl.float32)
        dw_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        step = num_programs * BLOCK_M
        # Persistent loop: this program takes row blocks pid, pid + P, pid + 2P, ...
        # With PREFETCH the loads of the next block are issued before this block's
        # reduction, so they are in flight while it computes.
        if PREFETCH:
            nx, ndy, ndres, nrstd = _load_row_block(
                DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, pid * BLOCK_M, M, N,
                has_dres, BLOCK_M, BLOCK_N,
            )  # fmt: skip
        for row_start in range(pid * BLOCK_M, M, step):
            if PREFETCH:
                x, dy, dres, rstd = nx, ndy, ndres, nrstd
                nx, ndy, ndres, nrstd = _load_row_block(
                    DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, row_start + step, M,
                    N, has_dres, BLOCK_M, BLOCK_N,
                )  # fmt: skip
            else:
                x, dy, dres, rstd = _load_row_block(
                    DY, stride_dy, X, stride_x, RSTD, DRES, stride_dres, row_start, M, N,
                    has_dres, BLOCK_M, BLOCK_N,
                )  # fmt: skip
            rows = row_start + tl.arange(0, BLOCK_M)
            mask = (rows < M)[:, None] & col_mask
            rows = rows.to(tl.int64)[:, None]
            xhat = x.to(tl.float32) * rstd
            dy = dy.to(tl.float32)
            g = dy
            if HAS_WEIGHT:
                g = dy * w
            mean_gx = tl.sum(g * xhat, axis=1)[:, None] / N
            dx = (g - xhat * mean_gx) * rstd + dres.to(tl.float32)
            tl.store(DX + rows * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
            if COMPUTE_DW:
                dw_acc += dy * xhat
        if COMPUTE_DW:
            partial = tl.sum(dw_acc, axis=0)[None, :]
            if num_programs == 1:  # the whole sum: no reduction launch follows
                tl.store(DW + cols, partial.to(DW.dtype.element_ty), mask=col_mask)
            else:
                tl.store(DW_PARTIAL + pid.to(tl.int64) * N + cols, partial, mask=col_mask)
    else:
        # Rows too long for one block: one row at a time, in BLOCK_N chunks. The partial
        # dweight row belongs to this program alone, so updating it in place is race-free
        # and its summation order is fixed. The grid has at most M programs, so each has a
        # first row, which writes the partial row; later rows add to it.
        partial_row = DW_PARTIAL + pid.to(tl.int64) * N
        for row in range(pid, M, num_programs):
            rows = row + tl.arange(0, 1)  # a one-row block keeps the 2-D shapes of the fast path
            rstd = tl.load(RSTD + rows)[:, None]
            rows = rows.to(tl.int64)[:, None]
            acc = tl.zeros([1, BLOCK_N], dtype=tl.float32)
            for start in tl.range(0, N, BLOCK_N, num_stages=CHUNK_STAGES):
                c = start + cols
                mask = c < N
                x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0).to(tl.float32)
                g = tl.load(DY + rows * stride_dy + c, mask=mask, other=0.0).to(tl.float32)
                if HAS_WEIGHT:
                    g = g * tl.load(W + c, mask=mask, other=0.0).to(tl.float32)
                acc += g * x
            mean_gx = tl.sum(acc, axis=1)[:, None] * rstd / N
            for start in tl.range(0, N, BLOCK_N, num_stages=CHUNK_STAGES):
                c = start + cols
                mask = c < N
                x = tl.load(X + rows * stride_x + c, mask=mask, other=0.0).to(tl.float32)
                dy = tl.load(DY + rows * stride_dy + c, mask=mask, other=0.0).to(tl.float32)
                xhat = x * rstd
                g = dy
                if HAS_WEIGHT:
                    g = dy * tl.load(W + c, mask=mask, other=0.0).to(tl.float32)
                dx = (g - xhat * mean_gx) * rstd
                if has_dres != 0:
                    dres = tl.load(DRES + rows * stride_dres + c, mask=mask, other=0.0)
                    dx += dres.to(tl.float32)
                tl.store(DX + rows * stride_dx + c, dx.to(DX.dtype.element_ty), mask=mask)
                if COMPUTE_DW:
                    dw = dy * xhat
                    if row != pid:
                        dw += tl.load(partial_row + c, mask=mask, other=0.0)
                    tl.store(partial_row + c, dw, mask=mask)


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
