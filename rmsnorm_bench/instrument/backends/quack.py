"""The quack peer (CuTe DSL kernels; CUDA only)."""

from ..matrix import EPS, Unavailable

PACKAGE = "quack"  # the top-level package imported, for backends.installed


def make(op):
    """quack-kernels 0.6.5 (quack/rmsnorm.py): rmsnorm(x, weight=None, bias=None, residual=None,
    out_dtype=None, residual_dtype=None, eps=1e-6, prenorm=False, weight_offset=0.0), autograd
    included. With a residual and prenorm=True it returns (out, residual_out), residual_out =
    x + residual in residual's dtype; the norm is taken of the fp32 sum. (`rmsnorm_fwd` is
    its forward alone, without autograd: not the public call.)"""
    import inspect

    try:
        from quack.rmsnorm import rmsnorm
    except (ImportError, OSError, RuntimeError) as e:  # also: cutlass or CUDA libs missing
        raise Unavailable(f"quack (CuTe DSL) is not installed or does not load ({e})") from None
    if op == "rms_norm":
        return lambda x, w: rmsnorm(x, w, eps=EPS)
    if not {"residual", "prenorm"} <= inspect.signature(rmsnorm).parameters.keys():
        raise Unavailable("this quack's rmsnorm takes no residual (quack-kernels 0.6.5 does)")
    return lambda x, r, w: rmsnorm(x, w, residual=r, eps=EPS, prenorm=True)
