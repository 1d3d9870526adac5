"""The record of one run: where its time went, as JSON (docs/runs/<machine>-<commit8>.json).

usage: python -m rmsnorm_bench.runrecord RECORD

scripts/run asks asvrun for it (`--record PATH`; by default docs/runs/<machine>-<commit8>.json
of the newest commit measured, with -2, -3 ... added where that name is taken: a record is
never replaced; a PATH given that exists is refused before anything runs). Written after a run
that stored results, from what the run itself saw: its clock, asv's results files (asv's
durations of each suite's set-up) and the instrument's timing file (RMSNORM_BENCH_TIMES: each
case's phases, each benchmark process's seconds). Its keys:

- ``seconds``: ``total`` (scripts/run's start to the results stored; publishing comes after),
  ``setup`` (before asv: scripts/setup and the machine's facts; in asv: its environment, the
  package's build and install and the suites' discovery, i.e. all before the first benchmark
  process, and the build of every later commit), ``asv`` (asv's own wall time),
  ``measuring`` (the suites' benchmark processes), ``asv_other`` (asv's time in neither: the
  figures' own small processes, writing results), ``waiting`` (for another run's lock);
- ``suites``: per suite, its processes' seconds, asv's duration of its last set-up (all 3
  processes where one round measured in them, processes_per_round), and per
  backend the seconds of its cases (skipped ones apart), their phases summed, and
  torch.compile's cache hits and misses; ``first_cases``: each process's first case measured,
  phase by phase, with the process's own start (where a fresh process's seconds go);
- ``warm``: each warm step asv ran in its install step (instrument/warm.py; for the first
  commit, part of the set-up before the first benchmark), in order: its ``seconds``, and the
  ``workers``, ``pairs``, ``cases`` validated and launch choices ``forgotten``, or why it was
  ``skipped`` or ``stopped``;
- ``processes`` (benchmark processes that measured), ``rounds`` (asv's),
  ``processes_per_round`` (one commit: its one round measured in 3 processes,
  instrument.processes); ``commit``, ``commits``;
  ``machine`` and its ``facts`` (asv's params); ``fresh``: what did not exist before the run
  (asv's environment, i.e. a fresh clone; .venv; the Triton and inductor caches; the
  bytecode cache of scripts/_cache.sh).

Run as a tool, prints where a record's time went. Exit status 2 for a file that is not one.
"""

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, argument_parser, atomic
from .asvfiles import BadFile, read_json, results_files

RUNS = ROOT / "docs" / "runs"
# the CPU smoke mode's records (CI makes one every run) are kept out of the tracked docs
SMOKE_RUNS = ROOT / ".asv" / "runs"


def default_folder(device: str) -> Path:
    return SMOKE_RUNS if device == "cpu" else RUNS


def default_path(machine: str, commit: str, folder: Path = RUNS) -> Path:
    """docs/runs/<machine>-<commit8>.json, or the first of -2, -3 ... not taken."""
    path, n = folder / f"{machine}-{commit[:8]}.json", 1
    while path.exists():
        n += 1
        path = folder / f"{machine}-{commit[:8]}-{n}.json"
    return path


def _empty(folder: str | None) -> bool | None:
    if not folder:
        return None
    path = Path(folder)
    return not path.is_dir() or not any(path.iterdir())


@dataclass
class Recorder:
    """What asvrun tells it as the run goes; `write` makes the record."""

    machine: str
    asv_command: list
    env_dir: Path  # asv's environments: none there before the run is a fresh clone
    path: Path | None = None  # None: default_path
    started_at: float = field(default_factory=time.time)  # scripts/run's start
    fresh_venv: bool | None = None
    per_round: int = 1  # the processes each round measured in (asvargs.pooled_rounds)
    folder: Path = RUNS
    fresh: dict = field(default_factory=dict)
    clock: dict = field(default_factory=dict)
    written: list = field(default_factory=list)  # (results file's content, its content before)

    def before_asv(self, env: dict, waited: float) -> None:
        """Just before asv starts: what exists, and the time (`waited`: for the locks)."""
        self.fresh = {
            "clone": _empty(str(self.env_dir)),  # no asv environment yet
            "venv": self.fresh_venv,
            "triton_cache": _empty(env.get("TRITON_CACHE_DIR")),
            "inductor_cache": _empty(env.get("TORCHINDUCTOR_CACHE_DIR")),
            # scripts/_cache.sh says so before set-up, which fills it
            "bytecode_cache": env.get("RMSNORM_BENCH_FRESH_PYCACHE") == "1",
        }
        self.clock.update(asv_started=time.time(), waiting=waited)

    def after_asv(self, folder: Path, kept: Path) -> None:
        """Once asv has ended, before its results are merged with the stored ones: the
        results files it wrote (`folder`), with what they held before (`kept`)."""
        self.clock["asv_ended"] = time.time()
        for path in results_files(folder) if folder.is_dir() else []:
            before = kept / path.name
            if before.is_file() and before.read_bytes() == path.read_bytes():
                continue
            try:
                old = read_json(before) if before.is_file() else {}
                self.written.append((read_json(path), old))
            except BadFile:
                continue  # asv wrote an unusable file; the store says so

    def record(self, times: list[dict], status: int, benchmarks: dict) -> dict | None:
        """The record, or None where asv wrote no results file."""
        if not self.written:
            return None
        ended = time.time()
        runs = sorted(self.written, key=lambda w: w[0].get("date", 0))
        newest = runs[-1][0]
        processes = [t for t in times if "process" in t]
        cases = [t for t in times if "case" in t]
        asv = self.clock["asv_ended"] - self.clock["asv_started"]
        first_start = min((p["started"] for p in processes), default=self.clock["asv_ended"])
        before_first = max(0.0, first_start - self.clock["asv_started"])
        builds = sum(_new_durations(run, old, "<build>") for run, old in runs)
        measuring = sum(p["seconds"] for p in processes)
        before_asv = self.clock["asv_started"] - self.started_at - self.clock["waiting"]
        return {
            "machine": self.machine,
            "facts": newest.get("params", {}),
            "commit": newest["commit_hash"],
            "commits": [run["commit_hash"] for run, _ in runs],
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started_at)),
            "asv_command": self.asv_command,
            "asv_exit_status": status,
            "fresh": self.fresh,
            "processes": len(processes),
            "rounds": _rounds(self.asv_command),
            # each round's measuring processes, one after another (instrument.processes)
            "processes_per_round": self.per_round,
            "seconds": {
                "total": round(ended - self.started_at, 1),
                "setup": round(before_asv + before_first + builds, 1),
                "setup_parts": {
                    "before_asv": round(before_asv, 1),
                    "asv_before_the_first_benchmark": round(before_first, 1),
                    "later_builds": round(builds, 1),
                },
                "asv": round(asv, 1),
                "measuring": round(measuring, 1),
                "asv_other": round(max(0.0, asv - before_first - builds - measuring), 1),
                "waiting": round(self.clock["waiting"], 1),
            },
            "cases": {
                status: sum(c["status"] == status for c in cases)
                for status in ("ok", "skipped", "FAILED")
            },
            "warm": [t["warm"] for t in times if isinstance(t.get("warm"), dict)],
            "suites": _suites(processes, cases, runs, benchmarks),
            "first_cases": _first_cases(times),
        }

    def write(self, record: dict) -> Path:
        path = self.path or default_path(self.machine, record["commit"], self.folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        # whole or not at all, never over a record (a name given is checked up front)
        atomic.write_text(path, json.dumps(record, indent=1) + "\n", new=True)
        return path


def _new_durations(run: dict, old: dict, prefix: str) -> float:
    """asv's durations in `run` under names starting with `prefix` that this run set (a
    value the file held before is an earlier run's: asv keeps what it did not redo)."""
    before = old.get("durations", {})
    return sum(
        s for name, s in run.get("durations", {}).items()
        if name.startswith(prefix) and before.get(name) != s
    )  # fmt: skip


def _rounds(asv_command: list) -> int | None:
    from .asvargs import _rounds_given

    given = _rounds_given(asv_command)
    return int(given) if given and given.isdigit() else None


def _suites(processes: list, cases: list, runs: list, benchmarks: dict) -> dict:
    """Per suite: its processes' seconds, asv's set-up durations, per backend its cases.

    A process that measured several suites (the suites' one shared setup_cache) is listed
    under each of them; a suite's `seconds` are then its cases' own, the set-up an op's
    phases share counted in its first phase's cases."""
    keys = {}  # setup_cache key -> its suites' classes ("bench_rmsnorm:158" -> [...])
    for name, bench in benchmarks.items():
        if isinstance(bench, dict) and bench.get("setup_cache_key"):
            keys.setdefault(bench["setup_cache_key"], set()).add(name.split(".")[1])
    out = {}
    for proc in processes:
        for name in _suites_of(proc):
            out.setdefault(name, {"processes": [], "backends": {}})
            out[name]["processes"].append(round(proc["seconds"], 2))
    for case in cases:
        suite = out.setdefault(case["suite"], {"processes": [], "backends": {}})
        b = suite["backends"].setdefault(
            case["backend"], {"seconds": 0.0, "ok": 0, "skipped": 0, "FAILED": 0, "phases": {}}
        )
        b[case["status"]] = b.get(case["status"], 0) + 1
        if case["status"] == "skipped":
            continue
        b["seconds"] = round(b["seconds"] + case["seconds"], 2)
        for phase, s in case.get("phases", {}).items():
            b["phases"][phase] = round(b["phases"].get(phase, 0.0) + s, 2)
        for name, n in case.get("compile_cache", {}).items():
            b.setdefault("compile_cache", {})[name] = b.get("compile_cache", {}).get(name, 0) + n
    shared = any(len(_suites_of(p)) > 1 for p in processes)
    for suite in out.values():
        own = sum(b["seconds"] for b in suite["backends"].values())
        suite["seconds"] = round(own if shared else sum(suite["processes"]), 1)
    for run, old in runs[-1:]:  # asv keeps the last round's set-up duration of each suite
        for key, seconds in run.get("durations", {}).items():
            name = key.removeprefix("<setup_cache ").removesuffix(">")
            if name not in keys or old.get("durations", {}).get(key) == seconds:
                continue  # not a suite's set-up, or not this run's
            for suite, facts in out.items():
                if _class_of(suite) in keys[name]:
                    facts["asv_last_setup_seconds"] = round(seconds, 1)
    return out


def _suites_of(process: dict) -> list:
    """The suites one benchmark process measured (one, in records made before they shared)."""
    return process.get("suites") or [process["suite"]]


def _class_of(suite: str) -> str:
    """ "fused_add backward" -> "FusedAddRMSNormBackward", the suite's class in bench_rmsnorm."""
    op, phase = suite.split()
    return ("FusedAddRMSNorm" if op == "fused_add" else "RMSNorm") + phase.capitalize()


def _first_cases(times: list[dict]) -> list[dict]:
    """Each benchmark process's first case measured (not skipped), with the process's start:
    the lines of one process come before its own closing line."""
    out, first = [], None
    for t in times:
        if "case" in t and first is None and t["status"] != "skipped":
            first = t
        elif "process" in t:
            if first:
                out.append({
                    "suite": first["suite"], "case": first["case"], "backend": first["backend"],
                    "seconds": round(first["seconds"], 2),
                    "phases": {k: round(v, 2) for k, v in first.get("phases", {}).items()},
                    "process_start": {k: round(v, 2) for k, v in t.get("phases", {}).items()},
                })  # fmt: skip
            first = None
    return out


def summary(record: dict) -> str:
    s = record["seconds"]
    out = [
        f"{record['machine']} at {record['commit'][:8]}, {record['started']}: {s['total']} s in "
        f"all, {s['setup']} s set-up, {s['asv']} s in asv ({s['measuring']} s measuring in "
        f"{record['processes']} processes), fresh: "
        + (", ".join(k for k, v in record["fresh"].items() if v) or "nothing"),
    ]
    for w in record.get("warm", []):  # records made before the warm step was timed lack it
        what = w.get("skipped") or w.get("stopped")
        what = what or f"{w.get('cases')} cases validated in {w.get('workers')} processes"
        out.append(f"warm step: {w['seconds']} s ({what})")
    out.append("by suite and backend (cases not skipped):")
    for suite, facts in record["suites"].items():
        for backend, b in facts["backends"].items():
            if b["ok"] or b["FAILED"]:
                phases = ", ".join(f"{k} {v}" for k, v in b["phases"].items())
                out.append(f"  {suite} {backend}: {b['seconds']} s ({phases})")
    out.append("first case of each process:")
    for f in record["first_cases"]:
        start = ", ".join(f"{k} {v}" for k, v in f["process_start"].items())
        out.append(f"  {f['suite']} {f['case']} {f['backend']}: {f['seconds']} s ({start})")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("record", type=Path, help="a run's record (docs/runs/*.json)")
    args = ap.parse_args(argv)
    try:
        record = read_json(args.record)
        print(summary(record))
    except BadFile as e:
        ap.exit(2, f"runrecord: {e}\n")
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        ap.exit(2, f"runrecord: {args.record} is not a run's record ({type(e).__name__}: {e})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
