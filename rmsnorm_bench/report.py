"""The seed's table (op, shape, dtype, Triton us, Torch us, Torch/Triton) from asv results.

usage: python -m rmsnorm_bench.report [--machine NAME] [--commit SHA] [--out DIR] [--no-plot]
                                      [--html] [--copy-ceiling GB/s] [--headline [--cases ...]]

Reads results/<machine>/ (default: the machine with the newest results), takes the newest
commit there (or --commit), and prints two Markdown tables of every case of the four suites:
the public-call time of Triton and of each peer with Torch/Triton (the seed's table; Triton's
and Torch's device-only times beside it), then the device-only time of every backend, with
Triton's bandwidth over ideal bytes and every backend's percentage of the copy ceiling. With
--out it also writes report.md and report.png (the public-call ratios) there, and one
picture per op (<op>.png: public-call time, device time and % of the copy ceiling of every
backend that ran, across the cases); --html adds index.html, the tables and pictures as one
page (publish writes one for each machine's newest commit into the dashboard). --out is
refused where it is a file, or is or lies in html/, results/ or --results (what is recorded);
--html without --out is refused (--no-plot is then the default: no plots are drawn).

The copy ceiling is what a plain copy reaches on the machine, in GB/s of bytes read +
written; a backend's percentage is its ideal bytes (instrument.ideal_bytes) per device time
against it. --copy-ceiling gives it; by default it is COPY_CEILING_GBPS's value for the
machine, and where none is known the percentages are n/a.

--headline prints only the compact table README shows (rmsnorm_bench.headline): per op and
case (--cases, default 1x4096, 4096x4096 and 32768x8192 bf16), the device time of ours,
torch, torch.compile and Liger-Kernel, ours as % of the copy ceiling and the public call's
torch/triton, under a line naming the machine, commit and versions. A case of --cases that
ours did not measure there is refused (exit 2).
"""

import html
import math
import sys
from pathlib import Path

from . import ROOT, argument_parser, atomic, machine_name, revision
from .asvfiles import BadCommit, BadFile, clone_lacks, figures, load_runs, pick_commit
from .instrument import Shape, ideal_bytes

SUITES = [
    ("rmsnorm_fwd", "rms_norm", "forward", "RMSNormForward"),
    ("rmsnorm_bwd", "rms_norm", "backward", "RMSNormBackward"),
    ("fused_add_fwd", "fused_add", "forward", "FusedAddRMSNormForward"),
    ("fused_add_bwd", "fused_add", "backward", "FusedAddRMSNormBackward"),
]
PEERS = ["torch", "torch_compile", "liger", "quack", "flydsl"]
# Copy ceilings (GB/s, bytes read + written) by machine name. nvidia-h200: `b.copy_(a)` of
# 1 GiB reached about 4,200 GB/s (shared/anchors/h200-peers.md; `copy_ceiling` gives 4,250).
COPY_CEILING_GBPS = {"nvidia-h200": 4200.0}


def load(machine: str | None, commit: str | None, base: Path = ROOT / "results"):
    machines = [p for p in base.iterdir() if p.is_dir()] if base.is_dir() else []
    if machine:
        machines = [p for p in machines if p.name == machine]
        if not machines:
            fail(f"report: no results for machine {machine!r} under {base}")
    try:
        runs = [run for p in machines for run in load_runs(p)]
    except BadFile as e:
        fail(f"report: {e}")
    if commit:
        try:
            full = pick_commit(commit, [r["commit_hash"] for r in runs], "--commit", base)
        except BadCommit as e:
            fail(f"report: {e}")
        runs = [r for r in runs if r["commit_hash"] == full]
    if not runs:
        fail(f"report: no results under {base}")
    return max(runs, key=lambda r: (r["date"], r["commit_hash"]))


# the copy ceilings --copy-ceiling takes (GB/s): a CPU's few GB/s up to far past any GPU's
# memory (an H200's is about 4,200); a value outside is another unit or a typo, whose
# percentages (1e-300: numbers of 300 digits) mean nothing
CEILING_RANGE = (0.01, 1e6)


def fail(message: str):
    """Bad input (no such machine or commit, an unusable results file): exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


def bench_figures(values, bench):
    """{(case, backend): value} of one benchmark; None where skipped or failed."""
    return {params: v for (name, params), v in values.items() if name == bench}


RATIO = "track_public_ratio"  # torch's public time over ours, interleaved in one process

# the seed's columns, then what each table adds
HEAD = ["op", "shape", "dtype", "Triton (us)", "Torch (us)", "Torch/Triton"]


def us(seconds) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e6:.1f}"


def ratio_text(ratio) -> str:
    """A ratio as the seed's table shows it (two decimals), with two digits where that would
    show 0.00x; n/a for none."""
    if not ratio:
        return "n/a"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def seed_row(name: str, shape: Shape, ours, theirs, ratio=None) -> list[str]:
    """The seed's cells of one case: Torch/Triton above 1 means ours is faster; `ratio`, where
    given, is the interleaved one (track_public_ratio), else the quotient of the two times."""
    if ratio is None:
        ratio = theirs / ours if ours and theirs else None
    return [name, f"{shape.m}x{shape.n}", shape.dtype, us(ours), us(theirs), ratio_text(ratio)]


def markdown(head, rows) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def seed_table(rows, markdown_table=False) -> str:
    """The seed PR's table of measured rows: (op name, Shape, ours seconds, torch seconds).
    Tab-separated, or Markdown."""
    cells = [seed_row(*row) for row in rows]
    if markdown_table:
        return markdown(HEAD, cells)
    return "\n".join("\t".join(c) for c in [HEAD, *cells])


def percent_of_ceiling(nbytes, seconds, ceiling_gbps) -> str:
    """Bandwidth over ideal bytes as a percentage of the copy ceiling; n/a without either."""
    if not seconds or not ceiling_gbps:
        return "n/a"
    share = nbytes / seconds / 1e9 / ceiling_gbps * 100
    return f"{share:.0f}%" if share >= 1 else f"{share:.1f}%" if share >= 0.1 else "<0.1%"


def table(values, figure="track_time", ceiling_gbps=None):
    """The seed's columns for one figure of a run's values (asvfiles.figures): public-call
    time (track_time, the seed's table, with Triton's and Torch's device-only times beside
    it) or device-only time (track_device_time, with Triton's bandwidth over ideal bytes and
    each backend's percentage of the copy ceiling `ceiling_gbps`, n/a where it is None)."""
    device = figure == "track_device_time"
    head = HEAD + [f"{p} (us)" for p in PEERS[1:]]
    backends = ["triton", *PEERS]
    if device:
        head += ["Triton GB/s"] + [f"{b} % of copy" for b in backends]
    else:
        head += ["Triton device (us)", "Torch device (us)"]
    rows, plot = [], []
    for name, op, phase, cls in SUITES:
        times = bench_figures(values, f"bench_rmsnorm.{cls}.{figure}")
        device_times = bench_figures(values, f"bench_rmsnorm.{cls}.track_device_time")
        ratios = {} if device else bench_figures(values, f"bench_rmsnorm.{cls}.{RATIO}")
        # in the suite's order; a case no backend measured (a shape of another machine's
        # matrix: the parameter lists are the same everywhere) is no row
        cases = list(dict.fromkeys(case for (case, _), v in times.items() if v is not None))
        for case in cases:
            shape = Shape.from_label(case)
            ours, torch_t = times.get((case, "triton")), times.get((case, "torch"))
            ratio = ratios.get((case, "torch"))  # interleaved in one process, where measured
            row = seed_row(name, shape, ours, torch_t, ratio)
            row += [us(times.get((case, p))) for p in PEERS[1:]]
            if device:
                nbytes = ideal_bytes(op, phase, shape)
                row.append(f"{nbytes / ours / 1e9:.0f}" if ours else "n/a")
                row += [
                    percent_of_ceiling(nbytes, times.get((case, b)), ceiling_gbps) for b in backends
                ]
            else:
                row += [us(device_times.get((case, b))) for b in ("triton", "torch")]
            rows.append(row)
            if ratio or (ours and torch_t):
                plot.append((f"{name} {case}", ratio or torch_t / ours))
    return markdown(head, rows), plot


def draw(plot, title, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, ratios = zip(*plot, strict=True) if plot else ((), ())
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(labels) + 1.5))
    ax.barh(
        range(len(labels)), ratios, color=["tab:green" if r >= 1 else "tab:red" for r in ratios]
    )
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("Torch / Triton (public-call time; > 1: Triton is faster)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ops_figures(values):
    """{suite name: {"public"|"device": {(case, backend): seconds}}} of every case and backend
    that ran, for one picture per op."""
    out = {}
    for name, _, _, cls in SUITES:
        out[name] = {
            kind: {
                key: v
                for key, v in bench_figures(values, f"bench_rmsnorm.{cls}.{figure}").items()
                if v
            }
            for kind, figure in (("public", "track_time"), ("device", "track_device_time"))
        }
    return out


def draw_op(name, op, phase, times, ceiling_gbps, title, path):
    """One op's picture: public-call time, device time and (with a ceiling) % of the copy
    ceiling, each backend that ran against ours, across the cases."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for kind in times.values() for k in kind]
    cases = list(dict.fromkeys(case for case, _ in keys))
    backends = [b for b in ["triton", *PEERS] if any(b == kb for _, kb in keys)]
    panels = [("public", "public call (us, log)"), ("device", "device time (us, log)")]
    if ceiling_gbps:
        panels.append(("copy", f"% of copy ceiling ({ceiling_gbps:,.0f} GB/s)"))
    height = max(2.5, 0.16 * len(cases) * max(len(backends), 1) + 1.5)
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), height), sharey=True)
    width = 0.8 / max(len(backends), 1)
    for ax, (kind, label) in zip(axes, panels, strict=True):
        for i, backend in enumerate(backends):
            ys, xs = [], []
            for j, case in enumerate(cases):
                if kind == "copy":
                    t = times["device"].get((case, backend))
                    nbytes = ideal_bytes(op, phase, Shape.from_label(case))
                    x = nbytes / t / 1e9 / ceiling_gbps * 100 if t else None
                else:
                    t = times[kind].get((case, backend))
                    x = t * 1e6 if t else None
                if x is not None:
                    ys.append(j + (i - (len(backends) - 1) / 2) * width)
                    xs.append(x)
            ax.barh(ys, xs, height=width, label=backend, color=f"C{i}")
        if kind != "copy":
            ax.set_xscale("log")
        else:
            ax.axvline(100, color="black", linewidth=0.8)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(cases)), cases, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle(f"{name}: {title}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def render_html(md: str, title: str, images: list[str]) -> str:
    """This report's Markdown (paragraphs and tables only) as a page of its own, with
    `images` (paths beside it) below the tables."""
    blocks = []
    for block in md.split("\n\n"):
        lines = block.strip().splitlines()
        if lines and all(line.startswith("|") for line in lines):
            cells = [[html.escape(c.strip()) for c in line.strip("|").split("|")] for line in lines]
            head = "".join(f"<th>{c}</th>" for c in cells[0])
            body = "".join(
                "<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in cells[2:]
            )
            blocks.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif lines:
            blocks.append(f"<p>{html.escape(' '.join(lines))}</p>")
    figures = "".join(
        f'<p><a href="{html.escape(i)}"><img src="{html.escape(i)}" alt="{html.escape(i)}"></a></p>'
        for i in images
    )
    style = (
        "body{font-family:sans-serif;margin:1.5em;font-size:14px}"
        "table{border-collapse:collapse;margin:1em 0;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}img{max-width:100%}"
    )
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
        + "\n".join(blocks)
        + f"\n<h2>Per op</h2>\n{figures}\n</body></html>\n"
    )


def describe(run, ceiling_gbps=None):
    """(title, Markdown text, plot of public-call ratios, per-op figures) of one results
    file; the copy ceiling defaults to the machine's in COPY_CEILING_GBPS."""
    params = run["params"]
    ceiling = ceiling_gbps or COPY_CEILING_GBPS.get(params.get("machine"))
    title = (
        f"{params.get('machine')} ({params.get('gpu', '?')}), commit {run['commit_hash'][:8]}, "
        f"torch {params.get('torch', '?')}, triton {params.get('triton', '?')}"
    )
    values = figures(run, measured_only=False)
    public, plot = table(values)
    device, _ = table(values, "track_device_time", ceiling)
    against = f"{ceiling:,.0f} GB/s" if ceiling else "none known: --copy-ceiling GB/s"
    md = (
        f"{title}\n\nPublic call (the seed's contract: autograd call, 100 back-to-back calls "
        f"between CUDA events; median of the samples of every process; Torch/Triton: "
        f"{RATIO}, ours and torch interleaved in one process, where it was measured, else "
        f"the quotient of the two medians):\n\n{public}\n\n"
        f"Device only (the same call replayed from a CUDA graph: no host time; "
        f"% of copy: ideal bytes per device time against the copy ceiling, {against}):"
        f"\n\n{device}"
    )
    return title, md, plot, ops_figures(values), ceiling


def write(run, out: Path, ceiling_gbps=None, plot=True, page=False, intro="") -> list[Path]:
    """report.md (and with `plot` report.png and one picture per op, with `page` an
    index.html of them all, `intro` an HTML paragraph above) of one results file in `out`;
    returns the files written."""
    title, md, ratios, ops, ceiling = describe(run, ceiling_gbps)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "report.md"]
    images = []
    if plot:
        draw(ratios, title, out / "report.png")
        for name, op, phase, _ in SUITES:
            if any(ops[name].values()):
                draw_op(name, op, phase, ops[name], ceiling, title, out / f"{name}.png")
                images.append(f"{name}.png")
        written += [out / "report.png", *(out / i for i in images)]
    ops_md = "".join(f"\n\n![{i}]({i})" for i in images)
    atomic.write_text(out / "report.md", f"{md}{ops_md}\n")
    if page:
        text = render_html(md, title, [*images, "report.png"] if plot else [])
        atomic.write_text(out / "index.html", text.replace("<body>\n", f"<body>\n{intro}\n", 1))
        written.append(out / "index.html")
    return written


# the repository's folders of what is recorded: the published dashboard and the results
RECORDED = ("html", "results")
# beside those, what a report must not be written into: the runs' records, the grid's file
REPORT_RECORDED = (*RECORDED, "docs/runs", "docs/grid")


def out_problem(out: Path, results: Path, recorded=RECORDED) -> str | None:
    """Why --out `out` cannot take the report, or None: a path that exists and is no folder,
    or a folder of what is recorded (`recorded` under the repository, the results read), or
    one inside it, whose files (html/index.html: the dashboard's page) it would overwrite."""
    if out.exists() and not out.is_dir():
        return f"--out {out}: exists and is not a folder"
    where = out.resolve()
    folders = [(f"the repository's {name}/", ROOT / name) for name in recorded]
    for what, folder in [*folders, ("the results read (--results)", results)]:
        if where.is_relative_to(folder.resolve()):
            return (
                f"--out {out}: lies in {what} ({folder.resolve()}), which holds what is "
                "recorded; write the report elsewhere"
            )
    return None


def other_report(out: Path, run: dict) -> str | None:
    """What another run's report in `out` is of (its title), or None: a folder's report.md
    and pictures belong together, so a report of another machine or commit is not written
    over (one of the same run is: made again)."""
    try:
        title = (out / "report.md").read_text().splitlines()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    machine, commit = run["params"].get("machine"), run["commit_hash"][:8]
    return None if title.startswith(f"{machine} (") and f"commit {commit}," in title else title


def main(argv=None):
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument(
        "--machine", type=machine_name, help="default: the machine with the newest results"
    )
    ap.add_argument("--commit", type=revision, help="a commit hash or prefix; default: the newest")
    ap.add_argument("--out", type=Path, help="also write report.md and the plots there")
    ap.add_argument("--no-plot", action="store_true", help="with --out: no plots")
    ap.add_argument("--html", action="store_true", help="with --out: also an index.html")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    ap.add_argument(
        "--copy-ceiling",
        type=float,
        metavar="GB/s",
        help="the machine's copy bandwidth (bytes read + written), against which the device "
        "table gives each backend's percentage; default: the machine's in COPY_CEILING_GBPS "
        f"({', '.join(f'{m} {v:,.0f}' for m, v in COPY_CEILING_GBPS.items())}), else none",
    )
    ap.add_argument("--headline", action="store_true", help="print README's compact table only")
    ap.add_argument(
        "--cases", help="with --headline: comma-separated cases (MxN-dtype), e.g. 1x4096-bf16"
    )
    args = ap.parse_args(argv)
    if args.cases is not None and not args.headline:
        ap.error("--cases chooses the rows of --headline: give --headline")
    if args.headline and args.out:
        ap.error("--headline prints its table and writes no files: leave out --out")
    if args.html and not args.out:
        ap.error("--html writes index.html into --out DIR: give --out")
    if args.out and (problem := out_problem(args.out, args.results, REPORT_RECORDED)):
        ap.error(problem)
    if args.copy_ceiling is not None and not 0 < args.copy_ceiling < math.inf:
        ap.error(f"--copy-ceiling: expected GB/s above 0, got {args.copy_ceiling}")
    if (
        args.copy_ceiling is not None
        and not CEILING_RANGE[0] <= args.copy_ceiling <= CEILING_RANGE[1]
    ):
        low, high = CEILING_RANGE
        ap.error(f"--copy-ceiling: {args.copy_ceiling:g} GB/s is no copy bandwidth of a machine "
                 f"(from {low:g} to {high:,.0f} GB/s); is it in another unit?")  # fmt: skip
    run = load(args.machine, args.commit, args.results)
    if warning := clone_lacks(run["commit_hash"]):
        print(f"report: {warning}", file=sys.stderr)
    where = f"{run['params'].get('machine')}'s commit {run['commit_hash'][:8]}"
    if not figures(run):  # the gate says "nothing checked" (exit 2) of such a run too
        fail(f"report: {where} has no figure measured (every case skipped or failed)")
    if args.out and (other := other_report(args.out, run)):
        fail(f"report: --out {args.out} holds the report of {other}, not of {where}: write it "
             "into a new folder (or remove that one)")  # fmt: skip
    if args.headline:
        from .headline import print_headline

        return print_headline(run, args.cases, args.copy_ceiling)
    _, md, _, _, _ = describe(run, args.copy_ceiling)
    print(md)
    if args.out:
        try:
            written = write(run, args.out, args.copy_ceiling, not args.no_plot, args.html)
        except OSError as e:  # a part of the path that is a file, no permission, a full disk
            fail(f"report: cannot write into {args.out}: {atomic.cause(e)}")
        except atomic.WriteFailed as e:
            fail(f"report: {e}")
        print(f"\nreport: wrote {', '.join(str(w) for w in written)}")


if __name__ == "__main__":
    main()
