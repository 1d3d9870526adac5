"""Check rms_norm and fused_add_rms_norm (output, residual_out and every gradient) against the
fp32 reference, without timing anything.

usage: python -m rmsnorm_bench.validate

The seed PR's six shapes on a GPU, the CPU smoke mode's small shapes elsewhere (Triton's
interpreter); RMSNORM_BENCH_DEVICE=cpu chooses the latter on a GPU machine too. Exits 1 on any
wrong result, 2 where RMSNORM_BENCH_DEVICE is neither cpu nor cuda, or is cuda without a GPU,
or where the package cannot be imported (a bad RMSNORM_KERNELS_HOST, say).
"""

import os
import sys

from . import argument_parser, require_gpu


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available() and not os.environ.get("RMSNORM_BENCH_DEVICE"):
        # before the instrument (and so Triton) is imported: the CPU smoke mode (where the
        # variable is empty too, which the instrument reads as unset)
        os.environ["RMSNORM_BENCH_DEVICE"] = "cpu"
    # RMSNORM_BENCH_DEVICE=cuda without a GPU, a typo, or a backend list without ours
    require_gpu(ap, smoke_mode=True, ours=True)
    from . import instrument

    cpu = instrument.DEVICE == "cpu"
    shapes = instrument.SMOKE_SHAPES if cpu else instrument.DEFAULT_SHAPES[:6]
    failed = 0
    print(f"device: {instrument.DEVICE}; largest absolute error against the fp32 reference")
    for op in instrument.OPS:
        try:
            fn = instrument.make_backend("triton", op)
        except Exception as e:  # the package under test does not import: nothing to validate
            ap.exit(2, f"validate: the package cannot be used here ({type(e).__name__}: {e}); "
                    "nothing validated\n")  # fmt: skip
        for shape in (instrument.Shape(*s) for s in shapes):
            try:
                errors = instrument.validate(fn, instrument.make_problem(op, shape))
                detail = "  ".join(f"{k} {v:.2e}" for k, v in errors.items())
                print(f"ok    {op:9} {shape.label:16} {detail}")
            except AssertionError as e:
                failed += 1
                print(f"WRONG {op:9} {shape.label:16} {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
