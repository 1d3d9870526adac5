"""The grid's cells compiled before they are timed: their backends validated in parallel.

A library module of rmsnorm_bench.grid, not a tool. The grid measures each shape afresh, and
each backend compiles for it: torch.compile traces and compiles a graph per shape, forward and
backward (dynamic=False, as a model of fixed shapes gets it: 1,440 shapes over the full grid),
our kernels and Liger's a variant per new block size and dtype. In the grid's one process they
compile one after another, each before its cell is timed: at ca5ceda, 257 cells took 302 s on
an H200, and the timing itself, modeled from those cells' own device times and the grid's
contract, about 31 s of it. So the grid hands the groups it is about to measure (a shape,
dtype and weight: the backends made once for both phases, Cell.group) to --warm-workers
processes first, a batch at a time: each makes and validates every backend of its groups as
measure_cell does (instrument.validate runs the forward and the backward), which fills the
Triton and inductor caches on disk; then the grid's own process measures those cells, one
after another with nothing else running on the GPU, and loads what was compiled.

Nothing a worker does is kept but the compiled kernels: every cell is still validated by the
measuring process, which fails a cell with its own reason, and the launch-config choices
inductor made in a worker (timed while the others shared the GPU) are forgotten after each
batch (instrument.warm.forget_choices), as the suites' warm step does. Groups whose tensors
would take more than WARM_MAX_BYTES are left to the measuring process (a few shapes of many
rows), so that the workers never crowd the GPU's memory; and where a cell would not fit the
memory the idle workers leave, but would without them, the workers are ended first (held).
A worker that dies stops the warming for the rest of the run: the measuring process compiles,
as it did without workers.
"""

import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from .gridfile import Cell

# a group's tensors at most this large are warmed in a worker (cell_bytes); 8 workers then
# take at most 16 GiB together
WARM_MAX_BYTES = 2 * 2**30
BATCH_PER_WORKER = 2  # groups per worker in a batch: the budget is checked between batches
# what an idle worker may hold of the GPU's memory (its CUDA context, its allocator's cache):
# a cell that would fit without the workers ends the warming rather than be skipped
WORKER_BYTES = 2 * 2**30


def default_workers() -> int:
    """Half the CPUs, at most 8: the workers' traces and compiles are Python, one CPU each,
    and inductor compiles a graph's kernels in threads of its own."""
    return min(8, (os.cpu_count() or 2) // 2)


def warm_group(group: tuple, backends: list) -> int:
    """Make and validate every backend of one group (op, dtype, weight, m, n), as the grid's
    cells would; the number that validated. Errors are the measuring process's to report."""
    import torch

    from . import instrument
    from .grid import problem

    op, dtype, weight, m, n = group
    cell = Cell(op, "forward", dtype, weight, m, n)
    done = 0
    try:
        p = problem(cell)
        expected = instrument.reference(p)
        for name in backends:
            try:
                instrument.validate(instrument.make_backend(name, op), p, expected)
                done += 1
            except Exception:  # unavailable, unsupported, wrong: measured and said there
                pass
    except Exception:  # out of memory: the measuring process skips or fails the cell
        pass
    finally:
        p = expected = None
        torch.cuda.empty_cache()
    return done


class Warmer:
    """Warms the groups of `cells` (in the order measured) ahead of their timing: before(cell)
    compiles the next batch in the workers where `cell`'s group has not been warmed. What it
    did is in `facts` (workers, groups, seconds; stopped: why it stood aside)."""

    def __init__(self, workers: int, cells: list, backends: dict, size, log=print):
        self.cells, self.backends, self.size, self.log = cells, backends, size, log
        self.next = 0  # the first cell whose group is not yet handed out
        self.handed = set()
        self.facts = {"workers": workers, "groups": 0, "seconds": 0.0}
        # spawned, not forked: the workers start clean of the grid's CUDA state
        self.pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"))

    def before(self, cell: Cell) -> None:
        if self.pool is None or cell.group in self.handed:
            return
        batch = []
        limit = self.facts["workers"] * BATCH_PER_WORKER
        while self.next < len(self.cells) and len(batch) < limit:
            group = self.cells[self.next].group
            if group not in self.handed:
                self.handed.add(group)
                if self.size(self.cells[self.next]) <= WARM_MAX_BYTES:
                    batch.append(group)
            self.next += 1
        self.handed.add(cell.group)  # also where it was too large for a worker
        if not batch:
            return
        start = time.perf_counter()
        try:
            ops = [self.backends[g[0]] for g in batch]
            list(self.pool.map(warm_group, batch, ops))
            self.facts["groups"] += len(batch)
        except Exception as e:  # a worker died (out of memory ...): the measuring compiles
            self.close(f"{type(e).__name__}: {e}")
        finally:
            from .instrument.warm import forget_choices

            forget_choices()
        self.facts["seconds"] = round(self.facts["seconds"] + time.perf_counter() - start, 1)

    def held(self) -> int:
        """GPU bytes the idle workers may hold (0 once they are ended)."""
        return self.facts["workers"] * WORKER_BYTES if self.pool is not None else 0

    def close(self, stopped: str | None = None) -> None:
        """End the workers; `stopped`: why, before the run's end (said, and kept in facts)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
            if stopped:
                self.facts["stopped"] = stopped
                self.log(f"grid: warming stopped ({stopped}); cells compile as measured")
