"""The report's headline (`report --headline`): one compact Markdown table of a results file.

Per op and case: the device time of ours and of the peers most users compare against (and of
quack or FlyDSL where the run measured them), ours as a share of the copy ceiling, and the
public call's Torch/ours; above it, one line naming the machine, GPU, commit, date and
versions the figures come from. README's table is this output.
"""

import sys
from datetime import datetime, timezone

from .asvfiles import figures
from .instrument import Shape, ideal_bytes
from .report import (
    COPY_CEILING_GBPS,
    RATIO,
    SUITES,
    fail,
    markdown,
    percent_of_ceiling,
    ratio_text,
    us,
)

# a decode row (one token: host time decides), a mid-size batch, and the largest default
# shape (bandwidth decides): three points of the default matrix that every GPU run measures
CASES = ("1x4096-bf16", "4096x4096-bf16", "32768x8192-bf16")
PEERS = ("torch", "torch_compile", "liger")
# peers installed apart (CUDA only, or ROCm only): a column where the run measured them
OPTIONAL_PEERS = ("quack", "flydsl")


def measured_cases(values) -> set[str]:
    """The cases some suite measured for ours (public or device time)."""
    kinds = (".track_time", ".track_device_time")
    return {p[0] for bench, p in values if bench.endswith(kinds) and p[1:] == ("triton",)}


def headline(run, cases=CASES, ceiling_gbps=None) -> str:
    """The headline of one results file: `cases` are labels (MxN-dtype), in the order wanted;
    `ceiling_gbps` the copy ceiling (None: n/a). A case ours did not measure is no row."""
    values = figures(run)
    # the interleaved same-process ratio (peer over ours) where the run has it, else the
    # quotient of the two public-time medians, which host drift between processes moves: one
    # method for the whole table, as its caption says (a case without the ratio: n/a)
    has_ratio = any(bench.endswith(f".{RATIO}") for bench, _ in values)
    device_time = ".track_device_time"
    measured = {p[1] for bench, p in values if bench.endswith(device_time) and p[0] in cases}
    peers = (*PEERS, *(p for p in OPTIONAL_PEERS if p in measured))
    head = ["op", "case", "triton (us)", *(f"{p} (us)" for p in peers)]
    head += ["triton % of copy", "public torch/triton"]
    rows = []
    for name, op, phase, cls in SUITES:

        def get(figure, case, backend, cls=cls):
            return values.get((f"bench_rmsnorm.{cls}.{figure}", (case, backend)))

        for case in cases:
            device = [get("track_device_time", case, b) for b in ("triton", *peers)]
            ours, torch = get("track_time", case, "triton"), get("track_time", case, "torch")
            if device[0] is None and ours is None:
                continue
            if has_ratio:
                ratio = get(RATIO, case, "torch")
            else:
                ratio = torch / ours if ours and torch else None
            nbytes = ideal_bytes(op, phase, Shape.from_label(case))
            share = percent_of_ceiling(nbytes, device[0], ceiling_gbps)
            rows.append([name, case, *(us(d) for d in device), share, ratio_text(ratio)])
    params = run["params"]
    date = datetime.fromtimestamp(run["date"] / 1000, timezone.utc).strftime("%Y-%m-%d")
    method = (
        f"{RATIO} (ours and torch interleaved in one process)"
        if has_ratio
        else "the quotient of the two track_time medians"
    )
    against = f"{ceiling_gbps:,.0f} GB/s" if ceiling_gbps else "none known"
    caption = (
        f"{params.get('machine')} ({params.get('gpu', '?')}), commit {run['commit_hash'][:8]} "
        f"({date}), torch {params.get('torch', '?')}, triton {params.get('triton', '?')}. "
        "Device time: the call replayed from a CUDA graph, median of every sample; % of copy: "
        f"ideal bytes per device time against the copy ceiling ({against}); public "
        f"torch/triton: {method}, above 1 where ours is faster."
    )
    return f"{caption}\n\n{markdown(head, rows)}"


def print_headline(run, cases: str | None, ceiling_gbps=None):
    """Print the headline of `run`; `cases` as --cases gives them (None: CASES), each one
    that ours did not measure there refused (exit 2)."""
    wanted = [c.strip() for c in cases.split(",") if c.strip()] if cases is not None else CASES
    if twice := sorted({c for c in wanted if wanted.count(c) > 1}):
        fail(f"report: --cases {', '.join(twice)}: given twice; name each case once")
    measured = measured_cases(figures(run))
    missing = [c for c in wanted if c not in measured]
    if missing or not wanted:
        fail(
            f"report: --cases {', '.join(missing) or '(none given)'}: not measured for triton "
            f"at commit {run['commit_hash'][:8]} on {run['params'].get('machine')} "
            f"(measured: {', '.join(sorted(measured)) or 'nothing'})"
        )
    ceiling = ceiling_gbps or COPY_CEILING_GBPS.get(run["params"].get("machine"))
    print(headline(run, wanted, ceiling))


if __name__ == "__main__":
    print(
        "rmsnorm_bench.headline: a library module of rmsnorm_bench.report, not a tool; "
        "python -m rmsnorm_bench.report --headline prints README's table",
        file=sys.stderr,
    )
    sys.exit(2)
