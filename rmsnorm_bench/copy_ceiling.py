"""What plain copies reach on this GPU, by size: the ceiling beside the kernels' bandwidth.

usage: python -m rmsnorm_bench.copy_ceiling [SHAPE ...]

SHAPE is M,N,dtype; by default the large default shapes, the long-row ones and 1 GiB.

For each shape, device time (the suites' CUDA-graph replay) of two torch calls on [M, N]
tensors, as GB/s of bytes read + written:
- copy: ``torch.neg(a, out=b)``, one read and one write per element, the traffic of a
  forward (an elementwise kernel: ``b.copy_(a)`` becomes a memcpy node in a CUDA graph,
  which an H200 ran at 2,760 GB/s on 1 GiB, against 4,390 for the add);
- add:  ``torch.add(a, b, out=c)``, two reads and one write, that of a backward.
The reports quote bandwidth against one ceiling, a copy of 1 GiB; a smaller copy pays its
launch, ramp-up and tail over fewer bytes, and this shows how much that costs at each size.
"""

import sys

from . import argument_parser, instrument, require_gpu

DEFAULT = (
    "4096,4096,bf16;16384,4096,bf16;8192,8192,bf16;32768,8192,bf16;4096,4096,f32;"
    "2048,8192,bf16;256,65536,bf16;32768,16384,bf16"
)


def measure(shape, contract) -> str:
    """One row: the copy and the add on [M, N] tensors of the shape's dtype."""
    import torch

    a = torch.randn(shape.m, shape.n, device="cuda").to(instrument.torch_dtype(shape.dtype))
    b, c = torch.randn_like(a), torch.empty_like(a)
    size = a.numel() * a.element_size()
    row = f"{shape.label:18} {size / 2**20:7.0f}"
    for tensors, make_call in (
        (2, lambda: lambda: torch.neg(a, out=b)),
        (3, lambda: lambda: torch.add(a, b, out=c)),
    ):
        t = instrument.median(instrument.device_seconds_per_call(make_call, contract))
        row += f" {t * 1e6:9.1f} {tensors * size / t / 1e9:6.0f}"
    return row


def main(argv=None) -> int:
    ap = argument_parser(__spec__.name, __doc__)
    ap.add_argument("shapes", nargs="*", metavar="SHAPE", help="M,N,dtype")
    args = ap.parse_args(argv)
    try:
        shapes = instrument.parse_shapes(";".join(args.shapes) or DEFAULT, "copy_ceiling SHAPE")
    except ValueError as e:
        ap.error(str(e))
    require_gpu(ap)
    contract = instrument.Contract(warmup=3, iters=20, samples=5)
    print(f"{'shape':18} {'MiB':>7} {'copy us':>9} {'GB/s':>6} {'add us':>9} {'GB/s':>6}")
    for shape in shapes:
        print(measure(shape, contract), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
