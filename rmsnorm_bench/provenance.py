"""Whether the figures a run would store are the commit's: the code that measures them and the
code measured, in this checkout, against the commit checked out (HEAD).

asv builds the package of each commit it measures from git, but the benchmarks, and the
instrument they import, come from this checkout's working tree: an uncommitted edit there
(a timer returning 100x, say) would be stored as the figures of HEAD's commit, and the gate
would then judge HEAD by them. So a run whose working tree differs from HEAD in MEASURING or
MEASURED is refused before anything runs (exit 2, the files named). The package (MEASURED)
is asv's build of the commit, not the working tree; it is named too, so that nobody stores
figures believing an uncommitted edit was measured.

``--uncommitted`` (scripts/run, scripts/compare) measures anyway, as asv's ``--dry-run``
would, except that the figures are kept for a look: in UNCOMMITTED/results/<machine>/
(.asv/uncommitted/), never in results/, so that neither the gate's history nor the dashboard
ever holds them.
"""

import subprocess
from pathlib import Path

from . import ROOT, asvfiles

# what measures: the suites, the instrument they import, the package they import it from,
# and the configuration whose commands build and warm the environment
MEASURING = ("benchmarks", "rmsnorm_bench/__init__.py", "rmsnorm_bench/instrument", "asv.conf.json")
MEASURED = ("rmsnorm_kernels", "pyproject.toml")  # what is measured (asv builds the commit's)
UNCOMMITTED = ROOT / ".asv" / "uncommitted"


class NotAGitCheckout(RuntimeError):
    pass


def changed_files(root: Path = ROOT, paths=MEASURING + MEASURED) -> list[str]:
    """The files under `paths` whose working-tree or staged state differs from HEAD, untracked
    ones included (ignored ones, such as __pycache__, not), relative to `root`."""
    done = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all",
         "--", *paths],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise NotAGitCheckout(f"git status in {root} failed: {done.stderr.strip()}")
    entries, files = done.stdout.split("\0"), []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        if "R" in status or "C" in status:  # a rename's source follows as its own entry
            i += 1
        files.append(path)
    return sorted(set(files))


def refusal(files: list[str], tool: str, flag: bool = True) -> str:
    """The message of a refused run: the files named, what to do (`flag`: the tool takes
    --uncommitted)."""
    shown = ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
    apart = UNCOMMITTED.relative_to(ROOT) if UNCOMMITTED.is_relative_to(ROOT) else UNCOMMITTED
    anyway = (
        ", or give --uncommitted to measure anyway with nothing stored in results/ (the "
        f"figures go to {apart}/results/)"
        if flag
        else ""
    )
    return (
        f"{tool}: refused: the working tree differs from HEAD in what measures or is measured "
        f"({shown}); figures stored under HEAD's hash must come from HEAD's code. Commit or "
        f"stash the change{anyway}"
    )


def scratch_conf(conf: Path, machine: str) -> Path:
    """A copy of asv's config that stores results and html under UNCOMMITTED, beside `conf`
    (asv resolves the config's paths from its folder)."""
    UNCOMMITTED.mkdir(parents=True, exist_ok=True)
    copy = conf.resolve().parent / f".asv-uncommitted-{machine}.json"
    changes = {"results_dir": str(UNCOMMITTED / "results"), "html_dir": str(UNCOMMITTED / "html")}
    asvfiles.write_conf(copy, changes, conf)
    return copy
