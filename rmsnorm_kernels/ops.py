"""RMSNorm and fused residual-add RMSNorm: the public functions over two host paths.

The compiled path (``_extension``: C++ operators with a C++ autograd node, launching Triton's
compiled kernels through the driver) serves every call where it could be built; the public
functions then only resolve ``eps`` and call the operator, eager and under ``torch.compile``
alike. The Python path below (input checks, launchers that allocate outputs, autograd
Functions) serves where it could not: same kernels, same plans (``_plan``), more host time.

Read top-down: the host path, checks, the Python path's launchers and autograd, then the
public functions ``rms_norm`` and ``fused_add_rms_norm``.
"""

import contextlib
import functools
import math
import numbers

import torch
import torch.nn.functional as F
import triton
from torch.autograd import forward_ad
from torch.autograd.function import once_differentiable

from . import _extension, _plan
from ._config import cdiv, row_alignment
from ._kernels import _rms_norm_fwd_kernel

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
F32_EPS = torch.finfo(torch.float32).eps

_INTERPRETING = not isinstance(_rms_norm_fwd_kernel, triton.runtime.jit.JITFunction)

# The compiled host path's module, or None where the Python path serves (the warning says why)
_native = _extension.load(_INTERPRETING)
HOST_PATH = "cpp" if _native is not None else "python"
if _native is not None:  # the public calls' operators, looked up once rather than per call
    _RMS_NORM_FWD = torch.ops.rmsnorm_kernels.rms_norm_fwd.default
    _FUSED_ADD_RMS_NORM_FWD = torch.ops.rmsnorm_kernels.fused_add_rms_norm_fwd.default


def runs_on_cpu() -> bool:
    """Whether the kernels take CPU tensors in this process (Triton's interpreter is on)."""
    return _INTERPRETING


def clear_caches() -> None:
    """Forget every plan, compiled variant and autocast dtype asked of torch (tests count
    compilations from zero, and change torch's autocast rule)."""
    _AUTOCAST_DTYPES.clear()
    _extension.clear_caches(_native)


# --------------------------------------------------------------------------------------------
# Input checks: every problem raises a ValueError or TypeError that names it.
# --------------------------------------------------------------------------------------------


# The longest row the kernels take (csrc/rmsnorm.cpp checks the same): the split backward
# shares a row out over a grid dimension of at most 65,535 column blocks of 8,192
# (_config.SPLIT_BLOCK_N); past 2**31 elements the split kernels' column offsets (int32) would
# also overflow.
MAX_ROW_ELEMENTS = 65_535 * 8_192


def _check_x(name: str, x) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if _is_batched(x):
        raise NotImplementedError(
            "rmsnorm_kernels does not support torch.vmap; apply it to the batched tensor "
            "directly: it normalises the last dimension of inputs of any rank"
        )
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} has dtype {x.dtype}; expected float32, float16 or bfloat16")
    if x.layout != torch.strided:
        raise TypeError(f"{name} is a {x.layout} tensor; expected a dense (strided) one")
    if x.dim() == 0:
        raise ValueError(f"{name} must have at least one dimension (the normalised one)")
    if x.shape[-1] == 0:
        raise ValueError(f"{name} has an empty last dimension; there is nothing to normalise")
    if x.shape[-1] > MAX_ROW_ELEMENTS:
        raise ValueError(
            f"{name} has rows of {x.shape[-1]} elements; rmsnorm_kernels takes at most "
            f"{MAX_ROW_ELEMENTS:,} a row"
        )
    if x.is_cuda:  # CUDA and ROCm alike; asked first, since x.device costs host time
        return
    if x.device.type != "cpu":
        raise ValueError(f"{name} is on {x.device}; rmsnorm_kernels runs on CUDA/ROCm GPUs")
    if not _INTERPRETING:
        raise ValueError(
            f"{name} is a CPU tensor but Triton's interpreter is off; move it to a GPU, or set "
            "TRITON_INTERPRET=1 before importing rmsnorm_kernels to run the kernels on the CPU"
        )


FORWARD_AD = (
    "rmsnorm_kernels does not support forward-mode AD (a dual tensor's tangent); use "
    "torch.nn.functional.rms_norm under torch.autograd.forward_ad"
)


def _check_no_tangent(*tensors) -> None:
    """The Python path's refusal of dual tensors (forward-mode AD): its no-grad branch would
    drop their tangents silently (the compiled path's autograd node refuses them itself)."""
    if any(t is not None and forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        raise NotImplementedError(FORWARD_AD)


def _is_batched(x) -> bool:
    """Whether x is a tensor inside torch.vmap (the Python path's check; the compiled operators
    refuse vmap themselves)."""
    functorch = getattr(torch._C, "_functorch", None)
    return functorch is not None and functorch.is_batchedtensor(x)


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
        also = "" if x.dtype == torch.float32 else " or float32"
        raise TypeError(f"weight has dtype {weight.dtype}; expected {x.dtype} (x's){also}")
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
        return F32_EPS
    if type(eps) is float and eps >= 0:  # the common case, first; NaN fails the comparison
        return eps
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):  # numpy floats are Real
        raise TypeError(f"eps must be a float or None, got {type(eps).__name__}")
    try:
        eps = float(eps)
    except OverflowError:  # an int past float's range (10**400)
        digits = len(str(abs(int(eps))))
        raise ValueError(
            f"eps must be a number a float can hold, got one of {digits} digits"
        ) from None
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
    """Forward on 2-D rows through the host path in use. Returns (y, residual_out or None,
    rstd)."""
    if _native is not None:
        if residual is None:
            y, rstd = torch.ops.rmsnorm_kernels.rms_norm_fwd(x, weight, eps)
            return y, None, rstd
        return torch.ops.rmsnorm_kernels.fused_add_rms_norm_fwd(x, residual, weight, eps)
    return _forward(x, weight, eps, residual)


def rms_norm_backward(dy, x, weight, rstd, d_residual_out=None, compute_dw=True, dx_copy=False):
    """Backward on 2-D rows of the normalised input x (residual_out when fused), through the
    host path in use. Returns (dx, dweight or None, a second buffer holding dx or None); dx
    includes d_residual_out when given."""
    if _native is not None:
        dx, dw, dx2 = torch.ops.rmsnorm_kernels.rms_norm_bwd(
            dy, x, weight, rstd, d_residual_out, compute_dw, dx_copy
        )
        return dx, dw if compute_dw and weight is not None else None, dx2 if dx_copy else None
    if dy.shape != x.shape or dy.dtype != x.dtype:  # as the compiled path checks
        raise ValueError(
            f"the output gradient has shape {tuple(dy.shape)} and dtype {dy.dtype}; expected "
            f"x's {tuple(x.shape)} and {x.dtype}"
        )
    if d_residual_out is not None:
        _check_residual(d_residual_out, x)
    return _backward(dy, x, weight, rstd, d_residual_out, compute_dw, dx_copy)


def _forward(x, weight, eps: float, residual=None):
    """The Python path's forward (csrc/rmsnorm.cpp's ``forward`` is the compiled one)."""
    m, n = x.shape
    has_residual = residual is not None
    plan = _plan.of_call(_plan.forward_plan, x, weight, has_residual)
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    rstd = torch.empty((m,), dtype=torch.float32, device=x.device)
    residual_out = torch.empty_like(y) if has_residual else None
    if m == 0:
        return y, residual_out, rstd
    sx, sr = x.stride(0), residual.stride(0) if has_residual else 0
    align = row_alignment(n, sx, sr)  # y and residual_out are fresh and contiguous
    split = plan.split_for(m)
    with _on_device(x):
        if split is not None:  # each row over segments: sums of squares, then scaled
            segment_n, segments = split.segments(m, n)
            sq = torch.empty((m, segments), dtype=torch.float32, device=x.device)
            grid = (m * segments,)
            args = (x, sx, residual, sr, residual_out, n, sq, n, segment_n, segments)
            split.sum_sq(grid, args, align)
            rows_in, stride_in = (residual_out, n) if has_residual else (x, sx)
            args = (rows_in, stride_in, weight, y, n, rstd, sq, n, segment_n, segments, eps)
            split.scale(grid, args, row_alignment(n, stride_in))
        else:
            rows = plan.for_rows(m)
            args = (x, sx, residual, sr, weight, y, n, residual_out, n, rstd, m, n, eps)
            rows.launch(rows.grid(m), args, align)
    return y, residual_out, rstd


def _backward(dy, x, weight, rstd, d_residual_out=None, compute_dw=True, dx_copy=False):
    """The Python path's backward (csrc/rmsnorm.cpp's ``backward`` is the compiled one).
    Returns (dx, dweight or None, dx_copy: a second buffer holding dx, or None)."""
    m, n = x.shape
    compute_dw = compute_dw and weight is not None
    has_dres = d_residual_out is not None
    plan = _plan.of_call(_plan.backward_plan, x, weight, compute_dw, has_dres)
    tile = plan.for_rows(m, n)
    dx = torch.empty((m, n), dtype=x.dtype, device=x.device)
    dx2 = torch.empty_like(dx) if dx_copy else None
    dw = None
    if compute_dw:
        dw = torch.zeros_like(weight) if m == 0 else torch.empty_like(weight)
    if m == 0:
        return dx, dw, dx2
    sdy, sx = dy.stride(0), x.stride(0)
    sdres = d_residual_out.stride(0) if has_dres else 0
    align = row_alignment(n, sdy, sx, sdres)  # dx is fresh and contiguous
    small = plan.small_for(m)
    if small is not None:  # one launch: row programs (dx), column programs (dweight)
        programs, row_programs, segment_n, segments = small.grid(m, n)
        flags = (_plan.HAS_DRES if has_dres else 0) | (_plan.HAS_DX_COPY if dx_copy else 0)
        args = (dy, sdy, x, sx, weight, rstd, d_residual_out, sdres, dx, n, dx2, dw, m, n,
                row_programs, segment_n, segments)  # fmt: skip
        with _on_device(x):
            small.launch((programs,), args, align, flags)
        return dx, dw, dx2
    walk = plan.walk_for(m)
    if walk is not None:  # one row at a time per program; the partials' sum where dweight
        programs = walk.grid(m)
        partial = torch.empty((programs, n), dtype=torch.float32, device=x.device)
        flags = (_plan.HAS_DRES if has_dres else 0) | (_plan.HAS_DX_COPY if dx_copy else 0)
        args = (dy, sdy, x, sx, weight, rstd, d_residual_out, sdres, dx, n, dx2,
                partial if compute_dw else None, m, n)  # fmt: skip
        with _on_device(x):
            walk.launch((programs,), args, align, flags)
            if compute_dw:
                reduce_grid = (cdiv(n, plan.reduce_block_n),)
                plan.reduce(reduce_grid, (partial, dw, programs, n), row_alignment(n))
        return dx, dw, dx2
    grid = plan.grid(tile, m, n)
    reduce_dw = compute_dw and grid[0] > 1  # several row groups: partials, then their sum
    partial = torch.empty((grid[0], n), dtype=torch.float32, device=x.device) if reduce_dw else None
    flags = (
        (_plan.HAS_DRES if has_dres else 0)
        | (_plan.REDUCE_DW if reduce_dw else 0)
        | (_plan.HAS_DX_COPY if dx_copy else 0)
    )
    dot, segments = None, 0
    with _on_device(x):
        if plan.split_row:  # first pass: each row's sum of g * x, in segments
            segment_n, segments = plan.dot_segments(m, n)
            dot = torch.empty((m, segments), dtype=torch.float32, device=x.device)
            plan.row_dot(
                (m * segments,), (dy, sdy, x, sx, weight, dot, n, segment_n, segments), align
            )  # fmt: skip
        tile.launch(
            grid,
            (dy, sdy, x, sx, weight, rstd, d_residual_out, sdres, dx, n, dx2, partial,
             None if reduce_dw else dw, dot, m, n, segments),
            align,
            flags,
        )  # fmt: skip
        if reduce_dw:
            reduce_grid = (cdiv(n, plan.reduce_block_n),)
            plan.reduce(reduce_grid, (partial, dw, grid[0], n), row_alignment(n))
    return dx, dw, dx2


# --------------------------------------------------------------------------------------------
# The Python path's autograd: the Functions take inputs of any shape [..., N] and flatten them
# to rows inside forward and backward, where no autograd view nodes are recorded (each would
# cost host time in both passes). Their gradients are not differentiable: a backward that would
# record a graph through them (create_graph=True) raises, as the compiled path's does.
# --------------------------------------------------------------------------------------------

DOUBLE_BACKWARD = (
    "rmsnorm_kernels: double backward (create_graph=True) is not supported; use "
    "torch.nn.functional.rms_norm where second derivatives are needed"
)


def _first_order(backward):
    """`backward`, computed without a graph, refusing a call that asks for one: with
    create_graph=True, where a gradient or a saved input needs a gradient (as csrc/rmsnorm.cpp's
    rms_norm_bwd_autograd). once_differentiable alone looks at the incoming gradients only: a
    loss linear in the output (a constant dy) got a first-order gradient silently cut from
    the graph, whose second derivative then came out wrong."""
    once = once_differentiable(backward)

    @functools.wraps(backward)
    def checked(ctx, *grads):
        if torch.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (*grads, *ctx.saved_tensors)
        ):
            raise RuntimeError(DOUBLE_BACKWARD)
        return once(ctx, *grads)

    return checked


def _shaped(t: torch.Tensor, shape) -> torch.Tensor:
    return t if t.shape == shape else t.view(shape)


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        x2 = _rows(x)
        y, _, rstd = _forward(x2, weight, eps)
        # an inference-mode tensor cannot be saved: its copy can (as csrc/rmsnorm.cpp's node)
        ctx.save_for_backward(x2.clone() if x2.is_inference() else x2, weight, rstd)
        return _shaped(y, x.shape)

    @staticmethod
    @_first_order
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        compute_dw = weight is not None and ctx.needs_input_grad[1]
        dx, dw, _ = _backward(_rows(dy), x, weight, rstd, compute_dw=compute_dw)
        return _shaped(dx, dy.shape), dw, None


def _two_leaves(x, residual) -> bool:
    """Whether the fused backward writes its gradient twice: where x and residual are two
    leaves that need it and have no ``.grad`` yet, each keeps the tensor it receives as its
    ``.grad``. Given one tensor for both, autograd would copy it for one of them (a read and
    a write of M x N more, and a second buffer); two views of one buffer would make their
    ``.grad``s share memory, and an accumulation into one would add to the other. Elsewhere
    one tensor serves both: activations (as in a model) pass it on, and a ``.grad`` that
    exists takes it by an in-place add. (``torch.autograd.grad`` then gets two buffers where
    one would do: the forward cannot know how the backward will be asked for.) As
    csrc/rmsnorm.cpp's ``two_leaves``."""
    return (
        x is not residual
        and x.requires_grad
        and residual.requires_grad
        and x.is_leaf
        and residual.is_leaf
        and x.grad is None
        and residual.grad is None
    )


class FusedAddRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, eps):
        y, residual_out, rstd = _forward(_rows(x), weight, eps, residual=_rows(residual))
        ctx.save_for_backward(residual_out, weight, rstd)
        ctx.set_materialize_grads(False)  # an unused output's gradient stays None, not zeros
        ctx.dx_copy = _two_leaves(x, residual)
        y, residual_out = _shaped(y, x.shape), _shaped(residual_out, x.shape)
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[1]):
            ctx.mark_non_differentiable(residual_out)  # x + residual: no gradient of the weight
        return y, residual_out

    @staticmethod
    def backward(ctx, dy, d_residual_out):
        if dy is None:  # only residual_out was used: its gradient passes through, differentiably
            return d_residual_out, d_residual_out, None, None
        return FusedAddRMSNormFunction.kernel_backward(ctx, dy, d_residual_out)

    @staticmethod
    @_first_order
    def kernel_backward(ctx, dy, d_residual_out):
        residual_out, weight, rstd = ctx.saved_tensors
        compute_dw = weight is not None and ctx.needs_input_grad[2]
        if d_residual_out is not None:
            d_residual_out = _rows(d_residual_out)
        ds, dw, ds2 = _backward(
            _rows(dy), residual_out, weight, rstd, d_residual_out, compute_dw, ctx.dx_copy
        )
        # x and residual receive the same gradient, never as two views of one buffer (see
        # _two_leaves)
        ds = _shaped(ds, dy.shape)
        return ds, ds if ds2 is None else _shaped(ds2, dy.shape), dw, None


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def _type_problem(weight, **tensors) -> str | None:
    """What the operator's schema refuses without naming it as the Python path does: asked
    only once the operator has raised, so it costs a public call nothing."""
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            return f"{name} must be a torch.Tensor, got {type(t).__name__}"
    if weight is not None and not isinstance(weight, torch.Tensor):
        return f"weight must be a torch.Tensor or None, got {type(weight).__name__}"
    return None


_AUTOCAST_DTYPES: dict[tuple, torch.dtype] = {}  # (device type, autocast dtype, x's, weighted)


def _autocast_dtype(x: torch.Tensor, weight) -> torch.dtype | None:
    """The dtype torch.autocast runs the norm in for these inputs, where it is not x's; None
    outside autocast or where the norm stays in x's dtype. Asked of the installed torch (its
    versions differ: some list rms_norm among CUDA's float32 operators, some leave it in x's
    dtype): F.rms_norm's dtype on a one-element input on x's device, under the autocast in
    force, once per (device type, autocast dtype, x's dtype, with or without a weight). The
    probe's weight is in x's dtype: one in another dtype has torch warn that its fused kernel
    is not used, and autocast's rules (a dtype for every floating input, or none) do not
    depend on it. The Python path's; csrc/rmsnorm.cpp asks the same for the compiled
    operators."""
    kind = x.device.type
    if not torch.is_autocast_enabled(kind):
        return None
    key = (kind, torch.get_autocast_dtype(kind), x.dtype, weight is not None)
    dtype = _AUTOCAST_DTYPES.get(key)
    if dtype is None:
        with torch.no_grad():
            probe = x.new_ones(1, 1)
            dtype = F.rms_norm(probe, (1,), None if weight is None else probe[0]).dtype
        _AUTOCAST_DTYPES[key] = dtype
    return None if dtype == x.dtype else dtype


def _cast(t, dtype):
    """t in dtype where autocast would cast it: a floating tensor other than float64."""
    floating = t is not None and t.is_floating_point() and t.dtype != torch.float64
    return t.to(dtype) if floating else t


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
    if _native is not None:  # the operator checks its inputs and flattens them itself
        try:
            return _RMS_NORM_FWD(x, weight, _resolve_eps(eps))[0]
        except RuntimeError:  # the schema's refusal of a non-tensor: named as TypeError
            if problem := _type_problem(weight, x=x):
                raise TypeError(problem) from None
            raise
    _check_x("x", x)
    _check_weight(weight, x)
    _check_no_tangent(x, weight)
    if (dtype := _autocast_dtype(x, weight)) is not None:
        with torch.autocast(x.device.type, enabled=False):
            return rms_norm(_cast(x, dtype), _cast(weight, dtype), eps)
    eps = _resolve_eps(eps)
    if weight is not None:
        weight = weight.contiguous()
    # torch.compile and torch.jit.trace record the custom op (the launchers would see traced
    # sizes, not ints), given x itself: a view of a leaf would hide it from the backward
    if torch.compiler.is_compiling() or torch.jit.is_tracing():
        return torch.ops.rmsnorm_kernels.rms_norm_fwd(x, weight, eps)[0]
    if _needs_autograd(x, weight):
        return RMSNormFunction.apply(x, weight, eps)
    else:
        y, _, _ = _forward(_rows(x), weight, eps)
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
    if _native is not None:
        try:
            y, s, _ = _FUSED_ADD_RMS_NORM_FWD(x, residual, weight, _resolve_eps(eps))
        except RuntimeError:
            if problem := _type_problem(weight, x=x, residual=residual):
                raise TypeError(problem) from None
            raise
        return y, s
    _check_x("x", x)
    _check_residual(residual, x)
    _check_weight(weight, x)
    _check_no_tangent(x, residual, weight)
    if (dtype := _autocast_dtype(x, weight)) is not None:
        # residual_out is x + residual in x's dtype, as torch's add outside the norm. Cast to
        # float32 first, the fused sum is that (rounded once); a rule to another dtype would
        # round it there, so the sum is torch's add and the norm reads it cast
        with torch.autocast(x.device.type, enabled=False):
            if dtype != torch.float32:
                s = x + residual
                return rms_norm(_cast(s, dtype), _cast(weight, dtype), eps), s
            y, s = fused_add_rms_norm(*(_cast(t, dtype) for t in (x, residual, weight)), eps)
        return y, s.to(x.dtype)
    eps = _resolve_eps(eps)
    if weight is not None:
        weight = weight.contiguous()
    if torch.compiler.is_compiling() or torch.jit.is_tracing():
        # x and residual themselves: where both are leaves, views of them would get one
        # gradient buffer between them
        y, s, _ = torch.ops.rmsnorm_kernels.fused_add_rms_norm_fwd(x, residual, weight, eps)
        return y, s
    if _needs_autograd(x, weight, residual):
        return FusedAddRMSNormFunction.apply(x, residual, weight, eps)
    else:
        y, s, _ = _forward(_rows(x), weight, eps, residual=_rows(residual))
    return _shaped(y, x.shape), _shaped(s, x.shape)
