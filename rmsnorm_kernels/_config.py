"""Launch configuration as data: every choice, with a one-line reason.

``_plan`` turns these into the launches of one call; nothing here launches anything. The
measurements behind each choice are in docs/perf-notes.md, "The launch constants".
"""

import math
from dataclasses import dataclass

# Each choice with its reason in one line; the sweeps that made it, with their commits and
# figures (device time on an H200), are in docs/perf-notes.md, "The launch constants".

# rows up to this many elements stay in registers in one block (32 fp32 values per thread at
# 16 warps); longer rows take the chunked forward and the split backward
MAX_SINGLE_BLOCK_N = 16384
# the widest chunk was fastest at N = 65,536 in all four calls; pipelining stages gained only
# at 4,096-wide chunks
CHUNK_N = 16384
CHUNK_STAGES = 1
# small rows are batched so that each program still has a few thousand elements in flight
MIN_TILE_ELEMENTS = 4096
# one warp per 512 elements of the tile: at or near the best of 256 / 512 / 1024 everywhere
ELEMENTS_PER_WARP = 512
# at most 16 warps (512 threads) a program, except the long rows' one-block backward below
MAX_WARPS = 16
# the f32 forward is faster with half the warps (4096x4096 f32: 36.8 against 40.0 us)
F32_FORWARD_ELEMENTS_PER_WARP = 1024
# the backward's persistent grid: one program per SM, prefetching the next row block, about
# 16 KB of x per iteration (each beat the alternatives at every large shape measured)
BACKWARD_PROGRAMS_PER_SM = 1
BACKWARD_PREFETCH = True
# but not where a one-block row block (x, dy and, fused, d_residual_out), held across the
# row sum, passes this many bytes: the fused backward of float32 rows of 8,192 columns
# (96 KB) spilled 92 bytes a thread with the next block prefetched (ptxas, sm_90a) and was
# 4-6% slower with it on an H100 (4096x8192 254.8 against 245.0 us, 1024x8192 73.7 against
# 69.2); the plain one (64 KB) does not spill and gained 1-4% (147.7 against 149.5, 40.1
# against 41.6; docs/h100-c35306e). Split rows (no row sum held) do not spill either way;
# rows past LONG_ROW_N have their own setting (LONG_ROW_BACKWARD_PREFETCH)
BACKWARD_PREFETCH_MAX_BYTES = 65536
BACKWARD_TILE_BYTES = 16384
# bf16/f16 rows of up to 1,024 elements: half the warps in the backward (f32 rows lost)
SHORT_ROW_N = 1024
SHORT_ROW_BACKWARD_ELEMENTS_PER_WARP = 1024
# where each backward program gets at most 4 row blocks, bf16/f16 rows of N = 2,048 and 4,096
# take tiles of half the size, so that every program has blocks to prefetch
FEW_ROWS_TILE_BYTES = 8192
FEW_ROWS_BLOCKS_PER_PROGRAM = 4
# the split backward of rows past one block: a row-dot pass over segments of DOT_BLOCK_N
# columns (at most DOT_SEGMENTS, DOT_PROGRAMS_PER_SM programs per SM), then column blocks of
# SPLIT_BLOCK_N; it replaced a chunked backward that was 1.2-1.8x slower
SPLIT_BLOCK_N = 8192
# rows whose block (N's next power of two) is wider than this take the split backward even
# where they fit one block. 16,384: since e85437c the one-block backward of 16,384 columns
# does not spill, and on an H100 (235da6a, a8fca26) it beat the split from 512 to 8,192 rows
# (fused 1.12-1.42x, plain 1.13-1.60x; docs/perf-notes.md) and the plain backward of 300 (1.10x);
# the fused one of 300 rows lost 5%, and now takes the segmented form (SEGMENT_MAX_M), which
# beat both. Wider rows than one block of 16,384 always take the split
SPLIT_BACKWARD_ABOVE_N = 16384
# the same for the plain backward (no d_residual_out, so two rows to hold, not three)
SPLIT_PLAIN_BACKWARD_ABOVE_N = 16384
# float32 rows: a one-block backward of 16,384 of them spills (ptxas for sm_90a, 360 bytes a
# thread fused and 108 plain at 16 warps; 192 and 28 at 32), so past 8,192 they keep the
# split, as before def0bc1. Either width above that is narrower wins
SPLIT_F32_BACKWARD_ABOVE_N = 8192
# one-block backwards of rows longer than LONG_ROW_N hold the row and the dweight sum in
# registers: 1,024 elements a warp (16 warps at 16,384), no prefetch of the next row and the
# weight loaded per row block keep them from spilling; the setting swept on an H100 at
# 235da6a (docs/perf-notes.md). Up to 32 warps are allowed there (1,024 threads; 16 before
# a3e53d8). On ROCm a warp is a wavefront of 64 threads and a block holds at most 1,024
# threads, so 16
LONG_ROW_N = 8192
LONG_ROW_MAX_WARPS = 32
ROCM_MAX_WARPS = 16
LONG_ROW_BACKWARD_ELEMENTS_PER_WARP = 1024
LONG_ROW_BACKWARD_PREFETCH = False
LONG_ROW_BACKWARD_WEIGHT_PER_BLOCK = True
# the main backward adds dweight's share before dx where its block is wider than this, after
# dx (from dx's own xhat) where not. First keeps dy dead across dx's row sum: it took the
# long-row and split forms' spills to 0 (e85437c). After dx up to blocks of 2,048: 0.9-4% faster
# at 512 and 1,024 rows of 2,048 bf16, both ops, on an H200 at bf12fdb (8 of 8 figures, one
# measurement each; same-code settings differed by up to 1.8%; docs/h200-bf12fdb/), to be
# confirmed with --rounds; at 4,096 that sweep was mixed (-12% to +2%), and blocks of 8,192
# and wider spill with it after (codegen: 92-210 bytes a thread)
BACKWARD_DW_FIRST_ABOVE_N = 2048
# where rows are few (up to SPLIT_FEW_MAX_M), the split backward's second pass takes column
# blocks of SPLIT_FEW_BLOCK_N, one row at a time, so that a few rows still spread over many
# programs (4 rows of 16,384 columns: 32 programs, not 8)
SPLIT_FEW_MAX_M = 64
SPLIT_FEW_BLOCK_N = 2048
# a grid's second dimension (the split backward's column blocks) holds at most this many
MAX_GRID_Y = 65535
DOT_BLOCK_N = 4096
DOT_SEGMENTS = 16
DOT_PROGRAMS_PER_SM = 4
# the dweight reduction is latency-bound: narrow column blocks give more programs (16 columns;
# 64 after split rows, which leave few partial rows of many columns)
REDUCE_BLOCK_N = 16
REDUCE_SPLIT_BLOCK_N = 64
REDUCE_BLOCK_P = 32
# the forward of up to this many rows past one block splits each row over segments of
# columns (their sums of squares, then each segment scaled), so that few rows still fill the
# GPU: 4x20000 bf16 4.6 -> 3.4 us, 16x32768 f32 6.1 -> 4.6 (torch.compile 4.6, 4.9); 2,048
# columns at a time were 0.1-0.2 us faster than 4,096 in each row measured (perf-notes)
FORWARD_SPLIT_MAX_M = 16
FORWARD_SPLIT_BLOCK_N = 2048
FORWARD_SPLIT_SEGMENTS = 32  # at most, per row
FORWARD_SPLIT_PROGRAMS_PER_SM = 2  # the segments' target grid
# from rows of this many elements on, the chunked forward streams its last touches
# ("evict_first"), keeping the rows it reads again in L2; shorter rows lost with it
STREAM_MIN_N = 65536
# where rows fit one block and each program would get 2-4 row blocks, a persistent forward
# grid (2 programs per SM, the next block loaded early) wins; with more blocks it loses, and
# the fused f32 forward takes at most 2 per program
FORWARD_FEW_ROWS_PROGRAMS_PER_SM = 2  # 0: never persistent
FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM = 4
FUSED_F32_FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM = 2
FORWARD_PREFETCH = True
# the backward of few rows that fit one block is one launch with no dweight partials: row
# programs of SMALL_TILE_ELEMENTS (dx), beside column programs that sum dweight over all rows
# (they read x and dy once more); for up to SMALL_DW_STEPS tiles of rows per column program
# and SMALL_MAX_ELEMENTS in all. One program walking every row instead was 2.5-3.5x behind
# torch.compile at tens of rows, and 2-4x slower than the persistent backward past them
# (perf-notes, 2026-12-06). Tiles of 1,024 or 4,096 elements won or lost by 0.1-0.8 us.
SMALL_TILE_ELEMENTS = 2048
SMALL_DW_STEPS = 4
SMALL_MAX_ELEMENTS = 524288
# a column program takes 1/SMALL_DW_ROW_SHARE of the row's block, 16 to 64 columns: 16 for
# rows of up to 1,024 (512x128 bf16 8.7 -> 4.2 us, 256x1024 5.3 -> 3.1 against 64), 64 from
# 4,096 on (64x8192 4.9 against 6.2 with 16)
SMALL_DW_ROW_SHARE = 64
SMALL_DW_MIN_BLOCK_N = 16
SMALL_DW_BLOCK_N = 64
# the backward of up to SEGMENT_MAX_M rows past one block of up to 16,384 columns is that one
# launch too, segmented: each row program sums g * x over its whole row, then writes dx of one
# segment of SEGMENT_BLOCK_N-column chunks; up to SEGMENT_MAX_SEGMENTS segments a row, about
# SEGMENT_PROGRAMS_PER_SM row programs per SM. The split backward's three launches were
# 1.1-1.3x behind torch.compile's two at 16-256 rows; on an H100 (docs/h100-62a4bf1)
# 16x12288 bf16 6.3 -> 3.7 us (torch.compile 5.0), 64x16384 8.5 -> 5.6 (7.5), 256x12288
# 14.4 -> 8.7 (12.4); chunks of 4,096 beat 2,048 by 0.1-1.4 us, 1,024 lost; 4 or 16
# segments tied. 448 (up from 256): past 256 rows the one-block backward's persistent grid
# had each of 132 programs take 2-4 rows, and the segmented form, a program a row, beat it up
# to 448 rows and lost at 512 (an H100, docs/h100-c35306e: fused 300x16384 28.6 -> 21.9 us,
# torch.compile 30.8; 300x12288 21.4 -> 11.8; 400x16384 35.0 -> 30.7; 448x16384 37.2 -> 37.4
# fused, plain 26.1 -> 22.9; 512x16384 39.8 -> 45.2). Measured on 132 SMs, bf16 and f16
SEGMENT_MAX_M = 448
# float32 rows keep 256 (the smaller wins): the segmented form reads each row twice, and
# their rows, twice as many bytes, are less likely to be in L2 the second time; not swept
SEGMENT_F32_MAX_M = 256
SEGMENT_BLOCK_N = 4096
SEGMENT_MAX_SEGMENTS = 8
SEGMENT_PROGRAMS_PER_SM = 1
# rows of a block of at least SEGMENT_MIN_BUCKET columns take it where they fit one block:
# 8,192 won at 16 and 64 rows (16x8192 4.5 -> 3.4 us) but lost at one row (2.5 -> 3.3), so
# not yet (the one-row form is the small kernel's)
SEGMENT_MIN_BUCKET = 16384
# rows past one block (over 16,384 columns) keep the split backward: with chunks of 2,048
# 64x32768 took 13.1 us segmented against 11.7 split, 4x20000 6.2 against 6.0
SEGMENT_LONG_ROWS = False
# the row walk for split rows past SEGMENT_MAX_M (`_rms_norm_bwd_walk_kernel`): programs each
# hold one row at a time, the row's sum, then dx from its chunks read again, dweight added to
# the program's own row of partials. Off: 1.2-1.6x slower than the split backward at every
# shape measured on an H100 (4096x14336 bf16 281 against 202 us; Liger-Kernel 153), one row
# in flight per program being too little; any programs per SM (1-4) or chunk (2,048-4,096)
WALK_BACKWARD = False
WALK_BLOCK_N = 4096
WALK_PROGRAMS_PER_SM = 1
# the interpreter runs programs one after another: a few are enough to exercise the grids
INTERPRETER_PROGRAMS = 4


@dataclass(frozen=True)
class RowConfig:
    """How one kernel walks its rows: BLOCK_M rows of BLOCK_N columns at a time."""

    single_block: bool
    block_m: int
    block_n: int
    num_warps: int
    chunk_stages: int = 1

    @classmethod
    def from_heuristic(
        cls,
        n: int,
        min_tile: int | None = None,
        per_warp: int | None = None,
        max_warps: int = MAX_WARPS,
    ):
        """The config for rows of n elements (the module's constants fill the defaults)."""
        min_tile = min_tile or MIN_TILE_ELEMENTS
        per_warp = per_warp or ELEMENTS_PER_WARP
        if n > MAX_SINGLE_BLOCK_N:
            warps = min(MAX_WARPS, max(1, CHUNK_N // per_warp))
            return cls(
                False, block_m=1, block_n=CHUNK_N, num_warps=warps, chunk_stages=CHUNK_STAGES
            )
        block_n = next_power_of_2(n)
        block_m = max(1, min_tile // block_n)
        tile = block_m * block_n
        num_warps = min(max_warps, max(1, tile // per_warp))
        return cls(single_block=True, block_m=block_m, block_n=block_n, num_warps=num_warps)


# Plain integer helpers for the per-call path: triton.cdiv and triton.next_power_of_2 are
# constexpr functions in Triton 3.6, about 3 us per call from Python.
def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length() if n > 0 else 1


def row_alignment(n: int, *strides: int) -> int:
    """The largest power of two up to 16 that divides n and every row stride: the kernels'
    ALIGN, which lets rows such as N = 3000 be read in 16-byte vectors."""
    g = math.gcd(n, *strides)
    return min(16, g & -g)
