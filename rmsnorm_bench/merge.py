"""Merge a results directory from another clone or machine into results/, losing nothing.

usage: python -m rmsnorm_bench.merge SOURCE [--into DIR]

SOURCE is another `results/` (machine folders of asv JSON files). Files that are new here are
copied; files already here with the same content are skipped; a file that exists here with
other content is a conflict: then nothing is copied and every conflicting file is named. Every
file is checked first (JSON, the fields asv and these tools read, one entry per parameter
set, no parameter value twice, the machine and commit its place names): one that is not
usable is named with its problem, and nothing is copied. Exit status 2 when refused.
"""

import filecmp
import shutil
import sys
from pathlib import Path

from . import ROOT, argument_parser
from .asvfiles import BadFile, machine_problems, problems, read_json


def plan(source: Path, into: Path):
    new, same, conflicts, bad = [], [], [], []
    for f in sorted(source.glob("*/*.json")):
        try:
            data = read_json(f)
        except BadFile as e:
            bad.append(str(e))
            continue
        if f.name == "machine.json":
            found, kind = machine_problems(data, f), "machine"
        else:
            found, kind = problems(data, f), "results"
        if found:
            bad.append(f"{f}: not a usable asv {kind} file: {'; '.join(found)}")
            continue
        target = into / f.parent.name / f.name
        if not target.exists():
            new.append((f, target))
        elif filecmp.cmp(f, target, shallow=False):
            same.append(target)
        else:
            conflicts.append(target)
    return new, same, conflicts, bad


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("source", type=Path, help="another results/ folder")
    ap.add_argument("--into", type=Path, default=ROOT / "results", help="default: results/")
    args = ap.parse_args(argv)
    if not args.source.is_dir():
        ap.exit(2, f"merge: {args.source} is not a directory\n")
    if args.source.resolve() == args.into.resolve():
        ap.exit(2, "merge: the source is the destination\n")
    new, same, conflicts, bad = plan(args.source, args.into)
    if bad:
        ap.exit(2, "merge: refused, nothing copied: bad input:\n  " + "\n  ".join(bad) + "\n")
    if conflicts:
        names = "\n  ".join(str(c) for c in conflicts)
        ap.exit(
            2,
            f"merge: refused, nothing copied: {len(conflicts)} file(s) exist with other "
            f"content (the same machine name used twice?):\n  {names}\n",
        )
    for src, target in new:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    print(f"merge: {len(new)} file(s) copied, {len(same)} already here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
