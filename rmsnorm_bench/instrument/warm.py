"""Compile before measuring: every case of a run validated once, in parallel processes.

usage: python -m rmsnorm_bench.instrument.warm [--workers N]

asv's install step (asv.conf.json's install_command) runs this in the benchmark environment,
once the commit's build is installed there. The first benchmark process on a machine with empty
kernel caches spends most of its time compiling, one kernel after another: our Triton variants,
torch.compile's graphs, Liger's kernels (on an H200 at 33dc0b7, 111 s against 69 and 72 for the
two processes after it). Here the same cases are made and validated as measure_phases makes
them, the (op, shape) pairs dealt out to --workers processes (default 4), so that the kernels
compile side by side into the caches the measuring processes read (TRITON_CACHE_DIR,
TORCHINDUCTOR_CACHE_DIR). It runs from the checkout's root, where rmsnorm_bench is, but takes
the root off sys.path before anything imports rmsnorm_kernels, so that the package warmed is
the one installed in the environment, as in benchmarks/; the workers are forked from a process
that has imported no torch. No figure is measured or stored, and every measuring process still
validates every case itself: a case that fails here fails there, with its reason. Nor is any
choice made here kept: inductor picks among a kernel's launch configs by timing them at its
first call, and keeps the winner beside the kernel (a `.best_config` file, which every later
process reads); timed while the other workers share the GPU, that choice may not be the one
the kernel would make alone. So once the workers are done, every such file in inductor's
cache is removed (those of earlier warm-ups cannot be told from those measuring processes
made alone), and the first measuring process times the configs again, alone (a few
milliseconds a kernel). It is skipped
(in well under a second, nothing imported) where it cannot pay: in the CPU smoke mode (the
interpreter compiles nothing), for fewer than MIN_PAIRS pairs (a narrowed run: the self-test, a
history), and where this same package source, matrix and backends were warmed before into these
caches (a stamp in the Triton cache names them: `asv continuous` installs each commit once per
round). Exit status 0 always, once the arguments parse: a failed warm-up leaves the measuring
to compile. What it did, and in how many seconds, goes to the run's times file
(RMSNORM_BENCH_TIMES, where one is named), from which the run's record lists it.
"""

import argparse
import getpass
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from .. import progress
from . import matrix
from .backends import Unavailable, make_backend
from .matrix import BACKENDS, OPS, Shape, shapes_for
from .problem import make_problem, reference, validate

# what a warm-up leaves behind; in the stamp, so that a new one is warmed again once. 2: no
# launch-config choice (before, inductor's choices made side by side were kept)
METHOD = 2
MIN_PAIRS = 8  # fewer (op, shape) pairs compile in less than the workers take to start
WORKERS = 4


def pairs() -> list[tuple[str, Shape]]:
    """Every (op, shape) a run measures, in measure_suites' order."""
    shapes = dict.fromkeys(s for phase in ("forward", "backward") for s in shapes_for(phase))
    return [(op, shape) for op in OPS for shape in shapes]


def stamp_path(todo: list) -> Path | None:
    """The stamp of a warm-up of this package source, matrix, backends and torch, in the
    Triton cache (None where no cache folder is named: nothing to stamp)."""
    cache = os.environ.get("TRITON_CACHE_DIR")
    if not cache:
        return None
    import importlib.util

    spec = importlib.util.find_spec("rmsnorm_kernels")
    h = hashlib.sha256()
    for folder in spec.submodule_search_locations if spec else []:
        for path in sorted(Path(folder).rglob("*")):
            if path.suffix in (".py", ".cpp") and path.is_file():
                h.update(path.name.encode() + path.read_bytes())
    facts = [[op, s.label] for op, s in todo], os.environ.get(matrix.BACKENDS_VAR, "")
    h.update(json.dumps([facts, sys.version, _versions(), METHOD]).encode())
    return Path(cache) / f"rmsnorm-bench-warm-{h.hexdigest()[:16]}.json"


def _versions() -> dict:
    """The installed versions of torch, Triton and the peers (read, not imported)."""
    from importlib import metadata

    found = {}
    for name in ("torch", "triton", "liger-kernel", "quack-kernels"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def inductor_cache() -> Path:
    """Inductor's cache folder as torch finds it, without importing torch:
    TORCHINDUCTOR_CACHE_DIR, else torch's default in the temporary folder."""
    if cache := os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return Path(cache)
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid_{os.getuid()}"
    return Path(tempfile.gettempdir()) / ("torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def forget_choices() -> int:
    """Remove every launch-config choice kept in inductor's cache; how many there were."""
    cache = inductor_cache()
    chosen = list(cache.rglob("*.best_config")) if cache.is_dir() else []
    for path in chosen:
        path.unlink(missing_ok=True)
    return len(chosen)


def warm(chunk: list) -> int:
    """Validate every backend of each (op, shape) of `chunk`; the number that validated."""
    import torch

    done = 0
    for op, shape in chunk:
        ours = {}
        for backend in BACKENDS:
            try:
                fn = make_backend(backend, op)
                p = make_problem(op, shape)
                ours.setdefault("reference", reference(p))
                validate(fn, p, ours["reference"])
                done += 1
            except Unavailable:
                pass
            except Exception as e:  # the measuring process reports it, with its case
                print(f"warm: {op} {shape.label} {backend}: {type(e).__name__}", file=sys.stderr)
            finally:
                p = fn = None
        del ours
        torch.cuda.empty_cache()
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="rmsnorm_bench.instrument.warm", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--workers", type=int, default=WORKERS, help=f"processes ({WORKERS})")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error(f"--workers must be at least 1, got {args.workers}")
    start = time.perf_counter()
    root = Path(__file__).resolve().parents[2]  # the checkout, where rmsnorm_bench was found
    sys.path[:] = [d for d in sys.path if Path(d or ".").resolve() != root]

    def told(text: str, **facts) -> int:
        """Say what the warm-up did, here and in the run's times file; exit status 0."""
        print(f"warm: {text}")
        seconds = round(time.perf_counter() - start, 2)
        try:
            progress.record_times(warm={"seconds": seconds, **facts})
        except OSError as e:  # the record lacks it; the install goes on
            print(f"warm: not written to the run's times file ({e})")
        return 0

    if matrix.DEVICE == "cpu":
        return told("skipped (the smoke mode)", skipped="the smoke mode")
    try:
        todo = pairs()
        stamp = stamp_path(todo)
    except (ValueError, OSError) as e:  # a bad override: the measuring process names it
        return told(f"skipped ({e})", skipped=str(e))
    if len(todo) < MIN_PAIRS or (stamp and stamp.is_file()):
        why = f"warmed before ({stamp.name})" if stamp and stamp.is_file() else f"{len(todo)} pairs"
        return told(f"skipped ({why})", skipped=why)
    workers = min(args.workers, len(todo))
    chunks = [todo[i::workers] for i in range(workers)]  # the large shapes spread out
    stopped = None
    try:
        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            done = sum(pool.map(warm, chunks))
    except Exception as e:  # a worker that died (out of memory ...): measuring compiles
        stopped, done = f"{type(e).__name__}: {e}", 0
    finally:
        forgotten = forget_choices()
    facts = {"workers": workers, "pairs": len(todo), "forgotten": forgotten}
    if stopped:
        text = f"stopped ({stopped}); the measuring processes compile"
        return told(text, stopped=stopped, **facts)
    seconds = time.perf_counter() - start
    if stamp and done:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps({"cases": done, "workers": workers, "seconds": seconds}))
    text = (f"{done} cases validated in {workers} processes, {seconds:.1f} s; "
            f"{forgotten} launch-config choices forgotten")  # fmt: skip
    return told(text, cases=done, **facts)


if __name__ == "__main__":
    sys.exit(main())
