"""Triton RMSNorm and fused residual-add RMSNorm kernels, forward and backward, with autograd."""

from . import reference
from .modules import FusedAddRMSNorm, RMSNorm
from .ops import fused_add_rms_norm, rms_norm

__version__ = "0.1.0"
__all__ = ["FusedAddRMSNorm", "RMSNorm", "fused_add_rms_norm", "reference", "rms_norm"]
