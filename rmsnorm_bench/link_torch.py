"""Make the interpreter that runs this see the machine's torch and Triton (asv's install step).

usage: python -m rmsnorm_bench.link_torch

asv runs this with its benchmark environment's python (asv.conf.json's install_command).
RMSNORM_TORCH_SITE names the site directories of torch, Triton and the interpreter that has
them (scripts/_env.sh sets it from `python -m rmsnorm_bench.machine`); they are written to a
.pth file in this environment, which reads them after its own, so nothing is downloaded,
installed or replaced, and this environment's build of rmsnorm_kernels comes first.

RMSNORM_PEER_SITE (optional, folders separated by os.pathsep) adds folders where peers were
installed apart (`pip install --target DIR`, e.g. quack: DIR and
DIR/nvidia_cutlass_dsl/dsl_packages), after torch's. ASV_PYTHONPATH cannot do this: asv
0.6.6 turns it into PYTHONPATH for the benchmark server, which then takes those folders off
sys.path again.
"""

import os
import sys
import sysconfig
from pathlib import Path

from . import argument_parser

VAR = "RMSNORM_TORCH_SITE"
PEERS_VAR = "RMSNORM_PEER_SITE"


def write_pth(dirs: list[str], site_dir: str | None = None) -> Path:
    pth = Path(site_dir or sysconfig.get_paths()["purelib"]) / "_machine_torch.pth"
    pth.write_text("\n".join(dirs) + "\n")
    return pth


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.parse_args(argv)
    dirs = [d for d in os.environ.get(VAR, "").split(os.pathsep) if d]
    if not dirs:
        ap.exit(2, f"link_torch: {VAR} is not set; run asv through scripts/run or compare\n")
    peers = [d for d in os.environ.get(PEERS_VAR, "").split(os.pathsep) if d]
    for var, named in ((VAR, dirs), (PEERS_VAR, peers)):
        missing = [d for d in named if not os.path.isdir(d)]
        if missing:
            ap.exit(2, f"link_torch: {var} names folders that do not exist: {missing}\n")
    dirs += [d for d in peers if d not in dirs]
    pth = write_pth(dirs)
    print(f"link_torch: {pth} -> {', '.join(dirs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
