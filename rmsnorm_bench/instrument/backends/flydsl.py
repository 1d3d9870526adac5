"""The FlyDSL peer (ROCm only), from a checkout named by FLYDSL_ROOT."""

import os

from ..matrix import EPS, Unavailable


def make(op):
    """FlyDSL's public autograd entry points, from a checkout named by FLYDSL_ROOT (its
    `kernels/` is not part of the installed `flydsl` package, which they need too).

    kernels/norm/rmsnorm_kernel.py: rmsnorm(x, weight=None, eps=EPS) -> out and
    fused_add_rmsnorm(x, residual, weight, eps=EPS, prenorm=True) -> (out, residual_out),
    the calls of its own test_rmsnorm_backward_torch_benchmark. Their default eps is 1e-5:
    ours is passed. Both exist only where torch imports.
    """
    import sys
    from pathlib import Path

    root = os.environ.get("FLYDSL_ROOT")
    if not root:
        raise Unavailable("FlyDSL needs FLYDSL_ROOT naming a checkout of it")
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        import kernels

        # another package named `kernels` (e.g. Hugging Face's) may have been imported first
        found = Path(kernels.__file__ or next(iter(kernels.__path__))).resolve()
        if not found.is_relative_to(Path(root).resolve()):
            raise Unavailable(f"`kernels` was imported from {found}, not from FLYDSL_ROOT={root}")
        from kernels.norm.rmsnorm_kernel import fused_add_rmsnorm, rmsnorm
    except ImportError as e:
        raise Unavailable(
            f"FlyDSL's kernels/norm/rmsnorm_kernel.py could not be imported from "
            f"FLYDSL_ROOT={root} ({e})"
        ) from None
    if op == "rms_norm":
        return lambda x, w: rmsnorm(x, w, eps=EPS)
    return lambda x, r, w: fused_add_rmsnorm(x, r, w, eps=EPS, prenorm=True)
