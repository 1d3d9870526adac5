"""Backends: each makes the public call of one implementation, or says why it cannot run.

Ours (rmsnorm_kernels) and torch eager run everywhere, torch eager on the CPU too; the peers
(torch.compile, Liger-Kernel, quack, FlyDSL) run on GPUs only, each adapter in its own module
with the version and call it was written against.
"""

import importlib.machinery
import os

from .. import matrix
from ..matrix import BACKENDS, BACKENDS_VAR, EPS, Unavailable, selected_backends
from . import flydsl, liger, quack, torch_compile, torch_eager

# The package each peer's adapter imports. A run leaves out a peer whose package its benchmark
# environment cannot find (asvargs.measured_cases), since every case of it would only be
# skipped; a peer found there but failing to load is still run, and its cases say why.
PACKAGES = {"liger": liger.PACKAGE, "quack": quack.PACKAGE}


def installed(name: str, path: list[str]) -> bool:
    """Whether backend `name` can be found where `path` is searched (found, not imported): its
    package (PACKAGES), FlyDSL's checkout named by FLYDSL_ROOT; ours and torch's always."""
    if name == "flydsl":
        return bool(os.environ.get("FLYDSL_ROOT"))
    package = PACKAGES.get(name)
    return package is None or importlib.machinery.PathFinder.find_spec(package, path) is not None


def make_backend(name: str, op: str):
    """The callable (x, w) -> y for rms_norm, or (x, r, w) -> (y, residual_out) for fused_add."""
    import torch

    if name in BACKENDS and name not in selected_backends():  # an unknown name: below
        raise Unavailable(f"not among {BACKENDS_VAR}={os.environ[BACKENDS_VAR]}")
    if matrix.DEVICE == "cpu" and name in BACKENDS and name not in matrix.CPU_BACKENDS:
        raise Unavailable(f"{name} runs on GPUs only; the CPU smoke mode measures triton and torch")
    if name == "triton":
        import rmsnorm_kernels

        if op == "rms_norm":
            return lambda x, w: rmsnorm_kernels.rms_norm(x, w, EPS)
        return lambda x, r, w: rmsnorm_kernels.fused_add_rms_norm(x, r, w, EPS)
    if name == "torch":
        return torch_eager.make(op)
    if name == "torch_compile":
        return torch_compile.make(op)
    if name == "liger":
        return liger.make(op)
    if name == "quack":
        return quack.make(op)
    if name == "flydsl":
        if torch.version.hip is None:
            raise Unavailable("FlyDSL runs on ROCm GPUs only")
        return flydsl.make(op)
    raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")
