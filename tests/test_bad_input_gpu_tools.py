"""The GPU tools and the instrument on a machine that cannot run them: one line that names the
problem and exit status 2, never a traceback nor a run of failures that exits 0.

The machine without a GPU is made by hand (torch.cuda.is_available patched), so these tests
say the same on a GPU machine as on a CPU-only one. The instrument reads RMSNORM_BENCH_DEVICE
once, at import: each test sets instrument.matrix.DEVICE to what that value would have made it.
"""

import os
import subprocess
import sys

import pytest
import torch

from rmsnorm_bench import (
    ROOT,
    compile_cost,
    copy_ceiling,
    grid,
    instrument,
    profile_host,
    spread,
    sweep,
    training_step,
    validate,
)

VAR = instrument.DEVICE_VAR
NO_GPU = "needs a CUDA or ROCm GPU"
SMOKE_HINT = f"{VAR}=cpu runs it in the CPU smoke mode"


def exit_status(tool, argv) -> int:
    try:
        return tool.main(argv)
    except SystemExit as e:
        return e.code


def machine(monkeypatch, device, gpu: bool) -> None:
    """RMSNORM_BENCH_DEVICE=device (None: unset), and a GPU or none."""
    if device is None:
        monkeypatch.delenv(VAR, raising=False)
    else:
        monkeypatch.setenv(VAR, device)
    monkeypatch.setattr(instrument.matrix, "DEVICE", "cpu" if device == "cpu" else "cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    if not gpu:  # none for the processes a tool starts either (spread's)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")


@pytest.mark.parametrize(
    "tool, argv, hint",
    [
        (sweep, [], ""),
        (sweep, ["--forward", "1,256,bf16"], ""),
        (profile_host, [], ""),
        (profile_host, ["--trace"], ""),
        (copy_ceiling, [], ""),
        (training_step, [], ""),
        (spread, ["--processes", "2"], SMOKE_HINT),
        (validate, [], SMOKE_HINT),
        (compile_cost, [], SMOKE_HINT),  # before: 30 s, then a CUDA error per case, exit 1
    ],
)
def test_gpu_tools_say_they_need_a_gpu(tool, argv, hint, monkeypatch, capsys):
    # RMSNORM_BENCH_DEVICE=cuda: validate falls back to the smoke mode only where it is unset
    machine(monkeypatch, "cuda", gpu=False)
    assert exit_status(tool, argv) == 2
    err = capsys.readouterr().err
    name = tool.__name__.rpartition(".")[2]
    assert err.startswith(f"{name}: {NO_GPU}") and hint in err
    assert "Traceback" not in err


def test_sweep_refuses_where_the_variable_is_unset(monkeypatch, capsys):
    machine(monkeypatch, None, gpu=False)
    assert exit_status(sweep, ["--forward", "--current", "1,256,bf16"]) == 2
    out, err = capsys.readouterr()
    assert err == f"sweep: {NO_GPU}\n" and "FAILED" not in out


@pytest.mark.parametrize("tool", [sweep, profile_host, copy_ceiling])
def test_gpu_only_tools_refuse_the_smoke_mode(tool, monkeypatch, capsys):
    # a GPU is there: the smoke mode would time Triton's interpreter, or CUDA work by the host
    machine(monkeypatch, "cpu", gpu=True)
    assert exit_status(tool, []) == 2
    assert f"{VAR}=cpu selects the CPU smoke mode" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["gpu", "CPU", "cuda:0"])
@pytest.mark.parametrize("tool", [sweep, profile_host, copy_ceiling, spread, validate])
def test_an_unknown_device_is_named_with_its_values(tool, value, monkeypatch, capsys):
    machine(monkeypatch, value, gpu=True)
    assert exit_status(tool, []) == 2
    err = capsys.readouterr().err
    assert f"{VAR}={value!r}: expected cpu" in err and "or cuda" in err


GRID_ARGS = ["--m", "1", "--n", "128", "--out", "{tmp}"]


@pytest.mark.parametrize(
    "tool, argv, value, said",
    [(tool, argv, "tritn", "unknown backend(s) 'tritn'")
     for tool, argv in ((validate, []), (spread, ["--processes", "2"]),
                        (compile_cost, ["--rounds", "1"]), (grid, GRID_ARGS))]
    + [(validate, [], "torch", "leaves out triton"), (grid, GRID_ARGS, "torch", "leaves out")],
)  # fmt: skip
def test_a_backend_list_that_cannot_serve_is_named_first(
    tool, argv, value, said, tmp_path, monkeypatch, capsys
):
    # before: a traceback (validate), a run whose every cell "failed" (grid), exit 1
    machine(monkeypatch, "cpu", gpu=False)
    monkeypatch.setenv(instrument.BACKENDS_VAR, value)
    monkeypatch.setattr(grid, "measure_grid", lambda *a: pytest.fail("the grid ran"))
    argv = [str(tmp_path) if a == "{tmp}" else a for a in argv]
    status = exit_status(tool, argv)
    err = capsys.readouterr().err
    assert status == 2 and said in err and "Traceback" not in err


def test_compile_cost_names_a_bad_shape_list_before_it_starts(monkeypatch, capsys):
    machine(monkeypatch, "cpu", gpu=False)
    monkeypatch.setenv("RMSNORM_BENCH_SHAPES", "abc")
    monkeypatch.setattr(compile_cost, "measure", lambda *a: pytest.fail("it measured"))
    assert exit_status(compile_cost, ["--rounds", "1"]) == 2
    assert "RMSNORM_BENCH_SHAPES: bad entry 'abc'" in capsys.readouterr().err


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


def test_a_sweep_where_every_case_failed_exits_1(monkeypatch, capsys):
    machine(monkeypatch, "cuda", gpu=True)
    monkeypatch.setattr(sweep, "time_case", lambda *a: (None, "RuntimeError: boom"))
    assert exit_status(sweep, ["--forward", "--current", "1,256,bf16"]) == 1
    out, err = capsys.readouterr()
    assert out.count("FAILED") == 2 and err == "sweep: 2 of 2 cases FAILED\n"


def test_a_sweep_with_some_times_exits_0_and_counts_the_failures(monkeypatch, capsys):
    machine(monkeypatch, "cuda", gpu=True)

    def time_case(backend, op, phase, shape):  # a setting that is wrong has no time
        return (1e-6, None) if op == "rms_norm" else (None, "AssertionError: wrong")

    monkeypatch.setattr(sweep, "time_case", time_case)
    assert exit_status(sweep, ["--forward", "--current", "1,256,bf16"]) == 0
    assert capsys.readouterr().err == "sweep: 1 of 2 cases FAILED\n"


def test_sweep_rounds_time_every_case_in_turns_and_print_the_median(monkeypatch, capsys):
    machine(monkeypatch, "cuda", gpu=True)
    calls = []
    fake = {"triton": [3e-6, 1e-6, 2e-6], "torch": [5e-6, 9e-6, 4e-6]}  # per round

    def time_case(backend, op, phase, shape):
        calls.append((op, backend))
        return fake[backend][sum(c == (op, backend) for c in calls) - 1], None

    monkeypatch.setattr(sweep, "time_case", time_case)
    argv = ["--forward", "--current", "--peer", "torch", "--rounds", "3", "1,256,bf16"]
    assert exit_status(sweep, argv) == 0
    # each op: ours and the peer once a round, alternating, not one case three times running
    assert (
        calls
        == [("rms_norm", "triton"), ("rms_norm", "torch")] * 3
        + [
            ("fused_add", "triton"),
            ("fused_add", "torch"),
        ]
        * 3
    )
    rows = [r.split() for r in capsys.readouterr().out.splitlines()[1:]]
    assert [(r[0], r[3], r[5]) for r in rows][:2] == [
        ("rms_norm", "2.00", "100.0%"),  # median 2, spread (3 - 1) / 2
        ("rms_norm", "5.00", "100.0%"),  # median 5, spread (9 - 4) / 5
    ]


def test_sweep_cases_run_under_their_own_settings_only_and_leave_the_constants(monkeypatch, capsys):
    """The built-in settings change the forward's constant in some cases and the backward's
    in others; each case sees the others' constants as they were, in every round, and the
    sweep leaves them so."""
    from rmsnorm_kernels import _config

    machine(monkeypatch, "cuda", gpu=True)
    names = sorted({name for _, overrides in sweep.SETTINGS for name in overrides})
    before = {name: getattr(_config, name) for name in names}
    seen = []

    def time_case(backend, op, phase, shape):
        seen.append((phase, {name: getattr(_config, name) for name in names}))
        return 1e-6, None

    monkeypatch.setattr(sweep, "time_case", time_case)
    assert exit_status(sweep, ["--rounds", "2", "1,256,bf16"]) == 0
    assert len(seen) == 2 * 2 * len(sweep.SETTINGS)  # two ops, two rounds
    expected = [(phase, {**before, **overrides}) for phase, overrides in sweep.SETTINGS]
    assert seen == expected * 4
    assert {name: getattr(_config, name) for name in names} == before


def test_a_sweep_case_that_fails_in_a_later_round_is_failed_and_not_timed_again(
    monkeypatch, capsys
):
    machine(monkeypatch, "cuda", gpu=True)
    calls = []

    def time_case(backend, op, phase, shape):
        calls.append(op)
        if op == "fused_add" and calls.count(op) == 2:
            return None, "AssertionError: wrong"
        return 1e-6, None

    monkeypatch.setattr(sweep, "time_case", time_case)
    assert exit_status(sweep, ["--forward", "--current", "--rounds", "3", "1,256,bf16"]) == 0
    out, err = capsys.readouterr()
    assert calls.count("rms_norm") == 3 and calls.count("fused_add") == 2
    assert "fused_add forward   1x256-bf16       FAILED" in out and "wrong" in out
    assert err == "sweep: 1 of 2 cases FAILED\n"


@pytest.mark.parametrize("rounds", ["0", "-1", "two"])
def test_sweep_refuses_rounds_that_are_not_a_count(rounds, capsys):
    assert exit_status(sweep, ["--rounds", rounds, "1,256,bf16"]) == 2
    assert "--rounds" in capsys.readouterr().err


def test_spread_runs_in_the_smoke_mode(monkeypatch, capsys):
    # its processes inherit the variable; torch alone keeps them quick
    machine(monkeypatch, "cpu", gpu=False)
    argv = ["--processes", "2", "--backends", "torch", "rms_norm:forward:1,256,bf16"]
    assert exit_status(spread, argv) == 0
    assert "rms_norm:forward:1,256,bf16 | torch |" in capsys.readouterr().out


def test_validate_names_a_package_that_cannot_be_imported():
    # before: RMSNORM_KERNELS_HOST=rust gave a traceback and exit 1, validate's "wrong result"
    env = {**os.environ, "RMSNORM_KERNELS_HOST": "rust", "RMSNORM_BENCH_DEVICE": "cpu"}
    done = subprocess.run([sys.executable, "-m", "rmsnorm_bench.validate"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "RMSNORM_KERNELS_HOST='rust'" in done.stderr and "nothing validated" in done.stderr
    assert "Traceback" not in done.stderr
