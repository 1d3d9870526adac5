"""nn.Module drop-ins: they only hold parameters and call the functional API."""

import math

import torch

from .ops import fused_add_rms_norm, rms_norm


class RMSNorm(torch.nn.RMSNorm):
    """A drop-in for ``torch.nn.RMSNorm`` (same constructor, parameter and state_dict).

    ``normalized_shape`` may name several trailing dimensions; they are normalised together.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = tuple(self.normalized_shape)
        if not isinstance(x, torch.Tensor) or tuple(x.shape[x.dim() - len(shape) :]) != shape:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"RMSNorm expects input whose trailing dims are {shape}, got {got}")
        n = math.prod(shape)
        weight = None if self.weight is None else self.weight.reshape(n)
        y = rms_norm(x.reshape(*x.shape[: x.dim() - len(shape)], n), weight, self.eps)
        return y.view(x.shape)


class FusedAddRMSNorm(torch.nn.Module):
    """``forward(x, residual) -> (rms_norm(x + residual), x + residual)`` with a learnt weight."""

    def __init__(self, hidden_size: int, eps: float | None = None, device=None, dtype=None):
        super().__init__()
        self.hidden_size = hidden_size
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))

    def forward(self, x: torch.Tensor, residual: torch.Tensor):
        return fused_add_rms_norm(x, residual, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.hidden_size}, eps={self.eps}"
