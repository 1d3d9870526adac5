"""Triton RMSNorm and fused residual-add RMSNorm kernels, forward and backward, with autograd."""

from . import _library, reference  # noqa: F401  (_library registers the custom ops)
from .modules import FusedAddRMSNorm, RMSNorm
from .ops import fused_add_rms_norm, rms_norm
from .replace import replace_rmsnorm

__version__ = "0.1.0"
__all__ = [
    "FusedAddRMSNorm",
    "RMSNorm",
    "fused_add_rms_norm",
    "reference",
    "replace_rmsnorm",
    "rms_norm",
]
