"""Known, explained steps in the history (docs/known-steps.json), for the gate and the
dashboard's Regressions page.

A library module: `python -m rmsnorm_bench.knownsteps [FILE]` checks the file and lists its
steps (exit 2, naming the problem, where it cannot be used).

Each step: `after` and `upto` (commits, full or a prefix), `benchmarks` (a regular
expression matched against "benchmark(case, backend)", as asv names a figure), `reason`,
`doc` (where it is explained), optionally `machines`. A change of a figure between commits
`base` and `head` is that step when the name matches, `after` is `base` or an ancestor of it,
and `head` is `upto` or an ancestor of it: the step happened in the commits from `after`
(excluded) to `upto`. A commit this clone lacks matches no step.
"""

import functools
import re
import subprocess
import sys
from pathlib import Path

from . import ROOT, argument_parser
from .asvfiles import BadFile, read_json

FILE = ROOT / "docs" / "known-steps.json"
FIELDS = ("after", "upto", "benchmarks", "reason", "doc")


def load(path: Path = FILE) -> list[dict]:
    """The steps of `path` ([] where there is no such file); BadFile names a bad one."""
    if not Path(path).exists():
        return []
    data = read_json(path)
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list):
        raise BadFile(f'{path}: no list of steps (an object with "steps": [...])')
    for i, step in enumerate(steps):
        where = f"{path}: step {i + 1}"
        if not isinstance(step, dict):
            raise BadFile(f"{where}: not an object")
        missing = [f for f in FIELDS if not isinstance(step.get(f), str) or not step[f].strip()]
        if missing:
            raise BadFile(f"{where}: {', '.join(missing)} missing or not a text")
        try:
            re.compile(step["benchmarks"])
        except re.error as e:
            raise BadFile(f"{where}: benchmarks is not a regular expression ({e})") from None
        machines = step.get("machines")
        if machines is not None and not (
            isinstance(machines, list) and all(isinstance(m, str) for m in machines)
        ):
            raise BadFile(f"{where}: machines is not a list of names")
    return steps


@functools.cache
def _commit(rev: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() if out.returncode == 0 else None


@functools.cache
def _at_or_before(old: str, new: str) -> bool:
    """`old` is `new` or an ancestor of it (both commits of this clone)."""
    if old == new:
        return True
    cmd = ["git", "-C", str(ROOT), "merge-base", "--is-ancestor", old, new]
    return subprocess.run(cmd, capture_output=True).returncode == 0


def explain(steps: list[dict], name: str, base: str | None, head: str, machine: str = ""):
    """The step of `steps` that a change of figure `name` ("benchmark(case, backend)")
    between commits `base` and `head` is, or None."""
    if base is None:
        return None
    commits = [_commit(c) for c in (base, head)]
    if None in commits:
        return None
    base, head = commits
    for step in steps:
        if step.get("machines") is not None and machine not in step["machines"]:
            continue
        if not re.search(step["benchmarks"], name):
            continue
        after, upto = _commit(step["after"]), _commit(step["upto"])
        if after and upto and _at_or_before(after, base) and _at_or_before(head, upto):
            return step
    return None


def describe(step: dict) -> str:
    return f"{step['reason']} (docs/known-steps.json; {step['doc']})"


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("file", nargs="?", type=Path, default=FILE)
    args = ap.parse_args(argv)
    try:
        steps = load(args.file)
    except BadFile as e:
        ap.exit(2, f"knownsteps: {e}\n")
    for step in steps:
        print(f"{step['after'][:8]}..{step['upto'][:8]} {step['benchmarks']}: {describe(step)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
