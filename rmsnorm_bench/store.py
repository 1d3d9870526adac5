"""What a run stores: a copy of a machine's results before asv runs, merged back after it.

usage: python -m rmsnorm_bench.store RESULTS_DIR MACHINE [--state DIR]

asv writes a commit's results file whole: every benchmark it runs gets a new entry, and a case
that was skipped (an unknown or missing backend, a shape override) or failed stands there as
NaN or null over the figure stored before. So `asvrun` keeps a copy of results/<machine>/ and
results/benchmarks.json (`keep`) and afterwards merges, entry by entry and parameter set by
parameter set (`settle`): a figure this run measured replaces the stored one (and is named
when it differs), a case that failed in this run (null) is recorded as failed over a stored
figure (and named), and a figure it skipped (NaN) or did not run keeps its stored value. A run
that measured nothing changes no file. Whenever a stored figure is replaced, re-measured or
failed now, the file as it was is kept whole as results/<machine>/replaced/<file>.<n>.replaced
(asv reads no such name), so that no run's figures and samples are dropped. A file is merged
only with a run whose machine facts (asv's params: CPU, driver, torch, Triton...) are the
stored file's: figures of two runs under one set of labels would be read as one run's (a ratio
of public times from two processes, a series of the wrong host). A run on other facts, or one
that re-measures a benchmark by another method (its version), replaces what it measured: the
stored file is kept whole, and the new file holds the new run's figures alone where the facts
differ. So is the file of a commit that a run measured again in an environment of another name
(another Python: asv writes a second file), since the tools read one file per machine and
commit: the new one replaces it, unless it measured nothing.
The copy is made aside and renamed once whole, with a manifest of each file's size and
SHA-256 (kept.json); a copy is settled only once checked against it, so a part of a file is
never put in the results, and a file missing from it never read as one to delete. Every
write is whole or not at all (rmsnorm_bench.atomic); a settling that fails keeps the copy.
Called without options, this module settles a copy left behind by a run that was killed
(asvrun does so by itself before its next run), into the results folder it was kept of only;
a RESULTS_DIR that is not that folder, or a file of the copy that cannot be read, is refused
(exit status 2) and the copy left as it was.
"""

import errno
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, argument_parser, atomic
from .asvfiles import BadFile, read_json, readable_runs, results_files
from .asvformat import PER_PARAMS, problems
from .locks import results_lock


def _measured(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _rows(run: dict, entry: list) -> tuple[dict, list, dict]:
    """(scalar columns, params, {combo: {per-parameter column: value}}) of one entry."""
    row = dict(zip(run["result_columns"], entry, strict=False))
    params = row.get("params") or []
    combos = list(itertools.product(*params)) if params else [()]
    per = {
        combo: {c: (row.get(c) or [None] * len(combos))[i] for c in PER_PARAMS}
        for i, combo in enumerate(combos)
    }
    scalars = {c: v for c, v in row.items() if c not in PER_PARAMS and c != "params"}
    return scalars, params, per


def _entry(columns: list, scalars: dict, params: list, per: dict) -> list:
    """An entry in asv's layout: per-parameter columns in the order of product(params); a
    column with no value at all is null, trailing nulls dropped (as asv writes them)."""
    combos = list(itertools.product(*params)) if params else [()]
    out = []
    for column in columns:
        if column == "params":
            out.append(params)
        elif column in PER_PARAMS:
            values = [per.get(combo, {}).get(column) for combo in combos]
            out.append(values if any(v is not None for v in values) else None)
        else:
            out.append(scalars.get(column))
    while out and out[-1] is None:
        out.pop()
    return out


def count_measured(run: dict) -> int:
    return sum(
        _measured(v["result"]) for e in run["results"].values() for v in _rows(run, e)[2].values()
    )


def _failed(value) -> bool:
    """A case that ran and failed: asv writes null (a skipped one is NaN)."""
    return value is None


@dataclass
class Merged:
    run: dict
    measured: int = 0  # figures this run measured
    kept: int = 0  # stored figures this run did not measure, kept
    replaced: list = field(default_factory=list)  # (benchmark, combo, old, new)
    failed: list = field(default_factory=list)  # (benchmark, combo, old): measured, failed now
    other_version: list = field(default_factory=list)  # benchmarks re-measured by a new method
    other_facts: dict = field(default_factory=dict)  # {fact: (stored, new)}: not merged
    kept_over_partial: int = 0  # stored figures an interrupted run measured again, kept

    @property
    def keeps_old_file(self) -> bool:
        """Whether a figure of the stored file is dropped from it, so the file is kept whole."""
        return bool(self.replaced or self.failed or self.other_version or self.other_facts)


def fact_changes(old: dict, new: dict) -> dict:
    """{fact: (stored, new)} of asv's params (the machine's facts) that differ."""
    before, after = old.get("params") or {}, new.get("params") or {}
    return {
        k: (before.get(k), after.get(k))
        for k in sorted({*before, *after})
        if before.get(k) != after.get(k)
    }


def own_figures(old: dict, new: dict) -> Merged:
    """`new` alone, for a run on other facts than `old`'s: an entry asv carried over as it was
    stored (a benchmark this run did not run) belongs to the stored run and is left out."""
    results = {b: e for b, e in new["results"].items() if old["results"].get(b) != e}
    out = Merged({**new, "results": results}, other_facts=fact_changes(old, new))
    out.run["durations"] = {
        k: v for k, v in new.get("durations", {}).items() if old.get("durations", {}).get(k) != v
    }
    out.measured = count_measured(out.run)
    for bench, entry in results.items():
        stored = _rows(old, old["results"][bench])[2] if bench in old["results"] else {}
        for combo, v in _rows(new, entry)[2].items():
            o = stored.get(combo)
            if _failed(v["result"]) and o is not None and _measured(o["result"]):
                out.failed.append((bench, combo, o["result"]))
    return out


def merge_runs(old: dict, new: dict, interrupted: bool = False) -> Merged:
    """`new` (what asv wrote) with every stored figure of `old` that `new` did not measure (or
    `new` alone where the two runs' machine facts differ). `interrupted`: a run stopped by a
    signal, whose figures hold fewer processes' samples than asked for: it adds figures, and
    replaces none that is stored (by a measurement or a failure)."""
    if fact_changes(old, new):
        return own_figures(old, new)
    columns = list(new["result_columns"])
    columns += [c for c in old["result_columns"] if c not in columns]
    out = Merged({**new, "result_columns": columns, "results": {}})
    out.run["durations"] = {**old.get("durations", {}), **new.get("durations", {})}
    for bench in dict.fromkeys([*old["results"], *new["results"]]):
        if bench not in new["results"]:
            out.run["results"][bench] = _entry(columns, *_rows(old, old["results"][bench]))
            continue
        n_scalars, n_params, n_per = _rows(new, new["results"][bench])
        measured = [c for c, v in n_per.items() if _measured(v["result"])]
        if bench not in old["results"] or old["results"][bench] == new["results"][bench]:
            out.run["results"][bench] = _entry(columns, n_scalars, n_params, n_per)
            if bench not in old["results"]:
                out.measured += len(measured)
            continue  # an entry asv kept as it was (a benchmark this run did not run)
        o_scalars, o_params, o_per = _rows(old, old["results"][bench])
        out.measured += len(measured)
        stored = [c for c, v in o_per.items() if _measured(v["result"])]
        if o_scalars.get("version") != n_scalars.get("version"):
            if measured and not (interrupted and stored):  # another method: not merged
                out.other_version.append((bench, len(stored), o_scalars.get("version")))
                out.run["results"][bench] = _entry(columns, n_scalars, n_params, n_per)
            else:
                out.run["results"][bench] = _entry(columns, o_scalars, o_params, o_per)
                out.kept += len(stored)
            continue
        params = [list(values) for values in o_params]
        for values, seen in zip(params, n_params, strict=False):
            values.extend(v for v in seen if v not in values)
        per = {}
        for combo in itertools.product(*params) if params else [()]:
            n, o = n_per.get(combo), o_per.get(combo)
            stored_figure = o is not None and _measured(o["result"])
            ran = n is not None and (_measured(n["result"]) or _failed(n["result"]))
            if interrupted and stored_figure and ran and n["result"] != o["result"]:
                per[combo] = o  # a partial figure, or a failure of a stopped run: not over it
                out.kept_over_partial += 1
            elif n is not None and _measured(n["result"]):
                per[combo] = n
                if stored_figure and o["result"] != n["result"]:
                    out.replaced.append((bench, combo, o["result"], n["result"]))
            elif n is not None and _failed(n["result"]):
                per[combo] = n  # a failure is a result: the stored figure no longer holds
                if stored_figure:
                    out.failed.append((bench, combo, o["result"]))
            elif stored_figure:
                per[combo] = o
                out.kept += 1
            else:
                per[combo] = n or o or {}
        ran = measured or any(_failed(v["result"]) for v in n_per.values())
        scalars = n_scalars if ran else o_scalars
        out.run["results"][bench] = _entry(columns, scalars, params, per)
    return out


def _write_json(path: Path, data: dict) -> None:
    """Written as asv writes its results (compact, NaN as NaN), whole or not at all."""
    atomic.write_text(path, json.dumps(data))


@dataclass
class Outcome:
    measured: int = 0
    kept: int = 0
    lines: list = field(default_factory=list)


# the list of what a copy holds (each file's size and SHA-256), written last: a copy without
# it, or whose files differ from it, is not whole and is never settled
MANIFEST = "kept.json"


class BadCopy(BadFile):
    """A kept copy that is not whole (a write that failed, a kill while it was made, a file
    changed since): settling it could put a part of a file in the results, or delete one.
    The message says what to do: nothing is settled from it, by any tool."""

    def __init__(self, problem: str, copy: Path):
        super().__init__(
            f"{problem}; nothing is settled from it: compare the results with what it holds "
            f"(a file of it whole and newer than the stored one may be put back by hand), then "
            f"remove it (rm -r {copy})"
        )


def _digest(path: Path) -> dict:
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _listing(folder: Path) -> dict:
    """{relative path: size and digest} of every file under `folder`."""
    return {
        p.relative_to(folder).as_posix(): _digest(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def keep(results: Path, machine: str, copy: Path) -> None:
    """Copy results/<machine>/ and results/benchmarks.json to `copy` before a run: made in a
    temporary folder beside it, each file read back and listed in the copy's manifest, and
    renamed to `copy` once whole. WriteFailed where it cannot be made (the results as they
    were, no copy left)."""
    if copy.exists():
        shutil.rmtree(copy)
    for left in copy.parent.glob(f".{copy.name}.*.part"):  # of a run killed while it copied
        shutil.rmtree(left, ignore_errors=True)
    _make_folder(copy.parent)
    try:
        making = Path(tempfile.mkdtemp(dir=copy.parent, prefix=f".{copy.name}.", suffix=".part"))
    except OSError as e:
        raise atomic.WriteFailed(copy, e, "making the copy of the results in") from None
    try:
        manifest = {"machine": None, "benchmarks.json": None}
        if (results / machine).is_dir():
            for f in sorted((results / machine).rglob("*")):
                target = making / "machine" / f.relative_to(results / machine)
                target.mkdir(parents=True) if f.is_dir() else _copy_new(f, target)
            (making / "machine").mkdir(exist_ok=True)
            manifest["machine"] = _listing(making / "machine")
            if manifest["machine"] != _listing(results / machine):
                raise OSError(errno.EIO, "the copy differs from the results it was made of")
        if (results / "benchmarks.json").is_file():
            _copy_new(results / "benchmarks.json", making / "benchmarks.json")
            manifest["benchmarks.json"] = _digest(making / "benchmarks.json")
            if manifest["benchmarks.json"] != _digest(results / "benchmarks.json"):
                raise OSError(errno.EIO, "the copy differs from the results it was made of")
        atomic.write_text(making / MANIFEST, json.dumps(manifest, indent=1))
        os.replace(making, copy)
        atomic.sync_folder(copy.parent)
    except (OSError, atomic.WriteFailed) as e:
        shutil.rmtree(making, ignore_errors=True)
        error = e.error if isinstance(e, atomic.WriteFailed) else e
        raise atomic.WriteFailed(
            copy, error, "making the copy of the results in", "nothing ran, nothing changed"
        ) from None
    except BaseException:
        shutil.rmtree(making, ignore_errors=True)
        raise


def _copy_new(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.copy_file(source, target)


def check_copy(copy: Path) -> dict:
    """The manifest of a kept copy, once every file of the copy is found whole: JSON that
    parses (BadFile names one that does not), and the size and digest the manifest lists.
    BadCopy where it is not whole."""
    for path in sorted(copy.rglob("*.json")):
        if path.name != MANIFEST:
            read_json(path)
    try:
        manifest = read_json(copy / MANIFEST)
    except BadFile as e:
        raise BadCopy(
            f"{copy} is not a whole copy (no readable {MANIFEST}: it was being made when its "
            f"run stopped, or made before copies were checked): {e}",
            copy,
        ) from None
    if not isinstance(manifest, dict) or set(manifest) != {"machine", "benchmarks.json"}:
        raise BadCopy(f"{copy / MANIFEST}: not a manifest of a kept copy", copy)
    wrong = []
    listed = manifest["machine"] or {}
    found = _listing(copy / "machine") if (copy / "machine").is_dir() else {}
    for name in sorted({*listed, *found}):
        if name not in found:
            wrong.append(f"machine/{name} is missing")
        elif name not in listed:
            wrong.append(f"machine/{name} is not listed")
        elif found[name] != listed[name]:
            wrong.append(f"machine/{name} differs from what was copied")
    if manifest["machine"] is None and (copy / "machine").exists():
        wrong.append("machine/ is not listed")
    bench = copy / "benchmarks.json"
    if manifest["benchmarks.json"] is None:
        if bench.exists():
            wrong.append("benchmarks.json is not listed")
    elif not bench.is_file():
        wrong.append("benchmarks.json is missing")
    elif _digest(bench) != manifest["benchmarks.json"]:
        wrong.append(f"benchmarks.json differs from what was copied ({bench.stat().st_size} of "
                     f"{manifest['benchmarks.json']['size']} bytes)")  # fmt: skip
    if wrong:
        raise BadCopy(f"{copy} is not the copy that was kept: {'; '.join(wrong)}", copy)
    return manifest


def _written_since(path: Path, copy: Path) -> bool:
    """Whether `path` was written after the copy was made (by the run): a file another
    process put in during the run (a merge copies its files' times along) was not."""
    return path.stat().st_mtime_ns >= (copy / MANIFEST).stat().st_mtime_ns


def restore(results: Path, machine: str, copy: Path) -> None:
    """Put results/<machine>/ and results/benchmarks.json back as `keep` copied them (a file
    the run did not write is left as it is). WriteFailed where a file cannot be written."""
    folder = results / machine
    kept = copy / "machine"
    if not kept.is_dir() and folder.is_dir():  # a machine folder this run made: removed
        if all(_written_since(f, copy) for f in folder.rglob("*") if f.is_file()):
            try:
                shutil.rmtree(folder)
            except OSError as e:
                raise atomic.WriteFailed(folder, e, "removing") from None
    for f in folder.glob("*") if folder.is_dir() else []:
        if f.is_file() and not (kept / f.name).exists() and _written_since(f, copy):
            try:
                f.unlink()
            except OSError as e:
                raise atomic.WriteFailed(f, e, "removing") from None
    for f in sorted(kept.rglob("*")) if kept.is_dir() else []:
        back = folder / f.relative_to(kept)
        if f.is_dir():
            _make_folder(back)
        elif not back.is_file() or back.read_bytes() != f.read_bytes():
            _make_folder(back.parent)
            atomic.copy_file(f, back)
    restore_benchmarks(results, copy)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise atomic.WriteFailed(folder, e, "making") from None


def restore_benchmarks(results: Path, copy: Path) -> None:
    """results/benchmarks.json as the copy holds it; removed only where the copy's manifest
    says there was none before the run (a part of the copy missing is never read so)."""
    target = results / "benchmarks.json"
    if (copy / "benchmarks.json").is_file():
        if not target.is_file() or target.read_bytes() != (copy / "benchmarks.json").read_bytes():
            atomic.copy_file(copy / "benchmarks.json", target)
    elif read_json(copy / MANIFEST)["benchmarks.json"] is None and target.exists():
        try:
            target.unlink()
        except OSError as e:
            raise atomic.WriteFailed(target, e, "removing") from None


def discard(copy: Path) -> None:
    """Remove a settled copy: renamed first, so that no part of it is ever read as a copy."""
    gone = copy.with_name(f".{copy.name}.settled")
    shutil.rmtree(gone, ignore_errors=True)
    try:
        os.replace(copy, gone)
    except OSError as e:
        raise atomic.WriteFailed(copy, e, "removing the settled copy") from None
    shutil.rmtree(gone, ignore_errors=True)


def archive_path(folder: Path, name: str) -> Path:
    """Where a stored results file is kept whole when a run replaces any of its figures: the
    first free results/<machine>/replaced/<name>.<n>.replaced."""
    kept = folder / "replaced"
    taken = {p.name for p in kept.iterdir()} if kept.is_dir() else set()
    return kept / archive_name(taken, name)


def archive_name(taken: set, name: str) -> str:
    """The first <name>.<n>.replaced (n = 1, 2, ...) not among the names `taken`."""
    n = 1
    while f"{name}.{n}.replaced" in taken:
        n += 1
    return f"{name}.{n}.replaced"


def archive_order(path: Path) -> tuple:
    """Sort key of archives: by results file, then number (.2 before .10)."""
    name, n, _ = path.name.rsplit(".", 2)
    return (name, int(n)) if n.isdigit() else (name, math.inf)


def _same_commit(stored: Path, commit: str, name: str) -> list[Path]:
    """The stored results files other than `name` that hold `commit`."""
    return [
        p for p, run in readable_runs(stored) if p.name != name and run["commit_hash"] == commit
    ]


def _some(items: list, first: int = 5) -> str:
    """The first few of `items`, "; "-joined, and how many more there are."""
    more = len(items) - first
    return "; ".join(items[:first]) + (f"; and {more} more" if more > 0 else "")


def _label(bench: str, combo: tuple) -> str:
    return f"{bench.removeprefix('bench_rmsnorm.')}({', '.join(combo)})"


def settle(
    results: Path,
    machine: str,
    copy: Path,
    keep_benchmarks: bool = False,
    interrupted: bool = False,
) -> Outcome:
    """Merge what asv wrote into results/<machine>/ with the copy `keep` made, then remove
    the copy. Nothing measured: every file is put back as it was. keep_benchmarks: put
    results/benchmarks.json back too (a run with overridden shapes or backends).
    interrupted: the run was stopped (a signal): it adds figures, and replaces no stored
    figure or file with its partial ones (merge_runs).

    The copy is checked whole first (check_copy: BadFile, nothing changed). A file that
    changed since the copy was made but was not written since (another process put it there,
    with its own times) is not the run's: left as it is, and not counted. Each write is
    whole or not made (atomic); the files kept whole in replaced/ are written before the
    merged ones that replace them. WriteFailed where one cannot be written: the copy then
    stays, and settling it again (python -m rmsnorm_bench.store) completes the step."""
    check_copy(copy)
    outcome = Outcome()
    stored = copy / "machine"
    writes, superseded = [], []  # (path, a run to write or a stored file to copy); paths
    planned = []  # what the writes do, said only where they happen
    for path in results_files(results / machine) if (results / machine).is_dir() else []:
        before = stored / path.name
        if before.is_file() and before.read_bytes() == path.read_bytes():
            continue
        if not _written_since(path, copy):
            outcome.lines.append(
                f"{path}: put there during the run by another process, not by this run: "
                "left as it is, not counted"
            )
            continue
        try:
            new = read_json(path)
            bad = problems(new, path)
        except BadFile as e:
            bad = [str(e)]
        if bad:
            outcome.lines.append(f"{path}: asv wrote an unusable file, not kept ({bad[0]})")
            if before.is_file():
                writes.append((path, before))
            else:
                superseded.append(path)
            continue
        if not before.is_file():
            # the commit's file of another environment (another Python): the tools read one
            # file per machine and commit, so this run's replaces it, which is kept whole
            others = _same_commit(stored, new["commit_hash"], path.name)
            measured = count_measured(new)
            if others and (interrupted or not measured):
                superseded.append(path)  # it holds nothing: the stored file stays
                continue
            outcome.measured += measured
            for other in others:
                writes.append((archive_path(results / machine, other.name), other))
                superseded.append(results / machine / other.name)
                planned.append(
                    f"{other.name}: commit {new['commit_hash'][:8]} measured again in another "
                    f"environment ({path.name}), whose figures replace it"
                )
            continue
        merged = merge_runs(read_json(before), new, interrupted)
        if merged.other_facts and (interrupted or not (merged.measured or merged.failed)):
            writes.append((path, before))  # a run on other facts that changed nothing here
            continue
        outcome.measured += merged.measured
        outcome.kept += merged.kept
        writes.append((path, merged.run))
        name = path.name
        if merged.keeps_old_file:
            writes.append((archive_path(results / machine, name), before))
        if merged.other_facts:
            changed = ", ".join(f"{k} {o!r} -> {n!r}" for k, (o, n) in merged.other_facts.items())
            planned.append(
                f"{name}: measured on other machine facts than the stored run ({changed}): "
                "not merged, the file holds this run's figures alone"
            )
        if merged.kept:
            planned.append(f"{name}: {merged.kept} stored figure(s) not measured now, kept")
        if merged.kept_over_partial:
            planned.append(
                f"{name}: the run was stopped: {merged.kept_over_partial} stored figure(s) "
                "kept over its partial ones"
            )
        if merged.replaced:
            shown = [
                f"{_label(b, c)}: {o:.4g} -> {n:.4g}"
                if isinstance(o, (int, float)) and isinstance(n, (int, float))
                else _label(b, c)
                for b, c, o, n in merged.replaced
            ]
            planned.append(
                f"{name}: {len(shown)} stored figure(s) re-measured and replaced: " + _some(shown)
            )
        if merged.failed:
            shown = [f"{_label(b, c)} (was {o:.4g})" for b, c, o in merged.failed]
            planned.append(
                f"{name}: {len(shown)} stored figure(s) failed in this run, recorded as "
                "failed: " + _some(shown)
            )
        for bench, count, version in merged.other_version:
            planned.append(
                f"{name}: {bench}: {count} stored figure(s) of version {version!r} replaced by "
                f"this run's, measured by another method"
            )
    try:
        if not outcome.measured:
            restore(results, machine, copy)
        else:
            outcome.lines += planned
            _apply(results / machine, stored, writes, superseded, outcome.lines)
            if keep_benchmarks:
                restore_benchmarks(results, copy)
    except atomic.WriteFailed as e:
        raise atomic.WriteFailed(
            e.path,
            e.error,
            e.what,
            f"the run's results are not settled into {results}; the "
            f"copy {copy} is kept: once the cause is fixed, `python -m rmsnorm_bench.store "
            f"{results} {machine}` settles it (scripts/run does, before its next run)",
        ) from None
    discard(copy)
    return outcome


def _apply(folder: Path, stored: Path, writes: list, superseded: list, lines: list) -> None:
    """The writes settle planned: the stored files kept whole in replaced/ first (one kept
    there already, by a settling that stopped, is not kept twice), then the merged ones, then
    the files they supersede removed."""
    archives = [(path, run) for path, run in writes if path.parent.name == "replaced"]
    for path, run in archives:
        _make_folder(path.parent)
        if any(p.read_bytes() == run.read_bytes() for p in path.parent.glob("*.replaced")):
            continue
        atomic.copy_file(run, path)
        lines.append(f"the file as it was is kept as {path}")
    for path, run in writes:
        if path.parent.name == "replaced":
            continue
        if isinstance(run, Path):  # a stored file put back as it was
            atomic.copy_file(run, path)
        else:
            _write_json(path, run)
    for path in superseded:
        try:
            path.unlink(missing_ok=True)
        except OSError as e:
            raise atomic.WriteFailed(path, e, "removing") from None
    # a results file asv removed (it never does) comes back
    for f in stored.glob("*") if stored.is_dir() else []:
        back = folder / f.name
        if f.is_file() and not back.exists() and back not in superseded:
            atomic.copy_file(f, back)


def results_problem(results: Path, machine: str, copy: Path) -> str | None:
    """Why `results` is not the results folder `copy` was kept of, or None. It must be a
    folder holding what the copy holds (results/<machine>/, benchmarks.json: a run adds to
    them, never removes them): settled into a mistyped path, the copy would make that path's
    folder and then be removed, leaving the real results unsettled and without their copy."""
    if not results.is_dir():
        what = "is not a folder" if results.exists() else "does not exist"
        return f"{results} {what}: give the results folder the copy in {copy} was kept of"
    missing = []
    if (copy / "machine").is_dir() and not (results / machine).is_dir():
        missing.append(f"{machine}/")
    if (copy / "benchmarks.json").is_file() and not (results / "benchmarks.json").is_file():
        missing.append("benchmarks.json")
    if missing:
        return (
            f"{results} holds no {' and no '.join(missing)}, which the copy in {copy} holds: "
            "not the results folder it was kept of"
        )
    return None


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("results", type=Path, help="a results/ folder")
    ap.add_argument("machine", help="the machine whose copy is settled")
    ap.add_argument("--state", type=Path, default=ROOT / ".asv", help="where copies are kept")
    args = ap.parse_args(argv)
    copy = args.state / f"kept-{args.machine}"
    if not copy.is_dir():
        print(f"store: no copy of {args.machine}'s results waiting in {args.state}")
        return 0
    if problem := results_problem(args.results, args.machine, copy):
        ap.exit(2, f"store: {problem}; the copy is left as it was\n")
    try:
        with results_lock(args.results, tool="store"):  # never while a run is on
            outcome = settle(args.results, args.machine, copy)
    except BadFile as e:  # a file of the copy: settle stops before it writes anything
        ap.exit(2, f"store: {e}; nothing settled, the copy is left as it was\n")
    except atomic.WriteFailed as e:
        ap.exit(2, f"store: {e}\n")
    except KeyboardInterrupt:
        ap.exit(130, "store: interrupted; the copy is left, to be settled\n")
    for line in outcome.lines:
        print(f"store: {line}")
    print(f"store: settled: {outcome.measured} figure(s) added, {outcome.kept} kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
