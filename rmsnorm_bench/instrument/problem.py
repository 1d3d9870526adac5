"""One case's inputs (Problem), the fp32 reference, validation, and the call that is timed."""

from dataclasses import dataclass, field

from . import matrix
from .matrix import EPS, Shape


def torch_dtype(name):
    import torch

    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[name]


@dataclass
class Problem:
    """Inputs of one case, on the benchmark device, with the forward already run."""

    op: str
    shape: Shape
    x: object
    residual: object
    weight: object
    grads: list  # gradients for the outputs: [dy] or [dy, d_residual_out]
    outputs: list = field(default_factory=list)

    @property
    def leaves(self):
        return [t for t in (self.x, self.residual, self.weight) if t is not None]

    def clear_grads(self):
        for t in self.leaves:
            t.grad = None


def make_problem(op: str, shape: Shape, seed: int = 0) -> Problem:
    import torch

    # Drawn on the benchmark device: on the CPU, the inputs of a 32768x8192 case took seconds
    # each, and every case makes them twice for each backend.
    g = torch.Generator(device=matrix.DEVICE).manual_seed(seed)
    dtype = torch_dtype(shape.dtype)

    def rand(*size, scale=1.0, offset=0.0):
        t = torch.randn(*size, generator=g, device=matrix.DEVICE).mul_(scale).add_(offset)
        return t.to(dtype)

    x = rand(shape.m, shape.n).requires_grad_()
    weight = rand(shape.n, scale=0.1, offset=1.0).requires_grad_()
    residual = rand(shape.m, shape.n).requires_grad_() if op == "fused_add" else None
    grads = [rand(shape.m, shape.n)]
    if op == "fused_add":
        grads.append(rand(shape.m, shape.n))
    return Problem(op, shape, x, residual, weight, grads)


def run_forward(fn, p: Problem):
    out = fn(p.x, p.weight) if p.op == "rms_norm" else fn(p.x, p.residual, p.weight)
    return [out] if p.op == "rms_norm" else list(out)


def reference(p: Problem) -> tuple[list, list]:
    """(names, expected values) of every output and gradient of `p`: the fp32 reference's,
    the same for every backend of one case (measure_suite computes it once per shape)."""
    import torch

    from rmsnorm_kernels import reference as fp32

    leaves = [t.detach().clone().requires_grad_() for t in p.leaves]
    if p.op == "rms_norm":
        x, w = leaves
        expected = [fp32.rms_norm_reference(x, w, EPS)]
        names = ["out", "dx", "dweight"]
    else:
        x, r, w = leaves
        expected = list(fp32.fused_add_rms_norm_reference(x, r, w, EPS))
        names = ["out", "residual_out", "dx", "dresidual", "dweight"]
    torch.autograd.backward(expected, [g.float() for g in p.grads])
    expected = [e.detach() for e in expected] + [t.grad for t in leaves]
    return names, expected


def validate(fn, p: Problem, expected: tuple | None = None) -> dict:
    """Check outputs and every gradient against the fp32 reference (`expected`: reference(p),
    computed here where not given); raise AssertionError.

    Returns {name: largest absolute error} for the record.
    """
    import torch

    from rmsnorm_kernels import reference as fp32

    names, expected = expected or reference(p)
    p.clear_grads()
    outputs = run_forward(fn, p)
    torch.autograd.backward(outputs, [g.clone() for g in p.grads])  # clone: Liger writes dy
    got = [o.detach() for o in outputs] + [t.grad for t in p.leaves]
    p.clear_grads()
    tol = fp32.tolerance(torch_dtype(p.shape.dtype))
    errors = {}
    for name, actual, exp in zip(names, got, expected, strict=True):
        if actual is None:
            raise AssertionError(f"{p.op} {p.shape.label}: no {name} was produced")
        atol = tol["atol"] * (max(1.0, exp.abs().max().item()) if name == "dweight" else 1.0)
        try:
            torch.testing.assert_close(actual.float(), exp.float(), atol=atol, rtol=tol["rtol"])
        except AssertionError as e:
            raise AssertionError(f"{p.op} {p.shape.label}: {name} is wrong: {e}") from None
        errors[name] = (actual.float() - exp.float()).abs().max().item() if exp.numel() else 0.0
    return errors


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


def timed_call(fn, p: Problem, phase: str):
    """The call that is timed: the public forward, or the public autograd backward."""
    import torch

    if phase == "forward":
        return lambda: run_forward(fn, p)
    p.outputs = run_forward(fn, p)  # the forward graph is built before timing

    def backward():
        torch.autograd.backward(p.outputs, p.grads, retain_graph=True)
        p.clear_grads()

    return backward
