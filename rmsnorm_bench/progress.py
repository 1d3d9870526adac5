"""The progress log of a run: one line per measured case, and where the run's time went.

A suite measures all its cases in asv's set-up before asv prints anything about it, and asv
shows a set-up's output only when it fails; so each case appends its line to the file named by
RMSNORM_BENCH_PROGRESS as it finishes, scripts/run shows that file live, and at the end
`python -m rmsnorm_bench.progress LOG` sums it up: seconds per suite and backend, and the
slowest cases. The same facts, with each case's phases and each benchmark process's own
seconds, go as JSON lines to the file named by RMSNORM_BENCH_TIMES (the run's record,
rmsnorm_bench.runrecord, is made from it).
"""

import json
import os
import re
import sys
from pathlib import Path

from . import argument_parser

VAR = "RMSNORM_BENCH_PROGRESS"
TIMES_VAR = "RMSNORM_BENCH_TIMES"
LINE = re.compile(r"^\[(\S+) (\S+) \d+/\d+\] (\S+) (\S+): (\S+) \(([\d.]+) s\)$")


def line(op, phase, index, count, label, backend, status, seconds) -> str:
    """One case's line, e.g. `[rms_norm backward 3/11] 4096x4096-bf16 torch: ok (2.14 s)`:
    two decimals, so that the summary's sums over many short cases stay near the record's."""
    return f"[{op} {phase} {index}/{count}] {label} {backend}: {status} ({seconds:.2f} s)"


def record(text: str) -> None:
    """Append a line to the progress log, where RMSNORM_BENCH_PROGRESS names one. A line that
    cannot be written (a full disk) is lost, never the measurement that was logging it."""
    if os.environ.get(VAR):
        _append(os.environ[VAR], text + "\n")


def _append(path: str, text: str) -> None:
    try:
        with open(path, "a") as f:
            f.write(text)
    except OSError:
        pass  # the log and the times are what a run reports, not what it measures


def record_times(**facts) -> None:
    """Append one JSON line of facts (a case's, or a benchmark process's) to the file named by
    RMSNORM_BENCH_TIMES, where one is named."""
    if os.environ.get(TIMES_VAR):
        _append(os.environ[TIMES_VAR], json.dumps(facts) + "\n")


def read_times(path: Path) -> list[dict]:
    """The JSON lines of a times file; a line cut short (a process killed while writing) is
    left out."""
    out = []
    for text in path.read_text().splitlines() if path.is_file() else []:
        try:
            out.append(json.loads(text))
        except ValueError:
            continue
    return out


def summary(lines, top=8) -> str:
    """Where a run's time went, from its progress lines (other lines are ignored): seconds
    per suite and backend, and the slowest cases."""
    cases = [m.groups() for m in map(LINE.match, lines) if m]
    if not cases:
        return "no cases measured"
    totals = {}
    for op, phase, _, backend, status, sec in cases:
        if status != "skipped":
            totals[(op, phase, backend)] = totals.get((op, phase, backend), 0.0) + float(sec)
    skipped = sum(c[4] == "skipped" for c in cases)
    out = [f"{sum(float(c[5]) for c in cases):.0f} s in {len(cases)} cases ({skipped} skipped)"]
    out.append("by suite and backend (cases not skipped):")
    out += [f"  {op} {ph} {b}: {t:.1f} s" for (op, ph, b), t in totals.items()]
    out.append("slowest cases:")
    slowest = sorted(cases, key=lambda c: -float(c[5]))[:top]
    out += [f"  {op} {ph} {label} {b}: {sec} s ({st})" for op, ph, label, b, st, sec in slowest]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("log", type=Path, help="a progress log (.asv/progress-<machine>.log)")
    ap.add_argument("--top", type=int, default=8, help="how many of the slowest cases to name")
    args = ap.parse_args(argv)
    try:
        lines = args.log.read_text().splitlines()
    except OSError as e:
        ap.exit(2, f"progress: cannot read {args.log}: {e}\n")
    print(summary(lines, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
