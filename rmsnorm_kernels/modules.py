"""nn.Module drop-ins: they only hold parameters and call the functional API.

Under TorchScript (``torch.jit.script``) their forward is the branch it compiles: the same
operators (``torch.ops.rmsnorm_kernels.*``, which check their inputs on both host paths),
called on rows, with the module's own shape check. ``torch.jit.trace`` records the operators
the public functions call.
"""

import math
from typing import Final, List, Optional  # noqa: UP035  (TorchScript reads these annotations)

import torch

from . import ops
from .ops import FLOAT_DTYPES, fused_add_rms_norm, rms_norm

_is_scripting = torch.jit.is_scripting  # looked up once; TorchScript knows it as its own


class RMSNorm(torch.nn.RMSNorm):
    """A drop-in for ``torch.nn.RMSNorm`` (same constructor, parameter and state_dict).

    ``normalized_shape`` may name several trailing dimensions; they are normalised together.
    Whatever ``torch.nn.RMSNorm`` takes, this takes: a weight in a third dtype (a bf16 weight
    on f16 x) is used in f32, the output in x's dtype as torch's; x in a dtype the kernels
    lack (float64), an empty normalized size, or a tensor on a device the kernels do not run
    on (the CPU with Triton's interpreter off: a model moved there to be evaluated) gets
    torch's own computation.
    """

    # whether the kernels take CPU tensors here (Triton's interpreter): a module attribute,
    # which TorchScript reads (it calls no Python function and reads no global)
    kernels_take_cpu: Final[bool] = ops.runs_on_cpu()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _is_scripting():  # the only branch TorchScript compiles
            return _scripted_rms_norm(
                x, self.weight, self.normalized_shape, self.eps, self.kernels_take_cpu
            )
        shape = tuple(self.normalized_shape)
        if not shape:
            raise ValueError(
                "RMSNorm's normalized_shape is empty: it names no dimension to normalise"
            )
        if not isinstance(x, torch.Tensor) or tuple(x.shape[x.dim() - len(shape) :]) != shape:
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"RMSNorm expects input whose trailing dims are {shape}, got {got}")
        n = math.prod(shape)
        # a GPU's tensor asked first (no call on the hot path); a meta tensor is no CPU one
        if x.dtype not in FLOAT_DTYPES or n == 0 or not (x.is_cuda or _kernels_take(x)):
            return super().forward(x)
        weight = None if self.weight is None else self.weight.reshape(n)
        if weight is not None and weight.dtype not in (x.dtype, torch.float32):
            weight = weight.float()
        y = rms_norm(x.reshape(*x.shape[: x.dim() - len(shape)], n), weight, self.eps)
        return y.view(x.shape)


def _kernels_take(x: torch.Tensor) -> bool:
    """Whether the kernels run on x, which is on no GPU: a CPU tensor under Triton's
    interpreter (a meta tensor, say, is no CPU tensor: torch's computation takes it)."""
    return ops.runs_on_cpu() and x.device.type == "cpu"


class FusedAddRMSNorm(torch.nn.Module):
    """``forward(x, residual) -> (rms_norm(x + residual), x + residual)`` with a learnt weight."""

    def __init__(self, hidden_size: int, eps: float | None = None, device=None, dtype=None):
        super().__init__()
        # one normalised dimension: a tuple made a weight of that shape, refused in forward
        if isinstance(hidden_size, bool) or not hasattr(hidden_size, "__index__"):
            raise TypeError(
                f"FusedAddRMSNorm's hidden_size is the size of the normalised last dimension, "
                f"an int; got {hidden_size!r}"
            )
        if hidden_size < 1:
            raise ValueError(f"FusedAddRMSNorm's hidden_size must be at least 1, got {hidden_size}")
        self.hidden_size = int(hidden_size)
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.empty(hidden_size, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Ones, as torch.nn.RMSNorm's (after a meta-device build and to_empty, say)."""
        torch.nn.init.ones_(self.weight)

    def forward(self, x: torch.Tensor, residual: torch.Tensor):
        if _is_scripting():
            return _scripted_fused_add_rms_norm(x, residual, self.weight, self.eps)
        weight = self.weight
        if isinstance(x, torch.Tensor):  # (anything else: refused by the function, by name)
            if x.dtype not in FLOAT_DTYPES or not (x.is_cuda or _kernels_take(x)):
                # as RMSNorm: torch's computation where the kernels do not run (a meta tensor)
                s = x + residual
                return torch.nn.functional.rms_norm(s, (self.hidden_size,), weight, self.eps), s
            if weight.dtype not in (x.dtype, torch.float32):
                weight = weight.float()  # a third dtype (a bf16 module on f32 x): used in f32
        return fused_add_rms_norm(x, residual, weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.hidden_size}, eps={self.eps}"


# TorchScript's forwards: what the eager ones do, in the language it compiles


def _scripted_eps(eps: Optional[float]) -> float:  # noqa: UP045
    if eps is None:
        return 1.1920928955078125e-07  # ops.F32_EPS (TorchScript reads no global floats)
    if not eps >= 0.0:  # NaN too
        raise ValueError("eps must be a non-negative number, got " + str(eps))
    return eps


def _scripted_rms_norm(
    x: torch.Tensor,
    weight: Optional[torch.Tensor],  # noqa: UP045
    normalized_shape: List[int],  # noqa: UP006
    eps: Optional[float],  # noqa: UP045
    kernels_take_cpu: bool,
) -> torch.Tensor:
    k = len(normalized_shape)
    if k == 0:
        raise ValueError("RMSNorm's normalized_shape is empty: it names no dimension to normalise")
    if x.dim() < k or x.shape[x.dim() - k :] != normalized_shape:
        raise ValueError(
            "RMSNorm expects input whose trailing dims are "
            + str(normalized_shape)
            + ", got "
            + str(x.shape)
        )
    n = 1
    for size in normalized_shape:
        n *= size
    # as the eager module: torch's computation for an empty norm, a dtype the kernels lack,
    # or a device they do not run on
    if (
        n == 0
        or (x.dtype != torch.float32 and x.dtype != torch.float16 and x.dtype != torch.bfloat16)
        or not (x.is_cuda or (kernels_take_cpu and x.device.type == "cpu"))
    ):
        return torch.rms_norm(x, normalized_shape, weight, eps)
    if weight is not None:
        weight = weight.reshape(n)
        if weight.dtype != x.dtype and weight.dtype != torch.float32:
            weight = weight.float()
    y, _ = torch.ops.rmsnorm_kernels.rms_norm_fwd(x.reshape(-1, n), weight, _scripted_eps(eps))
    return y.view(x.shape)


def _scripted_fused_add_rms_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    weight: Optional[torch.Tensor],  # noqa: UP045
    eps: Optional[float],  # noqa: UP045
):
    if x.dim() == 0:
        raise ValueError("x must have at least one dimension (the normalised one)")
    if residual.shape != x.shape:
        raise ValueError(
            "residual has shape " + str(residual.shape) + "; expected x's shape " + str(x.shape)
        )
    # x and residual as they are (the operators take any rank): where both are leaves, the
    # backward gives each a gradient buffer of its own only if it sees them so
    y, residual_out, _ = torch.ops.rmsnorm_kernels.fused_add_rms_norm_fwd(
        x, residual, weight, _scripted_eps(eps)
    )
    return y.view(x.shape), residual_out.view(x.shape)
