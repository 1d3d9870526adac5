"""Reading asv's files: its commented config, and the results of a machine.

Where it sits: measure -> asv run -> store -> publish/report -> gate. Each results file and
machine.json is loaded through the rule of rmsnorm_bench.asvformat (BadFile names the file
and its problem); then a run's figures, statistics and versions are read out of it, and a
revision is matched to the commits that have results.

Imported by the other tools; `python -m rmsnorm_bench.asvfiles conf-copy OUT KEY=VALUE...`
writes a copy of asv.conf.json with some keys changed, for the shell entry points.
"""

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

from . import ROOT, argument_parser, atomic
from .asvformat import STATS, machine_problems, param_value, problems


class BadFile(ValueError):
    """A file of asv's that cannot be used: the message names the file and the problem."""


# the keys of asv's config these tools read, with asv's defaults: each a path, read from the
# config's folder (branches: a list of names)
CONF_PATHS = {"results_dir": "results", "env_dir": "env", "html_dir": "html", "repo": "."}
CONF_VERSION = 1  # the config format asv 0.6 reads (asv.config.Config.api_version)


def read_conf(path=ROOT / "asv.conf.json") -> dict:
    """asv's config as asv reads it: through asv's own loader (JSON5, so // and /* */
    comments, trailing commas), or, where asv is not importable, JSON less its comments.
    BadFile names the file and what asv would refuse, or a key these tools read that is not
    of its type (results_dir, env_dir, html_dir, repo: a path; branches: a list of names);
    a path asv gives a default gets it."""
    path = Path(path)
    try:
        conf = _load_conf(path)
    except OSError as e:
        raise BadFile(f"{path}: cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise BadFile(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
    except ValueError as e:  # json5's and json's syntax errors
        raise BadFile(f"{path}: not a config asv reads: {e}") from None
    if not isinstance(conf, dict):
        raise BadFile(f"{path}: not a config asv reads: not a JSON object")
    wrong = []
    if conf.get("version") != CONF_VERSION:  # asv refuses a config of no or another version
        wrong.append(f'"version" is {json.dumps(conf.get("version"))}, not {CONF_VERSION} (asv\'s)')
    for key, default in CONF_PATHS.items():
        value = conf.setdefault(key, default)
        if not isinstance(value, str) or not value.strip():
            wrong.append(f'"{key}" is {json.dumps(value)}, not a path')
    branches = conf.get("branches", ["main"])
    if not isinstance(branches, list) or not all(isinstance(b, str) and b for b in branches):
        wrong.append(f'"branches" is {json.dumps(branches)}, not a list of branch names')
    if wrong:
        raise BadFile(f"{path}: {'; '.join(wrong)}")
    return conf


def _load_conf(path: Path):
    try:
        from asv import util as asv_util
    except ImportError:  # a tool run outside .venv: comments stripped here
        return json.loads(_without_comments(path.read_text(encoding="utf-8")))
    try:
        return asv_util.load_json(str(path), js_comments=True)
    except asv_util.UserError as e:
        raise ValueError(str(e)) from None


def _without_comments(text: str) -> str:
    """JSON text less its // and /* */ comments (outside strings)."""
    out, i, quoted = [], 0, False
    while i < len(text):
        c = text[i]
        if quoted:
            out.append(text[i : i + 2] if c == "\\" else c)
            i += 2 if c == "\\" else 1
            quoted = c != '"'
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        quoted = c == '"'
        out.append(c)
        i += 1
    return "".join(out)


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


def clone_lacks(sha: str) -> str | None:
    """A warning where this clone has no commit `sha` (results merged from another clone, or
    made by hand): figures are read all the same, but nothing here can show what they measured,
    and publish refuses them. None where it has it."""
    cmd = ["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"]
    if subprocess.run(cmd, capture_output=True).returncode == 0:
        return None
    return (
        f"warning: commit {sha[:10]} is not in this clone: its figures are read as stored, "
        "but publish refuses them until it is fetched (git fetch)"
    )


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
    for key, value in written(run).items():
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        if not missing:
            out[key] = value
        elif not measured_only:
            out[key] = None
    return out


def written(run: dict) -> dict:
    """{(benchmark, params): value} as asv wrote it: a number, NaN (skipped) or None (failed;
    a benchmark whose whole result is null failed in every parameter set)."""
    out = {}
    for bench, entry in run["results"].items():
        row = dict(zip(run["result_columns"], entry, strict=False))
        params = [[param_value(p) for p in ps] for ps in row.get("params") or []]
        combos = list(itertools.product(*params)) if params else [()]
        values = row.get("result")
        values = [None] * len(combos) if values is None else values
        for combo, value in zip(combos, values, strict=False):
            out[(bench, combo)] = value
    return out


def failed(run: dict) -> set:
    """The figures of `run` that asv recorded as failed (null; a skipped one is NaN)."""
    return {key for key, value in written(run).items() if value is None}


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


def write_conf(out: Path, changes: dict, conf: Path | None = None) -> None:
    """A copy of asv's config with some keys changed. asv resolves the config's relative paths
    from the config's folder: write the copy beside asv.conf.json."""
    settings = read_conf(conf) if conf else read_conf()  # default: asv.conf.json
    atomic.write_text(out, json.dumps({**settings, **changes}, indent=4))


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
    except (BadFile, atomic.WriteFailed) as e:
        ap.exit(2, f"asvfiles: conf-copy: {e}\n")
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
