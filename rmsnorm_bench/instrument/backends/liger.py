"""The Liger-Kernel peer."""

import contextlib
import sys

from ..matrix import EPS, Unavailable

PACKAGE = "liger_kernel"  # the top-level package imported, for backends.installed


def make(op):
    """Liger-Kernel 0.8.5's autograd Functions, with its nn.Module drop-ins' defaults.

    liger_kernel/ops/rms_norm.py: LigerRMSNormFunction.apply(X, W, eps, offset, casting_mode,
    in_place, row_mode) -> Y. liger_kernel/ops/fused_add_rms_norm.py:
    LigerFusedAddRMSNormFunction.apply(X, R, W, eps, offset, casting_mode, in_place) -> (Y, S),
    S = X + R in X's dtype (our residual_out), Y the norm of S. Offset 0 and casting mode
    "llama" (rstd in fp32, x * rstd cast back to x's dtype before the weight) compute our
    function; that cast rounds once more than our kernels do, within the dtype's tolerance.
    """
    try:
        try:
            with _without("peft"):
                function = _function(op)
        except ImportError as e:
            if e.name != "peft":
                raise
            function = _function(op)  # a Liger that needs peft to import: as it is
    except ImportError as e:
        raise Unavailable(f"Liger-Kernel is not installed ({e})") from None
    if op == "rms_norm":
        # LigerRMSNorm's defaults: offset 0, casting mode "llama", in-place backward
        return lambda x, w: function.apply(x, w, EPS, 0.0, "llama", True)
    # LigerFusedAddRMSNorm's defaults: offset 0, casting mode "llama", in_place=False (its
    # backward writes dx to a new tensor, not over dy)
    return lambda x, r, w: function.apply(x, r, w, EPS, 0.0, "llama", False)


def _function(op):
    if op == "rms_norm":
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        return LigerRMSNormFunction
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction

    return LigerFusedAddRMSNormFunction


@contextlib.contextmanager
def _without(package: str):
    """Imports inside see `package` as not installed (where nothing imported it yet); after
    them it is importable again. Liger-Kernel's utils probe for peft (its LoRA support, which
    no norm uses); where the machine has peft, that probe imports transformers and
    scikit-learn: 5.7 of a measuring process's 63 s on an H200 host, in every process. Liger's
    PEFT_AVAILABLE stays False in this process; a Liger that cannot import without peft is
    imported again as it is (make)."""
    blocked = package not in sys.modules
    if blocked:
        sys.modules[package] = None  # import raises ImportError
    try:
        yield
    finally:
        if blocked and sys.modules.get(package, 0) is None:
            del sys.modules[package]
