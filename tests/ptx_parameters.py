"""Run as ``python -m tests.ptx_parameters`` outside Triton's interpreter (it compiles for
sm_90, no GPU needed): the compiled host path's packing of each argument against the PTX
parameters of a real compiled variant. Exits 3 where this Triton cannot compile for CUDA."""

import sys

import torch

from rmsnorm_kernels import _extension, _kernels, _plan

BF16 = torch.bfloat16


def main() -> None:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernel = _kernels._rms_norm_fwd_kernel
    plan = _plan.forward_plan(4096, BF16, None, False, torch.device("cpu"))
    options = plan.main.launch.options(16)
    num_warps = options.pop("num_warps")
    options.pop("enable_fp_fusion")
    x, rstd = torch.empty(8, 4096, dtype=BF16), torch.empty(8)
    # no residual, no weight (None: constexprs); N wider than 32 bits
    args = (x, 4096, None, 0, None, x, 4096, None, 4096, rstd, 8, 2**31 + 4096, 1e-6)
    signature, constexprs = {}, dict(options)
    for name, a in zip(kernel.arg_names, args, strict=False):
        if a is None:
            signature[name], constexprs[name] = "constexpr", None
        elif isinstance(a, torch.Tensor):
            signature[name] = "*bf16" if a.dtype == BF16 else "*fp32"
        elif isinstance(a, float):
            signature[name] = "fp32"
        else:
            signature[name] = "i32" if a < 2**31 else "i64"
    signature.update(dict.fromkeys(options, "constexpr"))
    names = kernel.arg_names
    constexprs = {(names.index(n),): v for n, v in constexprs.items()}
    try:
        src = ASTSource(kernel, signature, constexprs=constexprs)
        target = GPUTarget("cuda", 90, 32)
        compiled = triton.compile(src, target=target, options={"num_warps": num_warps})
    except Exception as error:  # e.g. a Triton without its CUDA backend
        print(f"cannot compile for sm_90 here: {error}", file=sys.stderr)
        sys.exit(3)
    ptx = compiled.asm["ptx"]
    kinds, extra = _extension.parameter_kinds(ptx, args)
    # X, stride_x, stride_r, Y, stride_y, stride_s, RSTD, M, N (64 bits), eps
    assert kinds == "piipiipilf", kinds
    assert extra >= 0
    # a wrong argument list is refused, not packed
    wrong = (x, x) + args[2:]  # a pointer where the PTX has a 32-bit integer
    assert _extension.parameter_kinds(ptx, wrong) is None
    assert _extension.parameter_kinds(ptx, args + (x,) * 4) is None  # more than it takes
    print(f"parameter kinds {kinds}, {extra} trailing scratch pointer(s)")


if __name__ == "__main__":
    main()
