"""Make the interpreter that runs this see the machine's torch and Triton (asv's install step).

usage: python -m rmsnorm_bench.link_torch

asv runs this with its benchmark environment's python (asv.conf.json's install_command).
RMSNORM_TORCH_SITE names the site directories of torch, Triton and the interpreter that has
them (scripts/_env.sh sets it from `python -m rmsnorm_bench.machine`); they are written to a
.pth file in this environment, which reads them after its own, so nothing is downloaded,
installed or replaced, and this environment's build of rmsnorm_kernels comes first.
"""

import os
import sys
import sysconfig
from pathlib import Path

from . import argument_parser

VAR = "RMSNORM_TORCH_SITE"


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
    missing = [d for d in dirs if not os.path.isdir(d)]
    if missing:
        ap.exit(2, f"link_torch: {VAR} names folders that do not exist: {missing}\n")
    pth = write_pth(dirs)
    print(f"link_torch: {pth} -> {', '.join(dirs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
