"""One round's cases measured in several fresh processes, one after another, samples pooled.

Run by measure_in_processes, each measuring process calls main(OUT) from the checkout's root.

A commit is measured in PROCESSES fresh processes, so that the spread between processes
enters the statistics (contract.PROCESSES). asv's rounds do that where the rounds of several
commits interleave (`asv continuous`, the self-test, a range): each round a setup_cache of its
own, then one small process per figure and case that reports it. Where one commit is measured
(scripts/run's default, `HEAD^!`), interleaving has nothing to interleave with, and those small
processes were what the rounds cost beyond measuring: on an H200 at 25ed384, 3,036 of them at
14 ms, 43 s of a 249 s asv run. There asvrun asks asv for one round and names the processes in
PROCESSES_VAR; the round's one setup_cache then runs them itself (measure_in_processes): each
a fresh interpreter that measures every case as a round's setup_cache does (measure_suites:
torch imported, every case validated, then sampled under the same contract), one after
another, nothing else on the GPU meanwhile. Their samples are pooled (pool) as asv pools its
rounds' samples: each figure's samples are the processes' samples, one process after the
other. So the figures asv records are the same samples from the same number of processes;
only asv's small processes run once instead of once per round.

A process that fails (exits non-zero, or is killed) fails the round, as a setup_cache that
fails does: every figure of the commit then fails, where asv's rounds would have kept the other
rounds' samples and said nothing. A case that fails in any process fails in the pooled result.
The processes end with the round: asv's timeout and Ctrl-C reach them (they share its process
group), a SIGTERM to the round ends the one measuring, and each ends with its parent (Linux).
No process starts once the asv that started the round has ended. Each process takes
the checkout's root off sys.path before anything imports rmsnorm_kernels, as the warm step
does, so that the package measured is the one installed in asv's environment.
"""

import os
import pickle
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ..lifetime import ended_with_parent, sigterm_raises
from .suite import Measurement, measure_suites

# how many processes each setup_cache measures in (asvrun sets it; unset or 1: in the
# setup_cache's own process, as asv's rounds have it)
PROCESSES_VAR = "RMSNORM_BENCH_PROCESSES"
ROOT = Path(__file__).resolve().parents[2]  # the checkout, where rmsnorm_bench was found
SAMPLED = ("time", "device_time", "device_time_cold", "public_ratio")
# every field of a Measurement, as _joined joins it (a test checks none is left out)
JOINED = (*SAMPLED, "public_ratio_skipped", "device_time_skipped", "peak_memory", "skipped",
          "failed", "seconds", "compile_cache")  # fmt: skip
# a measuring process (with -c, not -m: the instrument's package imports this module first)
CHILD = "import sys; from rmsnorm_bench.instrument.processes import main; sys.exit(main())"


def processes_per_round() -> int:
    """PROCESSES_VAR's count (1 where unset; ValueError for anything but a positive integer)."""
    text = os.environ.get(PROCESSES_VAR, "").strip()
    if not text:
        return 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{PROCESSES_VAR}={text!r}: give a whole number of processes, 1 or more")
    return int(text)


def measure_in_processes(count: int | None = None, log=None) -> dict:
    """measure_suites' result, measured in `count` fresh processes one after another
    (default: processes_per_round()) and pooled; in this process where `count` is 1."""
    count = processes_per_round() if count is None else count
    if count <= 1:
        return measure_suites(log=log)
    runs, starter = [], os.getppid()  # asv, which started this round
    # a SIGTERM ends the measuring process and removes the folder on the way out
    exit_ = lambda: SystemExit(128 + signal.SIGTERM)  # noqa: E731
    with sigterm_raises(exit_), tempfile.TemporaryDirectory(prefix="rmsnorm-bench-") as folder:
        for i in range(count):
            if os.getppid() != starter:
                raise RuntimeError("the asv run that started this round has ended")
            out = Path(folder) / f"{i}.pickle"
            if log:
                log(f"measuring process {i + 1} of {count}")
            proc = subprocess.run([sys.executable, "-c", CHILD, str(out)], cwd=ROOT,
                                  **ended_with_parent(signal.SIGKILL))  # fmt: skip
            if proc.returncode != 0 or not out.is_file():
                raise RuntimeError(
                    f"measuring process {i + 1} of {count} ended with exit status "
                    f"{proc.returncode} and no results; the round is not measured"
                )
            runs.append(pickle.loads(out.read_bytes()))
    return pool(runs)


def pool(runs: list[dict]) -> dict:
    """One result of several processes' {(op, phase): {(case, backend): Measurement}}: per
    case, each sampled figure's samples one process after another, and the last process's
    peak memory, as asv keeps them from its rounds (it adds samples, and replaces a plain
    value); a failure in any process fails the case (its first reason, with the process
    named); a figure no process sampled keeps the first process's reason."""
    out = {}
    for i, run in enumerate(runs):
        for suite, cases in run.items():
            pooled = out.setdefault(suite, {})
            for key, m in cases.items():
                pooled[key] = m if key not in pooled else _joined(pooled[key], m, i + 1)
    return out


def _joined(a: Measurement, b: Measurement, number: int) -> Measurement:
    """`a` (the processes before) with process `number`'s `b` added."""
    joined = Measurement(failed=a.failed)
    if not a.failed and b.failed:
        joined.failed = f"in measuring process {number}: {b.failed}"
    # a case failed is reported as failed (the suites' setup reads `skipped` first)
    joined.skipped = None if joined.failed else a.skipped or b.skipped
    for name in SAMPLED:
        samples = (getattr(a, name) or []) + (getattr(b, name) or [])
        setattr(joined, name, samples or None)
    joined.public_ratio_skipped = None if joined.public_ratio else a.public_ratio_skipped
    joined.device_time_skipped = None if joined.device_time else a.device_time_skipped
    joined.peak_memory = b.peak_memory if b.peak_memory is not None else a.peak_memory
    names = {**a.seconds, **b.seconds}
    joined.seconds = {k: a.seconds.get(k, 0) + b.seconds.get(k, 0) for k in names}
    caches = [c for c in (a.compile_cache, b.compile_cache) if c is not None]
    joined.compile_cache = (
        {k: sum(c.get(k, 0) for c in caches) for k in {k for c in caches for k in c}}
        if caches else None
    )  # fmt: skip
    return joined


def main(argv=None) -> int:
    """One measuring process: measure_suites' result pickled to OUT, the one argument."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: main(['OUT']): run by measure_in_processes", file=sys.stderr)
        return 2
    # the checkout's rmsnorm_kernels must not shadow the one installed in asv's environment
    sys.path[:] = [d for d in sys.path if Path(d or ".").resolve() != ROOT]
    results = measure_suites(log=lambda text: print(text, file=sys.stderr, flush=True))
    Path(args[0]).write_bytes(pickle.dumps(results))
    return 0
