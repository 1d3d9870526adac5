"""Reading asv's files: its commented config, and the results of a machine.

Imported by the other tools; `python -m rmsnorm_bench.asvfiles conf-copy OUT KEY=VALUE...`
writes a copy of asv.conf.json with some keys changed, for the shell entry points.
"""

import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

from . import ROOT, argument_parser


def read_conf(path=ROOT / "asv.conf.json") -> dict:
    """asv.conf.json as a dict (asv allows // comment lines; json does not)."""
    return json.loads(re.sub(r"^\s*//.*$", "", Path(path).read_text(), flags=re.M))


class BadFile(ValueError):
    """A file of asv's that cannot be used: the message names the file and the problem."""


# a commit's full hash (SHA-1, or SHA-256 where git uses it), as asv writes it: asv publish
# finds a results file's commit on a branch by its full hash and leaves out one it cannot
HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
PER_PARAMS = ("result", "samples") + tuple(
    f"stats_{k}" for k in ("ci_99_a", "ci_99_b", "q_25", "q_75", "number", "repeat")
)
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


def read_json(path: Path):
    """A JSON file's content; a file that cannot be read or parsed raises BadFile naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise BadFile(f"{path}: cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:  # JSON is UTF-8, and asv reads it as UTF-8
        raise BadFile(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
    try:
        return json.loads(text)
    except ValueError as e:
        where = f" at line {e.lineno}, column {e.colno}" if hasattr(e, "lineno") else ""
        cut = " (truncated?)" if getattr(e, "pos", 0) >= len(text.rstrip()) else ""
        raise BadFile(f"{path}: not valid JSON{where}{cut}: {getattr(e, 'msg', e)}") from None


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
    and of what a run keeps. A machine's folder holds one file per commit (load_runs)."""
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


def _load_checked(path: Path, check, kind: str):
    """A JSON file and what `check` finds wrong with it: BadFile names both."""
    content = read_json(path)
    found = check(content, path)
    if found:
        raise BadFile(f"{path}: not a usable asv {kind}: {'; '.join(found)}")
    return content


def load_machine(path: Path) -> dict:
    """One machine.json, checked: BadFile names the file and what is wrong with it."""
    return _load_checked(path, machine_problems, "machine file")


def load_run(path: Path) -> dict:
    """One results file, checked: BadFile names the file and what is wrong with it."""
    return _load_checked(path, problems, "results file")


VERDICT_PREFIX = "selftest-"  # the self-test's verdicts, kept beside the results they judge


def is_verdict(path: Path) -> bool:
    return Path(path).name.startswith(VERDICT_PREFIX)


def results_files(folder: Path) -> list[Path]:
    """A machine folder's results files: not its machine.json, nor the self-test's verdicts
    (selftest-<commit8>.json)."""
    files = Path(folder).glob("*.json")
    return sorted(f for f in files if f.name != "machine.json" and not is_verdict(f))


def load_runs(folder: Path) -> list:
    """Every results file of one machine's folder, oldest commit first (BadFile where one
    cannot be used, or where two hold one commit)."""
    paths = results_files(folder)
    if paths:  # asv publish reads a machine's results only beside its machine.json
        machine_file = Path(folder) / "machine.json"
        if not machine_file.is_file():
            raise BadFile(
                f"{folder}: no machine.json beside its results (asv writes it with every run; "
                "asv publish leaves out a machine folder without one)"
            )
        load_machine(machine_file)
    runs = [load_run(f) for f in paths]
    if twice := same_commit(zip(paths, runs, strict=True)):
        raise BadFile(f"{folder}: {twice}")
    return sorted(runs, key=lambda r: (r["date"], r["commit_hash"]))


def readable_runs(folder: Path) -> list:
    """(path, run) of each results file in `folder` that holds a commit hash (a bad one is
    named by every tool that reads the folder through load_runs)."""
    found = []
    for path in results_files(folder) if Path(folder).is_dir() else []:
        try:
            run = read_json(path)
        except BadFile:
            continue
        if isinstance(run, dict) and isinstance(run.get("commit_hash"), str):
            found.append((path, run))
    return found


def same_commit(files) -> str | None:
    """What is wrong where several of `files` ((path, run) of one machine) hold one commit,
    or None. asv names a results file by commit and environment: a run in an environment of
    another name (another Python) adds a second file for a commit, and each tool would read
    another of the two."""
    by_commit = {}
    for path, run in files:
        by_commit.setdefault(run["commit_hash"], []).append(Path(path).name)
    twice = {commit: sorted(names) for commit, names in by_commit.items() if len(names) > 1}
    if not twice:
        return None
    return "; ".join(
        f"{len(names)} results files hold commit {commit[:8]} ({', '.join(names)})"
        for commit, names in sorted(twice.items())
    ) + (
        ": the tools read one per machine and commit; keep one, and move the other out of results/"
    )


class BadCommit(ValueError):
    """A revision that names no commit with results, or several: the message says which."""


def resolve(rev: str) -> str:
    """A revision git knows here (HEAD, a branch, a unique prefix) as its full hash; anything
    else (a commit of another clone's results) as given, a prefix of a results file's hash."""
    cmd = ["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else rev.lower()


def pick_commit(rev: str, hashes, option: str, where) -> str:
    """The one hash of `hashes` (commits with results under `where`) that `rev`, given as
    `option`, names (see resolve). BadCommit where it names none, or several (listed)."""
    full = resolve(rev)
    found = sorted({h for h in hashes if h.startswith(full)})
    if len(found) > 1:
        matches = ", ".join(h[:10] for h in found)
        raise BadCommit(
            f"{option} {rev} matches {len(found)} commits with results: {matches}; "
            "give more of the hash"
        )
    if not found:
        named = rev if full == rev.lower() else f"{rev} ({full[:10]})"
        raise BadCommit(f"{option} {rev}: no results for commit {named} under {where}")
    return found[0]


def figures(run: dict, measured_only: bool = True) -> dict:
    """{(benchmark, params): value} of one results file, in the benchmarks' parameter order.

    params is the tuple of parameter values, e.g. ("4096x4096-bf16", "triton"). Skipped or
    failed figures are left out, or kept as None with measured_only=False.
    """
    out = {}
    for bench, entry in run["results"].items():
        row = dict(zip(run["result_columns"], entry, strict=False))
        params = [[param_value(p) for p in ps] for ps in row.get("params") or []]
        combos = itertools.product(*params) if params else [()]
        for combo, value in zip(combos, row["result"] or [], strict=False):
            missing = value is None or (isinstance(value, float) and math.isnan(value))
            if not missing:
                out[(bench, combo)] = value
            elif not measured_only:
                out[(bench, combo)] = None
    return out


STATS = ("ci_99_a", "ci_99_b", "q_25", "q_75", "number", "repeat")


def figure_stats(run: dict) -> dict:
    """{(benchmark, params): (stats, samples)} of one results file, as asv compare takes them:
    stats a dict of asv's `stats_*` columns (or None), samples a list (or None)."""
    out = {}
    columns = run["result_columns"]
    for bench, entry in run["results"].items():
        row = dict(zip(columns, entry, strict=False))
        params = [[param_value(p) for p in ps] for ps in row.get("params") or []]
        combos = list(itertools.product(*params)) if params else [()]
        for i, combo in enumerate(combos):
            stats = {}
            for name in STATS:
                values = row.get(f"stats_{name}")
                if values is not None and i < len(values) and values[i] is not None:
                    stats[name] = values[i]
            samples = row.get("samples")
            sample = samples[i] if samples is not None and i < len(samples) else None
            out[(bench, combo)] = (stats or None, sample)
    return out


def versions(run: dict) -> dict:
    """{benchmark: the version of its method} in one results file."""
    column = run["result_columns"].index("version")
    return {bench: entry[column] for bench, entry in run["results"].items()}


def union_benchmarks(results_dir: Path) -> dict:
    """benchmarks.json with each parameter list widened to every value some results file has.

    asv publish shows only the parameter values listed in benchmarks.json, which holds those
    of the last run on this clone: a machine measured with other shapes (the CPU smoke mode,
    a per-commit subset) would vanish from the dashboard. Listed values keep their order;
    values seen only in results are appended.
    """
    benchmarks = read_json(results_dir / "benchmarks.json")
    if not isinstance(benchmarks, dict):
        raise BadFile(f"{results_dir / 'benchmarks.json'}: not a JSON object")
    runs = [run for folder in sorted(results_dir.glob("*/")) for run in load_runs(folder)]
    for run in runs:
        for bench, entry in run["results"].items():
            row = dict(zip(run["result_columns"], entry, strict=False))
            listed = benchmarks.get(bench, {}).get("params")
            if not listed or not row.get("params"):
                continue
            for values, seen in zip(listed, row["params"], strict=False):
                values.extend(v for v in seen if v not in values)
    return benchmarks


def write_conf(out: Path, changes: dict, conf: Path = ROOT / "asv.conf.json") -> None:
    """A copy of asv's config with some keys changed. asv resolves the config's relative paths
    from the config's folder: write the copy beside asv.conf.json."""
    Path(out).write_text(json.dumps({**read_conf(conf), **changes}, indent=4))


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    copy = sub.add_parser("conf-copy", help="write asv.conf.json with some keys changed")
    copy.add_argument("out", type=Path)
    copy.add_argument("changes", nargs="+", metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    if not all("=" in item for item in args.changes):
        ap.error("conf-copy takes KEY=VALUE pairs")
    changes = dict(item.split("=", 1) for item in args.changes)
    out = args.out
    if not out.parent.is_dir():
        ap.exit(2, f"asvfiles: conf-copy: the folder {out.parent} of {out} does not exist\n")
    if out.is_dir():
        ap.exit(2, f"asvfiles: conf-copy: {out} is a folder, not a file to write\n")
    if tracked(out):
        ap.exit(2, f"asvfiles: conf-copy: {out} is a file of the repository; write a copy\n")
    try:
        write_conf(out, changes)
    except OSError as e:
        ap.exit(2, f"asvfiles: conf-copy: cannot write {out} ({e.strerror or e})\n")
    return 0


def tracked(path: Path) -> bool:
    """Whether git tracks `path` in this repository (asv.conf.json itself, say)."""
    where = Path(path).resolve()
    if not where.is_relative_to(ROOT):
        return False
    cmd = ["git", "-C", str(ROOT), "ls-files", "--error-unmatch", "--", str(where)]
    return subprocess.run(cmd, capture_output=True).returncode == 0


if __name__ == "__main__":
    sys.exit(main())
