"""The one fp32 reference for RMSNorm and fused-add RMSNorm, with per-dtype tolerances.

Tests, benchmarks and users' checks import it from here, so there is a single definition.
"""

import torch

# (atol, rtol) for comparing a result in this dtype with the fp32 reference. bf16 keeps 8
# mantissa bits (relative step 2**-8 = 0.0039) and fp16 11 (0.00049): a correctly rounded
# output is within one step, and gradients that sum over a row or over M rows get two.
TOLERANCES = {
    torch.float32: (1e-4, 1e-4),
    torch.float16: (2e-3, 4e-3),
    torch.bfloat16: (1.6e-2, 3.2e-2),
}


def tolerance(dtype: torch.dtype) -> dict:
    atol, rtol = TOLERANCES[dtype]
    return {"atol": atol, "rtol": rtol}


def _eps(eps):
    return torch.finfo(torch.float32).eps if eps is None else eps


def rms_norm_reference(x, weight=None, eps=None):
    """fp32 RMSNorm over the last dimension, differentiable; returns an fp32 tensor."""
    x = x.float()
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + _eps(eps))
    y = x * rstd
    return y * weight.float() if weight is not None else y


def fused_add_rms_norm_reference(x, residual, weight=None, eps=None):
    """fp32 fused add + RMSNorm; residual_out is rounded to x's dtype first, as the kernels do.

    Returns (out, residual_out) in fp32.
    """
    residual_out = (x.float() + residual.float()).to(x.dtype).float()
    if x.requires_grad or residual.requires_grad:
        # keep the graph: the rounding is the identity for gradients
        exact = x.float() + residual.float()
        residual_out = exact + (residual_out - exact).detach()
    return rms_norm_reference(residual_out, weight, eps), residual_out
