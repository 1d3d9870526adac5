"""Run the kernels under Triton's interpreter on CPU tensors unless a GPU is present.

TRITON_INTERPRET must be set before triton is first imported, so this happens here, before
any test module imports rmsnorm_kernels.
"""

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
    # the benchmark instrument (used by the opt-in comparison) runs in its CPU smoke mode
    os.environ.setdefault("RMSNORM_BENCH_DEVICE", "cpu")

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def device():
    return DEVICE
