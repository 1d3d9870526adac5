"""How a grid (rmsnorm_bench.grid) is shown: a cell's line in the tool's log, the summary,
and the heatmaps, best peer / ours for each op and phase, one panel per dtype and weight, M
up and N across.

A library module of rmsnorm_bench.grid, which prints the lines and the summary and draws the
heatmaps beside the grid.json it writes, and of the dashboard's Reports page; the file's
cells and verdicts are rmsnorm_bench.gridfile's.
"""

import itertools
import math
import sys
from pathlib import Path

from .gridfile import (
    BEHIND,
    FAILED,
    NOT_REACHED,
    OK,
    SKIPPED,
    STATUSES,
    UNSUPPORTED,
    has_cell,
    reached,
)
from .instrument import OURS

# letters in a heatmap's grey cells (no ratio there), by our status
MARKS = {FAILED: "F", UNSUPPORTED: "U", SKIPPED: "S", NOT_REACHED: "", OK: "-"}
# the colour bar: log scale, symmetric about 1, as wide as the grid's largest gap either way
# (at least 2x), so that a 6x gap looks like 6x and not like the end of a fixed 2x scale
MIN_SPAN = 2.0
TICKS = (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)  # within 2x; past it, powers of 2


def color_span(cells) -> float:
    """The colour scale's reach r (from 1/r to r) for cells' ours_over_best_peer."""
    ratios = [c["ours_over_best_peer"] for c in cells if c.get("ours_over_best_peer")]
    return max([MIN_SPAN, *(max(r, 1 / r) for r in ratios)])


def ticks(span: float) -> list[float]:
    """The colour bar's ticks from 1/span to span: TICKS, then powers of two."""
    powers = [2.0**k for k in range(2, 64) if 2.0**k <= span * (1 + 1e-9)]
    return sorted({*(1 / p for p in powers), *TICKS, *powers})


KEY = (
    f"above 1: ours ahead; hatched: ours behind by more than {BEHIND:.0%}; grey: no ratio "
    "(F ours failed, U unsupported, S skipped, - no peer or no time, blank not reached)"
)


def where(data: dict) -> str:
    """The machine and commit of a grid."""
    gpu = data.get("machine", {}).get("gpu", "?")
    return f"{'no GPU' if gpu == 'none' else gpu}, commit {str(data.get('commit'))[:8]}"


def label(cell: dict) -> str:
    weight = "" if cell["weight"] == "same" else f", {cell['weight']} weight"
    return f"{cell['op']} {cell['phase']} {cell['m']}x{cell['n']} {cell['dtype']}{weight}"


def line(record: dict) -> str:
    """One cell as the tool's progress log shows it: each backend's time or status."""
    shown = []
    for name, r in record["backends"].items():
        t = r.get("median_s")
        shown.append(f"{name} {t * 1e6:.1f} us" if t else f"{name} {r['status']}")
    ratio, verdict = record["ours_over_best_peer"], ""
    if ratio:
        verdict = f"; ours / {record['best_peer']} {ratio:.3f}" + " BEHIND" * record["behind"]
    return f"{label(record)}: {', '.join(shown)}{verdict}"


def summary(data: dict, worst: int = 8) -> str:
    """Some lines: what was measured, the share of cells where ours is within BEHIND of the
    best peer or ahead, the statuses, the peers unavailable, the worst cells."""
    cells = data["cells"]
    lines = [f"grid on {where(data)}: {len(cells)} cells"]
    for backend in data["grid"]["backends"]:
        found = [c["backends"][backend]["status"] for c in cells if backend in c["backends"]]
        counts = ", ".join(f"{found.count(s)} {s}" for s in STATUSES if found.count(s))
        lines += [f"  {backend}: {counts}"] if found else []
    rated = [c for c in cells if c["ours_over_best_peer"]]
    if not data.get("device_time"):
        lines.append(f"device time not measured ({data.get('device_time_note', '?')}): no ratios")
    elif rated:
        level = sum(not c["behind"] for c in rated)
        lines.append(
            f"{len(rated)} cells measured (ours and a peer timed): {level} "
            f"({level / len(rated):.0%}) within {BEHIND:.0%} of the best peer or ahead"
        )
    else:
        lines.append("no cell has both ours and a peer timed: no ratios")
    for backend, ops in sorted(data.get("unavailable", {}).items()):
        reasons = set(ops.values())
        why = reasons.pop() if len(reasons) == 1 else "; ".join(f"{o}: {r}" for o, r in ops.items())
        lines.append(f"unavailable: {backend} ({why})")
    runs = data.get("runs") or []
    if len(runs) > 1:
        lines.append(f"took {data['elapsed_s']:.0f} s in {len(runs)} runs (--resume)")
    elif data.get("elapsed_s") is not None:
        budget = f"a budget of {data['budget_s']:g} s" if data.get("budget_s") else "no budget"
        lines.append(f"took {data['elapsed_s']:.0f} s, {budget}")
    for i, run in enumerate(runs):
        if warm := run.get("warm"):
            which = f"run {i + 1}: " if len(runs) > 1 else ""
            stopped = f", then stopped ({warm['stopped']})" if warm.get("stopped") else ""
            n = warm.get("workers")
            lines.append(
                f"{which}{warm.get('groups', 0)} shapes compiled ahead in {n} "
                f"process{'es' * (n != 1)} ({warm.get('validated', 0)} backends validated), "
                f"{warm.get('seconds', 0):.0f} s{stopped}"
            )
    if unreached := sum(not reached(c) for c in cells):
        lines.append(f"{unreached} cells not reached (grid --resume measures them)")
    if spent := time_spent(cells):
        lines.append(f"where the time went (s): {spent}")
    behind = sorted((c for c in rated if c["behind"]), key=lambda c: -c["ours_over_best_peer"])
    if rated:
        lines.append(
            f"worst cells (ours / best peer), {len(behind)} behind:"
            if behind
            else f"no cell behind by more than {BEHIND:.0%}"
        )
    for c in behind[:worst]:
        times = {b: c["backends"][b]["median_s"] for b in (OURS, c["best_peer"])}
        us = ", ".join(f"{b} {t * 1e6:.1f} us" for b, t in times.items())
        lines.append(f"  {c['ours_over_best_peer']:.3f}x  {label(c)}: {us}")
    return "\n".join(lines)


def time_spent(cells: list) -> str:
    """Each backend's seconds making its calls, validating them (a first call's compile
    included) and timing them, summed over the cells ("" where no cell says)."""
    totals = {}
    for cell in cells:
        for backend, result in cell["backends"].items():
            for part, seconds in (result.get("seconds") or {}).items():
                spent = totals.setdefault(backend, {})
                spent[part] = spent.get(part, 0.0) + seconds
    order = {"make": 0, "validate": 1, "time": 2}  # as a cell goes
    return "; ".join(
        f"{backend} "
        + ", ".join(
            f"{part} {spent[part]:.1f}" for part in sorted(spent, key=lambda p: order.get(p, 3))
        )
        for backend, spent in totals.items()
    )


def panels(data: dict) -> list[tuple[str, str]]:
    """The (dtype, weight) panels of one heatmap."""
    grid = data["grid"]
    return [(d, w) for d in grid["dtypes"] for w in grid["weights"] if has_cell(d, w)]


def draw(data: dict, out: Path) -> list[Path]:
    """<op>_<phase>.png in `out` for each op and phase of the grid: a heatmap per (dtype,
    weight), M up, N across, colour best peer / ours (above 1: ours ahead, log scale, as wide
    as the grid's largest gap: color_span), the
    cells where ours is behind by more than BEHIND hatched, cells without a ratio grey (with
    our status's letter, MARKS). Returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid, chosen, written = data["grid"], panels(data), []
    span = color_span(data["cells"])  # one scale for every panel and figure of the grid
    cols = min(2, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    size = (0.55 * len(grid["n"]) * cols + 2, 0.45 * len(grid["m"]) * rows + 2)
    for op, phase in ((op, phase) for op in grid["ops"] for phase in grid["phases"]):
        fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, layout="constrained")
        for ax in axes.flat[len(chosen) :]:
            ax.axis("off")
        for ax, (dtype, weight) in zip(axes.flat, chosen, strict=False):
            cells = {
                (c["m"], c["n"]): c
                for c in data["cells"]
                if (c["op"], c["phase"], c["dtype"], c["weight"]) == (op, phase, dtype, weight)
            }
            image = draw_panel(ax, cells, grid["m"], grid["n"], span)
            ax.set_title(f"x {dtype}, weight {dtype if weight == 'same' else weight}", fontsize=9)
        bar = fig.colorbar(image, ax=axes, shrink=0.6, label="best peer / ours (device time)")
        bar.ax.minorticks_off()
        marks = ticks(span)
        bar.set_ticks(marks, labels=[f"{t:.3g}" for t in marks])
        fig.suptitle(f"{op} {phase} ({where(data)})\n{KEY}", fontsize=8)
        written.append(out / f"{op}_{phase}.png")
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)
    return written


def draw_panel(ax, cells: dict, ms, ns, span: float = MIN_SPAN):
    """One heatmap of {(m, n): cell} on `ax`, colours from 1/span to span; returns its image
    (for the colour bar)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    values = [[math.nan] * len(ns) for _ in ms]
    for (i, m), (j, n) in itertools.product(enumerate(ms), enumerate(ns)):
        cell = cells.get((m, n))
        ratio = cell and cell["ours_over_best_peer"]
        if ratio:
            values[i][j] = 1 / ratio
            text = f"{1 / ratio:.2f}"
        else:
            text = MARKS.get(cell and cell["backends"].get(OURS, {}).get("status"), "")
        ax.text(j, i, text, ha="center", va="center", fontsize=6)
        if cell and cell["behind"]:
            ax.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", lw=0, ec="0.35")
            )
    cmap = plt.get_cmap("RdYlGn").with_extremes(bad="lightgrey")  # bad: NaN, no ratio
    image = ax.imshow(
        values, cmap=cmap, norm=LogNorm(vmin=1 / span, vmax=span), origin="lower", aspect="auto"
    )
    ax.set_xticks(range(len(ns)), [str(n) for n in ns], rotation=90, fontsize=7)
    ax.set_yticks(range(len(ms)), [str(m) for m in ms], fontsize=7)
    ax.set_xlabel("N", fontsize=8)
    ax.set_ylabel("M", fontsize=8)
    return image


if __name__ == "__main__":
    print(
        "rmsnorm_bench.gridview: a library module of rmsnorm_bench.grid, not a tool",
        file=sys.stderr,
    )
    sys.exit(2)
