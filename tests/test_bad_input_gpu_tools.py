"""The GPU tools and the instrument on a machine that cannot run them: one line that names the
problem and exit status 2, never a traceback nor a run of failures that exits 0.

The machine without a GPU is made by hand (torch.cuda.is_available patched), so these tests
say the same on a GPU machine as on a CPU-only one. The instrument reads RMSNORM_BENCH_DEVICE
once, at import: each test sets instrument.DEVICE to what that value would have made it.
"""

import os
import subprocess
import sys

import pytest

from rmsnorm_bench import ROOT, instrument

VAR = instrument.DEVICE_VAR


def test_the_instrument_takes_its_documented_values_only(monkeypatch):
    for value in ("cpu", "cuda", ""):
        monkeypatch.setenv(VAR, value)
        instrument.check_device()
    monkeypatch.delenv(VAR)
    instrument.check_device()
    monkeypatch.setenv(VAR, "gpu")
    with pytest.raises(ValueError, match=f"{VAR}='gpu': expected cpu"):
        instrument.check_device()
    with pytest.raises(ValueError, match=VAR):  # what the suites ask first
        instrument.shapes_for("forward")


def suites_import(device):
    env = {**os.environ, VAR: device, "TRITON_INTERPRET": "1"}
    code = "import benchmarks.bench_rmsnorm"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_asv_finds_the_suites_with_a_valid_device_only():
    for device in ("cpu", "cuda", ""):
        done = suites_import(device)
        assert done.returncode == 0, done.stderr
    done = suites_import("gpu")
    assert done.returncode != 0 and f"{VAR}='gpu': expected cpu" in done.stderr


@pytest.mark.parametrize("argv", [[], ["--help"]])
def test_the_instrument_is_a_library_not_a_tool(argv):
    cmd = [sys.executable, "-m", "rmsnorm_bench.instrument", *argv]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert "is the library" in done.stderr and "python -m rmsnorm_bench.TOOL" in done.stderr
    assert "Traceback" not in done.stderr
