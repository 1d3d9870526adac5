"""The operators' fake implementations (shapes only, for torch.compile and FakeTensor
tracing), and on the Python host path the operators themselves.

Compiled path: csrc/rmsnorm.cpp defines ``rmsnorm_kernels::rms_norm_fwd``,
``fused_add_rms_norm_fwd`` and ``rms_norm_bwd`` (inputs of any rank, rstd in x's shape less
the last dimension) with their CPU, CUDA and autograd kernels; this module adds the fakes.
Python path: the same names are defined here as custom ops, with autograd and the same
contract (inputs of any rank, their checks); eager calls take the shorter autograd.Function
path in ops.py, and ``torch.compile``, TorchScript and ``torch.jit.trace`` these ops.
"""

import torch
from torch import Tensor

from .ops import (
    _check_residual,
    _check_weight,
    _check_x,
    _native,
    _resolve_eps,
    _rows,
    _shaped,
    rms_norm_backward,
    rms_norm_forward,
)

_ABSENT = 0  # an output not computed (dweight, dx's copy): an empty tensor in its place


def _bwd_outputs(x, weight, compute_dw: bool, dx_copy: bool):
    """The backward operator's outputs, shapes only: (dx, dweight, dx's copy)."""
    has_dw = compute_dw and weight is not None
    return (
        x.new_empty(x.shape),
        weight.new_empty(weight.shape) if has_dw else x.new_empty(_ABSENT),
        x.new_empty(x.shape) if dx_copy else x.new_empty(_ABSENT),
    )


def _register_native_fakes() -> None:
    def rms_norm_fwd(x, weight, eps):
        _check_x("x", x)
        _check_weight(weight, x)
        return x.new_empty(x.shape), x.new_empty(x.shape[:-1], dtype=torch.float32)

    def fused_add_rms_norm_fwd(x, residual, weight, eps):
        _check_x("x", x)
        _check_residual(residual, x)
        _check_weight(weight, x)
        rstd = x.new_empty(x.shape[:-1], dtype=torch.float32)
        return x.new_empty(x.shape), x.new_empty(x.shape), rstd

    def rms_norm_bwd(dy, x, weight, rstd, d_residual_out, compute_dw, dx_copy=False):
        return _bwd_outputs(x, weight, compute_dw, dx_copy)

    for fake in (rms_norm_fwd, fused_add_rms_norm_fwd, rms_norm_bwd):
        torch.library.register_fake(f"rmsnorm_kernels::{fake.__name__}", fake)


if _native is not None:
    _register_native_fakes()


def _checked(x, weight, eps, residual=None):
    """The Python path's operators check their inputs, as csrc/rmsnorm.cpp's do: the public
    functions check before they call them, but TorchScript and direct calls reach them
    unchecked. Returns (weight made contiguous, eps)."""
    _check_x("x", x)
    if residual is not None:
        _check_residual(residual, x)
    _check_weight(weight, x)
    return (None if weight is None else weight.contiguous()), _resolve_eps(eps)


def _define_python_ops() -> None:
    @torch.library.custom_op("rmsnorm_kernels::rms_norm_fwd", mutates_args=())
    def rms_norm_fwd(x: Tensor, weight: Tensor | None, eps: float) -> tuple[Tensor, Tensor]:
        weight, eps = _checked(x, weight, eps)
        y, _, rstd = rms_norm_forward(_rows(x), weight, eps)
        return _shaped(y, x.shape), _shaped(rstd, x.shape[:-1])

    @rms_norm_fwd.register_fake
    def _(x, weight, eps):
        return x.new_empty(x.shape), x.new_empty(x.shape[:-1], dtype=torch.float32)

    @torch.library.custom_op("rmsnorm_kernels::fused_add_rms_norm_fwd", mutates_args=())
    def fused_add_rms_norm_fwd(
        x: Tensor, residual: Tensor, weight: Tensor | None, eps: float
    ) -> tuple[Tensor, Tensor, Tensor]:
        weight, eps = _checked(x, weight, eps, residual)
        y, residual_out, rstd = rms_norm_forward(_rows(x), weight, eps, residual=_rows(residual))
        return _shaped(y, x.shape), _shaped(residual_out, x.shape), _shaped(rstd, x.shape[:-1])

    @fused_add_rms_norm_fwd.register_fake
    def _(x, residual, weight, eps):
        return (
            x.new_empty(x.shape),
            x.new_empty(x.shape),
            x.new_empty(x.shape[:-1], dtype=torch.float32),
        )

    @torch.library.custom_op("rmsnorm_kernels::rms_norm_bwd", mutates_args=())
    def rms_norm_bwd(
        dy: Tensor,
        x: Tensor,
        weight: Tensor | None,
        rstd: Tensor,
        d_residual_out: Tensor | None,
        compute_dw: bool,
        dx_copy: bool = False,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """(dx, dweight, dx's copy); an output not computed is an empty tensor."""
        dres = None if d_residual_out is None else _rows(d_residual_out)
        dx, dw, dx2 = rms_norm_backward(
            _rows(dy), _rows(x), weight, rstd.reshape(-1), dres, compute_dw, dx_copy
        )
        return (
            _shaped(dx, x.shape),
            dw if dw is not None else x.new_empty(_ABSENT),
            _shaped(dx2, x.shape) if dx2 is not None else x.new_empty(_ABSENT),
        )

    @rms_norm_bwd.register_fake
    def _(dy, x, weight, rstd, d_residual_out, compute_dw, dx_copy=False):
        return _bwd_outputs(x, weight, compute_dw, dx_copy)

    def _backward(ctx, dy, x, weight, rstd, d_residual_out, weight_index):
        compute_dw = weight is not None and ctx.needs_input_grad[weight_index]
        dx, dw, _ = torch.ops.rmsnorm_kernels.rms_norm_bwd(
            dy, x, weight, rstd, d_residual_out, compute_dw
        )
        return dx, dw if compute_dw else None

    def _rms_norm_setup(ctx, inputs, output):
        x, weight, _ = inputs
        # an inference-mode tensor cannot be saved: its copy can (as RMSNormFunction)
        ctx.save_for_backward(x.clone() if x.is_inference() else x, weight, output[1])

    def _rms_norm_backward(ctx, dy, _drstd):
        x, weight, rstd = ctx.saved_tensors
        dx, dw = _backward(ctx, dy, x, weight, rstd, None, weight_index=1)
        return dx, dw, None

    def _fused_setup(ctx, inputs, output):
        weight = inputs[2]
        ctx.save_for_backward(output[1], weight, output[2])
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
            ctx.mark_non_differentiable(output[1])  # x + residual: no gradient of the weight

    def _fused_backward(ctx, dy, d_residual_out, _drstd):
        residual_out, weight, rstd = ctx.saved_tensors
        if dy is None:  # only residual_out was used
            return d_residual_out, d_residual_out, None, None
        ds, dw = _backward(ctx, dy, residual_out, weight, rstd, d_residual_out, weight_index=2)
        return ds, ds, dw, None

    rms_norm_fwd.register_autograd(_rms_norm_backward, setup_context=_rms_norm_setup)
    fused_add_rms_norm_fwd.register_autograd(_fused_backward, setup_context=_fused_setup)


if _native is None:
    _define_python_ops()
