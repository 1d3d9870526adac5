"""Where the tests run: on the GPU where this machine has one, else on the CPU, the kernels
under Triton's interpreter (CPU tensors).

The choice is made here, once, before any test module imports triton (TRITON_INTERPRET is
read then, so one process cannot switch between the two): the interpreter and the benchmark
instrument's CPU smoke mode (RMSNORM_BENCH_DEVICE=cpu) are on without a GPU and off with one,
whatever the shell had set. `CUDA_VISIBLE_DEVICES= bash scripts/test` runs the CPU suite on a
GPU machine.

How a test says where it runs:
- tensors on ``DEVICE`` (or the ``device`` fixture): the GPU there, the CPU here;
- ``@pytest.mark.gpu(reason)``: needs a GPU, skipped without one;
- ``@pytest.mark.interpreter(reason)``: needs the interpreter in this process, skipped on a
  GPU machine (a child process started with ``cpu_path_env()`` runs the CPU path anywhere);
- the fixtures ``no_gpu`` and ``smoke_mode`` fake a machine without a GPU for logic that is
  not a kernel's, so that such a test checks the same on both kinds of machine.
"""

import os

import pytest
import torch

# CUDA initialised and torch's device count cached here, before any test sets
# CUDA_VISIBLE_DEVICES for the processes it starts (no_gpu): until then torch reads the
# variable again on each torch.cuda.device_count()
GPU = torch.cuda.is_available()
if GPU:
    torch.cuda.init()
    torch.cuda.device_count()
DEVICE = "cuda" if GPU else "cpu"
BENCH_DEVICE_VAR = "RMSNORM_BENCH_DEVICE"  # rmsnorm_bench.instrument.DEVICE_VAR

if GPU:
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ[BENCH_DEVICE_VAR] = "cuda"
else:
    os.environ["TRITON_INTERPRET"] = "1"
    os.environ[BENCH_DEVICE_VAR] = "cpu"

NEEDS_GPU = "needs a GPU"
NEEDS_INTERPRETER = (
    "needs Triton's interpreter in the test process (CPU tensors through the kernels), which "
    "is off on a GPU machine: the CPU run covers it (CUDA_VISIBLE_DEVICES= bash scripts/test)"
)


def pytest_configure(config):
    config.addinivalue_line("markers", f"gpu(reason): {NEEDS_GPU}; skipped without one")
    config.addinivalue_line("markers", "interpreter(reason): skipped on a GPU machine")


def pytest_collection_modifyitems(config, items):
    for item in items:
        for name, skipped, why in (("gpu", not GPU, NEEDS_GPU),
                                   ("interpreter", GPU, NEEDS_INTERPRETER)):  # fmt: skip
            marker = item.get_closest_marker(name)
            if marker and skipped:
                reason = f"{why}: {marker.args[0]}" if marker.args else why
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def device():
    return DEVICE


def cpu_path_env(**extra: str) -> dict:
    """The environment of a child process that runs the CPU path on any machine: no GPU
    visible, Triton's interpreter, the instrument's smoke mode."""
    no_gpu = {"CUDA_VISIBLE_DEVICES": "", "TRITON_INTERPRET": "1", BENCH_DEVICE_VAR: "cpu"}
    return {**os.environ, **no_gpu, **extra}


@pytest.fixture
def no_gpu(monkeypatch):
    """A machine without a GPU, made by hand: torch sees none in this process, nor does any
    process the test starts."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")


@pytest.fixture
def smoke_mode(no_gpu, monkeypatch):
    """The instrument's CPU smoke mode, as scripts/_env.sh selects it on a machine without a
    GPU. The instrument reads RMSNORM_BENCH_DEVICE once, at import: its DEVICE is set as the
    value would have made it."""
    from rmsnorm_bench import instrument

    monkeypatch.setenv(instrument.DEVICE_VAR, "cpu")
    monkeypatch.setattr(instrument.matrix, "DEVICE", "cpu")
    return instrument
