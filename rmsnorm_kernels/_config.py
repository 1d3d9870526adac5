"""Launch configuration as data: every choice, with the measurement that made it.

``_plan`` turns these into the launches of one call; nothing here launches anything. The
sweep tables are in docs/perf-notes.md too, with the commits that made them.
"""

import math
from dataclasses import dataclass

# Rows up to this many elements are held in registers in one block; longer rows take the
# chunked path. 16K elements is 32 fp32 values per thread at 16 warps.
MAX_SINGLE_BLOCK_N = 16384
# Chunk width of the chunked path, and how many chunks its loops keep in flight
# (tl.range's num_stages: 1 is no software pipelining). scripts/sweep-config --try on an H200
# (commit f669e99, 256x65536 bf16, device time, us, for CHUNK_N 4096 / 8192 / 16384 with
# one stage): forward 33.3 / 28.1 / 24.9, backward 112.2 / 91.5 / 85.3, fused forward
# 62.7 / 54.8 / 51.0, fused backward 143.8 / 109.7 / 97.9. Two or three stages gained at 4096
# (backward 98.0 at three) but not at 16384 (99.4, 102.2).
CHUNK_N = 16384
CHUNK_STAGES = 1
# Smallest number of elements a program handles at once in the single-block path: small rows
# are batched so that each program still has a few thousand elements in flight.
MIN_TILE_ELEMENTS = 4096
# Warps per program: one for every this many elements of the tile (1 to 16 warps).
# scripts/sweep-config on an H200 (commit 4460a78, device time): 256 / 512 / 1024 gave
# 131.5 / 128.6 / 132.9 us for the 16384x4096 bf16 backward and 75.2 / 69.2 / 69.1 us for
# its forward; 512 is at or near the best everywhere measured.
ELEMENTS_PER_WARP = 512
# The forward of f32 rows: fewer warps (same sweep at commit ccfdf6a, 4096x4096 f32: 40.0 us
# at 512 elements per warp, 36.8 us at 1024; the fused forward 69.0 / 69.7 us, a tie).
F32_FORWARD_ELEMENTS_PER_WARP = 1024
# The backward, chosen by scripts/sweep-config on an H200 (commit ccfdf6a, device time, us,
# for prefetch off/on x tile 4096/8192 elements x 1/2 programs per SM):
# - Prefetching the next row block wins at every large shape: 16384x4096 bf16 130.3 -> 115.1
#   (fused 154.2 -> 134.7), 8192x8192 bf16 140.6 -> 108.2 (fused 154.5 -> 134.0), 32768x8192
#   bf16 510.3 -> 396.1 (fused 579.7 -> 502.5).
# - With prefetch, one program per SM beats two everywhere (115.1 vs 127.7 us at 16384x4096;
#   each program also writes an fp32 row of dweight partials, which the reduction reads);
#   for split rows too (below; 256x65536 bf16 84.7 vs 89.5 us, 64x262144 83.9 vs 89.0).
# - The tile is best at about 16 KB of x per iteration: 8192 elements (two rows) for bf16 at
#   N = 4096 (138.2 -> 115.1 us), but 4096 for f32 (4096x4096 f32: 60.5 us vs 80.2 us).
BACKWARD_PROGRAMS_PER_SM = 1
# Short rows of 2-byte dtypes: half the warps in the backward. sweep-config --backward on an
# H200 (ELEMENTS_PER_WARP 512 / 1024, device us; the session of the commit that set this):
# 2048x512 bf16 10.9 / 8.5 (fused 11.2 / 9.2), 32768x512 36.7 / 35.0 (42.4 / 40.4),
# 1024x1024 11.0 / 7.7 (11.2 / 7.9), 16384x1024 45.1 / 34.2 (48.4 / 39.8). At N = 2048 it
# won with few rows and lost with many: 512x2048 9.2 / 7.1 but 8192x2048 34.3 / 39.6 (fused
# 41.0 / 42.7); f32 rows lost or spilled everywhere (512x2048 7.4 / 8.6, 512x3000 8.3 / 63.5).
SHORT_ROW_N = 1024
SHORT_ROW_BACKWARD_ELEMENTS_PER_WARP = 1024
# Few rows: where the backward's grid gets at most FEW_ROWS_BLOCKS_PER_PROGRAM row blocks per
# program, bf16/f16 rows of N = 2048 and 4096 take tiles of FEW_ROWS_TILE_BYTES (half the
# rows per block, half the warps), so that each program has blocks to prefetch. sweep-config
# --backward on an H200 (the commit that set this; BACKWARD_TILE_BYTES 16384 / 8192 at 512
# elements per warp, device us; row blocks per program at 16 KB in brackets): 512x2048 bf16
# 7.7 / 5.4 (1; fused 8.1 / 5.6), 1024x2048 9.1 / 6.6 (2), 2048x2048 11.3 / 8.8 (4; fused
# 11.9 / 9.5), 4096x2048 19.8 / 20.2 (8), 8192x2048 33.8 / 37.0 (16); 512x4096 7.5 / 6.8 (2),
# 1024x4096 9.8 / 8.8 (4), 4096x4096 32.1 / 37.4 (16); 512x2048 f16 7.7 / 5.5; 128x4096 bf16
# 5.2 / 5.1. f32 rows tied (512x2048 f32 6.0 / 6.1), and N = 8192 has one row per block at
# either size; rows of up to SHORT_ROW_N were not measured. Those keep the tile above.
FEW_ROWS_TILE_BYTES = 8192
FEW_ROWS_BLOCKS_PER_PROGRAM = 4
BACKWARD_PREFETCH = True
# The backward of rows past one block is split in two passes. The first sums g * x over
# segments of each row, DOT_BLOCK_N columns at a time, rows cut into as many segments (at
# most DOT_SEGMENTS) as give DOT_PROGRAMS_PER_SM programs per SM. The second is the
# single-block backward on column blocks of SPLIT_BLOCK_N, each program taking a group of
# rows of one column block, so that the dweight partials are a few rows of N. It replaced a
# chunked path (one program walking each whole row twice, with a partial dweight row per
# program updated for every row): sweep-config on an H200, device us, chunked -> split (at
# DOT_BLOCK_N 8192, 2 programs per SM), 256x65536 bf16 80.4 -> 54.3 (fused 98.6 -> 61.5),
# 64x262144 106.9 -> 59.7, 1024x65536 293.5 -> 184.2, 4096x20000 297.4 -> 258.0, 256x65536
# f32 124.8 -> 101.7. Per-pass device times (torch.profiler, same H200): the first pass for
# DOT_BLOCK_N 4096 / 8192 / 16384 at 4 programs per SM, 256x65536 bf16 20.2 / 25.9 / 22.9,
# 4096x20000 81.5 / 118.4 / 128.1, 1024x65536 68.6 / 74.0 / 70.8, 256x65536 f32 37.1 / 37.5
# / 433.6; at 1 / 2 / 4 programs per SM (4096 columns), 256x65536 22.5 / 22.6 / 20.2,
# 64x262144 25.1 / 21.2 / 22.8. The second pass for SPLIT_BLOCK_N 2048 / 4096 / 8192,
# 256x65536 bf16 29.3 / 30.0 / 24.7, 4096x20000 134.1 / 153.9 / 131.4.
SPLIT_BLOCK_N = 8192
DOT_BLOCK_N = 4096
DOT_SEGMENTS = 16
DOT_PROGRAMS_PER_SM = 4
BACKWARD_TILE_BYTES = 16384
# The dweight reduction: each program sums all partial rows of this many columns. Narrow
# blocks give more programs, and the reduction is latency-bound: sweep on an H200 (commit
# 1171e62, backward device time, us, for 64 / 128 / 256): 512x2048 bf16 10.3 / 11.5 / 13.3,
# 128x4096 bf16 7.2 / 7.8 / 8.2, 512x3000 f32 9.2 / 10.8 / 14.7, 16384x4096 bf16
# 112.8 / 113.3 / 115.4 (fused-add alike). Again at commit 6c915cb (sweep-config --backward,
# us, for 16 / 32 / 64 at 32 rows per step): 4096x4096 bf16 33.1 / 33.4 / 34.6 (fused
# 38.5 / 38.8 / 39.7), 16384x4096 109.2 / 109.3 / 110.9 (fused 130.5 / 133.8 / 133.2),
# 1024x8192 19.4 / 18.7 / 20.8, 512x2048 8.9 / 9.1 / 10.3, 512x3000 f32 8.4 / 8.7 / 9.6,
# 128x4096 6.5 / 6.7 / 7.2; at 16 columns, 64 or 128 rows per step instead of 32 moved
# none of them by more than 0.8 us.
REDUCE_BLOCK_N = 16
# Split rows leave few partial rows (one per row group) of many columns: there 64 columns
# per program did better (same H200, commit d854995, us, 16 / 64): 64x262144 bf16 backward
# 63.6 / 59.1 (fused 70.2 / 65.7), 256x65536 51.8 / 50.4 (fused 59.1 / 57.9), 1024x65536
# 181.6 / 180.1, 4096x20480 220.3 / 221.1.
REDUCE_SPLIT_BLOCK_N = 64
REDUCE_BLOCK_P = 32
# The chunked forward reads each row twice. From rows of this many elements on, what it reads
# or writes for the last time goes through L2 as "evict_first", so that the rows it will read
# again stay there. scripts/sweep-config on an H200 (the commit that added it, with the hint
# as a switch; device us, no hint / this one): 1024x65536 bf16 105.8 / 92.4 (fused 158.6 /
# 157.0), 256x65536 bf16 24.6 / 25.1 (fused 43.5 / 41.4), 64x262144 bf16 61.3 / 55.8 (fused
# 58.7 / 52.8), 256x65536 f32 51.1 / 46.2 (fused 83.1 / 76.2); at N = 32768 within 1% either
# way; at N = 20480 it lost 3-8% (4096x20480 bf16 115.1 / 124.5, fused 222.5 / 234.0).
# "evict_last" on the reads that come again, alone or as well, did no better overall. The
# backward's split passes lost 1-6% with evict_last on the row-dot pass and evict_first on
# the second (256x65536 bf16 50.7 -> 52.5 us, 1024x65536 179.0 -> 189.9).
STREAM_MIN_N = 65536
# Few rows: where rows fit one block and there are more row blocks than FORWARD_FEW_ROWS_
# PROGRAMS_PER_SM programs per SM but at most FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM per program,
# the forward takes a persistent grid, each program walking row blocks pid, pid + P, ... and
# loading the next block before working on this one (FORWARD_PREFETCH; without it the
# persistent grid lost everywhere). Elsewhere a program per row block does better.
# scripts/sweep-config --forward on an H200 (the commit that set this), device us, one
# program per block / 2 / 4 persistent programs per SM [torch.compile in the same run]:
# - gains, RMSNorm (fused-add): 512x8192 bf16 4.5 / 4.3 / 5.0 [4.3] (7.1 / 6.2 / 6.4 [8.9]),
#   1024x8192 7.1 / 6.6 / 7.3 [6.8] (19.0 / 18.2 / 19.0 [18.2]), 1024x4096 bf16 4.9 / 4.2 /
#   4.2 [4.6] (6.9 / 6.3 / 5.9 [7.5]), 512x3000 f32 3.8 / 3.7 / 3.7 [3.5] (6.0 / 5.3 / 5.8
#   [5.0]), 1024x3000 f32 6.3 / 5.5 / 5.5 [5.3], 1024x4096 f32 7.7 / 6.7 / 7.0 [7.0];
# - losses of the fused-add forward of f32 rows at 4 blocks per program: 1024x3000 f32 11.4 /
#   12.3 / 13.9, 1024x4096 f32 18.5 / 19.1 / 19.8 (hence at most 2 blocks per program there);
# - mixed at 8 blocks per program: 2048x8192 bf16 19.9 / 19.0 / 19.5 (fused 35.7 / 37.8 /
#   36.0), 2048x3000 f32 13.5 / 14.1 / 12.5, 4096x2048 bf16 7.0 / 7.0 / 6.7;
# - losses with many blocks per program: 16384x4096 bf16 67.2 / 80.1 / 73.8, 8192x8192
#   68.3 / 70.0 / 70.3, 32768x8192 260.7 / 276.4 / 273.8 (fused 521.2 / 550.2 / 550.8).
# At no more blocks than programs the persistent variant only adds work (512x2048 bf16
# 2.4 / 2.6 / 2.6, fused 2.7 / 3.0 / 3.1). Loading the weight before the rows, once per
# program, cost 25% at N = 8,192 (8192x8192 bf16 84.7 against 68.3 us): it is loaded
# where it is used.
FORWARD_FEW_ROWS_PROGRAMS_PER_SM = 2  # 0: never persistent
FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM = 4
FUSED_F32_FORWARD_FEW_ROWS_BLOCKS_PER_PROGRAM = 2
FORWARD_PREFETCH = True
# Problems up to this many elements take a one-program backward grid, which writes dweight
# itself: one launch instead of two, for shapes whose time is launch overhead anyway.
SINGLE_PROGRAM_ELEMENTS = 65536
# The interpreter runs programs one after another: a few are enough to exercise the grid.
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
    def from_heuristic(cls, n: int, min_tile: int | None = None, per_warp: int | None = None):
        """The config for rows of n elements (the module's constants fill the defaults)."""
        min_tile = min_tile or MIN_TILE_ELEMENTS
        per_warp = per_warp or ELEMENTS_PER_WARP
        if n > MAX_SINGLE_BLOCK_N:
            warps = min(16, max(1, CHUNK_N // per_warp))
            return cls(
                False, block_m=1, block_n=CHUNK_N, num_warps=warps, chunk_stages=CHUNK_STAGES
            )
        block_n = next_power_of_2(n)
        block_m = max(1, min_tile // block_n)
        tile = block_m * block_n
        num_warps = min(16, max(1, tile // per_warp))
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
