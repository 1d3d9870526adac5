"""Device time of ours and of every peer installed over a grid of shapes (GPU): where ours is
ahead of the best peer, and where behind.

usage: python -m rmsnorm_bench.grid [--ops OP,...] [--phases PHASE,...] [--dtypes DTYPE,...]
                                    [--weights WEIGHT,...] [--backends BACKEND,...]
                                    [--m M,...] [--n N,...] [--budget SECONDS] [--out DIR]
                                    [--resume] [--replace] [--warm-workers N]
       python -m rmsnorm_bench.grid --show FILE

A cell is an op, a phase, x's dtype, the weight's (same: x's; f32, where x is not f32) and
M x N (M_VALUES x N_VALUES by default); each option takes a comma-separated subset. In each
cell every backend is validated against the fp32 reference first (its outputs and gradients,
once for both phases of a shape, as the suites do): a wrong result is
"failed" and not timed; an error is "unsupported" where the weight is mixed or the backend
a peer (Liger-Kernel stops at rows of 65,536), else "failed". The others get the suites'
device time (CUDA-graph replay, hot L2; median of CONTRACT's samples, each of 20 replays or
of as many long ones as last SAMPLE_SECONDS). Where those make ours behind the best peer or
far ahead, the two are timed again in turns before the cell is judged (confirm). A peer that
cannot
run here (instrument.Unavailable) is left out and listed. Cells whose tensors would not fit
in free memory are "skipped"; once --budget seconds (default 480) have gone, the cells left
are "not reached" (gridfile.ordered_cells: why a cut-off run still covers every panel).
Before a batch of shapes is timed, --warm-workers processes (default: half the CPUs, at most
8) make and validate their backends side by side, so that their kernels and torch.compile's
graphs are compiled when the cells are timed, one after another (rmsnorm_bench.gridwarm).

Writes grid.json into --out (default docs/grid; .asv/grid in the CPU smoke mode), one cell a
line (rmsnorm_bench.gridfile describes it), and <op>_<phase>.png, heatmaps of best peer /
ours per dtype and weight, then prints a summary (--show: that of a file written before).
The file is rewritten every half minute while the run goes on, so that a run that is stopped
keeps what it measured. The full grid takes about an hour on an H200, an estimate
(docs/tools.md): --resume continues the grid.json in --out, measuring the cells of the axes
given that it lacks or did not reach and keeping the others, in as many budgeted runs as it
takes; it refuses (exit 2) a file of another commit, machine, contract or set of backends.
Without --resume, a run replaces the grid.json in --out only where nothing is lost: a file
git keeps as it is, of this machine, of other code (a new commit's grid); it refuses (exit 2)
a file it cannot read, device times of this code (--resume), of another machine, or not
committed, and any device times in the CPU smoke mode; --replace replaces it all the same.

Exits 2 on a bad option or without a GPU; RMSNORM_BENCH_DEVICE=cpu with small --m and --n
runs the CPU smoke mode (Triton's interpreter: validation only). Exits 1 where ours failed.
"""

import argparse
import contextlib
import dataclasses
import math
import os
import sys
import time
import warnings
from pathlib import Path

from . import ROOT, argument_parser, gridfile, gridview, gridwarm, instrument, lifetime, require_gpu
from .gridfile import (
    FAILED,
    M_VALUES,
    N_VALUES,
    NOT_REACHED,
    OK,
    PHASES,
    SKIPPED,
    UNSUPPORTED,
    WEIGHTS,
    Cell,
    ordered_cells,
)

# the sweep's samples (5 of 20 replays), up to 9 where the median is not known to 1%: the
# "behind" line (gridfile.BEHIND, 2%) needs that much
CONTRACT = instrument.Contract(warmup=3, iters=20, samples=5, max_samples=9, target=0.01,
                               max_seconds=0.1)  # fmt: skip
# ... of 20 replays, or of as many long replays as last at least 2 ms (at least one): a call of
# 10 ms was replayed about 140 times, now about 15. The grid's replays, modeled from the
# cells of ca5ceda's first part (their own device times) and the contract: 31 s for those 257
# cells with 20 a sample, 15 s so; for the whole grid about 9 and 3.3 minutes. A replay of
# a millisecond and more is timed by CUDA events to well within the grid's 2% "behind" line.
SAMPLE_SECONDS = 2e-3
# A cell whose first timings make ours behind the best peer (past gridfile.BEHIND) or far
# ahead (under FAR_AHEAD) is timed again before it is judged: ours and that peer in turns,
# CONFIRM_ROUNDS times each (A B B A ...), and each one's median_s becomes the median of all
# its timings, listed under "timings". One disturbed sample set (a cell of ours read 34.1 us
# on an H100 where three re-runs gave 2.0-2.1; torch.compile 7.1 where it reads 4.5) is then
# one timing of five, and no verdict.
CONFIRM_ROUNDS = 4
FAR_AHEAD = 0.5
# Peak bytes of a cell per element of [M, N]: (tensors in x's dtype, fp32 tensors), at its
# validation (timing makes a fresh problem once that is freed): the problem, the fp32
# reference's values and intermediates, a backend's outputs and gradients, the comparisons'
# fp32 copies. The peak RSS of validating the torch backend on the CPU at 2048x8192 (the
# CUDA allocator's test is tests/test_grid.py's) was 39 and 44 B for rms_norm in bf16 and
# f32, 56 and 68 for fused_add; these give 44 and 56, 64 and 84. A cell that runs out of
# memory all the same is skipped.
TENSORS = {"rms_norm": (6, 8), "fused_add": (10, 11)}
HEADROOM = 0.8  # the share of the free memory a cell may take
SMOKE_MAX_ELEMENTS = 65536  # M x N under Triton's interpreter in the CPU smoke mode


def cell_bytes(cell: Cell) -> int:
    own, fp32 = TENSORS[cell.op]
    return cell.m * cell.n * (own * instrument.torch_dtype(cell.dtype).itemsize + fp32 * 4)


def memory_problem(cell: Cell, free: int) -> str | None:
    """Why the cell is skipped (its tensors would not fit in HEADROOM of `free` bytes)."""
    need = cell_bytes(cell)
    if need <= HEADROOM * free:
        return None
    return (
        f"needs about {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free ({HEADROOM:.0%} usable)"
    )


def free_memory() -> int:
    """Free bytes of the benchmark device: the GPU's, or the host's in the smoke mode."""
    if instrument.DEVICE == "cpu":
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    import torch

    torch.cuda.empty_cache()
    return torch.cuda.mem_get_info()[0]


def problem(cell: Cell):
    """The instrument's inputs of the cell, with an f32 copy of the weight where it asks."""
    p = instrument.make_problem(cell.op, cell.shape)
    if cell.weight == "f32":
        p.weight = p.weight.detach().float().requires_grad_()
    return p


def one_line(error: Exception) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:400]


def failure(backend: str, cell: Cell, error: Exception) -> dict:
    """The result of a backend that did not pass: wrong (failed), out of memory (skipped),
    or an error, which is a peer's limit or a mixed weight refused, else our failure."""
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        return {"status": SKIPPED, "reason": f"out of memory: {one_line(error)}"}
    refused = cell.weight == "f32" or backend != instrument.OURS  # f32 x has no f32 cell
    wrong = isinstance(error, AssertionError)
    return {"status": UNSUPPORTED if refused and not wrong else FAILED, "reason": one_line(error)}


def measure_cell(cell: Cell, fns: dict, verdicts: dict | None = None) -> dict:
    """{backend: result} of one cell; `fns` is {backend: its call, or the error making it}.
    Every backend is validated (a first call's compile included), then timed, each result's
    "seconds" saying how long each took; the reference is freed before the timing.

    `verdicts` ({backend: None where it passed, else its result}) is shared by the cells of
    one group (Cell.group, whose phases share the backends): validation checks the outputs and
    the gradients together, so a backend validated for one phase is not validated again for
    the other, as the suites validate once per op, shape and backend for both phases."""
    import torch

    verdicts = {} if verdicts is None else verdicts
    results, passed, spent = {}, {}, {name: {} for name in fns}  # spent: each one's seconds
    try:
        if todo := [name for name in fns if name not in verdicts]:
            p = problem(cell)
            expected = instrument.reference(p)
            for name in todo:
                start = time.perf_counter()  # a first call compiles (torch.compile's graphs)
                try:
                    if isinstance(fns[name], Exception):
                        raise fns[name]
                    instrument.validate(fns[name], p, expected)
                    verdicts[name] = None
                except torch.cuda.OutOfMemoryError as e:  # this cell's, not the backend's
                    results[name] = failure(name, cell, e)
                except Exception as e:
                    verdicts[name] = failure(name, cell, e)
                spent[name]["validate"] = round(time.perf_counter() - start, 4)
            del p, expected
        for name, fn in fns.items():
            if name in results:
                continue
            if verdicts[name] is None:
                passed[name] = fn
            else:
                results[name] = verdicts[name]
        for name, fn in passed.items():
            start = time.perf_counter()
            results[name] = time_backend(name, fn, cell)
            spent[name]["time"] = round(time.perf_counter() - start, 4)
        for name, seconds in confirm(cell, passed, results).items():
            spent[name]["time"] = round(spent[name]["time"] + seconds, 4)
    except torch.cuda.OutOfMemoryError as e:  # the inputs or the reference
        results = {name: failure(name, cell, e) for name in fns}
    finally:
        if instrument.DEVICE == "cuda":
            torch.cuda.empty_cache()
    return {name: {**results[name], "seconds": spent[name]} for name in fns}


def confirm(cell: Cell, fns: dict, results: dict, clock=time.perf_counter) -> dict:
    """Time ours and the best peer again, in turns, where their first timings judge the cell
    behind or far ahead (CONFIRM_ROUNDS); each one's result in `results` then has the median
    of all its timings as median_s and those timings, the first one first, as "timings". A
    confirmation that fails leaves the first timings as they were. Returns {backend: seconds
    spent} (nothing where the cell needed no confirmation)."""
    verdict = gridfile.judge(results)
    ratio = verdict["ours_over_best_peer"]
    if ratio is None or FAR_AHEAD <= ratio <= 1 + gridfile.BEHIND:
        return {}
    pair = (instrument.OURS, verdict["best_peer"])
    timings = {name: [results[name]["median_s"]] for name in pair}
    spent = dict.fromkeys(pair, 0.0)
    for turn in range(CONFIRM_ROUNDS):
        for name in pair if turn % 2 == 0 else pair[::-1]:
            start = clock()
            again = time_backend(name, fns[name], cell)
            spent[name] += clock() - start
            if again["status"] != OK or not again.get("median_s"):
                return spent  # judged on the first timings
            timings[name].append(again["median_s"])
    for name in pair:
        median = instrument.median(timings[name])
        results[name] = {**results[name], "median_s": median, "timings": timings[name]}
    return spent


def time_backend(name: str, fn, cell: Cell) -> dict:
    if instrument.DEVICE == "cpu":
        return {"status": OK, "median_s": None, "samples": 0}  # validated (device_time_note)
    import torch

    # a fresh problem on the capturing stream, as the suites' device time makes it
    make_call = lambda: instrument.timed_call(fn, problem(cell), cell.phase)  # noqa: E731
    try:
        # no cold samples: hot L2
        hot, _ = instrument.device_seconds(make_call, CONTRACT, sample_seconds=SAMPLE_SECONDS)
    except Exception as e:
        torch.cuda.synchronize()
        result = failure(name, cell, e)
        result["reason"] = f"CUDA graph capture or replay: {result['reason']}"
        return result
    return {"status": OK, "median_s": instrument.median(hot), "samples": len(hot)}


def make_backends(op: str, names, unavailable: dict) -> dict:
    """{backend: its call of `op`, or the error making it}; a backend that cannot run here
    (instrument.Unavailable) goes into `unavailable` ({backend: {op: why}}) instead."""
    fns = {}
    for name in names:
        if op in unavailable.get(name, {}):
            continue
        try:
            fns[name] = instrument.make_backend(name, op)
        except instrument.Unavailable as e:
            unavailable.setdefault(name, {})[op] = str(e)
        except Exception as e:
            fns[name] = e
    return fns


def run(cells, measure, budget: float, fits, backends: dict, clock=time.monotonic, log=print,
        checkpoint=lambda records: None):  # fmt: skip
    """The record of each cell (a list): measure(cell) -> {backend: result} where fits(cell)
    gives no reason to skip it, until `budget` seconds of `clock` have gone; a cell skipped
    or not reached has that status for each of `backends[cell.op]`, and so has one whose
    measure raised (with "cell_error"). checkpoint(records) is called with the records so far
    after each cell measured."""
    records, start, stop = [], clock(), None
    for i, cell in enumerate(cells):
        if stop is None and clock() - start >= budget:
            stop = f"the budget of {budget:g} s was spent"
        results, status, why, cell_error = None, NOT_REACHED, stop, False
        if not stop and not (why := fits(cell)):
            try:
                results = measure(cell)
            except KeyboardInterrupt:  # what was measured is kept
                why = stop = "interrupted"
            except Exception as e:  # not a backend's own (a CUDA error): the cell's
                status, why, cell_error = FAILED, one_line(e), True
        elif not stop:
            status = SKIPPED
        if results is None:
            results = {name: {"status": status, "reason": why} for name in backends[cell.op]}
        record = {**vars(cell), "backends": results}
        record.update(gridfile.judge(results))
        if cell_error:  # measured again by --resume
            record["cell_error"] = True
        records.append(record)
        if not stop:
            log(f"[{i + 1}/{len(cells)}] {gridview.line(record)}")
            checkpoint(records)
    return records


def listing(allowed, what):
    """An argparse type: a comma-separated subset of `allowed` (None: positive integers),
    in their order (integers ascending), without repeats."""

    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        ok = (lambda t: t.isdigit() and int(t) > 0) if allowed is None else allowed.__contains__
        if not items or not all(map(ok, items)):
            shown = ", ".join(repr(t) for t in items if not ok(t)) or "nothing"
            expected = "positive whole numbers" if allowed is None else ", ".join(allowed)
            raise argparse.ArgumentTypeError(f"{shown} given; expected {what}: {expected}")
        return (
            sorted({int(t) for t in items})
            if allowed is None
            else [a for a in allowed if a in items]
        )

    return parse


def workers(text):
    cpus = os.cpu_count() or 1
    if not text.isdigit() or int(text) > cpus:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a whole number of processes, 0 (none) to {cpus} (the CPUs)"
        )
    return int(text)


def budget(text):
    with contextlib.suppress(ValueError):
        if float(text) > 0:  # inf too: no budget
            return float(text)
    raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    axes = [("--ops", instrument.OPS, "ops"), ("--phases", PHASES, "phases"),
            ("--dtypes", instrument.DTYPE_NAMES, "x's dtypes"), ("--weights", WEIGHTS, "weights"),
            ("--backends", instrument.BACKENDS, "backends")]  # fmt: skip
    for flag, values, what in axes:
        name = f"{flag[2:-1].upper()},..."
        ap.add_argument(flag, type=listing(values, what), default=list(values), metavar=name,
                        help=f"of {','.join(values)} (default: all)")  # fmt: skip
    for flag, values, what in (("--m", M_VALUES, "rows M"), ("--n", N_VALUES, "row lengths N")):
        ap.add_argument(flag, type=listing(None, what), metavar=f"{flag[2:].upper()},...",
                        help=f"default {','.join(map(str, values))}")  # fmt: skip
    ap.add_argument("--budget", type=budget, default=480.0, metavar="SECONDS", help="default 480")
    ap.add_argument("--out", type=Path, metavar="DIR", help="default docs/grid")
    ap.add_argument("--resume", action="store_true",
                    help="continue the grid.json in --out: measure only what it lacks")  # fmt: skip
    ap.add_argument("--replace", action="store_true",
                    help="replace grid.json in --out where a new run would refuse to")  # fmt: skip
    ap.add_argument("--show", type=Path, metavar="FILE", help="print a grid.json's summary")
    ap.add_argument("--warm-workers", type=workers, metavar="N",
                    help="processes that compile the cells ahead of their timing (default: half "
                         f"the CPUs, at most 8, here {gridwarm.default_workers()}; 0 in the "
                         "CPU smoke mode, and 0: none)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.show:
        try:
            print(gridview.summary(gridfile.load(args.show)))
        except gridfile.BadGridFile as e:
            ap.exit(2, f"grid: {e}\n")
        return 0
    if args.resume and args.replace:
        ap.error("--resume continues the grid.json in --out, --replace starts it afresh: one")
    if instrument.OURS not in args.backends:
        ap.error(f"--backends: give {instrument.OURS} too: the grid compares ours with the peers")
    if not ordered_cells(args.ops, args.phases, args.dtypes, args.weights, [1], [1]):
        ap.error("--dtypes f32 --weights f32: an f32 weight with f32 x is the 'same' cell")
    require_gpu(ap, smoke_mode=True, ours=True)  # ours left out would be "unavailable"
    smoke = instrument.DEVICE == "cpu"
    if smoke and not (args.m and args.n and args.m[-1] * args.n[-1] <= SMOKE_MAX_ELEMENTS):
        limit = f"M x N at most {SMOKE_MAX_ELEMENTS:,}, e.g. --m 1,4 --n 128"
        ap.exit(
            2,
            f"grid: {instrument.DEVICE_VAR}=cpu (the CPU smoke mode) only validates, under "
            f"Triton's interpreter: give small --m and --n ({limit}); the grid needs a GPU\n",
        )
    if args.warm_workers is None:  # the interpreter compiles nothing worth warming
        args.warm_workers = 0 if smoke else gridwarm.default_workers()
    out = args.out or (ROOT / ".asv" / "grid" if smoke else ROOT / "docs" / "grid")
    from .report import out_problem

    if problem_ := out_problem(out, ROOT / "results"):
        ap.error(problem_)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.exit(2, f"grid: cannot write into {out}: {e.strerror or e}\n")
    for name in ("grid.json", *(f"{op}_{phase}.png" for op in instrument.OPS for phase in PHASES)):
        if (out / name).exists() and not (out / name).is_file():  # found before measuring
            ap.exit(2, f"grid: {out / name} is in the way: it exists and is not a file\n")
    return measure_grid(args, out, smoke)


GPU_NOTE = "graph replay, hot L2"


def measure_grid(args, out: Path, smoke: bool) -> int:
    from .asvfiles import resolve
    from .machine import facts

    # torch's eager peer on a mixed-dtype weight, once per process: the cell says it all
    warnings.filterwarnings("ignore", "Mismatch dtype between input and weight")
    head = resolve("HEAD")  # where this is no clone: as given
    ms, ns = args.m or list(M_VALUES), args.n or list(N_VALUES)
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    data = {
        "format": gridfile.FORMAT,
        "created": now,
        "commit": head if head != "head" else None,
        "machine": facts(),
        "device_time": not smoke,
        "device_time_note": "the CPU smoke mode validates only" if smoke else GPU_NOTE,
        "contract": {
            **dataclasses.asdict(CONTRACT),
            "sample_seconds": SAMPLE_SECONDS,
            "confirm_rounds": CONFIRM_ROUNDS,
            "far_ahead": FAR_AHEAD,
        },  # fmt: skip
        "behind_share": gridfile.BEHIND,
        "budget_s": None if args.budget == math.inf else args.budget,  # JSON has no inf
        "elapsed_s": 0.0,
        "grid": {k: getattr(args, k) for k in ("ops", "phases", "dtypes", "weights", "backends")}
        | {"m": ms, "n": ns},
        "unavailable": {},
        "runs": [],
        "cells": [],
    }
    try:
        data, earlier = gridfile.continued(out / "grid.json", data, args.resume, args.replace)
    except gridfile.BadGridFile as e:
        print(f"grid: {e}", file=sys.stderr)
        return 2
    axes = [data["grid"][k] for k in ("ops", "phases", "dtypes", "weights", "m", "n")]
    order = ordered_cells(*axes)  # every cell the file may hold, in the order measured
    asked = ordered_cells(args.ops, args.phases, args.dtypes, args.weights, ms, ns)
    wanted = {c.key for c in asked}
    done = {k for k, record in earlier.items() if gridfile.settled(record)}
    cells = [c for c in order if c.key in wanted and c.key not in done]
    unavailable, made = data["unavailable"], {}
    for op in args.ops:  # which backends can run here, before the first cell
        make_backends(op, args.backends, unavailable)
    available = {
        op: [b for b in args.backends if op not in unavailable.get(b, {})] for op in args.ops
    }

    warmer = (
        gridwarm.Warmer(args.warm_workers, cells, available, size=cell_bytes, free=free_memory)
        if args.warm_workers and cells
        else None
    )

    def measure(cell):
        if warmer:  # the next batch of groups compiled in the workers first
            warmer.before(cell)
        making = {}  # seconds each backend took to make, where they are new
        if made.get("group") != cell.group:  # new backends (torch.compile's graphs) per shape
            made.update(group=cell.group, fns={}, verdicts={})
            for name in args.backends:
                start = time.perf_counter()
                made["fns"].update(make_backends(cell.op, [name], unavailable))
                making[name] = time.perf_counter() - start
        results = measure_cell(cell, made["fns"], made["verdicts"])
        for name, result in results.items():
            result.setdefault("seconds", {})["make"] = round(making.get(name, 0.0), 4)
        return results

    start, before = time.monotonic(), data["elapsed_s"] or 0.0
    this_run = {"started": now, "commit": data["commit"], "elapsed_s": 0.0,
                "budget_s": data["budget_s"], "measured": 0}  # fmt: skip
    if warmer:
        this_run["warm"] = warmer.facts  # kept up to date as it warms
    data["runs"].append(this_run)
    saved = [start]

    def save(records):
        """The file as it stands: earlier cells, this run's, and those still to come."""
        new = {gridfile.key(r): r for r in records}
        left = "not measured yet: the run stopped before it (--resume continues)"
        data["cells"] = [
            new.get(c.key) or earlier.get(c.key) or gridfile.pending(c, available[c.op], left)
            for c in order
            if c.key in new or c.key in earlier or c.key in wanted
        ]
        this_run["elapsed_s"] = round(time.monotonic() - start, 1)
        this_run["measured"] = sum(gridfile.reached(r) for r in records)
        data["elapsed_s"] = round(before + this_run["elapsed_s"], 1)
        gridfile.write(out / "grid.json", data)
        saved[0] = time.monotonic()

    def checkpoint(records):
        if time.monotonic() - saved[0] >= gridfile.CHECKPOINT_SECONDS:
            save(records)

    def fits(cell):
        """Why the cell is skipped (memory), None where it fits; the warming workers are
        ended where only the memory they hold is in its way."""
        free = free_memory()
        why = memory_problem(cell, free)
        if why and warmer and warmer.held():
            if memory_problem(cell, free + warmer.held()) is None:
                warmer.make_room()
                why = memory_problem(cell, free_memory())
        return why

    if earlier:
        print(f"grid: continuing {out / 'grid.json'}: {len(done)} cells kept, {len(cells)} to go")
    try:
        # a SIGTERM stops the run as Ctrl-C does: what was measured is kept, the workers end
        with lifetime.sigterm_raises(KeyboardInterrupt):
            records = run(cells, measure, args.budget, fits, available, checkpoint=checkpoint)
    finally:
        if warmer:
            warmer.close()
    save(records)
    written = [out / "grid.json", *gridview.draw(data, out)]
    print(gridview.summary(data))
    print(f"grid: wrote {', '.join(str(w) for w in written)}")
    ours = [r["backends"].get(instrument.OURS, {}).get("status") for r in data["cells"]]
    return 1 if FAILED in ours else 0


if __name__ == "__main__":
    sys.exit(main())
