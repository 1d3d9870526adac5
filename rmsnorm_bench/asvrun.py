"""Run asv (`run` or `continuous`) so that nothing stored is lost and nothing wrong recorded.

usage: python -m rmsnorm_bench.asvrun --machine NAME [--conf FILE] [--no-wait]
                                      [--record | --record-to FILE] [--started-at T]
                                      [--fresh-venv] [--uncommitted] -- ASV_COMMAND...

What scripts/run and scripts/compare call once they have set up the environment:

- The options are checked first (RMSNORM_BENCH_BACKENDS, RMSNORM_BENCH_SHAPES,
  RMSNORM_BWD_BENCH_SHAPES, the machine name, asv's arguments as asv parses them, each -b
  regular expression, and the commits: a range git does not know, or one that selects no
  commit): a bad one stops here, exit status 2. All but the machine's name are checked by
  rmsnorm_bench.asvargs.
- One run at a time per asv environment and per machine: a lock in .asv/ (flock, held by
  this process and by asv, released when both have ended, however they end; asv is ended
  when this process ends, even by kill -9). A second run waits for the first, saying so, or
  with --no-wait refuses (exit 2). Runs on two GPUs of one host (--gpu) have their own
  environment and machine name, so they go side by side. The results folder's lock
  (rmsnorm_bench.locks) is held shared: merge, store and publish wait for the run to end.
- A read-only results folder is found before asv runs, and a copy that cannot be made (a
  full disk) stops the run there: named, exit 2, nothing changed. Every file is written
  whole or not at all (rmsnorm_bench.atomic).
- results/<machine>/ and results/benchmarks.json are copied before asv runs and merged back
  after (rmsnorm_bench.store): a figure the run did not measure keeps its stored value, one
  it re-measured is replaced and named. A run that measured nothing exits non-zero and
  changes no file; one with overridden shapes or backends leaves benchmarks.json as it was.
- Each measured case's line (the progress log, .asv/progress-<machine>.log) is shown as it
  comes, and where the time went is summed up at the end; each case's phases and each
  benchmark process's seconds go to .asv/times-<machine>.jsonl.
- --record writes the run's record (rmsnorm_bench.runrecord: where the time went, as JSON)
  to docs/runs/<machine>-<commit8>.json (.asv/runs/ in the CPU smoke mode, whose records
  are not kept in the docs), a new name (-2, ...) where that one is taken;
  --record-to FILE to that file, refused (exit 2) before anything runs where it exists.
  --started-at (seconds since the epoch) is when the caller's set-up began (scripts/run's
  start), --fresh-venv that it made .venv.

- A working tree that differs from HEAD in what measures (benchmarks/, the instrument,
  asv.conf.json) or is measured (the package) is refused before anything runs, the files
  named (exit 2; rmsnorm_bench.provenance): figures stored under a commit's hash come from
  that commit's code. --uncommitted measures anyway, into .asv/uncommitted/results/ (never
  results/: neither the gate's history nor the dashboard holds such figures), with no record.
  A committed instrument whose fingerprint is not the one benchmarks/method.json declares
  for the suites' method (the asv version) is refused too (instrument/fingerprint.py).

`asv find` runs under the environment's lock only, with --skip-save: it measures the commits
it bisects in one process each, without samples, which must not replace stored figures.

Exit status: asv's (1: `asv continuous` found a regression; 2: a case failed), 2 for bad
options or a run that measured nothing, 130 when interrupted (what was measured is kept).
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import (
    ROOT,
    argument_parser,
    asvargs,
    asvfiles,
    atomic,
    instrument,
    lifetime,
    machine,
    progress,
    provenance,
    runrecord,
    store,
    user_path,
)
from .instrument import fingerprint
from .locks import Busy, Locks, results_lock


def say(text: str) -> None:
    print(f"run: {text}", file=sys.stderr, flush=True)


class Follow(threading.Thread):
    """Shows the lines appended to a file until stopped (the progress log)."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.path, self.offset, self.done = path, 0, threading.Event()

    def show(self):
        try:
            with open(self.path) as f:
                f.seek(self.offset)
                text = f.read()
        except OSError:
            return
        end = text.rfind("\n") + 1
        if end:
            sys.stderr.write(text[:end])
            sys.stderr.flush()
            self.offset += len(text[:end].encode())

    def run(self):
        while not self.done.wait(0.5):
            self.show()

    def stop(self):
        self.done.set()
        self.join()
        self.show()


def session_members(sid: int) -> list[int]:
    """The processes of session `sid` (Linux's /proc; none found elsewhere)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if len(fields) > 3 and fields[3] == str(sid):
            members.append(int(stat.parent.name))
    return members


def run_asv(command: list[str], env: dict, hold: list[int] = ()) -> int:
    """asv in a child process group of its own (asv and the benchmark servers it starts);
    Ctrl-C or SIGTERM here ends the whole group, and what asv stored is then settled like any
    run's. Nothing of the group outlives this call. asv is given the file descriptors `hold`
    (the run's locks: held while asv lives, even should this process be killed), and is
    ended when this process ends, however it ends (Linux). Its exit status: asv's, or 128 +
    the signal that ended it."""
    # SIGTERM when this process ends: asv never runs on after the one holding its results' copy
    ended = lifetime.ended_with_parent(signal.SIGTERM)
    proc = subprocess.Popen(command, env=env, start_new_session=True, pass_fds=tuple(hold),
                            **ended)  # fmt: skip

    def signal_group(signum):  # asv's session: its benchmark servers have groups of their own
        # asv itself only while it has not been waited for (its pid is then free for reuse;
        # a session's id stays taken while any of its processes lives)
        leader = [proc.pid] if proc.returncode is None else []
        for pid in leader + [p for p in session_members(proc.pid) if p != proc.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)

    main = threading.current_thread() is threading.main_thread()  # where signals are handled
    previous = main and signal.signal(
        signal.SIGTERM, lambda signum, frame: signal_group(signal.SIGTERM)
    )
    try:
        status = proc.wait()
        return 128 - status if status < 0 else status
    except KeyboardInterrupt:
        say("interrupted: waiting for asv to stop, then keeping what it measured")
        try:
            signal_group(signal.SIGINT)
            proc.wait(timeout=30)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            signal_group(signal.SIGKILL)
            proc.wait()
        return 130
    finally:
        signal_group(signal.SIGTERM)  # a benchmark server asv left behind
        if main:
            signal.signal(signal.SIGTERM, previous)


def run_guarded(
    command: list[str],
    machine: str,
    results: Path,
    state: Path,
    env_dir: str = ".asv/env",
    wait: bool = True,
    env: dict | None = None,
    keep_in: Path | None = None,
    recorder: runrecord.Recorder | None = None,
) -> int:
    """Run `command` (asv) under the locks (in `state`), with results/ kept (in `keep_in`,
    default `state`: one place per results folder, so that a run killed before it settled is
    settled into its own results) and settled around it; `recorder` is told how it went, and
    writes the run's record at the end."""
    env = dict(os.environ if env is None else env)
    overridden = [var for var in asvargs.OVERRIDES if env.get(var)]
    env_lock = f"lock-{Path(env_dir).name}"
    asked = time.time()
    with (
        Locks(state, [env_lock, f"lock-results-{machine}"], wait=wait) as locks,
        results_lock(results, wait=wait, shared=True) as shared,  # no merge, store, publish
    ):
        copy = (keep_in or state) / f"kept-{machine}"
        if copy.is_dir():  # a run killed before it could settle: its copy is merged now
            left = store.settle(results, machine, copy)
            say(f"a killed run's results settled: {left.measured} figure(s) added")
        if (results / machine).is_dir():  # what is stored is readable, before asv measures
            try:
                asvfiles.load_runs(results / machine)
            except asvfiles.BadFile as e:
                raise asvfiles.BadFile(f"{e}; nothing ran (fix or remove that file)") from None
        for folder in (results, results / machine):  # a read-only one: found before asv runs
            atomic.check_writable(folder, "nothing ran")
        store.keep(results, machine, copy)
        log = (keep_in or state) / f"progress-{machine}.log"
        times = (keep_in or state) / f"times-{machine}.jsonl"  # each case's phases, as JSON
        for path in (log, times):
            try:
                path.write_text("")
            except OSError as e:
                shutil.rmtree(copy, ignore_errors=True)  # nothing ran: the copy is not needed
                raise atomic.WriteFailed(path, e, "starting") from None
        env[progress.VAR] = str(log)
        env[progress.TIMES_VAR] = str(times)
        follow = Follow(log)
        follow.start()
        if recorder:
            recorder.before_asv(env, waited=time.time() - asked)
        start = time.monotonic()
        status = None
        try:
            status = run_asv(command, env, hold=locks.fds() + shared.fds())
        finally:
            follow.stop()
            if recorder:
                recorder.after_asv(results / machine, copy / "machine")
            # stopped by a signal (or not started): its figures hold fewer samples than asked
            stopped = status is None or status >= 128
            outcome = store.settle(
                results, machine, copy, keep_benchmarks=bool(overridden), interrupted=stopped
            )
        say(f"finished in {time.monotonic() - start:.0f} s (asv exit status {status})")
        for line in progress.summary(log.read_text().splitlines()).splitlines():
            say(line)
    for line in outcome.lines:
        say(line)
    if overridden and outcome.measured:
        say(f"{', '.join(overridden)} set: results/benchmarks.json left as it was")
    if not outcome.measured:
        say(
            "nothing measured (every case skipped or failed, or asv stopped first): "
            "no stored result or tracked file changed"
        )
        # 2, never asv's 1 (a regression: no figure was compared); a signal's status stays
        return status if status >= 128 else 2
    say(f"{outcome.measured} figure(s) stored, {outcome.kept} stored figure(s) kept")
    if recorder:
        try:
            write_record(recorder, progress.read_times(times), status, results / "benchmarks.json")
        except (
            OSError,
            ValueError,
            KeyError,
            TypeError,
            asvfiles.BadFile,
            atomic.WriteFailed,
        ) as e:
            # the results are stored; only the record of where the time went is missing
            say(f"record not written ({type(e).__name__}: {e}); the results are stored")
    return status


def write_record(recorder, times: list, status: int, benchmarks_file: Path) -> None:
    try:
        benchmarks = asvfiles.read_json(benchmarks_file)
    except asvfiles.BadFile:
        benchmarks = {}  # the suites' set-up durations go unnamed
    record = recorder.record(times, status, benchmarks if isinstance(benchmarks, dict) else {})
    if record is None:
        say("no record written: asv wrote no results file")
        return
    path = recorder.write(record)
    s = record["seconds"]
    say(f"record: {path} ({s['total']} s in all, {s['setup']} s set-up, {s['asv']} s in asv)")


def record_problem(args, asv_args: list[str]) -> str | None:
    """Why the record asked for cannot be written, found before anything runs; or None."""
    if asv_args[0] == "find":
        return "--record: asv find stores nothing, there is no run to record"
    if args.record_to and (args.record_to.exists() or args.record_to.is_symlink()):
        return f"--record {args.record_to}: exists; a record is never replaced, name a new file"
    if args.record_to and not args.record_to.absolute().parent.is_dir():
        return f"--record {args.record_to}: {args.record_to.parent} is not a folder"
    if args.started_at is not None and not 0 < args.started_at <= time.time() + 1:
        return f"--started-at {args.started_at}: not a time before now (seconds since the epoch)"
    return None


def main(argv=None) -> int:
    # Ctrl-C handled (and passed on to asv) also where a shell started this in the background,
    # which leaves SIGINT ignored (scripts/run does, to pass a SIGTERM on)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--machine", required=True, help="the machine's name (asv's --machine)")
    ap.add_argument("--conf", type=Path, default=ROOT / "asv.conf.json", help="asv's config")
    ap.add_argument("--no-wait", action="store_true", help="refuse if another run is on")
    ap.add_argument("--record", action="store_true", help="write the run's record (docs/runs/)")
    ap.add_argument("--record-to", type=user_path, metavar="FILE",
                    help="write it to FILE (a new one)")  # fmt: skip
    ap.add_argument("--started-at", type=float, metavar="T", help="when the set-up began (epoch)")
    ap.add_argument("--fresh-venv", action="store_true", help="the caller made .venv")
    ap.add_argument("--uncommitted", action="store_true",
                    help="measure a working tree that differs from HEAD; store apart")  # fmt: skip
    ap.add_argument("asv", nargs="+", metavar="ASV_COMMAND", help="run|continuous|find ARGS...")
    args = ap.parse_args(argv)
    if not machine.NAME.fullmatch(args.machine):
        ap.exit(2, f"run: machine name {machine.shown(args.machine)}: {machine.NAME_RULE}\n")
    base = args.conf.resolve().parent
    try:
        asvargs.check_options()
        asvargs.check_affinity(args.asv)
        conf = asvfiles.read_conf(args.conf)
        repo = base / conf.get("repo", ".")
        asv_args, per_round = asvargs.pooled_rounds(asvargs.measured_only(args.asv), repo)
        asv_args = asvargs.with_rounds(asv_args)
        asvargs.check_asv_args(asv_args, repo)
    except (ValueError, OSError) as e:
        ap.exit(2, f"run: {e}\n")
    # the processes each round's setup_cache measures in (instrument.processes), named for
    # every run, so that none inherits another's
    env = {**os.environ, instrument.PROCESSES_VAR: str(per_round)}
    recorder = None
    if args.record or args.record_to:
        problem = record_problem(args, asv_args)
        if problem:
            ap.exit(2, f"run: {problem}\n")
        recorder = runrecord.Recorder(
            args.machine, asv_args, base / conf["env_dir"], path=args.record_to,
            started_at=args.started_at or time.time(), fresh_venv=args.fresh_venv,
            per_round=per_round,
            folder=runrecord.default_folder(instrument.DEVICE),
        )  # fmt: skip
    try:
        changed = provenance.changed_files(repo)
    except provenance.NotAGitCheckout as e:
        ap.exit(2, f"run: {e}\n")
    stores = asv_args[0] != "find"  # asv find stores nothing (--skip-save below)
    if changed and stores and not args.uncommitted:
        ap.exit(2, provenance.refusal(changed, "run") + "\n")
    if stores and not args.uncommitted and (problem := fingerprint.undeclared(repo)):
        ap.exit(2, f"run: refused: {problem}\n")  # figures under a method not declared
    if changed and not stores:
        shown = ", ".join(changed)
        say(f"the working tree differs from HEAD in {shown}: asv find stores nothing, but it "
            "measures with the working tree's instrument")  # fmt: skip
    if asv_args[0] == "find":  # a search: one process per commit, no samples; not stored
        asv_args = [*asv_args, *(["--skip-save"] if "--skip-save" not in asv_args else [])]
    results, keep_in, scratch = base / conf["results_dir"], None, None
    if args.uncommitted and stores:  # measured anyway, stored apart (rmsnorm_bench.provenance)
        scratch = provenance.scratch_conf(args.conf, args.machine)
        asv_args = with_config(asv_args, scratch)
        results, keep_in, recorder = (
            provenance.UNCOMMITTED / "results",
            provenance.UNCOMMITTED,
            None,
        )
        say(f"--uncommitted: figures stored in {results}, never in results/ (no record)")
    command = [sys.executable, "-m", "asv", *asv_args]
    try:
        if asv_args[0] == "find":
            lock = f"lock-{Path(conf['env_dir']).name}"
            with Locks(base / ".asv", [lock], wait=not args.no_wait) as locks:
                return run_asv(command, env, hold=locks.fds())
        return run_guarded(
            command,
            args.machine,
            results,
            base / ".asv",
            conf["env_dir"],
            wait=not args.no_wait,
            env=env,
            keep_in=keep_in,
            recorder=recorder,
        )
    except Busy as e:
        ap.exit(2, f"run: refused, another run is on: {e}\n")
    except KeyboardInterrupt:
        ap.exit(130, "run: interrupted while waiting; nothing ran\n")
    except (asvfiles.BadFile, atomic.WriteFailed) as e:
        ap.exit(2, f"run: {e}\n")
    finally:
        if scratch is not None:
            scratch.unlink(missing_ok=True)


def with_config(asv_args: list[str], conf: Path) -> list[str]:
    """asv's arguments with their --config (scripts/run and compare give one) set to conf."""
    out = list(asv_args)
    for i, arg in enumerate(out):
        if arg == "--config" and i + 1 < len(out):
            out[i + 1] = str(conf)
            return out
        if arg.startswith("--config="):
            out[i] = f"--config={conf}"
            return out
    return [out[0], "--config", str(conf), *out[1:]]


if __name__ == "__main__":
    sys.exit(main())
