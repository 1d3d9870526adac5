"""This machine's name and facts (GPU, driver, CUDA/ROCm, torch, Triton) for asv.

usage: python -m rmsnorm_bench.machine [--machine NAME] [--gpu INDEX] [--register [--force]]
                                       [--results DIR]

Prints shell assignments that scripts/_env.sh evaluates: `machine` (NAME, by default the
GPU's name, e.g. nvidia-h200, with -gpuINDEX for --gpu; "cpu-smoke" without a GPU),
`device` (cuda, or cpu for the CPU smoke mode), `torch_site` (the site directories of this
interpreter's torch, Triton and packages, which `link_torch` shows to asv's environment) and
`facts` (JSON: GPU, driver, CUDA/ROCm, torch, Triton, and the host CPU's model and count in
asv's own `cpu` and `num_cpu` fields, which the host time of every public call depends on).
--register writes the machine's entry in asv's machine file
(~/.asv-machine.json, under a lock: runs side by side share it) before asv reads it: asv's
`machine` field plus the facts, which asv records with every result and the dashboard offers
as selectors. A name is bound to its facts: where results/NAME/machine.json (committed with
the machine's results) records another GPU, GPU count, driver, CUDA/ROCm or torch than this
host's, --register refuses (exit status 2, the differences named, nothing written), and
--force registers this host's facts under the name all the same (the same machine,
changed). Names are checked first: at most NAME_MAX characters, of letters, digits, '.',
'_' and '-', starting with a letter or digit.
"""

import fcntl
import json
import os
import platform
import re
import shlex
import site
import subprocess
import sys
from pathlib import Path

from . import ROOT, argument_parser, machine_name
from .asvfiles import BadFile, load_machine, read_conf, read_json

# a folder name under results/ and in asv's files: never "." or "..", nor a hidden name; short
# enough for every file named after it (.asv/lock-results-NAME, a Triton cache NAME-gpuN)
NAME_MAX = 64
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}")  # whole names: fullmatch
NAME_RULE = (
    f"a machine name starts with a letter or digit, holds letters, digits, '.', '_' and '-' "
    f"only, and is at most {NAME_MAX} characters long"
)
# the facts a machine's name stands for: results under one name must come from one kind of
# machine, its GPU, their count, driver, CUDA or ROCm and torch. The host CPU and Triton are
# recorded with every result (the dashboard keeps series of other values apart) but bind
# nothing: CI's runners differ in CPU, and Triton comes with torch.
BOUND = ("gpu", "gpu_count", "driver", "cuda", "rocm", "torch")


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The host CPU's model name (Linux's /proc/cpuinfo; elsewhere what platform says)."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_facts() -> dict:
    """asv's own `cpu` and `num_cpu` fields: the host CPU's model and its CPU count (the
    whole host's; the run's affinity may allow fewer, see scripts/run --cpu-affinity)."""
    return {"cpu": cpu_model(), "num_cpu": str(os.cpu_count() or 0)}


def facts() -> dict:
    """What asv records about this machine besides its name (all values strings)."""
    import torch
    import triton

    info = {"torch": torch.__version__, "triton": triton.__version__, **cpu_facts()}
    if not torch.cuda.is_available():
        info["gpu"] = "none"  # the CPU smoke mode: Triton's interpreter
        info["gpu_count"] = "0"
        return info
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    info["gpu"] = props.name
    info["gpu_count"] = str(torch.cuda.device_count())
    if torch.version.hip:
        info["rocm"] = torch.version.hip
    else:
        info["cuda"] = torch.version.cuda
        try:
            smi = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
            info["driver"] = subprocess.run(smi, capture_output=True, text=True).stdout.split()[0]
        except (OSError, IndexError):
            info["driver"] = "unknown"
    return info


def default_name(info: dict, gpu: str | None = None) -> str:
    """The GPU's name as a machine name (nvidia-h200), one per GPU index given."""
    if info["gpu_count"] == "0":
        return "cpu-smoke"
    name = re.sub("[^a-z0-9]+", "-", info["gpu"].lower()).strip("-")
    return f"{name}-gpu{gpu}" if gpu else name


def torch_site() -> list[str]:
    """The site directories of torch, Triton and this interpreter, in that order of need."""
    import torch
    import triton

    dirs = {os.path.dirname(os.path.dirname(m.__file__)) for m in (torch, triton)}
    # Debian's Python lists dist-packages folders that need not exist (seen on an H200
    # machine, where link_torch then refused them and no benchmark could run)
    dirs.update(d for d in site.getsitepackages() if os.path.isdir(d))
    return sorted(dirs)


def read_machine_file(path: Path) -> dict:
    """asv's machine file, checked: BadFile names it and says what is wrong and what to do."""
    if not path.is_file():
        return {}
    known = read_json(path)
    if not isinstance(known, dict) or not all(
        isinstance(v, dict) for k, v in known.items() if k != "version"
    ):
        raise BadFile(f"{path}: not asv's machine file ({{name: {{...}}, ...}})")
    return known


def other_facts(name: str, info: dict, results: Path) -> str | None:
    """How this host's facts `info` differ from those `results`/NAME/machine.json records for
    `name` (committed with its results), or None where they agree or none are recorded.
    BadFile where that file cannot be read."""
    path = Path(results) / name / "machine.json"
    if not path.is_file():
        return None  # a new machine
    recorded = load_machine(path)
    differ = [
        f"{key} {recorded.get(key, '(not recorded)')!r} there, {info.get(key, '(none)')!r} here"
        for key in BOUND
        if recorded.get(key) != info.get(key)
    ]
    return "; ".join(differ) or None


def register(name: str, info: dict, path: Path | None = None) -> dict:
    """Write `name`'s entry in asv's machine file: what is there, updated with the facts."""
    from asv.machine import MachineCollection

    path = Path(path or MachineCollection.get_machine_file_path())
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = read_machine_file(path)
        entry = {**known.get(name, {}), "machine": name, **info}
        MachineCollection.save(name, entry, _path=str(path))
    return entry


def shown(name: str) -> str:
    """A name as an error names it: a long one cut short, its length given."""
    return (
        repr(name) if len(name) <= NAME_MAX else f"{name[:NAME_MAX]!r}... ({len(name)} characters)"
    )


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument(
        "--machine", type=machine_name, help="default: the GPU's name, cpu-smoke without one"
    )
    ap.add_argument("--gpu", help="the index of the GPU a run uses (CUDA_VISIBLE_DEVICES)")
    ap.add_argument("--register", action="store_true", help="write asv's machine file")
    ap.add_argument(
        "--force",
        action="store_true",
        help="with --register: register even where the name's committed machine.json records "
        "other facts (the same machine, changed: a new driver or torch)",
    )
    ap.add_argument("--results", type=Path, help="default: asv.conf.json's results_dir")
    args = ap.parse_args(argv)
    if args.results is None:
        try:
            args.results = ROOT / read_conf()["results_dir"]
        except BadFile as e:
            ap.exit(2, f"machine: {e}\n")
    if args.gpu and not args.gpu.isdigit():
        ap.exit(2, f"machine: --gpu takes a GPU index, got {args.gpu!r}\n")
    if args.machine and not NAME.fullmatch(args.machine):
        ap.exit(2, f"machine: machine name {shown(args.machine)}: {NAME_RULE}\n")
    if args.force and not args.register:
        ap.error("--force goes with --register")
    info = facts()
    if args.gpu and info["gpu_count"] == "0":  # CUDA_VISIBLE_DEVICES named no GPU there is
        ap.exit(2, f"machine: --gpu {args.gpu}: no GPU of that index on this host\n")
    if args.gpu:
        info["gpu_index"] = args.gpu
    name = args.machine or default_name(info, args.gpu)
    if not NAME.fullmatch(name):
        ap.exit(2, f"machine: machine name {shown(name)} (this GPU's): {NAME_RULE}; "
                "give one: --machine\n")  # fmt: skip
    if args.register and not args.force:
        try:
            differ = other_facts(name, info, args.results)
        except BadFile as e:
            ap.exit(2, f"machine: {e}\n")
        if differ:
            ap.exit(
                2,
                f"machine: the name {name!r} stands for another machine's results "
                f"({args.results / name / 'machine.json'}): {differ}. Choose another name "
                "(scripts/run --machine NAME; without it, the GPU's name or cpu-smoke), or, "
                "where this is that machine changed (a new driver or torch), re-register it: "
                "scripts/run --force; nothing was written\n",
            )
    if args.register:
        try:
            entry = register(name, info)
        except BadFile as e:
            ap.exit(2, f"machine: {e}; fix or remove it (asv writes it anew)\n")
        print(f"machine {name}: {json.dumps(entry)}", file=sys.stderr)
    values = {
        "machine": name,
        "device": "cpu" if info["gpu_count"] == "0" else "cuda",
        "torch_site": os.pathsep.join(torch_site()),
        "facts": json.dumps(info),
    }
    print("\n".join(f"{key}={shlex.quote(value)}" for key, value in values.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
