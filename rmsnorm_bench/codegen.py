"""Compile the kernels for an H100/H200-class GPU (sm_90) and check what the compiler made of
them. No GPU is needed: Triton's CUDA backend compiles wherever it is installed.

usage: python -m rmsnorm_bench.codegen [--show]

For the variants the launch heuristics choose (bf16 rows; N = 4096, 3000, 1000, the backward of
few rows of 2048 and 4096, the one-launch backward of few rows, and rows past one block, the
split forward of few of them too; and the backwards of float32 rows of 4096-16384 columns and
of bf16 rows of 16384 with a float32 weight, which hold the most bytes a row):
- every access to a bf16 row is vectorised: no 2-byte ld/st.global in the PTX (float32 rows'
  scalar accesses look like the rstd's, so their variants are checked for 16-byte accesses
  being there, layouts and spills, not for the absence of scalar ones). Unaligned N
  (3000, ALIGN 8) and the split backward's row-dot pass each lost this once, at half the
  bandwidth or less on an H200, because an integer's alignment was hidden from the compiler;
- no [BLOCK_M, BLOCK_N] tile changes layout in the backward (checked where BLOCK_M > 1): a
  small 2-D load once set the layout of the whole dx computation, 20x slower;
- the forwards that hold their row (one block) or a segment of it load everything before
  their first store: a load after a store cannot be moved above it (the pointers may
  alias), so its latency follows the store's. The one-block forward loaded the weight after
  storing rstd until e9f348d, while Liger-Kernel, 8-11% faster at 1 and 128 rows of 4,096
  on an H100, loads it first;
- no variant spills more than SPILL_LIMIT bytes of registers per thread (ptxas -v, Triton's
  own ptxas): the one-block backward of 16,384 columns once spilled about 2 KB and was 4-12x
  slower than the split backward on an H200. Where no ptxas can be run this check is named
  as not made, never passed.
--show prints what each variant compiled to. Exits 1 naming every failed check, 3 when this
Triton has no CUDA backend to compile with (e.g. a ROCm build).
"""

import os
import re
import sys

from . import argument_parser

ROWS = {  # the pointer arguments of each kernel that hold rows, and the other pointers
    "_rms_norm_fwd_kernel": (("X", "R", "Y", "S"), {"W": "bf16", "RSTD": "fp32"}),
    "_rms_norm_bwd_kernel": (
        ("DY", "X", "DRES", "DX", "DX_COPY"),
        {"W": "bf16", "RSTD": "fp32", "DW_PARTIAL": "fp32", "DW": "bf16", "DOT": "fp32"},
    ),
    # an f32 weight: a column program stores its few dweight values one a thread, 2-byte
    # stores for a bf16 weight, which are no row's
    "_rms_norm_bwd_small_kernel": (
        ("DY", "X", "DRES", "DX", "DX_COPY"),
        {"W": "fp32", "RSTD": "fp32", "DW": "fp32"},
    ),
    "_rms_norm_bwd_walk_kernel": (
        ("DY", "X", "DRES", "DX", "DX_COPY"),
        {"W": "bf16", "RSTD": "fp32", "DW_PARTIAL": "fp32"},
    ),
    "_row_dot_kernel": (("DY", "X"), {"W": "bf16", "DOT": "fp32"}),
    "_row_sum_sq_kernel": (("X", "R", "S"), {"SQ": "fp32"}),
    "_rms_norm_fwd_split_kernel": (("X", "Y"), {"W": "bf16", "RSTD": "fp32", "SQ": "fp32"}),
}
# bytes of spill stores per thread a variant may have (the defaults' most: 4, in the small
# backward of 4,096 columns; 16 in the split backward before e85437c)
SPILL_LIMIT = 64
NARROW_ACCESS = re.compile(r"\b(?:ld|st)\.global[.\w:]*\.(?:b16|u16|s16)\b")
GLOBAL_ACCESS = re.compile(r"\b(ld|st)\.global\b")


def loads_after_first_store(ptx: str) -> int:
    """The global loads that come after the PTX's first global store, in program order."""
    accesses = GLOBAL_ACCESS.findall(ptx)
    return accesses[accesses.index("st") :].count("ld") if "st" in accesses else 0


def loads_first(kernel_name: str, options: dict) -> bool:
    """Whether the variant should load everything before its first store: the forwards that
    hold a row block or a segment; the chunked forward reads its rows again by design."""
    if kernel_name == "_rms_norm_fwd_kernel":
        return options["SINGLE_BLOCK"]
    return kernel_name == "_rms_norm_fwd_split_kernel"


def compile_variant(kernel_name: str, options: dict, absent=(), types=None):
    """The kernel compiled for sm_90 with the plan's constexprs and bf16 rows; the ``absent``
    operands are None (constexprs), every other run-time argument a 32-bit integer (eps a
    float), as a call with fresh, aligned tensors passes them. ``types`` gives other element
    types: "rows" for every row operand, or an operand's name (e.g. {"rows": "fp32"})."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from rmsnorm_kernels import _kernels

    kernel = getattr(_kernels, kernel_name)
    options = dict(options)
    num_warps = options.pop("num_warps")
    fp_fusion = options.pop("enable_fp_fusion", True)
    options.update(dict.fromkeys(absent))
    rows, others = ROWS[kernel_name]
    types = types or {}
    names = kernel.arg_names
    signature = {}
    for name in names:
        if name in options:
            signature[name] = "constexpr"
        elif name in rows:
            signature[name] = "*" + types.get(name, types.get("rows", "bf16"))
        elif name in others:
            signature[name] = "*" + types.get(name, others[name])
        else:
            signature[name] = "fp32" if name == "eps" else "i32"
    pointers = [i for i, n in enumerate(names) if signature[n].startswith("*")]
    src = ASTSource(
        kernel,
        signature,
        constexprs={(names.index(n),): v for n, v in options.items()},
        attrs={(i,): [["tt.divisibility", 16]] for i in pointers},  # fresh allocations
    )
    target = GPUTarget("cuda", 90, 32)
    compile_options = {"num_warps": num_warps, "enable_fp_fusion": fp_fusion}
    return triton.compile(src, target=target, options=compile_options)


def ptxas_usage(ptx: str) -> tuple[int, int] | None:
    """(registers, bytes of spill stores) per thread of the PTX's kernel as ptxas -v reports
    them for the PTX's own target, with the ptxas Triton compiles that target with (Triton 3.9
    takes a newer one for sm_90 than 3.6), or None where Triton has none to run."""
    import subprocess
    import tempfile

    target = re.search(r"^\.target\s+(sm_(\d+)\w*)", ptx, re.MULTILINE)
    arch, number = (target.group(1), int(target.group(2))) if target else ("sm_90a", 90)
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        ptxas = get_ptxas(number).path
    except (ImportError, AttributeError, RuntimeError, TypeError):  # another Triton, no ptxas
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        cmd = [ptxas, f"-arch={arch}", "-v", f.name, "-o", os.devnull]
        out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{ptxas} failed: {out.stderr.strip()[-300:]}")
    # every function ptxas compiled (the kernel, and any it did not inline): the most of each
    registers = [int(r) for r in re.findall(r"Used (\d+) registers", out.stderr)]
    spills = [int(b) for b in re.findall(r"(\d+) bytes spill stores", out.stderr)]
    if not registers or not spills:
        raise RuntimeError(f"ptxas -v said no register use: {out.stderr.strip()[-300:]}")
    return max(registers), max(spills)


def tile_conversions(ttgir: str, block_m: int, block_n: int) -> list[str]:
    """The layout conversions of a [block_m, block_n] tile in the TTGIR."""
    tile = f"tensor<{block_m}x{block_n}x"
    return [
        line.strip() for line in ttgir.splitlines() if "convert_layout" in line and tile in line
    ]


def multi_row_tile(tile):
    """The backward tile whose layout is checked: only a tile of several rows can take the
    layout of a per-row tensor."""
    return (tile.block_m, tile.block_n) if tile.block_m > 1 else None


def variants():
    """(name, kernel name, options, absent operands, tile shape to check for layout
    conversions or None, element types other than bf16 rows for compile_variant or None),
    from the plans the package uses."""
    for variant in _bf16_variants():
        yield (*variant, None)
    yield from _other_dtype_variants()


def _other_dtype_variants():
    """The backwards of float32 rows (one block up to SPLIT_F32_BACKWARD_ABOVE_N, split past
    it), and of bf16 rows with a float32 weight at the widest one-block rows: each holds more
    bytes of a row than bf16 rows and weight do."""
    import torch

    from rmsnorm_kernels import _plan

    cpu, f32, bf16 = torch.device("cpu"), torch.float32, torch.bfloat16
    flags = _plan.HAS_DRES | _plan.REDUCE_DW | _plan.HAS_DX_COPY
    plain_flags = _plan.REDUCE_DW | _plan.HAS_DX_COPY
    f32_rows = {"rows": "fp32", "W": "fp32", "DW": "fp32"}
    f32_weight = {"W": "fp32", "DW": "fp32"}
    for n, x_dtype, types in ((4096, f32, f32_rows), (8192, f32, f32_rows),
                              (16384, f32, f32_rows), (16384, bf16, f32_weight)):  # fmt: skip
        for has_dres, kind in ((True, "backward"), (False, "plain backward")):
            bwd = _plan.backward_plan(n, x_dtype, f32, True, cpu, has_dres)
            absent = ("DW",) if bwd.split_row else ("DW", "DOT")
            name = f"{kind}, N={n}, {'split, ' if bwd.split_row else ''}"
            name += "float32 rows" if x_dtype == f32 else "float32 weight"
            options = bwd.main.launch.options(16, flags if has_dres else plain_flags)
            yield name, "_rms_norm_bwd_kernel", options, absent, multi_row_tile(bwd.main), types


def _bf16_variants():
    import torch

    from rmsnorm_kernels import _config, _plan
    from rmsnorm_kernels._config import RowConfig

    cpu = torch.device("cpu")  # the plans' heuristics, without asking a GPU for its SMs
    bf16 = torch.bfloat16
    fwd_kernel, bwd_kernel = "_rms_norm_fwd_kernel", "_rms_norm_bwd_kernel"
    # the fused backward with a gradient of residual_out, dweight partials to sum and dx
    # written twice (x and residual both leaves): every operand of the backward present
    flags = _plan.HAS_DRES | _plan.REDUCE_DW | _plan.HAS_DX_COPY
    one_block = ("DW", "DOT")  # absent there: dweight is summed by the reduction; no row-dot
    for n, align in ((4096, 16), (3000, 8), (1000, 8)):  # 1000: short rows (SHORT_ROW_N)
        bucket = _plan.bucket_of(n)
        fwd = _plan.forward_plan(bucket, bf16, bf16, True, cpu)
        yield f"fused forward, N={n}", fwd_kernel, fwd.main.launch.options(align), (), None
        name = f"fused forward, N={n}, few rows"
        yield name, fwd_kernel, fwd.few.launch.options(align), (), None
        bwd = _plan.backward_plan(bucket, bf16, bf16, True, cpu, True).main
        options = bwd.launch.options(align, flags)
        yield f"backward, N={n}", bwd_kernel, options, one_block, multi_row_tile(bwd)
    # the widest one-block backwards, where the plan takes them: the fused backward's plan
    # (with every operand) and the plain one's (no d_residual_out; the dx copy still, as a
    # fused op whose residual_out has no gradient, with x and residual both leaves, runs it)
    plain_flags = _plan.REDUCE_DW | _plan.HAS_DX_COPY
    for n in (8192, 16384):
        for has_dres, name in ((True, "backward"), (False, "plain backward")):
            bwd = _plan.backward_plan(n, bf16, bf16, True, cpu, has_dres)
            if not bwd.split_row:
                options = bwd.main.launch.options(16, flags if has_dres else plain_flags)
                tile = multi_row_tile(bwd.main)
                yield f"{name}, N={n}", bwd_kernel, options, one_block, tile
    for n in (2048, 4096):  # the backward of few rows (FEW_ROWS_TILE_BYTES)
        few = _plan.backward_plan(n, bf16, bf16, True, cpu, True).few
        options = few.launch.options(16, flags)
        yield f"backward, N={n}, few rows", bwd_kernel, options, one_block, multi_row_tile(few)
    for n in (4096, 1000):  # the one-launch backward of few rows (row and column programs)
        small = _plan.backward_plan(_plan.bucket_of(n), bf16, torch.float32, True, cpu, True).small
        options = small.launch.options(16 if n == 4096 else 8, _plan.HAS_DRES | _plan.HAS_DX_COPY)
        yield f"small backward, N={n}", "_rms_norm_bwd_small_kernel", options, (), None
    for bucket in (0, -1):  # rows past one block, and from STREAM_MIN_N on
        fwd = _plan.forward_plan(bucket, bf16, bf16, True, cpu).main
        name = f"fused forward, chunked rows{', streamed' if bucket < 0 else ''}"
        yield name, fwd_kernel, fwd.launch.options(16), (), None
    plan = _plan.backward_plan(0, bf16, bf16, True, cpu, True)
    # as configured, and on column blocks of 4096, where a block holds two bf16 rows
    two_rows = RowConfig.from_heuristic(4096, _config.BACKWARD_TILE_BYTES // bf16.itemsize)
    split_two_rows = _plan._backward_launch(two_rows, True, True, True)
    for split in (plan.main, split_two_rows):
        name = f"split backward, {split.block_m}x{split.block_n} blocks"
        options = split.launch.options(16, flags)
        yield name, bwd_kernel, options, ("DW",), multi_row_tile(split)
    # few split rows in one launch (segmented), and the row walk (off by default) past them
    small = _plan.backward_plan(16384, bf16, torch.float32, True, cpu, True).small
    walk = _plan._walk_launch(True, True)
    for align in (16, 8):
        options = small.launch.options(align, _plan.HAS_DRES | _plan.HAS_DX_COPY)
        yield f"segmented backward, ALIGN={align}", "_rms_norm_bwd_small_kernel", options, (), None
        options = walk.options(align, _plan.HAS_DRES | _plan.HAS_DX_COPY)
        yield f"row walk backward, ALIGN={align}", "_rms_norm_bwd_walk_kernel", options, (), None
    for align in (16, 8):
        name = f"row-dot pass, ALIGN={align}"
        yield name, "_row_dot_kernel", plan.row_dot.options(align), (), None
    # the split forward of few long rows, fused (up to _config.FORWARD_SPLIT_MAX_M rows)
    split = _plan._split_forward(True, True, cpu, 1)
    for align in (16, 8):
        name = f"split forward's sums of squares, ALIGN={align}"
        yield name, "_row_sum_sq_kernel", split.sum_sq.options(align), (), None
        name = f"split forward's scaling, ALIGN={align}"
        yield name, "_rms_norm_fwd_split_kernel", split.scale.options(align), (), None


def check(show: bool) -> int:
    from triton.backends import backends

    if "nvidia" not in backends:
        print(f"codegen: this Triton has no CUDA backend ({sorted(backends)})", file=sys.stderr)
        return 3
    failures, compiled_count, unchecked = [], 0, 0
    for name, kernel, options, absent, tile, types in variants():
        compiled_count += 1
        compiled = compile_variant(kernel, options, absent, types)
        ptx, ttgir = compiled.asm["ptx"], compiled.asm["ttgir"]
        narrow = NARROW_ACCESS.findall(ptx)
        wide = len(re.findall(r"\b(?:ld|st)\.global[.\w:]*\.v4\.", ptx))
        conversions = tile_conversions(ttgir, *tile) if tile else []
        try:
            usage = ptxas_usage(ptx)
            used = f"{usage[0]} registers, {usage[1]} bytes spilled" if usage else "no ptxas"
        except RuntimeError as e:  # named with its variant, the other variants still checked
            failures.append(f"{name}: {e}")
            usage, used = None, "ptxas failed"
        unchecked += used == "no ptxas"
        if show:
            print(f"{name}: {wide} 16-byte accesses, {len(narrow)} 2-byte, "
                  f"{len(conversions)} tile layout conversions, {used}")  # fmt: skip
        if usage and usage[1] > SPILL_LIMIT:
            failures.append(
                f"{name}: {usage[1]} bytes of registers spilled per thread "
                f"(over {SPILL_LIMIT}), {options['num_warps']} warps"
            )
        if narrow or not wide:
            failures.append(f"{name}: {len(narrow)} 2-byte global accesses, {wide} 16-byte ones")
        late_loads = loads_after_first_store(ptx) if loads_first(kernel, options) else 0
        if late_loads:
            failures.append(f"{name}: {late_loads} global loads after its first store")
        if conversions:
            failures.append(
                f"{name}: the {tile[0]}x{tile[1]} tile changes layout: {conversions[0]}"
            )
    for failure in failures:
        print(f"codegen: {failure}", file=sys.stderr)
    if unchecked:
        print(f"codegen: spills not checked in {unchecked} variants: no ptxas to run",
              file=sys.stderr)  # fmt: skip
    if not failures:
        spills = "" if unchecked else f", none spills over {SPILL_LIMIT} bytes"
        print(f"codegen: ok, {compiled_count} variants compiled for sm_90{spills}")
    return 1 if failures else 0


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("--show", action="store_true", help="print what each variant compiled to")
    args = ap.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET") == "1":
        ap.exit(2, "codegen: TRITON_INTERPRET=1 is set; this compiles for a GPU, unset it\n")
    return check(args.show)


if __name__ == "__main__":
    sys.exit(main())
