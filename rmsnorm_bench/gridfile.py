"""The grid of rmsnorm_bench.grid: its cells in the order measured, each cell judged, its file
(grid.json) written, continued and read back.

A library module of rmsnorm_bench.grid (which measures the cells, writes the file and
describes it in its --help), not a tool. A report or page that shows a grid calls
load(path), then gridview.summary(data) or gridview.draw(data, folder).

The file: "format" (FORMAT), "commit", "machine" (machine.facts()), "device_time" (whether
device time was measured: not in the CPU smoke mode), "grid" (its axes: ops, phases, dtypes,
weights, m, n, backends), "unavailable" ({backend: {op: why}}, the peers that could not run
here), "budget_s" / "elapsed_s", and "cells", one per (op, phase, dtype, weight, m, n): for
each backend a status (STATUSES), with "median_s" and "samples" where it was timed and
"reason" where it was not, "timings" where a first verdict was confirmed by timing ours and
the best peer again (median_s is then their median), and "seconds" ({"make", "validate",
"time"}: where the tool's time went); "best_peer", "ours_over_best_peer" and "behind"
(judge); "runs", one entry per run that measured into the file ("started", "elapsed_s", "budget_s",
"measured": its cells, "warm": its warm-up's workers, groups and seconds), more than one
where a run was continued (grid --resume). While a run goes on, the file is rewritten every
CHECKPOINT_SECONDS, the cells still to come "not reached": a run that is killed keeps what it
measured, and --resume continues from there.
"""

import itertools
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import ROOT
from .asvformat import is_number
from .instrument import DTYPE_NAMES, OPS, OURS, Shape

# the grid's axes (the tool's defaults)
M_VALUES = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536)
N_VALUES = (128, 256, 1000, 1024, 2048, 3000, 4096, 5120, 7168, 8192, 12288, 16384, 20000,
            32768, 65536, 131072)  # fmt: skip
PHASES = ("forward", "backward")
WEIGHTS = ("same", "f32")  # the weight in x's dtype, or in f32
FORMAT = 1  # of grid.json
OK, FAILED, UNSUPPORTED, SKIPPED, NOT_REACHED = (
    "ok", "failed", "unsupported", "skipped", "not reached"
)  # fmt: skip
STATUSES = (OK, FAILED, UNSUPPORTED, SKIPPED, NOT_REACHED)
CHECKPOINT_SECONDS = 30  # how often a run in progress rewrites its file
# ours is "behind" where the best peer's device time is lower than ours by more than this
# share: twice the 1% to which grid.CONTRACT asks each median to be known
BEHIND = 0.02


class BadGridFile(ValueError):
    pass


def has_cell(dtype: str, weight: str) -> bool:
    """An f32 weight with f32 x is the "same" cell: it has no cell of its own."""
    return not dtype == weight == "f32"


@dataclass(frozen=True)
class Cell:
    op: str
    phase: str
    dtype: str
    weight: str  # "same" (x's dtype) or "f32"
    m: int
    n: int

    @property
    def shape(self) -> Shape:
        return Shape(self.m, self.n, self.dtype)

    @property
    def key(self) -> tuple:
        return (self.op, self.phase, self.dtype, self.weight, self.m, self.n)

    @property
    def group(self) -> tuple:
        """What the cell's backends are made for: its phases share them."""
        return (self.op, self.dtype, self.weight, self.m, self.n)


def levels(count: int) -> list[int]:
    """The level of each of `count` indices in a walk from coarse to fine: 0 for both ends,
    1 for the midpoint between them, 2 for the midpoints of the two halves, and so on."""
    level = [0] * count
    gaps, depth = [(0, count - 1)], 1
    while gaps:
        halves = []
        for lo, hi in gaps:
            if hi - lo > 1:
                mid = (lo + hi) // 2
                level[mid] = depth
                halves += [(lo, mid), (mid, hi)]
        gaps, depth = halves, depth + 1
    return level


def ordered_cells(ops, phases, dtypes, weights, ms, ns) -> list[Cell]:
    """The cells in the order measured: shapes coarse to fine over the (M, N) plane (the
    corners, then the midpoints between them, ...), every (op, dtype, weight, phase) at a
    shape before the next shape. The default budget ends well before the full grid does;
    cut there, every heatmap still spans the whole plane, with the same shapes at a coarser
    step, rather than some ops or dtypes, or the large shapes last in the lists, missing.
    A shape's two phases are adjacent: they share its backends (torch.compile compiles once)."""
    lm, ln = levels(len(ms)), levels(len(ns))
    shapes = sorted(
        itertools.product(range(len(ms)), range(len(ns))),
        key=lambda ij: (max(lm[ij[0]], ln[ij[1]]), lm[ij[0]] + ln[ij[1]], ij),
    )
    return [
        Cell(op, phase, dtype, weight, ms[i], ns[j])
        for i, j in shapes
        for op, dtype, weight in itertools.product(ops, dtypes, weights)
        if has_cell(dtype, weight)
        for phase in phases
    ]


def key(record: dict) -> tuple:
    """A cell record's Cell.key."""
    return tuple(record[k] for k in ("op", "phase", "dtype", "weight", "m", "n"))


def reached(record: dict) -> bool:
    """Whether a run got to the cell (every other status is its result)."""
    return any(r.get("status") != NOT_REACHED for r in record["backends"].values())


def settled(record: dict) -> bool:
    """Whether a run's verdict on the cell stands: it was reached, not stopped by an error of
    the whole cell (a CUDA error, say, which the process's later cells share too), and not
    skipped for want of memory at that moment. grid --resume measures the others again."""
    statuses = {r.get("status") for r in record["backends"].values()}
    return reached(record) and not record.get("cell_error") and statuses != {SKIPPED}


def judge(backends: dict) -> dict:
    """best_peer, ours_over_best_peer and behind of one cell's {backend: result}. The best
    peer is the one of lowest median device time among the peers that validated and were
    timed; without it, or without our time, the ratio is None and behind False."""
    timed = {b: r["median_s"] for b, r in backends.items() if r["status"] == OK and r["median_s"]}
    ours = timed.pop(OURS, None)
    best = min(timed, key=timed.get) if timed else None
    ratio = ours / timed[best] if ours and best else None
    return {
        "best_peer": best,
        "ours_over_best_peer": ratio,
        "behind": bool(ratio and ratio > 1 + BEHIND),
    }


def dumps(data: dict) -> str:
    """JSON of `data` with one cell a line: short enough to commit, and a diff names cells."""
    head = "".join(f" {json.dumps(k)}: {json.dumps(v)},\n" for k, v in data.items() if k != "cells")
    cells = ",\n".join("  " + json.dumps(c) for c in data["cells"])
    return f'{{\n{head} "cells": [\n{cells}\n ]\n}}\n'


def load(path) -> dict:
    """A grid.json written by rmsnorm_bench.grid; BadGridFile (naming the file) otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BadGridFile(f"{path}: cannot read it as JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BadGridFile(f"{path}: not a grid file of format {FORMAT} (rmsnorm_bench.grid)")
    cells = data.get("cells")
    needed = {"op", "phase", "dtype", "weight", "m", "n", "backends", "ours_over_best_peer",
              "best_peer", "behind"}  # fmt: skip
    if not isinstance(cells, list) or not all(
        isinstance(c, dict) and needed <= c.keys() for c in cells
    ):
        raise BadGridFile(f"{path}: its cells lack some of {', '.join(sorted(needed))}")
    axes, names = data.get("grid"), ("ops", "phases", "dtypes", "weights", "backends", "m", "n")
    if not isinstance(axes, dict) or not all(isinstance(axes.get(k), list) for k in names):
        raise BadGridFile(f"{path}: its grid lacks some of the axes {', '.join(names)}")
    if not isinstance(data.get("machine", {}), dict):
        raise BadGridFile(f"{path}: its machine is not an object of facts")
    if problem := next(filter(None, (fault(data), *map(cell_fault, cells))), None):
        raise BadGridFile(f"{path}: {problem}")
    seen = set()
    for cell in cells:  # a cell twice would be counted twice, and judged on either record
        if (k := key(cell)) in seen:
            raise BadGridFile(f"{path}: the cell {' '.join(map(str, k))} is there twice")
        seen.add(k)
    return data


AXES_OF_NAMES = ("ops", "phases", "dtypes", "weights", "backends")


def _number(value, low=0.0) -> bool:
    return is_number(value) and math.isfinite(value) and value >= low


def _whole(value) -> bool:
    return _number(value, 1) and value == int(value)


def fault(data: dict) -> str | None:
    """What is wrong with a grid's own fields (its cells aside), as the readers use them."""
    if not all(_whole(v) for k in ("m", "n") for v in data["grid"][k]):
        return "its grid's m and n are not all positive whole numbers"
    if not all(isinstance(v, str) for k in AXES_OF_NAMES for v in data["grid"][k]):
        return f"its grid's {', '.join(AXES_OF_NAMES)} are not all names"
    unavailable = data.get("unavailable", {})
    if not isinstance(unavailable, dict) or not all(
        isinstance(ops, dict) and all(isinstance(why, str) for why in ops.values())
        for ops in unavailable.values()
    ):
        return "its unavailable is not {backend: {op: why}}"
    for k in ("elapsed_s", "budget_s"):
        if data.get(k) is not None and not _number(data[k]):
            return f"its {k} is not a number of seconds"
    if not isinstance(data.get("runs", []), list):
        return "its runs are not a list"
    return None


def cell_fault(cell: dict) -> str | None:
    """What is wrong with one cell, as the readers use it: its shape, each backend's result,
    its verdict."""
    if not (_whole(cell["m"]) and _whole(cell["n"])):
        return f"a cell's m and n are not positive whole numbers ({cell['m']!r}, {cell['n']!r})"
    where_ = f"cell {cell['op']} {cell['phase']} {cell['m']}x{cell['n']} {cell['dtype']}"
    results = cell["backends"]
    if not isinstance(results, dict) or not results:
        return f"{where_}: its backends are not {{backend: result}}"
    for name, r in results.items():
        if not isinstance(r, dict) or r.get("status") not in STATUSES:
            return f"{where_}: {name}'s result has no status of {', '.join(STATUSES)}"
        spent = r.get("seconds", {})
        if not isinstance(spent, dict) or not all(map(_number, spent.values())):
            return f"{where_}: {name}'s seconds are not {{part: seconds}}"
        median = r.get("median_s")
        if median is not None and not (_number(median) and median > 0):
            return f"{where_}: {name}'s median_s is not a positive number of seconds"
        timings = r.get("timings", [1.0])
        if not isinstance(timings, list) or not all(_number(t) and t > 0 for t in timings):
            return f"{where_}: {name}'s timings are not a list of positive seconds"
    ratio, best = cell["ours_over_best_peer"], cell["best_peer"]
    if (ratio is not None and not (_number(ratio) and ratio > 0 and best is not None)) or (
        best is not None and best not in results
    ):
        return f"{where_}: its ours_over_best_peer or best_peer is not one of its results"
    if not isinstance(cell["behind"], bool):
        return f"{where_}: its behind is not true or false"
    return None


def pending(cell: Cell, backends, why: str) -> dict:
    """The record of a cell not measured (yet)."""
    results = {name: {"status": NOT_REACHED, "reason": why} for name in backends}
    return {**vars(cell), "backends": results, **judge(results)}


def write(path: Path, data: dict) -> None:
    """Write the grid `data` to `path` whole or not at all (beside it first, then renamed)."""
    part = path.with_name(f".{path.name}.part")
    with open(part, "w") as f:
        f.write(dumps(data))
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, path)


# the machine's facts a grid is continued on: what decides the times (not the host's CPUs,
# nor how many GPUs a machine of the same kind has)
SAME_MACHINE = ("gpu", "torch", "triton", "cuda", "rocm", "driver", "python")


# what the grid measures with: a commit that changed none of it measures the same code
MEASURED_CODE = ("rmsnorm_kernels", "rmsnorm_bench/instrument", "rmsnorm_bench/grid.py")


def same_code(commit: str | None, head: str | None) -> bool:
    """Whether the code measured here (the working tree) is `commit`'s: the same commit, or
    no difference in MEASURED_CODE; False where git cannot tell."""
    if commit is None or head is None:
        return commit == head
    diff = ["git", "-C", str(ROOT), "diff", "--quiet", commit, "--", *MEASURED_CODE]
    return subprocess.run(diff, capture_output=True).returncode == 0


def kept_by_git(path: Path) -> bool:
    """Whether git holds `path` as it is (tracked, no change since HEAD): replacing it loses
    nothing."""
    from .asvfiles import tracked

    diff = ["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", str(Path(path).resolve())]
    return tracked(path) and subprocess.run(diff, capture_output=True).returncode == 0


def continued(path: Path, fresh: dict, resume: bool, replace: bool = False) -> tuple[dict, dict]:
    """The file to write, and the cells it keeps by key: `fresh` and none without `resume`,
    else the grid in `path` continued, its axes joined with those asked for, where the code
    measured here is the file's commit's (same_code: a later commit that changed only
    documents, the grid's own file say, measures the same code). BadGridFile where `path`
    cannot be continued, or, without `replace`, where a run without `resume` would lose what
    it holds: a file that cannot be read, or device times that git does not keep as they are
    (of this code and machine: give --resume), that another machine measured, or that the
    CPU smoke mode (validation only) would replace."""
    if not resume:
        if replace or not path.is_file():
            return fresh, {}
        try:
            old = load(path)
        except BadGridFile as e:
            raise BadGridFile(
                f"{e}; a new run would replace it: move it away, or --replace"
            ) from None
        kept = sum(map(settled, old["cells"]))
        if not (kept and old.get("device_time")):
            return fresh, {}
        what = f"{path} holds {kept} cells of device times ({_machine(old).get('gpu')}"
        what += f", commit {str(old.get('commit'))[:10]})"
        if _machine(old) == _machine(fresh) and same_code(old.get("commit"), fresh["commit"]):
            raise BadGridFile(
                f"{what}, measured of this code on this machine: give --resume to continue "
                "it, or move it away (or --replace) to start afresh"
            )
        if not fresh["device_time"]:
            raise BadGridFile(
                f"{what}; the CPU smoke mode validates only and would replace them: give "
                "another --out (or --replace)"
            )
        if _machine(old) != _machine(fresh):
            raise BadGridFile(
                f"{what}, of another machine than this one: give another --out (a grid per "
                "machine), or --replace"
            )
        if not kept_by_git(path):
            raise BadGridFile(
                f"{what}, which git does not keep as they are (not committed, or changed): "
                "commit or move it away, or --replace"
            )
        return fresh, {}
    if not path.is_file():
        raise BadGridFile(f"--resume: no grid to continue at {path}")
    old = load(path)
    if not same_code(old.get("commit"), fresh["commit"]):
        raise BadGridFile(
            f"--resume: {path} measured commit {str(old.get('commit'))[:10]}, whose package or "
            f"instrument differs from what is measured here ({str(fresh['commit'])[:10]}, and "
            "the working tree): it continues a grid of the same code only"
        )
    for what, ours_, theirs in (
        ("machine", _machine(fresh), _machine(old)),
        ("way of measuring", (fresh["device_time"], fresh["contract"]),
         (old.get("device_time"), old.get("contract"))),
        ("backends", fresh["grid"]["backends"], old["grid"]["backends"]),
    ):  # fmt: skip
        if ours_ != theirs:
            raise BadGridFile(
                f"--resume: {path} was measured with another {what} ({theirs} there, {ours_} "
                "here); it continues a grid of this code, machine, contract and backends only"
            )
    canonical = {"ops": OPS, "phases": PHASES, "dtypes": DTYPE_NAMES,
                 "weights": WEIGHTS}  # fmt: skip
    axes = old["grid"]
    for k, values in canonical.items():
        axes[k] = [v for v in values if v in axes[k] or v in fresh["grid"][k]]
    for k in ("m", "n"):
        axes[k] = sorted(set(axes[k]) | set(fresh["grid"][k]))
    if not old.get("runs"):  # a file of one run, written before runs were listed
        old["runs"] = [{"started": old.get("created"), "commit": old.get("commit"),
                        "elapsed_s": old.get("elapsed_s"), "budget_s": old.get("budget_s"),
                        "measured": sum(map(reached, old["cells"]))}]  # fmt: skip
    old.update(commit=fresh["commit"], budget_s=fresh["budget_s"])  # the same code
    old.setdefault("unavailable", {})
    return old, {key(c): c for c in old["cells"]}


def _machine(data: dict) -> dict:
    facts = data.get("machine") or {}
    return {k: facts.get(k) for k in SAME_MACHINE}


if __name__ == "__main__":
    print(
        "rmsnorm_bench.gridfile: a library module of rmsnorm_bench.grid, not a tool; "
        "python -m rmsnorm_bench.grid --show FILE prints a grid's summary",
        file=sys.stderr,
    )
    sys.exit(2)
