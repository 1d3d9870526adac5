"""What the compiler makes of the kernels, checked on any machine: rmsnorm_bench.codegen
compiles them for sm_90 and fails on unvectorised row accesses or a tile changing layout."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_kernels_compile_to_vector_accesses_without_tile_relayouts():
    # the check compiles for a GPU: outside the interpreter that the CPU tests run under
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run(
        [sys.executable, "-m", "rmsnorm_bench.codegen"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode == 3:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr + out.stdout
    assert "variants compiled for sm_90" in out.stdout


def test_a_variant_that_spills_registers_is_named():
    """The one-block backward of 16,384 columns with the next row prefetched and 32 warps'
    worth of elements in 16 (a setting measured 4-12x slower before c02ae07) spills about 2
    KB a thread: the check fails and names it."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = (
        "import sys; from rmsnorm_kernels import _config; from rmsnorm_bench import codegen; "
        "_config.SPLIT_BACKWARD_ABOVE_N = 16384; _config.LONG_ROW_BACKWARD_PREFETCH = True; "
        "_config.LONG_ROW_BACKWARD_ELEMENTS_PER_WARP = 1024; sys.exit(codegen.main([]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    if out.returncode == 3:
        pytest.skip(out.stderr.strip())
    if "spills not checked" in out.stderr:
        pytest.skip("no ptxas to run here")
    assert out.returncode == 1, out.stderr + out.stdout
    assert re.search(r"backward, N=16384: \d+ bytes of registers spilled", out.stderr), out.stderr
    assert "backward, N=8192: " not in out.stderr  # the one-block backward that does not spill


def test_loads_after_a_store_are_counted():
    """codegen's load-order check counts the global loads that follow the first global store
    (the one-block forward before e9f348d: the weight's load after rstd's store), and only
    global ones: shared memory and a kernel with no store pass."""
    from rmsnorm_bench import codegen

    before = "ld.global.v4.b32 {%r1}, [%rd1];\nst.global.b32 [%rd2], %r2;\n"
    assert codegen.loads_after_first_store(before) == 0
    late = before + "ld.global.v4.b32 {%r3}, [%rd3];\nst.global.v4.b32 [%rd4], {%r4};\n"
    assert codegen.loads_after_first_store(late) == 1
    assert codegen.loads_after_first_store(before + "ld.shared.b32 %r5, [%r6];\n") == 0
    assert codegen.loads_after_first_store("ld.global.b32 %r1, [%rd1];\n") == 0
    assert codegen.loads_first("_rms_norm_fwd_kernel", {"SINGLE_BLOCK": True})
    assert not codegen.loads_first("_rms_norm_fwd_kernel", {"SINGLE_BLOCK": False})
    assert codegen.loads_first("_rms_norm_fwd_split_kernel", {})
    assert not codegen.loads_first("_rms_norm_bwd_kernel", {"SINGLE_BLOCK": True})


def test_compiled_path_packs_arguments_as_the_ptx_parameters():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-m", "tests.ptx_parameters"],
        env=env, cwd=root, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if out.returncode == 3:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr + out.stdout
    assert "parameter kinds piipiipilf" in out.stdout
