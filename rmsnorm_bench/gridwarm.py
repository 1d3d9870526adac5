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

Nothing a worker does is kept but the compiled kernels: every shape is still validated by the
measuring process (once for both phases), which fails a cell with its own reason, and the
launch-config choices inductor made in a worker (timed while the others shared the GPU) are
forgotten after each batch (instrument.warm.forget_choices), as the suites' warm step does.
The workers share half
the GPU's free memory: a group whose tensors would take more than its share (cell_bytes) is
left to the measuring process (on an H200, about 7 GiB a worker of 8). While idle, the
workers hold what the main process measured them to hold (their CUDA contexts); where a cell
would fit only without that, the workers are ended before it, and started again for the next
batch. A worker that dies (a CUDA error ends it on purpose: its context is lost) stops the
warming for the rest of the run: the measuring process compiles, as it did without workers.
The workers die with the grid's process (Linux), leave Ctrl-C to it, and each compiles its
kernels in its share of the CPUs (TORCHINDUCTOR_COMPILE_THREADS).
"""

import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from .gridfile import Cell
from .lifetime import die_with_parent

BATCH_PER_WORKER = 2  # groups per worker in a batch: the budget is checked between batches
MEMORY_SHARE = 0.5  # of the GPU's free memory, for all the workers' groups at once


def default_workers() -> int:
    """Half the CPUs, at most 8: a worker's trace and graph lowering is Python, one CPU, and
    its Triton compiles run in a share of the others."""
    return min(8, (os.cpu_count() or 2) // 2)


def _worker_started(threads: int, parent: int) -> None:
    """A worker's set-up, before torch is imported: its share of the CPUs for inductor's
    compiles; Ctrl-C left to the grid's process; ended when that process ends (Linux)."""
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent, signal.SIGKILL)


def warm_group(group: tuple, backends: list) -> int:
    """Make and validate every backend of one group (op, dtype, weight, m, n), as the grid's
    cells would; the number that validated. Errors are the measuring process's to report,
    but a CUDA error ends the worker (its context is lost for every later group)."""
    import torch

    from . import instrument
    from .grid import problem

    op, dtype, weight, m, n = group
    cell = Cell(op, "forward", dtype, weight, m, n)
    done, p, expected = 0, None, None
    try:
        p = problem(cell)
        expected = instrument.reference(p)
        for name in backends:
            try:
                instrument.validate(instrument.make_backend(name, op), p, expected)
                done += 1
            except Exception as e:  # unavailable, unsupported, wrong: measured and said there
                _unless_lost(e)
    except Exception as e:  # out of memory: the measuring process skips or fails the cell
        _unless_lost(e)
    finally:
        p = expected = None
        torch.cuda.empty_cache()
    return done


def _unless_lost(error: Exception) -> None:
    if "CUDA error" in str(error) and "out of memory" not in str(error):
        os._exit(70)  # the pool breaks, and the warming stops saying why


class Warmer:
    """Warms the groups of `cells` (in the order measured) ahead of their timing: before(cell)
    compiles the next batch in the workers where `cell`'s group has not been handed out yet.
    `size(cell)` is a cell's bytes, `free()` the GPU's free bytes as the grid sees them. What
    it did is in `facts`: workers, groups handed out, backends validated, seconds, the times
    the workers were ended for a cell's memory, and why it stopped, where it did."""

    def __init__(self, workers: int, cells: list, backends: dict, size, free, log=print):
        self.cells, self.backends, self.size, self.free, self.log = cells, backends, size, free, log
        self.workers = workers
        self.next = 0  # the first cell whose group is not yet handed out
        self.handed = set()
        self.facts = {"workers": workers, "groups": 0, "validated": 0, "seconds": 0.0}
        self.limit = int(free() * MEMORY_SHARE / workers)  # a worker's share of the memory
        self.pool, self.holding, self.stopped = None, 0, False

    def before(self, cell: Cell) -> None:
        if self.stopped or cell.group in self.handed:
            return
        batch = []
        while self.next < len(self.cells) and len(batch) < self.workers * BATCH_PER_WORKER:
            group = self.cells[self.next].group
            if group not in self.handed:
                self.handed.add(group)
                if self.size(self.cells[self.next]) <= self.limit:
                    batch.append(group)
            self.next += 1
        self.handed.add(cell.group)  # also where it was too large for a worker
        if not batch:
            return
        start = time.perf_counter()
        try:
            if self.pool is None:
                self._start()
            ops = [self.backends[g[0]] for g in batch]
            self.facts["validated"] += sum(self.pool.map(warm_group, batch, ops))
            self.facts["groups"] += len(batch)
            if not self.holding:  # what the idle workers hold, measured once
                self.holding = max(0, self.before_pool - self.free())
        except Exception as e:  # a worker died (out of memory ...): the measuring compiles
            self.close(f"{type(e).__name__}: {e}")
        finally:
            _forget_choices()
        self.facts["seconds"] = round(self.facts["seconds"] + time.perf_counter() - start, 1)

    def _start(self) -> None:
        self.before_pool = self.free()
        threads = max(1, (os.cpu_count() or 2) // self.workers)
        # spawned, not forked: the workers start clean of the grid's CUDA state
        self.pool = ProcessPoolExecutor(
            self.workers, mp_context=get_context("spawn"), initializer=_worker_started,
            initargs=(threads, os.getpid()),
        )  # fmt: skip

    def held(self) -> int:
        """GPU bytes the idle workers hold (0 where none runs)."""
        return self.holding if self.pool is not None else 0

    def make_room(self) -> None:
        """End the workers for a cell that needs their memory; the next batch starts them."""
        self.facts["ended_for_memory"] = self.facts.get("ended_for_memory", 0) + 1
        self._end()

    def close(self, stopped: str | None = None) -> None:
        """End the workers for good; `stopped`: why, before the run's end (said, and kept)."""
        if stopped and not self.stopped:
            self.facts["stopped"] = stopped
            self.log(f"grid: warming stopped ({stopped}); cells compile as measured")
        self.stopped = True
        self._end()

    def _end(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
            _forget_choices()  # a worker still compiling when asked to end may have chosen


def _forget_choices() -> None:
    from .instrument.warm import forget_choices

    forget_choices()
