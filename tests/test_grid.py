"""The grid tool (rmsnorm_bench.grid, rmsnorm_bench.gridfile): its options, the order of its
cells and the budget's cut-off, the memory cap, the judgement of each cell, its file and
heatmaps from synthetic data; then a tiny run in the CPU smoke mode, end to end, and one on a
GPU where there is one."""

import re

import pytest
import torch.nn.functional as F

from rmsnorm_bench import grid, gridfile, gridview, instrument
from rmsnorm_bench.gridfile import FAILED, NOT_REACHED, OK, SKIPPED, UNSUPPORTED, Cell

OPS, DTYPES = instrument.OPS, instrument.DTYPE_NAMES
PANELS = [(o, p, d, w) for o in OPS for p in gridfile.PHASES for d in DTYPES for w in gridfile.WEIGHTS
          if gridfile.has_cell(d, w)]  # fmt: skip


def exit_status(argv) -> int:
    try:
        return grid.main(argv)
    except SystemExit as e:
        return e.code


def timed(seconds) -> dict:
    return {"status": OK, "median_s": seconds, "samples": 5}


# --- options --------------------------------------------------------------------------------


# (a command line, what its error says), a few to a line
BAD_OPTIONS = [
    ("--m 0", "argument --m: '0' given; expected rows M: positive whole numbers"), ("--n 128,x", "argument --n: 'x' given"), ("--m ,", "argument --m: nothing given"),
    ("--ops rms", "argument --ops: 'rms' given; expected ops: rms_norm, fused_add"), ("--phases fwd", "argument --phases: 'fwd' given"), ("--dtypes bf16,fp8", "argument --dtypes: 'fp8' given"),
    ("--weights bf16", "argument --weights: 'bf16' given; expected weights: same, f32"), ("--backends triton,nope", "argument --backends: 'nope' given"), ("--backends torch,liger", "--backends: give triton too"),
    ("--budget 0", "argument --budget: expected seconds above 0, got '0'"), ("--budget -5", "got '-5'"), ("--budget nan", "got 'nan'"), ("--budget soon", "got 'soon'"),
    ("--dtypes f32 --weights f32", "an f32 weight with f32 x is the 'same' cell"),
    ("--warm-workers -1", "argument --warm-workers: '-1': give a whole number of processes"), ("--warm-workers two", "'two'"), ("--warm-workers 100000", "'100000'"),
]  # fmt: skip


@pytest.mark.parametrize("argv, message", BAD_OPTIONS)
def test_a_bad_option_is_named_and_exits_2(argv, message, capsys):
    assert exit_status(argv.split()) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_lists_come_in_the_grid_order_without_repeats():
    assert grid.listing(None, "rows M")("64, 1,64,4") == [1, 4, 64]
    assert grid.listing(OPS, "ops")("fused_add,rms_norm,fused_add") == ["rms_norm", "fused_add"]
    assert grid.budget("inf") == float("inf") and grid.budget("1e3") == 1000.0


def test_without_a_gpu_it_says_so(no_gpu, monkeypatch, capsys):
    monkeypatch.setenv(instrument.DEVICE_VAR, "cuda")
    monkeypatch.setattr(instrument.matrix, "DEVICE", "cuda")
    assert exit_status(["--m", "1", "--n", "128"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grid: needs a CUDA or ROCm GPU") and "CPU smoke mode" in err


@pytest.mark.parametrize("argv", [[], ["--m", "1,4"], ["--m", "1024", "--n", "1024"]])
def test_the_smoke_mode_takes_small_explicit_shapes_only(argv, smoke_mode, tmp_path, capsys):
    assert exit_status([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "give small --m and --n (M x N at most 65,536" in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["grid.json", "rms_norm_backward.png"])
def test_an_output_in_the_way_is_refused_before_measuring(name, smoke_mode, tmp_path, capsys):
    (tmp_path / name).mkdir()
    assert exit_status(["--m", "1", "--n", "128", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / name} is in the way: it exists and is not a file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_bad_grid_file_is_refused(tmp_path, capsys):
    bad = tmp_path / "grid.json"
    for text, message in [
        ("{", "cannot read it as JSON"),
        ('{"format": 99, "cells": []}', "not a grid file of format 1"),
        ('{"format": 1, "cells": [{"op": "rms_norm"}]}', "its cells lack some of"),
        ('{"format": 1, "cells": [], "grid": {"ops": 3}}', "its grid lacks some of the axes"),
        ('{"format": 1, "cells": [], "grid": null}', "its grid lacks some of the axes"),
        (
            '{"format": 1, "cells": [], "machine": null, "grid": {"ops": [], "phases": [], '
            '"dtypes": [], "weights": [], "backends": [], "m": [], "n": []}}',
            "its machine is not an object",
        ),
    ]:
        bad.write_text(text)
        with pytest.raises(gridfile.BadGridFile, match=message):
            gridfile.load(bad)
        assert exit_status(["--show", str(bad)]) == 2
        assert capsys.readouterr().err.startswith(f"grid: {bad}: {message}")


# --- the order of the cells and the budget ---------------------------------------------------


def test_levels_go_from_the_ends_to_the_midpoints():
    assert gridfile.levels(1) == [0] and gridfile.levels(2) == [0, 0]
    assert gridfile.levels(9) == [0, 3, 2, 3, 1, 3, 2, 3, 0]
    assert gridfile.levels(16) == [0, 3, 4, 2, 4, 3, 4, 1, 4, 3, 4, 2, 4, 3, 4, 0]


def test_every_panel_has_the_same_shapes_after_each_whole_shape():
    cells = gridfile.ordered_cells(OPS, gridfile.PHASES, DTYPES, gridfile.WEIGHTS,
                                   gridfile.M_VALUES, gridfile.N_VALUES)  # fmt: skip
    per_shape = len(PANELS)
    assert per_shape == 20 and len(cells) == 9 * 16 * per_shape
    assert not [c for c in cells if c.dtype == c.weight == "f32"]  # that is the "same" cell
    first = [(c.m, c.n) for c in cells[::per_shape]]
    assert first[:4] == [(1, 128), (1, 131072), (65536, 128), (65536, 131072)]  # the corners
    assert len(set(first)) == len(first) == 9 * 16
    for k in (1, 4, 9, 50):  # a cut-off after k shapes: each panel has those k
        panels = {}
        for c in cells[: k * per_shape]:
            panels.setdefault((c.op, c.phase, c.dtype, c.weight), set()).add((c.m, c.n))
        assert sorted(panels) == sorted(PANELS)
        assert all(shapes == set(first[:k]) for shapes in panels.values())
    # a shape's forward and backward one after the other: they share its backends
    assert all(a.group == b.group for a, b in zip(cells[::2], cells[1::2], strict=True))


def small_grid():
    return gridfile.ordered_cells(OPS, gridfile.PHASES, ["bf16"], ["same"], [1, 4], [128, 256])


def test_the_budget_cuts_the_run_and_the_rest_is_not_reached():
    cells, now, logged = small_grid(), [0.0], []

    def measure(cell):  # each cell takes 10 s of the fake clock
        now[0] += 10
        return {"triton": timed(2e-6), "torch": timed(1e-6)}

    backends = {op: ["triton", "torch"] for op in OPS}
    records = grid.run(cells, measure, 25, lambda c: None, backends, lambda: now[0], logged.append)
    assert len(records) == len(cells) == 16
    assert [r["backends"]["triton"]["status"] for r in records[:3]] == [OK] * 3
    for r in records[3:]:  # started at 0, 10 and 20 s: the fourth would start at 30
        assert r["backends"] == {
            b: {"status": NOT_REACHED, "reason": "the budget of 25 s was spent"}
            for b in backends[r["op"]]
        }
        assert r["ours_over_best_peer"] is None and not r["behind"]
    assert len(logged) == 3 and logged[0].startswith("[1/16] rms_norm forward 1x128 bf16:")


def test_an_interrupt_keeps_what_was_measured_and_an_error_fails_one_cell():
    cells, calls = small_grid(), []

    def measure(cell):
        calls.append(cell)
        if len(calls) == 2:
            raise RuntimeError("CUDA error: an illegal memory access")
        if len(calls) == 4:
            raise KeyboardInterrupt
        return {"triton": timed(1e-6)}

    records = grid.run(cells, measure, 1e9, lambda c: None, {op: ["triton"] for op in OPS},
                       log=lambda line: None)  # fmt: skip
    statuses = [r["backends"]["triton"]["status"] for r in records]
    assert statuses == [OK, FAILED, OK] + [NOT_REACHED] * 13 and len(calls) == 4
    assert (
        records[1]["backends"]["triton"]["reason"]
        == "RuntimeError: CUDA error: an illegal memory access"
    )
    assert records[3]["backends"]["triton"]["reason"] == "interrupted"
    assert records[1]["cell_error"] and "cell_error" not in records[0]  # --resume: again


# --- the memory cap ---------------------------------------------------------------------------


def test_the_memory_estimate_scales_with_the_tensors():
    cell = Cell("rms_norm", "forward", "bf16", "same", 16384, 131072)
    assert grid.cell_bytes(cell) == 16384 * 131072 * (6 * 2 + 8 * 4)
    f32 = Cell("rms_norm", "forward", "f32", "same", 16384, 131072)
    fused = Cell("fused_add", "backward", "bf16", "same", 16384, 131072)
    assert grid.cell_bytes(cell) < grid.cell_bytes(f32) and grid.cell_bytes(cell) < grid.cell_bytes(
        fused
    )
    h200 = 139 * 2**30  # about what an idle H200 has free
    assert grid.memory_problem(cell, h200) is None  # 94 GB
    big = Cell("fused_add", "forward", "bf16", "same", 65536, 65536)  # 275 GB
    assert grid.memory_problem(big, h200) == "needs about 256.0 GiB, 139.0 GiB free (80% usable)"


def test_cells_that_do_not_fit_are_skipped_unmeasured():
    cells = gridfile.ordered_cells(
        ["rms_norm"], ["forward"], ["f32"], ["same"], [1, 65536], [128, 131072]
    )
    measured = []

    def measure(cell):
        measured.append((cell.m, cell.n))
        return {"triton": timed(1e-6), "torch": timed(1e-6)}

    free = 100 * 2**30
    records = grid.run(cells, measure, 1e9, lambda c: grid.memory_problem(c, free),
                       {"rms_norm": ["triton", "torch"]}, log=lambda line: None)  # fmt: skip
    assert sorted(measured) == [(1, 128), (1, 131072), (65536, 128)]
    (skipped,) = [r for r in records if (r["m"], r["n"]) == (65536, 131072)]
    assert {r["status"] for r in skipped["backends"].values()} == {SKIPPED}
    assert skipped["backends"]["torch"]["reason"].startswith(
        "needs about 448.0 GiB, 100.0 GiB free"
    )


@pytest.mark.gpu("the GPU's allocator counts the peak")
def test_the_memory_estimate_covers_validation_on_a_gpu():
    import torch

    for op, dtype in [("rms_norm", "bf16"), ("fused_add", "bf16"), ("fused_add", "f32")]:
        cell = Cell(op, "backward", dtype, "same", 4096, 8192)
        fns = {b: instrument.make_backend(b, op) for b in ("triton", "torch")}
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        p = grid.problem(cell)
        expected = instrument.reference(p)
        for fn in fns.values():
            instrument.validate(fn, p, expected)
        del p, expected
        peak = torch.cuda.max_memory_allocated() - base
        assert peak <= grid.cell_bytes(cell), (cell, peak, grid.cell_bytes(cell))


# --- each cell judged -----------------------------------------------------------------------


def test_the_best_peer_the_ratio_and_the_behind_flag():
    peers = {
        "torch": timed(2e-6),
        "liger": timed(1e-6),
        "quack": {"status": FAILED, "reason": "wrong"},
    }
    within = gridfile.judge({"triton": timed(1.019e-6), **peers})
    assert within["best_peer"] == "liger" and within["ours_over_best_peer"] == pytest.approx(1.019)
    assert not within["behind"]
    behind = gridfile.judge({"triton": timed(1.021e-6), **peers})
    assert behind["behind"] and behind["ours_over_best_peer"] == pytest.approx(1.021)
    ahead = gridfile.judge({"triton": timed(0.5e-6), **peers})
    assert ahead["ours_over_best_peer"] == pytest.approx(0.5) and not ahead["behind"]
    # no ratio without our time, without a peer timed, or where nothing was timed (smoke mode)
    for results in [
        {"triton": {"status": FAILED, "reason": "wrong"}, **peers},
        {"triton": timed(1e-6), "quack": {"status": UNSUPPORTED, "reason": "N"}},
        {"triton": timed(None), "torch": timed(None)},
    ]:
        assert gridfile.judge(results)["ours_over_best_peer"] is None
        assert not gridfile.judge(results)["behind"]


def test_a_wrong_result_fails_an_error_is_unsupported_or_failed(smoke_mode, monkeypatch):
    import torch

    def wrong(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, instrument.EPS) * 1.5

    def refuses_f32_weights(x, w):
        if w.dtype != x.dtype:
            raise TypeError("weight must be in x's dtype")
        return F.rms_norm(x, (x.shape[-1],), w, instrument.EPS)

    timed_backends = []
    monkeypatch.setattr(
        grid, "time_backend", lambda name, fn, cell: timed_backends.append(name) or timed(1e-6)
    )
    right = instrument.make_backend("torch", "rms_norm")
    fns = {"triton": right, "torch": wrong, "liger": refuses_f32_weights, "quack": ValueError("no")}
    same = grid.measure_cell(Cell("rms_norm", "backward", "bf16", "same", 4, 128), fns)
    assert [same[b]["status"] for b in fns] == [OK, FAILED, OK, UNSUPPORTED]
    assert "AssertionError: rms_norm 4x128-bf16: out is wrong" in same["torch"]["reason"]
    assert timed_backends == ["triton", "liger"]  # a wrong result is never timed
    assert set(same["triton"]["seconds"]) == {"validate", "time"}  # where the time went
    assert set(same["torch"]["seconds"]) == {"validate"}  # not timed
    mixed = grid.measure_cell(Cell("rms_norm", "backward", "bf16", "f32", 4, 128), fns)
    assert mixed["liger"] | {"seconds": None} == {
        "status": UNSUPPORTED,
        "reason": "TypeError: weight must be in x's dtype",
        "seconds": None,
    }
    cell = Cell("rms_norm", "forward", "bf16", "same", 4, 128)
    error = RuntimeError("boom")
    assert grid.failure("triton", cell, error)["status"] == FAILED  # ours: a failure
    assert grid.failure("liger", cell, error)["status"] == UNSUPPORTED  # a peer's limit
    mixed_cell = Cell("rms_norm", "forward", "bf16", "f32", 4, 128)
    assert grid.failure("triton", mixed_cell, error)["status"] == UNSUPPORTED  # a weight refused
    assert grid.failure("liger", cell, AssertionError("out is wrong"))["status"] == FAILED
    oom = torch.cuda.OutOfMemoryError("CUDA out of memory")
    assert grid.failure("torch", cell, oom)["status"] == SKIPPED


# --- the file and the heatmaps --------------------------------------------------------------


def synthetic():
    """A grid of synthetic times: ours behind torch where N is 256, ahead elsewhere."""
    cells = gridfile.ordered_cells(
        OPS, gridfile.PHASES, ["bf16", "f32"], gridfile.WEIGHTS, [1, 4, 16], [128, 256]
    )

    def measure(cell):
        ours = 1.1e-6 if cell.n == 256 else 0.9e-6
        return {
            "triton": timed(ours * cell.m),
            "torch": timed(1e-6 * cell.m),
            "liger": timed(3e-6 * cell.m),
        }

    backends = {op: ["triton", "torch", "liger"] for op in OPS}
    records = grid.run(cells, measure, 1e9, lambda c: None, backends, log=lambda line: None)
    grid_axes = {"ops": list(OPS), "phases": list(gridfile.PHASES), "dtypes": ["bf16", "f32"],
                 "weights": list(gridfile.WEIGHTS), "m": [1, 4, 16], "n": [128, 256],
                 "backends": ["triton", "torch", "liger", "quack"]}  # fmt: skip
    return {"format": gridfile.FORMAT, "commit": "0123456789abcdef", "machine": {"gpu": "Some GPU"},
            "device_time": True, "budget_s": 480, "elapsed_s": 12.3, "grid": grid_axes,
            "unavailable": {"quack": {"rms_norm": "not installed", "fused_add": "not installed"}},
            "cells": records}  # fmt: skip


def spoil_cell(key, value):
    def spoil(data):
        data["cells"][0][key] = value

    return spoil


def spoil_result(value):
    def spoil(data):
        data["cells"][0]["backends"]["triton"] = value

    return spoil


# (a change to a good file, what the refusal says): each made a reader crash before
SPOILED = [
    (lambda d: d.update(unavailable=[1]), "its unavailable is not {backend: {op: why}}"),
    (lambda d: d.update(unavailable={"liger": "missing"}), "its unavailable is not"),
    (lambda d: d.update(elapsed_s="x"), "its elapsed_s is not a number of seconds"),
    (lambda d: d.update(runs={}), "its runs are not a list"),
    (lambda d: d["grid"].update(m=["1"]), "its grid's m and n are not all positive whole"),
    (spoil_result("ok"), "triton's result has no status of ok, failed"),
    (spoil_result({}), "triton's result has no status"),
    (spoil_result({"status": "ok", "median_s": -1e-6}), "triton's median_s is not a positive"),
    (spoil_result({"status": "ok", "median_s": "fast"}), "triton's median_s is not a positive"),
    (spoil_cell("backends", []), "its backends are not {backend: result}"),
    (spoil_cell("m", "1"), "a cell's m and n are not positive whole numbers"),
    (spoil_cell("ours_over_best_peer", "2"), "its ours_over_best_peer or best_peer is not"),
    (spoil_cell("best_peer", "nobody"), "its ours_over_best_peer or best_peer is not"),
    (spoil_cell("behind", "no"), "its behind is not true or false"),
    (spoil_cell("best_peer", None), "its ours_over_best_peer or best_peer is not"),
    (lambda d: d["grid"].update(n=[float("inf")]), "its grid's m and n are not all positive"),
    (lambda d: d["grid"].update(backends=[["triton"]]), "its grid's ops, phases, dtypes"),
    (lambda d: d["cells"].append(dict(d["cells"][0])), "is there twice"),  # counted twice
]


@pytest.mark.parametrize("spoil, message", SPOILED)
def test_a_grid_file_with_a_bad_field_is_refused_by_name(spoil, message, tmp_path, capsys):
    data = synthetic()
    spoil(data)
    path = tmp_path / "grid.json"
    path.write_text(gridfile.dumps(data))
    with pytest.raises(gridfile.BadGridFile, match=re.escape(message)):
        gridfile.load(path)
    assert exit_status(["--show", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_file_reads_back_as_written(tmp_path):
    data = synthetic()
    path = tmp_path / "grid.json"
    path.write_text(gridfile.dumps(data))
    assert gridfile.load(path) == data
    lines = path.read_text().splitlines()
    assert sum(line.startswith('  {"op": ') for line in lines) == len(data["cells"]) == 72


def test_the_summary_counts_and_names_the_worst_cells(tmp_path, capsys):
    data = synthetic()
    text = gridview.summary(data, worst=3)
    assert text.startswith("grid on Some GPU, commit 01234567: 72 cells")
    assert "  triton: 72 ok" in text and "  quack" not in text.split("unavailable")[0]
    # ours is behind by 10% at N = 256: half the cells
    assert "72 cells measured (ours and a peer timed): 36 (50%) within 2% of the best peer" in text
    assert "unavailable: quack (not installed)" in text
    worst = text.split("36 behind:\n")[1].splitlines()
    assert len(worst) == 3 and all(
        line.startswith("  1.100x  ") and "x256" in line for line in worst
    )
    path = tmp_path / "grid.json"
    path.write_text(gridfile.dumps(data))
    assert exit_status(["--show", str(path)]) == 0
    assert capsys.readouterr().out.strip() == gridview.summary(data)


def test_a_heatmap_per_op_and_phase_is_drawn(tmp_path):
    data = synthetic()
    data["cells"][0]["ours_over_best_peer"] = None  # a grey cell
    written = gridview.draw(data, tmp_path)
    assert [p.name for p in written] == [f"{o}_{p}.png" for o in OPS for p in gridfile.PHASES]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    assert gridview.panels(data) == [("bf16", "same"), ("bf16", "f32"), ("f32", "same")]


# --- end to end -------------------------------------------------------------------------------


@pytest.mark.interpreter("the smoke mode runs the kernels on CPU tensors")
def test_a_tiny_grid_in_the_smoke_mode(smoke_mode, tmp_path, capsys):
    argv = ["--m", "1,4", "--n", "128", "--dtypes", "bf16,f32", "--backends", "triton,torch"]
    assert exit_status([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    data = gridfile.load(tmp_path / "grid.json")
    assert not data["device_time"] and data["unavailable"] == {}
    assert data["grid"]["m"] == [1, 4] and data["grid"]["backends"] == ["triton", "torch"]
    # 2 ops x 2 phases x (bf16, bf16 with an f32 weight, f32) x 2 shapes
    assert len(data["cells"]) == 24
    for cell in data["cells"]:
        for b in ("triton", "torch"):
            result = cell["backends"][b]
            assert result | {"seconds": None} == {"status": OK, "median_s": None, "samples": 0,
                                                  "seconds": None}  # fmt: skip
            # validated once for both phases of a shape (the forward's cell comes first)
            first = {"validate"} if cell["phase"] == "forward" else set()
            assert set(result["seconds"]) == {"make", "time"} | first
    assert "where the time went (s): triton make " in out
    assert {c["weight"] for c in data["cells"] if c["dtype"] == "bf16"} == {"same", "f32"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["grid.json"] + [f"{o}_{p}.png" for o in OPS for p in gridfile.PHASES]
    )
    assert "device time not measured" in out and "  triton: 24 ok" in out
    assert "warm" not in data["runs"][0]  # the interpreter compiles nothing worth warming


@pytest.mark.interpreter("the smoke mode runs the kernels on CPU tensors")
def test_the_smoke_mode_lists_the_peers_it_cannot_run_and_fails_where_ours_is_wrong(
    smoke_mode, tmp_path, capsys, monkeypatch
):
    made = instrument.make_backend

    def make_backend(name, op):  # ours made wrong: the run must say so
        fn = made(name, op)
        if name != "triton" or op != "rms_norm":
            return fn
        return lambda x, w: fn(x, w) * 2

    monkeypatch.setattr(instrument, "make_backend", make_backend)
    argv = ["--m", "1", "--n", "128", "--dtypes", "f32", "--backends", "triton,torch,liger"]
    assert exit_status([*argv, "--out", str(tmp_path)]) == 1
    data = gridfile.load(tmp_path / "grid.json")
    assert "runs on GPUs only" in data["unavailable"]["liger"]["rms_norm"]
    status = {(c["op"], c["phase"]): c["backends"]["triton"]["status"] for c in data["cells"]}
    assert status == {("rms_norm", "forward"): FAILED, ("rms_norm", "backward"): FAILED,
                      ("fused_add", "forward"): OK, ("fused_add", "backward"): OK}  # fmt: skip
    assert "unavailable: liger" in capsys.readouterr().out


@pytest.mark.gpu("device time")
def test_a_tiny_grid_on_a_gpu(tmp_path):
    argv = ["--m", "1,256", "--n", "128,4096", "--dtypes", "bf16", "--backends", "triton,torch"]
    assert exit_status([*argv, "--out", str(tmp_path)]) == 0
    data = gridfile.load(tmp_path / "grid.json")
    assert data["device_time"] and data["machine"]["gpu"] != "none"
    for cell in data["cells"]:
        for result in cell["backends"].values():
            assert result["status"] == OK and result["median_s"] > 0 and result["samples"] >= 5
        assert cell["best_peer"] == "torch" and cell["ours_over_best_peer"] > 0


# --- a run stopped, then continued (--resume) ---------------------------------------------------

SMALL = ["--m", "1,4", "--n", "128,256", "--dtypes", "bf16", "--weights", "same",
         "--backends", "triton,torch"]  # fmt: skip


@pytest.fixture
def fake_cells(smoke_mode, monkeypatch):
    """Cells measured at once (ours 2 us, torch 1 us); `stop_after` cells, then the process
    is stopped from outside (SystemExit, which the run does not catch); the file is rewritten
    after every cell."""
    state = {"calls": [], "stop_after": None}
    monkeypatch.setattr(gridfile, "CHECKPOINT_SECONDS", 0)
    # this checkout's code is the same as its commit's (test_same_code_is_told_by_git below)
    monkeypatch.setattr(gridfile, "same_code", lambda commit, head: commit == head)
    monkeypatch.setattr(grid, "make_backends", lambda op, names, unavailable: dict.fromkeys(names))

    def measure_cell(cell, fns, verdicts=None):
        state["calls"].append(cell.key)
        if state["stop_after"] is not None and len(state["calls"]) > state["stop_after"]:
            raise SystemExit("the machine was taken back")
        return {name: timed(2e-6 if name == "triton" else 1e-6) for name in fns}

    monkeypatch.setattr(grid, "measure_cell", measure_cell)
    return state


def test_a_stopped_run_keeps_what_it_measured_and_resume_measures_the_rest(fake_cells, tmp_path,
                                                                           capsys):  # fmt: skip
    fake_cells["stop_after"] = 5
    assert exit_status([*SMALL, "--out", str(tmp_path)]) == "the machine was taken back"
    stopped = gridfile.load(tmp_path / "grid.json")
    assert len(stopped["cells"]) == 16
    kept = [c for c in stopped["cells"] if gridfile.reached(c)]
    assert len(kept) == 5 and all(c["ours_over_best_peer"] == 2.0 for c in kept)
    for c in stopped["cells"][5:]:
        assert {r["status"] for r in c["backends"].values()} == {NOT_REACHED}
        assert "--resume continues" in c["backends"]["triton"]["reason"]
    assert "11 cells not reached" in gridview.summary(stopped)
    assert not list(tmp_path.glob(".*.part"))  # written whole each time

    measured_before = list(fake_cells["calls"][:5])
    fake_cells.update(calls=[], stop_after=None)
    assert exit_status([*SMALL, "--out", str(tmp_path), "--resume"]) == 0
    assert "5 cells kept, 11 to go" in capsys.readouterr().out
    assert not set(fake_cells["calls"]) & set(measured_before) and len(fake_cells["calls"]) == 11
    data = gridfile.load(tmp_path / "grid.json")
    assert all(map(gridfile.reached, data["cells"])) and len(data["cells"]) == 16
    assert data["cells"][:5] == kept  # as measured, in the same order
    assert [r["measured"] for r in data["runs"]] == [5, 11]
    assert data["created"] == stopped["created"]


def test_resume_joins_the_axes_and_measures_only_the_new_cells(fake_cells, tmp_path):
    first = [*SMALL[:1], "1", *SMALL[2:]]  # --m 1
    assert exit_status([*first, "--out", str(tmp_path)]) == 0
    assert len(fake_cells["calls"]) == 8
    fake_cells["calls"].clear()
    assert exit_status([*SMALL, "--out", str(tmp_path), "--resume"]) == 0  # --m 1,4
    assert {key[4] for key in fake_cells["calls"]} == {4} and len(fake_cells["calls"]) == 8
    data = gridfile.load(tmp_path / "grid.json")
    assert data["grid"]["m"] == [1, 4] and len(data["cells"]) == 16
    fake_cells["calls"].clear()  # all there: nothing to measure
    assert exit_status([*SMALL, "--out", str(tmp_path), "--resume"]) == 0
    assert not fake_cells["calls"] and len(gridfile.load(tmp_path / "grid.json")["runs"]) == 3


def test_resume_refuses_a_grid_it_cannot_continue(fake_cells, tmp_path, capsys):
    assert exit_status([*SMALL, "--out", str(tmp_path / "none"), "--resume"]) == 2
    assert "no grid to continue" in capsys.readouterr().err
    fake_cells["stop_after"] = 2
    exit_status([*SMALL, "--out", str(tmp_path)])
    path = tmp_path / "grid.json"
    other_backends = [*SMALL[:-1], "triton,torch,liger", "--out", str(tmp_path), "--resume"]
    before = path.read_bytes()
    assert exit_status(other_backends) == 2
    assert "another backends" in capsys.readouterr().err and path.read_bytes() == before
    data = gridfile.load(path)
    data["commit"] = "0" * 40  # a commit whose measured code is not this one's
    gridfile.write(path, data)
    before = path.read_bytes()
    assert exit_status([*SMALL, "--out", str(tmp_path), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "measured commit 0000000000, whose package or instrument differs" in err
    assert "Traceback" not in err and path.read_bytes() == before
    data["machine"]["gpu"] = "Another GPU"
    data["commit"] = gridfile.load(tmp_path / "grid.json")["runs"][0]["commit"]
    gridfile.write(path, data)
    assert exit_status([*SMALL, "--out", str(tmp_path), "--resume"]) == 2
    assert "with another machine" in capsys.readouterr().err


def test_same_code_is_told_by_git(tmp_path, monkeypatch):
    import subprocess

    def git(*args):
        done = subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True,
                              check=True)  # fmt: skip
        return done.stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "rmsnorm_kernels").mkdir()
    (tmp_path / "rmsnorm_kernels" / "ops.py").write_text("x = 1\n")
    git("add", "-A")
    git("commit", "-qm", "a")
    first = git("rev-parse", "HEAD")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "grid.json").write_text("{}\n")  # a grid committed between parts
    git("add", "-A")
    git("commit", "-qm", "b")
    second = git("rev-parse", "HEAD")
    monkeypatch.setattr(gridfile, "ROOT", tmp_path)
    assert gridfile.same_code(first, second) and gridfile.same_code(second, second)
    (tmp_path / "rmsnorm_kernels" / "ops.py").write_text("x = 2\n")  # uncommitted, measured
    assert not gridfile.same_code(first, second) and not gridfile.same_code(second, second)
    assert not gridfile.same_code("0" * 40, second) and not gridfile.same_code(None, second)


def test_a_new_run_does_not_overwrite_device_times_of_this_commit(tmp_path, monkeypatch):
    fresh = {"commit": "c" * 40, "machine": {"gpu": "NVIDIA H200"}, "device_time": True,
             "grid": {"backends": ["triton"]}}  # fmt: skip
    cell = Cell("rms_norm", "forward", "bf16", "same", 1, 128)
    record = {**vars(cell), "backends": {"triton": timed(1e-6)}, **gridfile.judge({})}
    old = {"format": gridfile.FORMAT, **fresh, "grid": {k: [] for k in
           ("ops", "phases", "dtypes", "weights", "backends", "m", "n")}, "cells": [record]}  # fmt: skip
    path = tmp_path / "grid.json"
    gridfile.write(path, old)
    monkeypatch.setattr(gridfile, "same_code", lambda commit, head: commit == head)
    with pytest.raises(gridfile.BadGridFile, match="holds 1 cells .* measured of this code"):
        gridfile.continued(path, fresh, False)
    with pytest.raises(gridfile.BadGridFile, match="holds 1 cells"):  # another host, same GPU
        host = {**fresh, "machine": {"gpu": "NVIDIA H200", "num_cpu": "8"}}
        gridfile.continued(path, host, False)
    # another commit's grid: replaced where git keeps it as it is (a new commit's grid)
    later = {**fresh, "commit": "d" * 40}
    with pytest.raises(gridfile.BadGridFile, match="which git does not keep as they are"):
        gridfile.continued(path, later, False)
    monkeypatch.setattr(gridfile, "kept_by_git", lambda p: True)
    assert gridfile.continued(path, later, False) == (later, {})
    # before, the CPU smoke mode and another machine replaced the committed H200 grid silently
    smoke = {**later, "device_time": False}
    with pytest.raises(gridfile.BadGridFile, match="the CPU smoke mode validates only"):
        gridfile.continued(path, smoke, False)
    h100 = {**later, "machine": {"gpu": "NVIDIA H100"}}
    with pytest.raises(gridfile.BadGridFile, match="of another machine than this one"):
        gridfile.continued(path, h100, False)
    for changed in (smoke, h100, fresh):  # --replace: asked for
        assert gridfile.continued(path, changed, False, replace=True) == (changed, {})
    path.write_text(path.read_text()[:40])  # a file that cannot be read is not replaced either
    with pytest.raises(gridfile.BadGridFile, match="cannot read it as JSON.*or --replace"):
        gridfile.continued(path, later, False)


def test_resume_measures_again_cells_an_error_or_memory_stopped(fake_cells, tmp_path):
    assert exit_status([*SMALL, "--out", str(tmp_path)]) == 0
    path = tmp_path / "grid.json"
    data = gridfile.load(path)
    errored, skipped = data["cells"][3], data["cells"][7]
    errored.update(cell_error=True, backends={b: {"status": FAILED, "reason": "CUDA error"}
                                              for b in ("triton", "torch")})  # fmt: skip
    skipped["backends"] = {
        b: {"status": SKIPPED, "reason": "needs 9 GiB"} for b in ("triton", "torch")
    }
    del data["runs"]  # a file written before runs were listed
    gridfile.write(path, data)
    fake_cells["calls"].clear()
    assert exit_status([*SMALL, "--out", str(tmp_path), "--resume"]) == 0
    assert fake_cells["calls"] == [gridfile.key(errored), gridfile.key(skipped)]
    data = gridfile.load(path)
    assert all(map(gridfile.settled, data["cells"])) and [r["measured"] for r in data["runs"]] == [
        16,
        2,
    ]


def test_a_run_stopped_before_its_first_cell_leaves_the_file_there(fake_cells, tmp_path):
    fake_cells["stop_after"] = 0
    (tmp_path / "grid.json").write_text("an earlier grid, of another commit")
    assert exit_status([*SMALL, "--out", str(tmp_path)]) == 2  # unreadable: not replaced
    args = [*SMALL, "--out", str(tmp_path), "--replace"]
    assert exit_status(args) == "the machine was taken back"
    assert (tmp_path / "grid.json").read_text() == "an earlier grid, of another commit"


# --- the cells compiled ahead of their timing (rmsnorm_bench.gridwarm) ------------------------


class FakePool:
    def __init__(self, fail=False):
        self.batches, self.fail, self.shut = [], fail, False

    def map(self, fn, groups, backends):
        if self.fail:
            raise RuntimeError("a worker died")
        self.batches.append(list(groups))
        return [len(b) for b in backends]  # every backend validated

    def shutdown(self, cancel_futures=False):
        self.shut = True


def warmer(monkeypatch, cells, size=lambda cell: 1, workers=2, pool=None, free=lambda: 100):
    from rmsnorm_bench import gridwarm
    from rmsnorm_bench.instrument import warm

    forgotten, pools = [], []
    monkeypatch.setattr(warm, "forget_choices", lambda: forgotten.append(1) or 0)
    w = gridwarm.Warmer(workers, cells, {o: ["triton", "torch"] for o in OPS}, size, free)

    def start():  # the pool as _start makes it, a fake
        w.before_pool = free()
        w.pool = pool or FakePool()
        pools.append(w.pool)

    monkeypatch.setattr(w, "_start", start)
    return w, forgotten, pools


def test_groups_are_compiled_a_batch_ahead_in_the_order_measured(monkeypatch):
    from rmsnorm_bench import gridwarm

    cells = gridfile.ordered_cells(["rms_norm"], gridfile.PHASES, ["bf16"], ["same"],
                                   [1, 4, 16], [128, 256, 1024])  # fmt: skip
    big = cells[4].group  # over a worker's share of the memory (half of 100, of 2 workers)
    w, forgotten, pools = warmer(monkeypatch, cells, size=lambda c: 26 if c.group == big else 25)
    batch = 2 * gridwarm.BATCH_PER_WORKER
    for cell in cells:
        w.before(cell)
    groups = list(dict.fromkeys(c.group for c in cells))
    pool = pools[0]
    warmed = [g for b in pool.batches for g in b]
    assert warmed == [g for g in groups if g != big]  # each once, in order, phases shared
    assert all(len(b) <= batch for b in pool.batches) and len(pool.batches) >= 2
    assert w.facts["groups"] == len(groups) - 1 and len(forgotten) == len(pool.batches)
    assert w.facts["validated"] == 2 * (len(groups) - 1) and len(pools) == 1
    w.close()
    assert w.pool is None and pool.shut and "stopped" not in w.facts


def test_a_worker_that_dies_stops_the_warming_and_the_cells_compile_as_measured(monkeypatch):
    cells = gridfile.ordered_cells(["rms_norm"], ["forward"], ["bf16"], ["same"], [1, 4], [128])
    pool = FakePool(fail=True)
    w, forgotten, pools = warmer(monkeypatch, cells, pool=pool)
    w.before(cells[0])
    assert w.facts["stopped"] == "RuntimeError: a worker died" and w.facts["groups"] == 0
    assert pool.shut and w.pool is None and forgotten
    w.before(cells[1])  # nothing more is handed out, no pool started again
    assert len(pools) == 1


def test_workers_ended_for_a_cells_memory_start_again_for_the_next_batch(monkeypatch):
    cells = gridfile.ordered_cells(["rms_norm"], ["forward"], ["bf16"], ["same"],
                                   [1, 4, 16, 64, 256, 1024], [128])  # fmt: skip
    free = {"bytes": 100}
    w, _, pools = warmer(monkeypatch, cells, workers=1, free=lambda: free["bytes"])
    assert w.held() == 0  # no worker yet
    w.before(cells[0])  # its first batch: cells 0 and 1
    assert w.held() == 0  # nothing seen held yet
    free["bytes"] = 90  # what the idle worker holds, measured after a batch
    w.before(cells[2])
    assert w.held() == 10
    w.make_room()
    assert w.held() == 0 and w.facts["ended_for_memory"] == 1 and pools[0].shut
    w.before(cells[4])  # the next batch: a new pool
    assert len(pools) == 2 and "stopped" not in w.facts


def test_the_summary_says_what_was_compiled_ahead():
    data = synthetic()
    data["runs"] = [{"warm": {"workers": 8, "groups": 120, "seconds": 95.4}}]
    assert "120 shapes compiled ahead in 8 processes (0 backends validated), 95 s" in (
        gridview.summary(data)
    )
    data["runs"] += [{"warm": {"workers": 8, "groups": 3, "seconds": 2, "stopped": "died"}}]
    assert (
        "run 2: 3 shapes compiled ahead in 8 processes (0 backends validated), 2 s, then "
        "stopped (died)" in (gridview.summary(data))
    )


@pytest.mark.interpreter("the smoke mode runs the kernels on CPU tensors")
def test_a_tiny_grid_with_a_worker_compiling_ahead(smoke_mode, tmp_path, capsys):
    argv = ["--m", "1,4", "--n", "128", "--dtypes", "bf16", "--weights", "same",
            "--backends", "triton,torch", "--warm-workers", "1", "--out", str(tmp_path)]  # fmt: skip
    assert exit_status(argv) == 0
    data = gridfile.load(tmp_path / "grid.json")
    warm = data["runs"][0]["warm"]
    assert warm["workers"] == 1 and warm["groups"] == 4 and "stopped" not in warm
    assert warm["validated"] == 8  # 4 shapes by 2 backends, each validated in the worker
    assert all(r["status"] == OK for c in data["cells"] for r in c["backends"].values())
    assert "4 shapes compiled ahead in 1 process (8 backends validated)" in (
        capsys.readouterr().out
    )


def test_a_cell_that_needs_the_workers_memory_ends_the_warming(fake_cells, tmp_path, monkeypatch):
    from rmsnorm_bench import gridwarm

    state = {"open": True, "before": 0}

    class Warmer:  # workers that hold 10 bytes while they live
        def __init__(self, workers, cells, backends, size, free, log=print):
            self.facts = {"workers": workers, "groups": 0, "seconds": 0.0}

        def before(self, cell):
            state["before"] += 1

        def held(self):
            return 10 if state["open"] else 0

        def make_room(self):
            self.facts["ended_for_memory"] = 1
            state["open"] = False

        def close(self, stopped=None):
            state["open"] = False

    monkeypatch.setattr(gridwarm, "Warmer", Warmer)
    # 5 bytes free while the workers live, 15 once they have ended; a cell takes 12
    monkeypatch.setattr(grid, "free_memory", lambda: 5 if state["open"] else 15)
    monkeypatch.setattr(grid, "memory_problem", lambda cell, free: None if free >= 12 else "big")
    assert exit_status([*SMALL, "--out", str(tmp_path), "--warm-workers", "2"]) == 0
    data = gridfile.load(tmp_path / "grid.json")
    assert all(gridfile.reached(c) and c["ours_over_best_peer"] for c in data["cells"])
    assert data["runs"][0]["warm"]["ended_for_memory"] == 1  # before the first cell
    assert state["before"] == len(data["cells"])


def test_a_worker_ends_on_a_cuda_error_only(monkeypatch):
    from rmsnorm_bench import gridwarm

    ended = []
    monkeypatch.setattr(gridwarm.os, "_exit", ended.append)
    gridwarm._unless_lost(AssertionError("wrong dx"))
    gridwarm._unless_lost(RuntimeError("CUDA error: out of memory"))
    assert ended == []
    gridwarm._unless_lost(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert ended == [70]


def test_a_sigterm_stops_the_grid_as_ctrl_c_does():
    import os
    import signal
    import time

    with pytest.raises(KeyboardInterrupt), grid.lifetime.sigterm_raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_sample_of_long_replays_holds_as_many_as_last_its_time():
    from rmsnorm_bench.instrument.graphs import sampled_iters

    assert sampled_iters(20, 10e-6, grid.SAMPLE_SECONDS) == 20  # short: the contract's 20
    assert sampled_iters(20, 200e-6, 2e-3) == 10 and sampled_iters(20, 1e-3, 2e-3) == 2
    assert sampled_iters(20, 1.34e-3, 2e-3) == 2  # a sample lasts at least its time
    assert sampled_iters(20, 10e-3, 2e-3) == 1 and sampled_iters(20, 0.0, 2e-3) == 20


def test_a_shapes_backends_are_validated_once_for_both_phases(smoke_mode, monkeypatch):
    validated = []
    real = instrument.validate
    monkeypatch.setattr(
        instrument, "validate", lambda fn, p, e: validated.append(fn) or real(fn, p, e)
    )
    monkeypatch.setattr(grid, "time_backend", lambda name, fn, cell: timed(1e-6))

    def wrong(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, instrument.EPS) * 1.5

    fns = {"triton": instrument.make_backend("torch", "rms_norm"), "torch": wrong}
    verdicts = {}
    forward = grid.measure_cell(Cell("rms_norm", "forward", "bf16", "same", 4, 128), fns, verdicts)
    backward = grid.measure_cell(
        Cell("rms_norm", "backward", "bf16", "same", 4, 128), fns, verdicts
    )
    assert len(validated) == 2  # each backend once, for both phases
    assert forward["triton"]["status"] == backward["triton"]["status"] == OK
    assert forward["torch"]["status"] == backward["torch"]["status"] == FAILED  # never timed
    assert (
        "validate" in forward["torch"]["seconds"] and "validate" not in backward["torch"]["seconds"]
    )
    # without the group's verdicts (a cell of its own) each cell validates
    grid.measure_cell(Cell("rms_norm", "backward", "bf16", "same", 4, 128), fns)
    assert len(validated) == 4


def test_a_cell_out_of_memory_is_not_the_backends_verdict(smoke_mode, monkeypatch):
    import torch

    calls = []
    real = instrument.validate

    def validate(fn, p, e):  # out of memory once, as a large cell might be
        calls.append(fn)
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return real(fn, p, e)

    monkeypatch.setattr(instrument, "validate", validate)
    monkeypatch.setattr(grid, "time_backend", lambda name, fn, cell: timed(1e-6))
    fns, verdicts = {"triton": instrument.make_backend("torch", "rms_norm")}, {}
    forward = grid.measure_cell(Cell("rms_norm", "forward", "bf16", "same", 4, 128), fns, verdicts)
    assert forward["triton"]["status"] == SKIPPED and verdicts == {}
    backward = grid.measure_cell(
        Cell("rms_norm", "backward", "bf16", "same", 4, 128), fns, verdicts
    )
    assert backward["triton"]["status"] == OK and len(calls) == 2  # validated again, passed


# --- a verdict confirmed --------------------------------------------------------------------


def fake_timer(first, then):
    """A time_backend whose k-th timing of a backend is first[name] (k = 1) or then[name], and
    the backends in the order timed."""
    order = []

    def time_backend(name, fn, cell):
        order.append(name)
        return timed(first[name] if order.count(name) == 1 else then[name])

    return time_backend, order


CELL = Cell("rms_norm", "backward", "bf16", "same", 48, 896)
FNS = dict.fromkeys(("triton", "torch", "torch_compile"))


def first_timings(monkeypatch, first, then):
    """The grid's timer replaced by fake_timer(first, then); (the first timings of FNS in
    CELL, the backends in the order timed)."""
    time_backend, order = fake_timer(first, then)
    monkeypatch.setattr(grid, "time_backend", time_backend)
    return {name: time_backend(name, None, CELL) for name in FNS}, order


def test_a_planted_outlier_is_timed_again_and_the_cell_judged_on_the_median(monkeypatch):
    first = {"triton": 34.1e-6, "torch": 5.0e-6, "torch_compile": 2.1e-6}
    then = {"triton": 2.0e-6, "torch": 5.0e-6, "torch_compile": 2.1e-6}
    results, order = first_timings(monkeypatch, first, then)
    assert gridfile.judge(results)["behind"]  # 16x behind on the first timings
    spent = grid.confirm(CELL, FNS, results)
    verdict = gridfile.judge(results)
    assert not verdict["behind"] and verdict["ours_over_best_peer"] < 1
    assert results["triton"]["timings"] == [34.1e-6] + [2.0e-6] * grid.CONFIRM_ROUNDS
    assert results["triton"]["median_s"] == 2.0e-6
    assert "timings" not in results["torch"] and set(spent) == {"triton", "torch_compile"}
    # ours and the best peer in turns, A B B A ..., after the first timings of all three
    pairs = [order[i : i + 2] for i in range(3, len(order), 2)]
    assert pairs == [["triton", "torch_compile"], ["torch_compile", "triton"]] * (
        grid.CONFIRM_ROUNDS // 2
    )


def test_a_real_gap_stays_behind_and_a_cell_near_the_peer_is_not_timed_again(monkeypatch):
    slow = {"triton": 4.0e-6, "torch": 5.0e-6, "torch_compile": 2.1e-6}
    results, order = first_timings(monkeypatch, slow, slow)
    grid.confirm(CELL, FNS, results)
    assert gridfile.judge(results)["behind"] and len(order) == 3 + 2 * grid.CONFIRM_ROUNDS
    near = {"triton": 2.1e-6, "torch": 5.0e-6, "torch_compile": 2.1e-6}
    results, order = first_timings(monkeypatch, near, near)
    assert grid.confirm(CELL, FNS, results) == {} and len(order) == 3
    assert all("timings" not in r for r in results.values())


def test_far_ahead_is_confirmed_too_and_a_failed_confirmation_keeps_the_first(monkeypatch):
    first = {"triton": 0.5e-6, "torch": 5.0e-6, "torch_compile": 2.1e-6}
    then = {"triton": 2.0e-6, "torch": 5.0e-6, "torch_compile": 2.1e-6}
    results, _ = first_timings(monkeypatch, first, then)
    grid.confirm(CELL, FNS, results)
    assert 0.9 < gridfile.judge(results)["ours_over_best_peer"] < 1  # 0.24 was one timing
    results = {name: timed(first[name]) for name in FNS}
    monkeypatch.setattr(grid, "time_backend", lambda name, fn, cell: {"status": FAILED})
    grid.confirm(CELL, FNS, results)
    assert results["triton"] == timed(0.5e-6)


def test_measure_cell_confirms_its_verdict(smoke_mode, monkeypatch):
    first = {"triton": 34.1e-6, "torch": 2.1e-6}
    then = {"triton": 2.0e-6, "torch": 2.1e-6}
    time_backend, _ = fake_timer(first, then)
    monkeypatch.setattr(grid, "time_backend", time_backend)
    fns = {name: instrument.make_backend("torch", "rms_norm") for name in first}
    results = grid.measure_cell(Cell("rms_norm", "forward", "bf16", "same", 4, 128), fns)
    assert len(results["triton"]["timings"]) == 1 + grid.CONFIRM_ROUNDS
    assert not gridfile.judge(results)["behind"]


def test_timings_that_are_not_seconds_are_refused(tmp_path):
    record = {**vars(CELL), "backends": {"triton": {**timed(2e-6), "timings": [2e-6, -1]}}}
    record.update(gridfile.judge(record["backends"]))
    assert "timings" in gridfile.cell_fault(record)


def test_the_colour_scale_reaches_the_largest_gap_either_way():
    cells = [{"ours_over_best_peer": r} for r in (0.9, 1.3, None)]
    assert gridview.color_span(cells) == gridview.MIN_SPAN  # within 2x: the 2x scale
    cells.append({"ours_over_best_peer": 6.0})
    assert gridview.color_span(cells) == 6.0  # a 6x gap is the end of the scale, not 2x
    assert gridview.color_span([{"ours_over_best_peer": 1 / 8}]) == 8.0
    marks = gridview.ticks(6.0)
    assert marks[0] == 0.25 and marks[-1] == 4.0 and 1.0 in marks and marks == sorted(marks)
