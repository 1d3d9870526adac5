"""What is measured: the shape matrix, the backends and ops, the device, and ideal bytes.

The first stage of the flow (instrument: matrix, backends, problem, contract, graphs, suite).
Read once at import, from the environment: RMSNORM_BENCH_DEVICE (cpu: the smoke mode),
RMSNORM_BENCH_SHAPES / RMSNORM_BWD_BENCH_SHAPES and RMSNORM_BENCH_BACKENDS (an ad-hoc run's
subset). Other modules read DEVICE as `matrix.DEVICE`, at call time, so that a test can set it.
"""

import os
from dataclasses import dataclass

DEVICE_VAR = "RMSNORM_BENCH_DEVICE"
FWD_SHAPES_VAR = "RMSNORM_BENCH_SHAPES"
BWD_SHAPES_VAR = "RMSNORM_BWD_BENCH_SHAPES"

# "cpu": the smoke mode (Triton's interpreter, tiny shapes); "cuda" (or unset): the GPU.
# Any other value is an error (check_device), raised where a suite or tool would measure.
DEVICE_VALUES = ("cuda", "cpu")
DEVICE = "cpu" if os.environ.get(DEVICE_VAR, "cuda") == "cpu" else "cuda"
if DEVICE == "cpu":
    # must be set before triton is imported, here or by rmsnorm_kernels
    os.environ.setdefault("TRITON_INTERPRET", "1")

DTYPE_NAMES = ("bf16", "f16", "f32")

# The default matrix: the seed PR's six shapes, then large shapes where bandwidth shows.
# Must not be changed, only appended, so that history stays comparable.
DEFAULT_SHAPES = [
    (1, 4096, "bf16"),
    (128, 4096, "bf16"),
    (4096, 4096, "bf16"),
    (512, 2048, "bf16"),
    (512, 3000, "f32"),
    (1024, 8192, "bf16"),
    (16384, 4096, "bf16"),
    (8192, 8192, "bf16"),
    (32768, 8192, "bf16"),
    (4096, 4096, "f16"),
    (4096, 4096, "f32"),
]
# CPU smoke mode: small enough for the interpreter, covering one row, several rows per
# program, unaligned N and the chunked path for rows past one block.
SMOKE_SHAPES = [(1, 256, "bf16"), (16, 1000, "f32"), (3, 20000, "bf16")]

BACKENDS = ["triton", "torch", "torch_compile", "liger", "quack", "flydsl"]
OURS = "triton"  # this package; the others are peers (first in BACKENDS: measured first)
# An ad-hoc run may measure fewer backends (the others are skipped): "triton,torch".
BACKENDS_VAR = "RMSNORM_BENCH_BACKENDS"
# what runs in the CPU smoke mode: ours under Triton's interpreter, and torch eager
CPU_BACKENDS = ("triton", "torch")
OPS = ("rms_norm", "fused_add")
EPS = 1e-6


class Unavailable(NotImplementedError):
    """This backend cannot run on this machine; asv records the case as skipped."""


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    dtype: str

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}-{self.dtype}"

    @classmethod
    def from_label(cls, label: str) -> "Shape":
        mn, dtype = label.split("-")
        m, n = mn.split("x")
        return cls(int(m), int(n), dtype)


def parse_shapes(value: str, var: str) -> list[Shape]:
    """Parse "M,N,dtype;M,N,dtype;..." (the seed's override format)."""
    shapes = []
    for entry in value.split(";"):
        if not entry.strip():
            continue
        parts = [p.strip() for p in entry.split(",")]
        ok = len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit()
        if not ok or parts[2] not in DTYPE_NAMES or int(parts[1]) < 1:
            raise ValueError(
                f"{var}: bad entry {entry!r}; expected M,N,dtype with M >= 0, N >= 1 and "
                f"dtype one of {', '.join(DTYPE_NAMES)} (entries separated by ';')"
            )
        shape = Shape(int(parts[0]), int(parts[1]), parts[2])
        if shape in shapes:  # asv would store two figures under one parameter value
            raise ValueError(f"{var}: {shape.label} is given twice")
        shapes.append(shape)
    if not shapes:
        raise ValueError(f"{var}: no shapes in {value!r}")
    return shapes


def selected_backends() -> list[str]:
    """The backends named by RMSNORM_BENCH_BACKENDS (all where it is unset), in BACKENDS'
    order. An unknown name is an error, never a backend silently skipped."""
    value = os.environ.get(BACKENDS_VAR, "")
    if not value.strip():
        return list(BACKENDS)
    names = [name.strip() for name in value.split(",")]
    unknown = [name for name in names if name not in BACKENDS]
    if unknown:
        raise ValueError(
            f"{BACKENDS_VAR}={value!r}: unknown backend(s) {', '.join(map(repr, unknown))}; "
            f"expected a comma-separated list of {', '.join(BACKENDS)}"
        )
    return [name for name in BACKENDS if name in names]


def check_device() -> None:
    """Raise ValueError, naming RMSNORM_BENCH_DEVICE and its values, where it is set to
    anything but those: a typo ("gpu", "CPU") would otherwise mean CUDA without a word."""
    value = os.environ.get(DEVICE_VAR, "")
    if value and value not in DEVICE_VALUES:
        raise ValueError(
            f"{DEVICE_VAR}={value!r}: expected cpu (the CPU smoke mode, Triton's interpreter) "
            "or cuda (a CUDA or ROCm GPU, the default where it is unset)"
        )


def shapes_for(phase: str) -> list[Shape]:
    """The shapes the forward or backward suites measure on this machine."""
    check_device()  # every suite asks here first, at import (param_shapes) and when measuring
    var = FWD_SHAPES_VAR if phase == "forward" else BWD_SHAPES_VAR
    if os.environ.get(var):
        return parse_shapes(os.environ[var], var)
    return [Shape(*s) for s in (SMOKE_SHAPES if DEVICE == "cpu" else DEFAULT_SHAPES)]


def param_shapes(phase: str) -> list[Shape]:
    """The shapes of a suite's parameter list: the same on every machine, since asv keeps one
    benchmarks.json for all of them (stock `asv show`, `compare` and `publish` read it). The
    GPU matrix, the smoke mode's shapes, then any shape an override adds; a machine measures
    shapes_for(phase), and its suites skip the rest (n/a)."""
    shapes = [Shape(*s) for s in DEFAULT_SHAPES + SMOKE_SHAPES]
    return shapes + [s for s in shapes_for(phase) if s not in shapes]


# ---------------------------------------------------------------------------------------------
# Backends: each makes the public call of one implementation, or says why it cannot run here
# ---------------------------------------------------------------------------------------------


def ideal_bytes(op: str, phase: str, shape: Shape) -> int:
    """Bytes an ideal kernel moves, the figure bandwidths are quoted against.

    forward: read x (+ residual), write y (+ residual_out), read w, write fp32 rstd;
    backward: read dy, x (+ d_residual_out), write one input gradient, read w and rstd,
    write dw. dweight partials and re-reads are the implementation's cost, not counted.
    """
    e = {"bf16": 2, "f16": 2, "f32": 4}[shape.dtype]
    mn, n, m = shape.m * shape.n, shape.n, shape.m
    if phase == "forward":
        tensors = 2 if op == "rms_norm" else 4  # x, y (+ residual, residual_out)
        return tensors * mn * e + n * e + 4 * m
    tensors = 3 if op == "rms_norm" else 4  # dy, x, dx (+ d_residual_out)
    return tensors * mn * e + 2 * n * e + 4 * m


if __name__ == "__main__":
    pass
