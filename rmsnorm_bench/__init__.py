"""The performance tracker of rmsnorm_kernels: the instrument and the tools around asv.

- ``instrument``: shape matrix, inputs, peer adapters, validation and timing (what the asv
  suites in benchmarks/ measure with); ``progress``: the live log of a run.
- ``asvfiles``: asv's config and results files, loaded by the rule of ``asvformat``;
  ``report``, ``regressions``, ``merge``, ``publish`` (the offline dashboard) and
  ``dashboard`` (its check in a browser) read them.
- ``machine`` and ``link_torch``: the machine's facts and asv's environment set-up;
  ``asvrun`` runs asv with what is stored kept, its command line checked first by
  ``asvargs``; ``compare`` (scripts/compare) runs ``asv continuous`` on two commits, then the
  report and the gate (``regressions``).
- ``atomic``: every write of a stored or tracked file, whole or not at all, a failure named
  by its cause; ``locks``: one run per environment and machine, and no merge, settling or
  publishing while a run is on.
- GPU tuning aids: ``sweep``, ``copy_ceiling``, ``profile_host``, ``training_step``;
  ``codegen`` compiles the kernels for sm_90 anywhere; ``validate`` checks results only;
  ``compile_cost`` times the torch_compile peer's set-up in fresh processes.
- ``grid``: the device time of ours and of every peer over a grid of shapes, dtypes and
  weight dtypes, against the best peer (``gridfile``: its cells and file; ``gridview``: its
  summary and heatmaps).

Each tool runs as ``python -m rmsnorm_bench.<tool>`` from the repository root (``--help``).
This package is not part of the rmsnorm_kernels wheel: it measures that package, commit by
commit, and stays the same while the package changes.
"""

import argparse
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the folder a script (scripts/run, publish, compare) was called from, before it went to ROOT
CALLER_DIR_VAR = "RMSNORM_CALLER_DIR"


def user_path(text: str) -> Path:
    """An argparse type for a path the user typed: relative to the folder they called the
    script from (CALLER_DIR_VAR, set by scripts/), not to the repository root the script
    moved to; else to this process's folder."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else Path(os.environ.get(CALLER_DIR_VAR) or ".") / path


def argument_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The parser of a tool run as `python -m module`: its docstring is the help text, less
    the paragraph that starts "usage:" (argparse writes that one from the arguments)."""
    paragraphs = [p for p in doc.strip().split("\n\n") if not p.startswith("usage:")]
    return argparse.ArgumentParser(
        prog=f"python -m {module}",
        description="\n\n".join(paragraphs),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def revision(text: str) -> str:
    """An argparse type: a commit hash or its prefix, never blank (which would read as the
    option not given, and so as its default)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a commit hash or its prefix, got nothing")
    return text.strip()


def machine_name(text: str) -> str:
    """An argparse type: a machine's name, never blank (which would read as the option not
    given, and so as its default: another machine)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "expected a machine's name, got nothing (leave the option out for the default)"
        )
    return text


def folder_problem(folder: Path, option: str) -> str | None:
    """Why `folder`, given as `option`, cannot be written into, or None: it, or the nearest
    part of its path that exists (a folder not there yet is made), must be a folder."""
    if folder.exists():
        return None if folder.is_dir() else f"{option} {folder}: exists and is not a folder"
    there = next(p for p in folder.absolute().parents if p.exists())
    return None if there.is_dir() else f"{option} {folder}: {there} is not a folder"


def require_gpu(ap: argparse.ArgumentParser, instrument=True, smoke_mode=False, ours=False) -> None:
    """Exit with status 2 and a line that names the problem where the tool of `ap` cannot
    measure here: no CUDA or ROCm GPU, or (a tool that measures through the instrument,
    `instrument`) RMSNORM_BENCH_DEVICE is not one of its values, or selects the CPU smoke mode,
    which runs only a tool that has one (`smoke_mode`: there it needs no GPU), or
    RMSNORM_BENCH_BACKENDS names a backend that does not exist, or (`ours`: a tool that
    exists for this package's backend) leaves that one out."""
    tool = ap.prog.rpartition(".")[2]
    hint = ""
    if instrument:
        from . import instrument as ins

        try:
            ins.check_device()
            selected = ins.selected_backends()  # a misspelt name: refused here, not per case
        except ValueError as e:
            ap.exit(2, f"{tool}: {e}\n")
        if ours and ins.OURS not in selected:
            value = os.environ[ins.BACKENDS_VAR]
            ap.exit(2, f"{tool}: {ins.BACKENDS_VAR}={value!r} leaves out {ins.OURS}, which "
                    f"this tool measures\n")  # fmt: skip
        if ins.DEVICE == "cpu" and smoke_mode:
            return
        if ins.DEVICE == "cpu":
            why = f"{ins.DEVICE_VAR}=cpu selects the CPU smoke mode, which this tool does not have"
            ap.exit(2, f"{tool}: needs a CUDA or ROCm GPU; {why}\n")
        if smoke_mode:
            hint = f" ({ins.DEVICE_VAR}=cpu runs it in the CPU smoke mode, Triton's interpreter)"
    import torch

    if not torch.cuda.is_available():
        ap.exit(2, f"{tool}: needs a CUDA or ROCm GPU{hint}\n")
