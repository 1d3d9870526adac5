"""RMSNorm and fused residual-add RMSNorm: input checks, launchers, autograd and the functional API.

Read top-down: checks, forward and backward launchers (they allocate outputs), the autograd
Functions, then the public functions ``rms_norm`` and ``fused_add_rms_norm``.
"""

import contextlib
import math

import torch
import triton

from . import _config
from ._kernels import _rms_norm_fwd_kernel
from ._launch import INT32_LIMIT

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)

_INTERPRETING = not isinstance(_rms_norm_fwd_kernel, triton.runtime.jit.JITFunction)


# --------------------------------------------------------------------------------------------
# Input checks: every problem raises a ValueError or TypeError that names it.
# --------------------------------------------------------------------------------------------


def _check_x(name: str, x) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} has dtype {x.dtype}; expected float32, float16 or bfloat16")
    if x.dim() == 0:
        raise ValueError(f"{name} must have at least one dimension (the normalised one)")
    if x.shape[-1] == 0:
        raise ValueError(f"{name} has an empty last dimension; there is nothing to normalise")
    if x.is_cuda:  # CUDA and ROCm alike; asked first, since x.device costs host time
        return
    if x.device.type != "cpu":
        raise ValueError(f"{name} is on {x.device}; rmsnorm_kernels runs on CUDA/ROCm GPUs")
    if not _INTERPRETING:
        raise ValueError(
            f"{name} is a CPU tensor but Triton's interpreter is off; move it to a GPU, or set "
            "TRITON_INTERPRET=1 before importing rmsnorm_kernels to run the kernels on the CPU"
        )


def _check_weight(weight, x: torch.Tensor) -> None:
    if weight is None:
        return
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"weight must be a torch.Tensor or None, got {type(weight).__name__}")
    n = x.shape[-1]
    if weight.shape != (n,):
        raise ValueError(
            f"weight has shape {tuple(weight.shape)}; expected ({n},) to match x's last dimension"
        )
    if weight.dtype not in (x.dtype, torch.float32):
        raise TypeError(f"weight has dtype {weight.dtype}; expected {x.dtype} (x's) or float32")
    if weight.device != x.device:
        raise ValueError(f"weight is on {weight.device} but x is on {x.device}")


def _check_residual(residual, x: torch.Tensor) -> None:
    if not isinstance(residual, torch.Tensor):
        raise TypeError(f"residual must be a torch.Tensor, got {type(residual).__name__}")
    if residual.shape != x.shape:
        raise ValueError(
            f"residual has shape {tuple(residual.shape)}; expected x's shape {tuple(x.shape)}"
        )
    if residual.dtype != x.dtype:
        raise TypeError(f"residual has dtype {residual.dtype}; expected x's dtype {x.dtype}")
    if residual.device != x.device:
        raise ValueError(f"residual is on {residual.device} but x is on {x.device}")


def _resolve_eps(eps) -> float:
    # None means the epsilon of the fp32 accumulation type: what F.rms_norm does for every
    # input dtype (its docstring says finfo(x.dtype).eps, its kernels use the opmath type's).
    if eps is None:
        return torch.finfo(torch.float32).eps
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise TypeError(f"eps must be a float or None, got {type(eps).__name__}")
    eps = float(eps)
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"eps must be a non-negative number, got {eps}")
    return eps


def _rows(t: torch.Tensor) -> torch.Tensor:
    """A 2-D [M, N] view of t (a copy only when its last dimension is not contiguous)."""
    if t.dim() != 2:  # reshape costs microseconds per call even where it changes nothing
        t = t.reshape(-1, t.shape[-1])
    return t if t.stride(-1) == 1 or t.shape[-1] == 1 else t.contiguous()


def _on_device(t: torch.Tensor):
    """Launch on t's GPU even when another one is current."""
    if t.is_cuda and t.get_device() != torch.cuda.current_device():
        return torch.cuda.device(t.device)
    return contextlib.nullcontext()


# --------------------------------------------------------------------------------------------
# Launchers: 2-D inputs in, outputs allocated here.
# --------------------------------------------------------------------------------------------


def rms_norm_forward(x, weight, eps: float, residual=None):
    """Forward on 2-D rows. Returns (y, residual_out or None, rstd)."""
    m, n = x.shape
    has_residual = residual is not None
    launcher = _config.forward_launcher(
        _config.shape_bucket(n),
        x.dtype,
        None if weight is None else weight.dtype,
        has_residual,
        x.device,
        n >= _config.STREAM_MIN_N,
    )
    if launcher.few_rows_min_m < m <= launcher.few_rows_max_m:
        launcher = launcher.few_rows
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    rstd = torch.empty((m,), dtype=torch.float32, device=x.device)
    residual_out = torch.empty_like(y) if has_residual else None
    if m == 0:
        return y, residual_out, rstd
    r = residual if has_residual else x
    s = residual_out if has_residual else y
    w = weight if weight is not None else x
    grid = launcher.grid(m)
    sx, sr = x.stride(0), r.stride(0)
    align = _config.row_alignment(n, sx, sr)  # y and s are fresh and contiguous
    # the compiled variant may be launched directly (see _launch) for 32-bit integers and
    # 16-byte aligned pointers of the dtypes in the launcher's key
    direct = (
        (m | n | sx | sr) < INT32_LIMIT
        and not (x.data_ptr() | r.data_ptr() | w.data_ptr()) & 15
        and r.dtype == x.dtype
    )
    with _on_device(x):
        launcher(
            grid, x, sx, r, sr, w, y, n, s, n, rstd, m, n, eps, align=align, direct=direct,
        )  # fmt: skip
    return y, residual_out, rstd


def rms_norm_backward(dy, x, weight, rstd, d_residual_out=None, compute_dw=True):
    """Backward on 2-D rows of the normalised input x (residual_out when fused).

    Returns (dx, dweight or None); dx includes d_residual_out when it is given.
    """
    m, n = x.shape
    compute_dw = compute_dw and weight is not None
    launcher = _config.backward_launcher(
        _config.shape_bucket(n),
        x.dtype,
        None if weight is None else weight.dtype,
        compute_dw,
        x.device,
    )
    if m <= launcher.few_rows_max_m:
        launcher = launcher.few_rows
    dx = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if not compute_dw:
        dw = None
    elif m == 0:
        return dx, torch.zeros_like(weight)
    else:
        dw = torch.empty_like(weight)
    if m == 0:
        return dx, dw
    grid = launcher.grid(m, n)
    # a grid of one row group writes dweight itself; rstd then stands in for the partials,
    # which it never touches
    reduce_partials = compute_dw and grid[0] > 1
    if reduce_partials:
        partial = torch.empty((grid[0], n), dtype=torch.float32, device=x.device)
    else:
        partial = rstd
    has_dres = d_residual_out is not None
    dres = d_residual_out if has_dres else dy
    w = weight if weight is not None else x
    sdy, sx, sdres = dy.stride(0), x.stride(0), dres.stride(0)
    align = _config.row_alignment(n, sdy, sx, sdres)  # dx is fresh and contiguous
    direct = (  # as in the forward; dx, the partials and dw are fresh
        (m | n | sdy | sx | sdres) < INT32_LIMIT
        and not (dy.data_ptr() | x.data_ptr() | dres.data_ptr() | w.data_ptr() | rstd.data_ptr())
        & 15
        and dy.dtype == x.dtype
        and dres.dtype == x.dtype
    )
    with _on_device(x):
        if launcher.split_row:  # first pass: each row's sum of g * x, in segments
            segment_n, segments = launcher.dot_segments(m, n)
            dot = torch.empty((m, segments), dtype=torch.float32, device=x.device)
            launcher.row_dot(
                (m * segments,), dy, sdy, x, sx, w, dot, n, segment_n, segments, align=align,
                direct=direct,
            )  # fmt: skip
        else:
            dot, segments = rstd, 0  # unused
        launcher(
            grid,
            dy, sdy, x, sx, w, rstd, dres, sdres, dx, n, partial, dw if compute_dw else w, dot,
            m, n, int(has_dres), segments, align=align, direct=direct,
        )  # fmt: skip
        if reduce_partials:
            reduce = _config.reduce_launcher(dw.dtype, x.device, launcher.split_row)
            reduce(partial, dw, grid[0], n, align=_config.row_alignment(n), direct=direct)
    return dx, dw


# --------------------------------------------------------------------------------------------
# Autograd: the Functions take inputs of any shape [..., N] and flatten them to rows inside
# forward and backward, where no autograd view nodes are recorded (each would cost host time
# in both passes).
# --------------------------------------------------------------------------------------------


def _shaped(t: torch.Tensor, shape) -> torch.Tensor:
    return t if t.shape == shape else t.view(shape)


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        x2 = _rows(x)
        y, _, rstd = rms_norm_forward(x2, weight, eps)
        ctx.save_for_backward(x2, weight, rstd)
        return _shaped(y, x.shape)

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        compute_dw = weight is not None and ctx.needs_input_grad[1]
        dx, dw = rms_norm_backward(_rows(dy), x, weight, rstd, compute_dw=compute_dw)
        return _shaped(dx, dy.shape), dw, None


class FusedAddRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, eps):
        y, residual_out, rstd = rms_norm_forward(_rows(x), weight, eps, residual=_rows(residual))
        ctx.save_for_backward(residual_out, weight, rstd)
        ctx.set_materialize_grads(False)  # an unused output's gradient stays None, not zeros
        return _shaped(y, x.shape), _shaped(residual_out, x.shape)

    @staticmethod
    def backward(ctx, dy, d_residual_out):
        residual_out, weight, rstd = ctx.saved_tensors
        compute_dw = weight is not None and ctx.needs_input_grad[2]
        if dy is None:  # only residual_out was used
            return d_residual_out, d_residual_out, None, None
        if d_residual_out is not None:
            d_residual_out = _rows(d_residual_out)
        ds, dw = rms_norm_backward(
            _rows(dy), residual_out, weight, rstd, d_residual_out, compute_dw=compute_dw
        )
        # x and residual receive the same gradient: one buffer serves both, through two views
        # of it (given one tensor twice, or the buffer and a view of it, autograd would copy)
        return ds.view(dy.shape), ds.view(dy.shape), dw, None


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def _needs_autograd(x, weight, residual=None) -> bool:
    return torch.is_grad_enabled() and (
        x.requires_grad
        or (weight is not None and weight.requires_grad)
        or (residual is not None and residual.requires_grad)
    )


def rms_norm(x: torch.Tensor, weight: torch.Tensor | None = None, eps: float | None = None):
    """RMSNorm over the last dimension; the same result as ``F.rms_norm(x, (N,), weight, eps)``.

    ``weight`` is (N,) in x's dtype or float32; ``eps=None`` is float32's machine epsilon, as in
    PyTorch. Inputs whose last dimension is not contiguous are copied first; other strides are
    read in place.
    """
    _check_x("x", x)
    _check_weight(weight, x)
    eps = _resolve_eps(eps)
    if weight is not None:
        weight = weight.contiguous()
    if torch.compiler.is_compiling():  # the custom op: traced without a graph break
        y, _ = torch.ops.rmsnorm_kernels.rms_norm_fwd(_rows(x), weight, eps)
    elif _needs_autograd(x, weight):
        return RMSNormFunction.apply(x, weight, eps)
    else:
        y, _, _ = rms_norm_forward(_rows(x), weight, eps)
    return _shaped(y, x.shape)


def fused_add_rms_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    weight: torch.Tensor | None = None,
    eps: float | None = None,
):
    """``residual_out = x + residual``; ``out = rms_norm(residual_out, weight, eps)``.

    Returns ``(out, residual_out)``, both in x's dtype and shape. In the backward, x and
    residual both receive d(residual_out) plus the norm's input gradient.
    """
    _check_x("x", x)
    _check_residual(residual, x)
    _check_weight(weight, x)
    eps = _resolve_eps(eps)
    if weight is not None:
        weight = weight.contiguous()
    if torch.compiler.is_compiling():
        y, s, _ = torch.ops.rmsnorm_kernels.fused_add_rms_norm_fwd(
            _rows(x), _rows(residual), weight, eps
        )
    elif _needs_autograd(x, weight, residual):
        return FusedAddRMSNormFunction.apply(x, residual, weight, eps)
    else:
        y, s, _ = rms_norm_forward(_rows(x), weight, eps, residual=_rows(residual))
    return _shaped(y, x.shape), _shaped(s, x.shape)
