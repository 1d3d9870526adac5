"""Merge a results directory from another clone or machine into results/, losing nothing.

usage: python -m rmsnorm_bench.merge SOURCE [--into DIR]

SOURCE is another `results/` (machine folders of asv JSON files). Files that are new here are
copied; files already here with the same content are skipped; a file that exists here with
other content is a conflict: then nothing is copied and every conflicting file is named.
"""

import filecmp
import json
import shutil
import sys
from pathlib import Path

from . import ROOT, argument_parser


def plan(source: Path, into: Path):
    new, same, conflicts, bad = [], [], [], []
    for f in sorted(source.glob("*/*.json")):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            bad.append(f"{f}: not JSON ({e})")
            continue
        if f.name != "machine.json" and "commit_hash" not in data:
            bad.append(f"{f}: not an asv result (no commit_hash)")
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
        sys.exit(f"merge: {args.source} is not a directory")
    if args.source.resolve() == args.into.resolve():
        sys.exit("merge: the source is the destination")
    new, same, conflicts, bad = plan(args.source, args.into)
    if bad:
        sys.exit("merge: refused, bad input:\n  " + "\n  ".join(bad))
    if conflicts:
        names = "\n  ".join(str(c) for c in conflicts)
        sys.exit(
            f"merge: refused, nothing copied: {len(conflicts)} file(s) exist with other "
            f"content (the same machine name used twice?):\n  {names}"
        )
    for src, target in new:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    print(f"merge: {len(new)} file(s) copied, {len(same)} already here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
