"""asv's file formats, and the one rule every tool reads results by.

Where it sits: measure -> asv run -> store -> publish/report -> gate. What asv writes (a
results file per commit and environment, a machine.json per machine) is judged here, on its
content: `problems` and `machine_problems` say what makes one unusable by asv 0.6.6 and by
these tools, and nothing here reads or writes a file. rmsnorm_bench.asvfiles applies the
rule to the files it loads (report, regressions, publish, dashboard read through it);
merge and store apply it to what they are about to keep.
"""

import itertools
import json
import math
import re
from pathlib import Path

# a commit's full hash (SHA-1, or SHA-256 where git uses it), as asv writes it: asv publish
# finds a results file's commit on a branch by its full hash and leaves out one it cannot
HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
STATS = ("ci_99_a", "ci_99_b", "q_25", "q_75", "number", "repeat")  # asv's stats_* columns
PER_PARAMS = ("result", "samples") + tuple(f"stats_{k}" for k in STATS)
# asv 0.6.6 reads results files of this format only (asv.results.Results.api_version) and
# skips any other, saying so in a log line only: the tools refuse them instead
RESULTS_FORMAT = 2
MACHINE_FORMAT = 1  # of machine.json (asv.machine.Machine.api_version), likewise
# what asv.results.Results.load needs of a file (it skips one without) and these tools read
NEEDED = {
    "commit_hash": str, "date": int, "params": dict, "result_columns": list,
    "requirements": dict, "python": str, "env_name": str,
}  # fmt: skip
# the result columns asv knows besides stats_* (another makes it skip the file)
COLUMNS = {"result", "params", "version", "started_at", "duration", "samples", "profile"}
SHOWN_AT_MOST = 5  # bad figures named per file; the rest are counted


def param_value(text: str):
    """A parameter value as asv stores it (its repr: '1x4096-bf16' in quotes), decoded."""
    return json.loads(text.replace("'", '"'))


def is_time(bench: str) -> bool:
    """Whether a benchmark's figures are times (seconds): asv's time_* benchmarks and this
    suite's track_time, track_device_time and track_device_time_cold."""
    name = bench.rsplit(".", 1)[-1]
    return name.startswith("time_") or "_time" in name


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def figure_problem(bench: str, value, skipped_ok: bool = True) -> str | None:
    """Why `value` cannot be a figure of `bench`, or None. A figure is a finite number >= 0,
    null (asv's mark of a failed case) or, with skipped_ok, NaN (asv's mark of a skipped
    one, which every tool reads as no figure). A time of 0 is refused too: no call takes no
    time, so it is no measurement, and no later figure could be found slower than it."""
    if value is None:
        return None
    if not is_number(value):
        return f"{json.dumps(value)} is not a number"
    if isinstance(value, int) and abs(value) > 2**53:  # past float's whole numbers; 1e400 too
        return f"{str(value)[:20]}... ({len(str(value))} digits) is not a measured figure"
    if math.isnan(value):
        return None if skipped_ok else "NaN is not a measurement"
    if math.isinf(value):
        return f"{value} is not a finite number"
    if value < 0:
        return f"{value} is negative"
    if value == 0 and is_time(bench):
        return "0 s is no measurement (no call takes no time)"
    return None


def figure_problems(bench: str, row: dict, combos: list) -> list[str]:
    """Each figure (result) and sample of one benchmark's entry that is none, named by its
    parameters; each stats_* value that is not a number."""
    found = []

    def label(i):
        return f"{bench}({', '.join(combos[i])})" if combos[i] else bench

    for i, value in enumerate(row.get("result") or []):
        if problem := figure_problem(bench, value):
            found.append(f"{label(i)}: {problem}")
    for i, samples in enumerate(row.get("samples") or []):
        if samples is not None and not isinstance(samples, list):
            found.append(f"{label(i)}: its samples are not a list")
            continue
        bad = [p for p in (figure_problem(bench, v, False) for v in samples or []) if p]
        if bad:
            found.append(f"{label(i)}: a sample: {bad[0]}")
    for column in PER_PARAMS[2:]:
        for i, value in enumerate(row.get(column) or []):
            if value is not None and not is_number(value):
                found.append(f"{label(i)}: {column} {json.dumps(value)} is not a number")
    return found


def _decodes(text: str) -> bool:
    try:
        param_value(text)
    except ValueError:
        return False
    return True


def problems(run, path: Path | None = None) -> list[str]:
    """What makes `run` (a results file's content) unusable by asv and these tools: the one
    rule of every tool that reads results (report, regressions, merge, publish, dashboard)
    and of what a run keeps. A machine's folder holds one file per commit (asvfiles.load_runs)."""
    if not isinstance(run, dict):
        return [f"holds a {type(run).__name__}, not an asv results object"]
    found = []
    version = run.get("version")
    if "version" not in run:
        found.append(f"no 'version' (asv's results format, {RESULTS_FORMAT}; asv skips it)")
    elif version != RESULTS_FORMAT or not is_number(version):
        found.append(
            f"'version' is {json.dumps(version)}: asv 0.6.6 reads results format "
            f"{RESULTS_FORMAT} only, and asv publish would leave this file out"
        )
    for key, kind in NEEDED.items():
        if key not in run:
            found.append(f"no {key!r}")
        elif not isinstance(run[key], kind) or isinstance(run[key], bool):
            found.append(f"{key!r} is not a {kind.__name__}")
    if not isinstance(run.get("results"), dict):
        found.append("no 'results' object")
    if found:
        return found
    if not HEX.match(run["commit_hash"]):
        found.append(f"commit_hash {run['commit_hash']!r} is not a commit's full hash")
    elif path is not None and not Path(path).name.startswith(run["commit_hash"][:8]):
        found.append(f"holds commit {run['commit_hash'][:8]}, not the one its name says")
    machine = run["params"].get("machine")
    if path is not None and machine is not None and machine != Path(path).parent.name:
        found.append(f"measured on machine {machine!r}, kept in {Path(path).parent.name!r}/")
    columns = run["result_columns"]
    for column in ("result", "params", "version"):
        if column not in columns:
            found.append(f"result_columns has no {column!r}")
    unknown = [c for c in columns if c not in COLUMNS and not str(c).startswith("stats_")]
    if unknown:
        found.append(f"result_columns has {', '.join(map(repr, unknown))}: asv reads no such")
    if found:
        return found
    bad_figures = []
    for bench, entry in run["results"].items():
        if not isinstance(entry, list):
            found.append(f"{bench}: not a list")
            continue
        row = dict(zip(columns, entry, strict=False))
        params = row.get("params") or []
        if not isinstance(params, list) or not all(
            isinstance(p, list) and all(isinstance(v, str) for v in p) for p in params
        ):
            found.append(f"{bench}: its params are not lists of values")
            continue
        undecoded = [v for p in params for v in p if not _decodes(v)]
        if undecoded:
            found.append(f"{bench}: parameter value(s) {', '.join(undecoded)} are no repr")
            continue
        for values in params:
            if len(set(values)) != len(values):
                twice = sorted({v for v in values if values.count(v) > 1})
                found.append(f"{bench}: parameter value(s) {', '.join(twice)} listed twice")
        combos = list(itertools.product(*params)) if params else [()]
        sized = True
        for column in PER_PARAMS:
            value = row.get(column)
            if value is not None and (not isinstance(value, list) or len(value) != len(combos)):
                found.append(f"{bench}: {column} does not hold one entry per parameter set")
                sized = False
        if sized:
            bad_figures += figure_problems(bench, row, combos)
    more = len(bad_figures) - SHOWN_AT_MOST
    return found + bad_figures[:SHOWN_AT_MOST] + ([f"and {more} more"] if more > 0 else [])


def machine_problems(info, path: Path | None = None) -> list[str]:
    """What makes `info` (a machine.json's content) unusable by asv publish, which files
    each machine under its 'machine' name."""
    if not isinstance(info, dict):
        return [f"holds a {type(info).__name__}, not a JSON object"]
    name = info.get("machine")
    if not isinstance(name, str) or not name:
        return ["no 'machine' name"]
    if path is not None and name != Path(path).parent.name:
        return [f"names machine {name!r}, kept in {Path(path).parent.name!r}/"]
    if info.get("version") != MACHINE_FORMAT or isinstance(info.get("version"), bool):
        got = (
            "no 'version'" if "version" not in info else f"'version' {json.dumps(info['version'])}"
        )
        return [
            f"{got}: asv 0.6.6 reads machine files of format {MACHINE_FORMAT} only, and asv "
            "publish would leave out every result of the machine"
        ]
    return []
