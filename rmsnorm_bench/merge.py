"""Merge a results directory from another clone or machine into results/, losing nothing.

usage: python -m rmsnorm_bench.merge SOURCE [--into DIR]

SOURCE is another `results/` (machine folders of asv JSON files). Files that are new here are
copied; files already here with the same content are skipped; a file that exists here with
other content is a conflict: then nothing is copied and every conflicting file is named. Every
file is checked first, by the rule every tool reads results by (asvformat.problems: JSON in
asv's results format 2, the fields asv and these tools read, one entry per parameter set, no
parameter value twice, every figure a finite number >= 0 or null, the machine and commit its
place names), and a machine's folder may hold one results file per commit, with what is
here: one that is not usable is named with its problem, and nothing is copied. So is every
destination, before anything is copied: an --into that is a file or cannot be made, a file
where a machine folder goes, a directory where a file goes. Exit status 2 when refused.

The earlier runs a run kept whole (MACHINE/replaced/*.replaced, see store) come too, since
they may be the only copy of those figures: one already here (the same content under any
name) is skipped; one whose name is taken here by another file arrives under the next free
number. results/benchmarks.json, which asv writes anew from the benchmarks, is not merged.
"""

import filecmp
import sys
from pathlib import Path

from . import ROOT, argument_parser, atomic, folder_problem, locks, store
from .asvfiles import BadFile, is_verdict, read_json, readable_runs, same_commit
from .asvformat import machine_problems, problems
from .locks import results_lock


def plan(source: Path, into: Path):
    """(new, same, conflicts, bad, in_the_way): the files to copy (source, target), those
    already here, those here with other content, what is wrong with the source, and what
    stands where a machine folder or a results file is to go."""
    new, same, conflicts, bad, in_the_way = [], [], [], [], []
    arriving = {}  # {machine: [(path, run)]} of the new results files
    for f in sorted(source.glob("*/*.json")):
        try:
            data = read_json(f)
        except BadFile as e:
            bad.append(str(e))
            continue
        if is_verdict(f):  # a self-test's verdict: copied as it is, never read as results
            found, kind = ([] if isinstance(data, dict) else ["not a JSON object"]), "verdict"
        elif f.name == "machine.json":
            found, kind = machine_problems(data, f), "machine"
        else:
            found, kind = problems(data, f), "results"
        if found:
            bad.append(f"{f}: not a usable asv {kind} file: {'; '.join(found)}")
            continue
        target = into / f.parent.name / f.name
        if target.parent.exists() and not target.parent.is_dir():
            in_the_way.append(f"{target.parent}: a file where a machine folder goes")
        elif target.is_dir():
            in_the_way.append(f"{target}: a directory where a results file goes")
        elif not target.exists():
            new.append((f, target))
            if kind == "results":
                arriving.setdefault(f.parent.name, []).append((f, data))
        elif filecmp.cmp(f, target, shallow=False):
            same.append(target)
        else:
            conflicts.append(target)
    for machine, files in arriving.items():  # one results file per machine and commit
        if twice := same_commit(files + readable_runs(into / machine)):
            bad.append(f"{into / machine}, with the files of {source / machine}: {twice}")
        if not any((folder / machine / "machine.json").is_file() for folder in (into, source)):
            bad.append(
                f"{source / machine}: no machine.json beside its results, here or in "
                f"{into / machine} (asv publish leaves out a machine folder without one)"
            )
    archives(source, into, new, same, bad, in_the_way)
    return new, same, conflicts, bad, sorted(set(in_the_way))


def archives(source: Path, into: Path, new: list, same: list, bad: list, in_the_way: list):
    """Add the earlier runs kept whole under source's MACHINE/replaced/ to `new` (source,
    target: its own name where that is free here, else the next free number) or `same`; one
    that is not JSON to `bad`, a file where their folder goes to `in_the_way`."""
    taken = {}  # {folder: names here or arriving}
    for f in sorted(source.glob("*/replaced/*.replaced"), key=store.archive_order):
        try:
            read_json(f)
        except BadFile as e:
            bad.append(str(e))
            continue
        folder = into / f.parent.parent.name / "replaced"
        if any(p.exists() and not p.is_dir() for p in (folder.parent, folder)):
            in_the_way.append(f"{folder}: a file where the folder of earlier runs goes")
            continue
        here = sorted(folder.glob("*.replaced")) if folder.is_dir() else []
        if any(filecmp.cmp(f, h, shallow=False) for h in here):
            same.append(folder / f.name)
            continue
        names = taken.setdefault(folder, {h.name for h in here})
        name = f.name
        if name in names:
            name = store.archive_name(names, f.name.rsplit(".", 2)[0])
        names.add(name)
        new.append((f, folder / name))


def make_folders(folders: list[Path]) -> list[Path]:
    """Make the folders the files go into, before any file is copied, and return those made;
    where one cannot be made, the ones made are removed again and WriteFailed names the one
    that could not, and why."""
    made = []
    try:
        for folder in folders:
            missing = [p for p in [folder, *folder.parents] if not p.exists()]
            for part in reversed(missing):
                part.mkdir()
                made.append(part)
    except OSError as e:
        undo([], made)
        raise atomic.WriteFailed(e.filename or folder, e, "making") from None
    return made


def undo(copied: list[Path], made: list[Path]) -> None:
    """Remove the files this merge copied and the folders it made (a failed merge)."""
    for path in reversed(copied):
        path.unlink(missing_ok=True)
    for part in reversed(made):
        part.rmdir()


def copy_all(new: list) -> None:
    """Copy each (source, target) of `new`, each file whole (atomic); where one cannot be
    copied, those copied and the folders made are removed again, and WriteFailed names the
    file and the cause: a merge adds every file or none."""
    made = make_folders(sorted({target.parent for _, target in new}))
    copied = []
    try:
        for src, target in new:
            atomic.copy_file(src, target)
            copied.append(target)
    except BaseException:
        undo(copied, made)
        raise


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("source", type=Path, help="another results/ folder")
    ap.add_argument("--into", type=Path, default=ROOT / "results", help="default: results/")
    args = ap.parse_args(argv)
    if not args.source.is_dir():
        ap.exit(2, f"merge: {args.source} is not a directory\n")
    if args.source.resolve() == args.into.resolve():
        ap.exit(2, "merge: the source is the destination\n")
    if not any(args.source.glob("*/*.json")):
        ap.exit(2, f"merge: no machine folder of results under {args.source}: nothing to merge "
                "(give another clone's results/)\n")  # fmt: skip
    if problem := folder_problem(args.into, "--into"):
        ap.exit(2, f"merge: refused, nothing copied: {problem}\n")
    try:  # never while a run has asv's files in the results, nor beside another merge
        atomic.check_writable(args.into)
        with results_lock(args.into, tool="merge"):
            return merge(ap, args)
    except atomic.WriteFailed as e:
        ap.exit(2, f"merge: refused, nothing copied: {e}\n")
    except KeyboardInterrupt:  # the files copied so far are removed again (copy_all)
        ap.exit(130, "merge: interrupted, nothing copied\n")
    except locks.Busy as e:  # pragma: no cover - merge waits
        ap.exit(2, f"merge: {e}\n")


def merge(ap, args) -> int:
    new, same, conflicts, bad, in_the_way = plan(args.source, args.into)
    if bad:
        ap.exit(2, "merge: refused, nothing copied: bad input:\n  " + "\n  ".join(bad) + "\n")
    if in_the_way:
        ap.exit(2, f"merge: refused, nothing copied: {'; '.join(in_the_way)}\n")
    if conflicts:
        names = "\n  ".join(str(c) for c in conflicts)
        ap.exit(
            2,
            f"merge: refused, nothing copied: {len(conflicts)} file(s) exist with other "
            f"content (the same machine name used twice?):\n  {names}\n",
        )
    copy_all(new)
    print(f"merge: {len(new)} file(s) copied, {len(same)} already here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
