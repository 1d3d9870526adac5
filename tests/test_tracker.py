"""The tracker's own logic: the instrument's pure parts, results merging, regression checks,
publishing, the machine's facts; the tools are imported, the shell entry points run."""

import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rmsnorm_bench import (
    ROOT,
    asvfiles,
    compare,
    link_torch,
    machine,
    merge,
    progress,
    publish,
    regressions,
    report,
    vendor,
)
from rmsnorm_bench import instrument as common

from .conftest import cpu_path_env

COLUMNS = ["result", "params", "version", "started_at", "duration"]
# what asv writes in every results file besides the figures (version: its results format)
ASV_FIELDS = {"env_name": "virtualenv-py3.11", "python": "3.11", "requirements": {}, "version": 2}
TOOLS = [
    "asvfiles",
    "asvrun",
    "codegen",
    "compare",
    "compile_cost",
    "copy_ceiling",
    "dashboard",
    "grid",
    "link_torch",
    "machine",
    "merge",
    "profile_host",
    "progress",
    "publish",
    "regressions",
    "report",
    "selftest",
    "store",
    "sweep",
    "training_step",
    "validate",
    "vendor",
]


def shell(script, *args, **kwargs):
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / script), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        **kwargs,
    )


def test_parse_shapes():
    shapes = common.parse_shapes("1,4096,bf16; 512,3000,f32;", "VAR")
    assert [s.label for s in shapes] == ["1x4096-bf16", "512x3000-f32"]
    assert common.Shape.from_label("512x3000-f32") == shapes[1]


@pytest.mark.parametrize("bad", ["1,4096", "a,4096,bf16", "1,4096,fp8", "1,0,f32", " ; "])
def test_parse_shapes_names_the_bad_entry(bad):
    with pytest.raises(ValueError, match="RMSNORM_BWD_BENCH_SHAPES") as e:
        common.parse_shapes(bad, "RMSNORM_BWD_BENCH_SHAPES")
    if bad.strip(" ;"):
        assert repr(bad.strip()) in str(e.value) or repr(bad) in str(e.value)


def write_run(
    folder: Path,
    commit: str,
    date: int,
    values: dict,
    version="v",
    bench="bench_rmsnorm.RMSNormBackward.track_time",
    samples: dict | None = None,
):
    """An asv results file with one parametrized benchmark of the given (case, backend) values
    (and, given samples {(case, backend): [...]}, their samples and asv's stats columns)."""
    cases = sorted({c for c, _ in values})
    backends = sorted({b for _, b in values})
    result = [values.get((c, b)) for c in cases for b in backends]
    params = [[repr(c) for c in cases], [repr(b) for b in backends]]
    columns, row = COLUMNS, [result, params, version, 0, 1.0]
    if samples:
        each = [samples.get((c, b)) for c in cases for b in backends]
        columns = [*COLUMNS, "stats_repeat", "samples"]
        row += [[len(s) if s else None for s in each], each]
    run = {
        **ASV_FIELDS,
        "commit_hash": commit,
        "date": date,
        "params": {"machine": folder.name},
        "result_columns": columns,
        "results": {bench: row},
    }
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "machine.json").exists():  # asv writes it with every run
        write_machine(folder)
    path = folder / f"{commit[:8]}-virtualenv-py3.11.json"
    path.write_text(json.dumps(run))
    return path


def write_machine(folder: Path, **facts) -> Path:
    """A machine folder's machine.json as asv writes it: its name, facts and asv's format."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "machine.json"
    path.write_text(json.dumps({**facts, "machine": folder.name, "version": 1}))
    return path


def test_short_calls_are_captured_several_times_per_graph():
    # a replay of a short call waits on the host: the graph holds enough calls to last
    # GRAPH_MIN_SECONDS, within [1, MAX_CALLS_PER_GRAPH]
    assert common.calls_per_graph(2 * common.GRAPH_MIN_SECONDS) == 1
    assert common.calls_per_graph(common.GRAPH_MIN_SECONDS) == 1
    assert common.calls_per_graph(common.GRAPH_MIN_SECONDS / 20) == 20
    assert common.calls_per_graph(common.GRAPH_MIN_SECONDS / 20.5) == 21
    assert common.calls_per_graph(0.0) == common.MAX_CALLS_PER_GRAPH


def test_torch_compile_adapter_compiles_one_graph_that_computes_right():
    # The GPU-only adapter, run in a fresh process as asv's are, on the CPU path on any machine (its set-up once failed there
    # only: a torch submodule that this test process had already imported). On the CPU its
    # graph is compiled by AOT autograd with fullgraph=True (a graph break fails), without
    # inductor's C++ build; then validated against the fp32 reference, and its timed backward
    # (retain_graph=True, which donated buffers would forbid) run twice.
    code = """
import torch
from torch._dynamo.utils import counters

from rmsnorm_bench import instrument

compile_ = torch.compile
torch.compile = lambda fn, **kw: compile_(fn, backend="aot_eager", fullgraph=True, **kw)
for op in instrument.OPS:
    instrument.matrix.DEVICE = "cuda"  # the adapter's own check; the tensors stay on the CPU
    fn = instrument.make_backend("torch_compile", op)
    instrument.matrix.DEVICE = "cpu"
    assert torch._functorch.config.donated_buffer is False
    graphs = counters["stats"]["unique_graphs"]
    for shape in instrument.SMOKE_SHAPES[:2]:
        p = instrument.make_problem(op, instrument.Shape(*shape))
        instrument.validate(fn, p)
        backward = instrument.timed_call(fn, p, "backward")
        backward()
        backward()
    # one graph per shape: the adapter starts afresh, and nothing ran eager instead
    assert counters["stats"]["unique_graphs"] == graphs + 2, dict(counters["stats"])
print("compiled", dict(counters["stats"]))
"""
    env = {k: v for k, v in cpu_path_env().items() if k != common.BACKENDS_VAR}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "compiled" in done.stdout


def test_compile_cache_counts_name_hits_and_misses(monkeypatch):
    # dynamo's counters, inductor's and AOT autograd's cache entries only; none before dynamo
    monkeypatch.delitem(sys.modules, "torch._dynamo.utils", raising=False)
    assert common.compile_cache_counts() == {}
    counters = {
        "inductor": {"fxgraph_cache_hit": 2, "fxgraph_cache_miss": 0, "pattern_matcher": 5},
        "aot_autograd": {"autograd_cache_miss": 1},
        "stats": {"unique_graphs": 3},
    }
    monkeypatch.setitem(sys.modules, "torch._dynamo.utils", SimpleNamespace(counters=counters))
    assert common.compile_cache_counts() == {
        "inductor.fxgraph_cache_hit": 2,
        "inductor.fxgraph_cache_miss": 0,
        "aot_autograd.autograd_cache_miss": 1,
    }


def test_compile_cost_tables_each_process_first_case_apart():
    from rmsnorm_bench import compile_cost

    rows = [
        {"suite": "rms_norm forward", "case": "a", "seconds": 5.0, "round": 1,
         "caches": {"inductor.fxgraph_cache_miss": 2}},
        {"suite": "rms_norm forward", "case": "b", "seconds": 0.5, "round": 1,
         "caches": {"inductor.fxgraph_cache_hit": 2, "aot_autograd.autograd_cache_hit": 1}},
        {"suite": "rms_norm forward", "import torch": 1.0, "process": 7.0, "round": 1},
        {"suite": "rms_norm forward", "case": "c", "round": 2, "seconds": 0.1, "caches": {},
         "failed": "RuntimeError: x"},
        {"suite": "rms_norm forward", "import torch": 1.0, "process": 2.0, "round": 2},
    ]  # fmt: skip
    lines = compile_cost.table(rows).splitlines()
    assert lines[1].split() == ["1", "rms_norm", "forward", "5.00", "s", "0.50", "s", "7.0", "s",
                                "3/2"]  # fmt: skip
    assert lines[2].split()[:4] == ["2", "rms_norm", "forward", "0.10"]
    assert lines[-1] == "FAILED: rms_norm forward c: RuntimeError: x"


def test_the_suites_find_the_instrument_beside_them_and_nothing_else(tmp_path):
    # as asv imports them: only `benchmarks` is importable (asv_runner's SpecificImporter),
    # from a temporary working directory; the root, which holds a checkout of the package
    # under test, stays off sys.path, and discovery imports no torch
    code = f"""
import sys
from asv_runner._aux import update_sys_path

update_sys_path({str(ROOT / "benchmarks")!r})
import benchmarks.bench_rmsnorm as suites
import rmsnorm_bench

assert rmsnorm_bench.__file__ == {str(ROOT / "rmsnorm_bench" / "__init__.py")!r}
assert {str(ROOT)!r} not in sys.path and "" not in sys.path, sys.path
assert "torch" not in sys.modules and "rmsnorm_kernels" not in sys.modules
print(suites.RMSNormForward.params[1])
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str(common.BACKENDS)


def test_the_ratio_interleaves_ours_and_the_peers_calls():
    log, pairs = [], []
    ours, peer = (lambda: log.append("ours")), (lambda: log.append("peer"))

    def block(call, iters):  # a fake clock: ours 2 s a call, the peer's 3, on a host that
        for _ in range(iters):  # gets twice as slow from one pair of blocks to the next
            call()
        if call is ours:
            pairs.append(None)
        return 2 ** len(pairs) * (2.0 if call is ours else 3.0)

    c = common.Contract(warmup=1, iters=2, samples=3)
    ratio = common.interleaved_ratio(ours, peer, c, block=block)
    assert log == ["ours", "peer"] + ["ours", "ours", "peer", "peer"] * 3
    assert ratio == [1.5] * 3  # peer / ours, the host's speed divided out; higher: ours faster


def fake_blocks(values, log=None):
    """A block timer that returns `values` in turn (seconds per call), counting the calls."""
    values = iter(values)

    def block(call, iters):
        for _ in range(iters):
            call()
        return next(values)

    return block


def test_a_figure_is_sampled_until_its_median_is_known_to_the_target():
    c = common.Contract(warmup=2, iters=5, samples=4, max_samples=16, target=0.01)
    calls = []
    steady = common.seconds_per_call(
        lambda: calls.append(1), c, block=fake_blocks([1.0, 1.001, 0.999, 1.0] + [9.0] * 20)
    )
    assert steady == [1.0, 1.001, 0.999, 1.0]  # known to 0.16% at the minimum: it stops
    assert len(calls) == 2 + 4 * 5  # the warm-ups, then every sample's block
    # 2% apart, sample to sample: the median is known to 1% at the 10th sample (by hand:
    # t(9) 2.262 x 1.2533 x s 0.01054 / sqrt(10) / median 1.01 = 0.94%; at 9, 1.02%)
    wobbly = [1.0, 1.02] * 20
    got = common.seconds_per_call(lambda: None, c, block=fake_blocks(wobbly))
    assert got == wobbly[:10]
    assert common.median_ci_share(wobbly[:9]) > 0.01 >= common.median_ci_share(wobbly[:10])
    noisy = [1.0, 1.5] * 20
    assert len(common.seconds_per_call(lambda: None, c, block=fake_blocks(noisy))) == 16  # cap
    # the time cap: a tenth of a second a sample, a quarter of a second at most past the minimum
    timed = common.Contract(warmup=0, iters=1, samples=2, max_samples=16, target=0.01,
                            max_seconds=0.25)  # fmt: skip
    taken = []  # each sample's call: a tenth of a second on the fake clock
    got = common.seconds_per_call(lambda: taken.append(1), timed, block=fake_blocks(noisy),
                                  clock=lambda: len(taken) / 10)  # fmt: skip
    assert len(got) == 3  # two, the minimum, at 0.2 s; a third; at 0.3 s it stops
    fixed = common.Contract(warmup=0, iters=1, samples=3)
    assert len(common.seconds_per_call(lambda: None, fixed, block=fake_blocks(noisy))) == 3
    assert common.median_ci_share([1.0]) == common.median_ci_share([0.0, 0.0]) == float("inf")


def test_the_ratio_takes_pairs_until_the_quotient_is_known():
    c = common.Contract(warmup=0, iters=1, samples=2, max_samples=8, target=0.01)
    ours, peer = (lambda: None), (lambda: None)
    steady = [1.0, 2.0] * 20  # every pair 2.0: known at the minimum
    assert common.interleaved_ratio(ours, peer, c, block=fake_blocks(steady)) == [2.0, 2.0]
    noisy = [1.0, 2.0, 1.0, 3.0] * 20  # 2, 3, 2, 3 ...: up to the cap
    assert len(common.interleaved_ratio(ours, peer, c, block=fake_blocks(noisy))) == 8


def test_the_contracts_keep_the_seeds_warm_up_block_and_minimum():
    # a figure that is not noisy is measured exactly as under the fixed contract before it
    gpu = common.GPU_CONTRACT
    assert (gpu.warmup, gpu.iters, gpu.samples) == (10, 100, 4) and gpu.max_samples > 4
    assert common.PROCESSES * gpu.samples >= 6  # asv's Mann-Whitney test needs 6 a side
    smoke = common.SMOKE_CONTRACT  # the interpreter's timing means nothing: a fixed count
    assert smoke.max_samples <= smoke.samples
    assert common.GPU_RATIO_CONTRACT.samples * common.PROCESSES >= 6


def test_public_times_stop_their_extra_samples_sooner_than_device_times():
    gpu = common.GPU_CONTRACT
    public = common.public_contract(gpu)
    assert public.max_seconds == common.contract.PUBLIC_MAX_SECONDS < gpu.max_seconds
    # the same samples otherwise: a figure that is not noisy is measured as before
    same = ("warmup", "iters", "samples", "max_samples", "target")
    assert [getattr(public, f) for f in same] == [getattr(gpu, f) for f in same]
    assert common.public_contract(common.SMOKE_CONTRACT) == common.SMOKE_CONTRACT
    clock = iter(range(100)).__next__  # one second a sample: past the cap once 4 are taken
    noisy = [1.0, 3.0] * 20
    taken = common.seconds_per_call(lambda: None, public, block=fake_blocks(noisy), clock=clock)
    assert len(taken) == public.samples


def test_the_ratio_is_measured_against_our_validated_call(monkeypatch):
    monkeypatch.setattr(common.suite, "interleaved_ratio", lambda ours, peer, c: [ours(), peer()])
    m, ours = common.Measurement(), {}
    assert "peer's public time over ours" in common.suite._public_ratio(
        m, "triton", lambda: 1, ours
    )
    assert m.public_ratio is None and ours["call"]() == 1
    assert common.suite._public_ratio(m, "torch", lambda: 2, ours) is None and m.public_ratio == [
        1,
        2,
    ]
    lone = common.Measurement()
    assert "no validated public call" in common.suite._public_ratio(lone, "torch", lambda: 2, {})
    assert lone.public_ratio is None


def test_cold_device_time_flushes_before_every_timed_replay():
    log = []

    class Event:
        def __init__(self):
            self.at = None

        def record(self):
            log.append("event")
            self.at = len(log)

        def synchronize(self):
            log.append("sync")

        def elapsed_time(self, end):  # milliseconds, as CUDA events give them
            return float(end.at - self.at)

    times = common.cold_seconds(
        lambda: log.append("replay"), lambda: log.append("flush"), 3, event=Event
    )
    assert log == ["flush", "event", "replay", "event"] * 3 + ["sync"]  # the flush is not timed
    assert times == [2e-3] * 3
    assert common.cold_seconds(lambda: None, lambda: None, 0) == []


def test_the_new_figures_report_and_skip(monkeypatch):
    bench = importlib.import_module("benchmarks.bench_rmsnorm")
    shape = common.Shape(4, 1024, "bf16")
    suite_results = {
        (shape.label, "triton"): common.Measurement(
            time=[1.0],
            device_time=[1e-6, 2e-6],
            device_time_cold=[3e-6],
            public_ratio_skipped="ours",
        ),
        (shape.label, "torch"): common.Measurement(time=[2.0], public_ratio=[2.0, 2.1]),
    }
    # the one cache of all four suites: each reads its own part, the others' cases are not its
    results = {("rms_norm", "forward"): suite_results, ("fused_add", "forward"): {}}
    suite = bench.RMSNormForward()
    suite.setup(results, shape.label, "triton")
    nbytes = common.ideal_bytes("rms_norm", "forward", shape)
    assert suite.track_bandwidth(results, shape.label, "triton")["samples"] == [
        nbytes / 1e3,
        nbytes / 2e3,
    ]
    assert suite.track_device_time_cold(results, shape.label, "triton")["samples"] == [3e-6]
    ratio_check = bench.RMSNormForward.track_public_ratio.setup
    with pytest.raises(NotImplementedError, match="ours"):
        ratio_check(results, shape.label, "triton")
    ratio_check(results, shape.label, "torch")
    suite.setup(results, shape.label, "torch")
    assert suite.track_public_ratio(results, shape.label, "torch")["samples"] == [2.0, 2.1]
    with pytest.raises(NotImplementedError):
        suite_results[(shape.label, "torch")].device_time_skipped = "CPU"
        bench.RMSNormForward.track_device_time_cold.setup(results, shape.label, "torch")
    with pytest.raises(NotImplementedError, match="not in the shapes"):
        bench.FusedAddRMSNormForward().setup(results, shape.label, "torch")
    assert bench.RMSNormForward.track_bandwidth.unit == "GB/s"
    # every suite's figures are its own, under the versions stored before
    for cls in (bench.RMSNormForward, bench.FusedAddRMSNormBackward):
        assert cls.track_device_time is not bench._Suite.track_device_time
        assert cls.track_device_time.version == "seed-contract-1, device-graph-2"
        assert cls.track_device_time.__name__ == "track_device_time"
        assert cls.setup_cache is bench._Suite.setup_cache  # one cache, measured once a round
    assert bench.FusedAddRMSNormBackward.track_peak_memory.setup is not (
        bench.RMSNormForward.track_peak_memory.setup
    )


def test_an_error_in_one_backend_fails_only_its_case(monkeypatch):
    def broken(name, op):
        raise RuntimeError("adapter broke")

    monkeypatch.setattr(common.suite, "make_backend", broken)
    shape = common.Shape(1, 256, "bf16")
    m = common.measure_case("rms_norm", "forward", shape, "torch", common.device_contract())
    assert m.failed == "RuntimeError: adapter broke" and m.time is None and not m.skipped


def test_progress_lines_are_written_and_summed_up(tmp_path, monkeypatch, capsys):
    log = tmp_path / "progress.log"
    monkeypatch.setenv(progress.VAR, str(log))
    monkeypatch.delenv(common.BWD_SHAPES_VAR, raising=False)
    outcomes = {"triton": common.Measurement(time=[1.0]), "torch": common.Measurement(skipped="x")}
    monkeypatch.setattr(
        common.suite,
        "measure_phases",
        lambda op, phases, shape, b, c, ours: {ph: outcomes[b] for ph in phases},
    )
    common.measure_suite("fused_add", "backward", backends=["triton", "torch"])
    lines = log.read_text().splitlines()
    shapes = common.shapes_for("backward")
    assert len(lines) == 2 * len(shapes)
    assert lines[0].startswith(f"[fused_add backward 1/{len(shapes)}] {shapes[0].label} triton: ok")
    assert lines[1].startswith(
        f"[fused_add backward 1/{len(shapes)}] {shapes[0].label} torch: skipped"
    )
    summary = progress.summary(lines + ["asv noise", "[bad line"])
    assert f"in {len(lines)} cases ({len(shapes)} skipped)" in summary
    assert "fused_add backward triton" in summary
    assert "fused_add backward torch" not in summary.split("slowest")[0]  # skipped: no time
    assert progress.summary([]) == "no cases measured"
    assert progress.main([str(log)]) == 0
    assert capsys.readouterr().out.strip() == progress.summary(lines)


def test_each_case_records_its_phases_and_the_reference_is_made_once(tmp_path, monkeypatch):
    times = tmp_path / "times.jsonl"
    monkeypatch.setenv(progress.TIMES_VAR, str(times))
    monkeypatch.setenv(common.FWD_SHAPES_VAR, "2,64,f32;3,96,bf16")
    made = []
    real = common.reference
    monkeypatch.setattr(common.suite, "reference", lambda p: made.append(p.shape.label) or real(p))
    results = common.measure_suite("fused_add", "forward", backends=["triton", "torch"])
    assert not any(m.failed for m in results.values()), results
    assert made == ["2x64-f32", "3x96-bf16"]  # one fp32 reference per shape, both backends
    cases, process = progress.read_times(times)[:-1], progress.read_times(times)[-1]
    assert [(c["case"], c["backend"]) for c in cases] == [
        (s, b) for s in ("2x64-f32", "3x96-bf16") for b in ("triton", "torch")
    ]
    for case in cases:
        assert case["suite"] == "fused_add forward" and case["status"] == "ok"
        # the device figures are measured on a GPU only
        device = {"device"} if common.DEVICE == "cuda" else set()
        assert set(case["phases"]) == {"backend", "inputs", "validation", "public", *device}
        assert sum(case["phases"].values()) <= case["seconds"]
    assert process["process"] == os.getpid() and "import torch" in process["phases"]
    assert process["seconds"] >= sum(c["seconds"] for c in cases)
    with times.open("a") as f:
        f.write('{"suite": "cut sh')  # a process killed while writing: the line is left out
    assert len(progress.read_times(times)) == len(cases) + 1


def test_one_process_measures_all_suites_setting_each_case_up_once(tmp_path, monkeypatch):
    times = tmp_path / "times.jsonl"
    monkeypatch.setenv(progress.TIMES_VAR, str(times))
    monkeypatch.setenv(common.FWD_SHAPES_VAR, "2,64,f32")
    monkeypatch.setenv(common.BWD_SHAPES_VAR, "2,64,f32;3,96,bf16")  # one the forward lacks
    made, real = [], common.make_backend
    monkeypatch.setattr(
        common.suite, "make_backend", lambda b, op: made.append((op, b)) or real(b, op)
    )
    results = common.measure_suites(backends=["triton", "torch"])
    assert list(results) == common.SUITES
    for (_op, phase), cases in results.items():
        labels = ["2x64-f32"] + (["3x96-bf16"] if phase == "backward" else [])
        assert sorted(cases) == sorted((s, b) for s in labels for b in ("triton", "torch"))
        assert not any(m.failed or m.skipped for m in cases.values()), cases
        assert all(m.time for m in cases.values())
    # each op, shape and backend made (and validated) once, for both of its phases
    assert sorted(made) == sorted(
        (op, b) for op in common.OPS for _ in ("2x64-f32", "3x96-bf16") for b in ("triton", "torch")
    )
    records = progress.read_times(times)
    cases, process = records[:-1], records[-1]
    setup = {"backend", "inputs", "validation"}
    for case in cases:
        first = case["suite"].endswith("forward") or case["case"] == "3x96-bf16"
        assert (setup <= set(case["phases"])) == first, case  # counted once, in the first
        assert "public" in case["phases"]
    assert process["suites"] == [f"{op} {phase}" for op, phase in common.SUITES]
    # and one suite alone measures that suite only
    assert list(common.measure_suites([("rms_norm", "backward")], ["torch"])) == [
        ("rms_norm", "backward")
    ]


def test_merge_copies_new_and_refuses_conflicts(tmp_path, capsys):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    kept = write_run(ours / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 1e-4})
    write_run(theirs / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 1e-4})  # identical
    write_run(theirs / "mi355x", "b" * 40, 2, {("1x4096-bf16", "triton"): 2e-4})  # new
    assert merge.main([str(theirs), "--into", str(ours)]) == 0
    assert "2 file(s) copied, 2 already here" in capsys.readouterr().out  # machine.json too
    assert (ours / "mi355x" / f"{'b' * 8}-virtualenv-py3.11.json").exists()

    write_run(theirs / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 9e-4})  # conflicts
    write_run(theirs / "h200", "c" * 40, 3, {("1x4096-bf16", "triton"): 1e-4})  # would be new
    before = kept.read_text()
    with pytest.raises(SystemExit) as refused:
        merge.main([str(theirs), "--into", str(ours)])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and str(kept) in err and "nothing copied" in err
    assert kept.read_text() == before
    assert not (ours / "h200" / f"{'c' * 8}-virtualenv-py3.11.json").exists()


def test_merge_brings_the_earlier_runs_kept_whole_and_loses_none(tmp_path, capsys):
    # before, only */*.json came: an archive in replaced/ (the only copy of a run) stayed behind
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_run(ours / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 1e-4})
    name = f"{'a' * 8}-virtualenv-py3.11.json"
    for folder, value in ((ours, "1"), (theirs, "2")):  # one name, two runs
        (folder / "h200" / "replaced").mkdir(parents=True)
        (folder / "h200" / "replaced" / f"{name}.1.replaced").write_text(f'{{"run": {value}}}')
    (theirs / "h200" / "replaced" / f"{name}.2.replaced").write_text('{"run": 1}')  # here
    write_run(theirs / "h200", "b" * 40, 2, {("1x4096-bf16", "triton"): 2e-4})
    assert merge.main([str(theirs), "--into", str(ours)]) == 0
    kept = {p.name: p.read_text() for p in (ours / "h200" / "replaced").iterdir()}
    assert kept == {f"{name}.1.replaced": '{"run": 1}', f"{name}.2.replaced": '{"run": 2}'}
    assert "2 file(s) copied" in capsys.readouterr().out  # b's results and the archive
    assert merge.main([str(theirs), "--into", str(ours)]) == 0  # again: nothing new
    assert "0 file(s) copied" in capsys.readouterr().out


def test_merge_keeps_the_archives_numbers_and_refuses_a_file_in_their_way(tmp_path, capsys):
    theirs = tmp_path / "theirs"
    write_run(theirs / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 1e-4})
    name = f"{'a' * 8}-virtualenv-py3.11.json"
    (theirs / "h200" / "replaced").mkdir()
    for n in range(1, 12):  # .2 after .1, .10 after .9: numbered in the order they were kept
        (theirs / "h200" / "replaced" / f"{name}.{n}.replaced").write_text(f'{{"run": {n}}}')
    ours = tmp_path / "ours"
    assert merge.main([str(theirs), "--into", str(ours)]) == 0
    for n in range(1, 12):
        kept = ours / "h200" / "replaced" / f"{name}.{n}.replaced"
        assert kept.read_text() == f'{{"run": {n}}}'
    blocked = tmp_path / "blocked"
    (blocked / "h200").mkdir(parents=True)
    (blocked / "h200" / "replaced").write_text("a file")
    with pytest.raises(SystemExit) as refused:
        merge.main([str(theirs), "--into", str(blocked)])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "a file where the folder of earlier runs goes" in err
    assert sorted(p.name for p in (blocked / "h200").iterdir()) == ["replaced"]  # nothing copied


def test_merge_refuses_files_that_are_not_results(tmp_path, capsys):
    (tmp_path / "src" / "h200").mkdir(parents=True)
    (tmp_path / "src" / "h200" / "x.json").write_text("{not json")
    with pytest.raises(SystemExit) as refused:
        merge.main([str(tmp_path / "src"), "--into", str(tmp_path / "dst")])
    assert refused.value.code == 2 and "x.json: not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "dst").exists()


def test_regressions_name_benchmark_and_parameters(tmp_path, capsys):
    folder = tmp_path / "results" / "h200"
    write_run(
        folder, "a" * 40, 1, {("4096x4096-bf16", "triton"): 1.0e-4, ("1x4096-bf16", "triton"): 5e-5}
    )
    write_run(
        folder, "b" * 40, 2, {("4096x4096-bf16", "triton"): 1.3e-4, ("1x4096-bf16", "triton"): 5e-5}
    )

    def check(*args):  # track_time: public time, which gates when asked for
        args = ["--results", tmp_path / "results", "--public-time", *args]
        code = regressions.main(list(map(str, args)))
        return code, capsys.readouterr().out

    code, out = check("--threshold", 1.2)
    assert code == 1
    assert "RMSNormBackward.track_time('4096x4096-bf16', 'triton')" in out
    assert "1x4096-bf16" not in out.split("REGRESSION", 1)[1]
    assert check("--threshold", 1.5)[0] == 0
    with pytest.raises(SystemExit) as nothing:  # nothing checked is no pass
        check("--bench", "device")
    assert nothing.value.code == 2 and "0 figures of triton compared" in capsys.readouterr().out
    code, out = check("--bench", "Backward")
    assert code == 1 and "2 figures of triton compared" in out, out
    with pytest.raises(SystemExit) as bad:
        check("--bench", "(")
    assert bad.value.code == 2 and "not a regular expression" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        check("--machine", "nowhere")
    assert "no results for machine 'nowhere'" in capsys.readouterr().err


def test_regressions_compare_only_figures_of_one_method(tmp_path, capsys):
    folder = tmp_path / "results" / "h200"
    results = ["--results", str(tmp_path / "results"), "--public-time"]
    write_run(folder, "a" * 40, 1, {("1x4096-bf16", "triton"): 5e-6}, version="graph-1")
    write_run(folder, "b" * 40, 2, {("1x4096-bf16", "triton"): 9e-6}, version="graph-2")
    with pytest.raises(SystemExit) as nothing:
        regressions.main(results)
    out = capsys.readouterr().out
    assert (
        nothing.value.code == 2
        and "0 figures of triton compared" in out
        and "1 not compared" in out
    )
    write_run(folder, "c" * 40, 3, {("1x4096-bf16", "triton"): 2e-5}, version="graph-2")
    assert regressions.main(results) == 1
    assert "9e-06 -> 2e-05" in capsys.readouterr().out


DEVICE = "bench_rmsnorm.RMSNormBackward.track_device_time"


def test_the_gate_judges_our_figures_and_shows_the_peers(tmp_path, capsys):
    folder = tmp_path / "results" / "h200"
    results = ["--results", str(tmp_path / "results")]
    ours, torch = ("4096x4096-bf16", "triton"), ("4096x4096-bf16", "torch")
    write_run(folder, "a" * 40, 1, {ours: 1e-4, torch: 1e-4}, bench=DEVICE)
    write_run(folder, "b" * 40, 2, {ours: 1e-4, torch: 3e-4}, bench=DEVICE)
    assert regressions.main(results) == 0  # torch's code did not change: shown, not gating
    out = capsys.readouterr().out
    assert "peer, not gating: h200: " + DEVICE + "('4096x4096-bf16', 'torch')" in out
    assert "REGRESSION" not in out and "1 figures of triton compared" in out
    write_run(folder, "c" * 40, 3, {ours: 2e-4, torch: 6e-4}, bench=DEVICE)
    assert regressions.main(results) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("REGRESSION")]
    assert "'triton'" in line and "(2.00x)" in line
    # two commits given: what scripts/compare judges after asv continuous
    assert regressions.main([*results, "--base", "a" * 8, "--head", "b" * 8]) == 0
    assert "bbbbbbbb vs aaaaaaaa" in capsys.readouterr().out
    with pytest.raises(SystemExit) as bad:
        regressions.main([*results, "--base", "a" * 8])
    assert bad.value.code == 2


def test_the_gate_fails_where_a_figure_of_ours_failed_in_the_head(tmp_path, capsys):
    # before, a failed figure of ours dropped out of the comparison: "0 regression(s)", exit 0
    folder = tmp_path / "results" / "h200"
    results = ["--results", str(tmp_path / "results")]
    big, small = ("4096x4096-bf16", "triton"), ("1x4096-bf16", "triton")
    write_run(folder, "a" * 40, 1, {big: 1e-4, small: 2e-6}, bench=DEVICE)
    write_run(folder, "b" * 40, 2, {big: None, small: 2e-6}, bench=DEVICE)
    assert regressions.main(results) == 1
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("REGRESSION")]
    assert line.endswith(DEVICE + "('4096x4096-bf16', 'triton'): 0.0001 -> failed")
    assert "2 figures of triton compared" in out and "(1 failed in the head)" in out
    assert "; 0 peer or non-gating figures shown" in out  # before: -1
    # skipped (NaN: a subset of the matrix) is named as not checked, and does not fail
    write_run(folder, "b" * 40, 2, {big: float("nan"), small: 2e-6}, bench=DEVICE)
    assert regressions.main(results) == 0
    out = capsys.readouterr().out
    assert "1 of ours measured in the base not measured in the head" in out
    assert "ours, not checked: h200: " + DEVICE + "('4096x4096-bf16', 'triton')" in out
    # every figure of ours failed: a failure, not "nothing checked"
    write_run(folder, "b" * 40, 2, {big: None, small: None}, bench=DEVICE)
    assert regressions.main(results) == 1


def test_public_time_gates_only_when_asked(tmp_path, capsys):
    folder = tmp_path / "results" / "h200"
    results = ["--results", str(tmp_path / "results")]
    for commit, date, value in (("a" * 40, 1, 1e-4), ("b" * 40, 2, 3e-4)):
        write_run(folder, commit, date, {("1x4096-bf16", "triton"): value})  # track_time
    with pytest.raises(SystemExit) as nothing:  # only public time here: nothing gates
        regressions.main(results)
    assert nothing.value.code == 2 and "--public-time" in capsys.readouterr().err
    assert regressions.main([*results, "--public-time"]) == 1


def test_the_gate_asks_for_significance_where_there_are_samples(tmp_path, capsys):
    folder = tmp_path / "results" / "h200"
    results = ["--results", str(tmp_path / "results")]
    key = ("1x4096-bf16", "triton")
    spread = [1e-5 * (1 + i) for i in range(10)]  # 10-100 us
    write_run(folder, "a" * 40, 1, {key: 5e-5}, bench=DEVICE, samples={key: spread})
    noisy = [s * 1.3 for s in spread]  # a median 30% up, within the old spread
    write_run(folder, "b" * 40, 2, {key: 6.5e-5}, bench=DEVICE, samples={key: noisy})
    assert regressions.main(results) == 0
    clear = [s + 2e-4 for s in spread]  # every sample slower
    write_run(folder, "c" * 40, 3, {key: 2.5e-4}, bench=DEVICE, samples={key: clear})
    assert regressions.main(results) == 1


def test_cold_device_time_is_shown_and_gates_only_when_asked(tmp_path, capsys):
    folder = tmp_path / "results" / "h200"
    results = ["--results", str(tmp_path / "results")]
    ours, torch = ("4096x4096-bf16", "triton"), ("4096x4096-bf16", "torch")
    cold = DEVICE + "_cold"
    write_run(folder, "a" * 40, 1, {ours: 1e-4, torch: 1e-4}, bench=cold)
    write_run(folder, "b" * 40, 2, {ours: 2e-4, torch: 3e-4}, bench=cold)
    with pytest.raises(SystemExit) as nothing:  # cold time only: nothing gates by default
        regressions.main(results)
    out = capsys.readouterr().out
    assert nothing.value.code == 2
    assert "ours, not gating: h200: " + cold + "('4096x4096-bf16', 'triton')" in out
    assert "peer, not gating: h200: " + cold + "('4096x4096-bf16', 'torch')" in out
    assert regressions.main([*results, "--cold"]) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("REGRESSION")]
    assert "'triton'" in line and "(2.00x)" in line


def test_higher_is_better_figures_never_gate(tmp_path, capsys):
    results = ["--results", str(tmp_path / "results")]
    key = ("4096x4096-bf16", "triton")
    for figure in ("track_bandwidth", "track_public_ratio"):
        bench = DEVICE.replace("track_device_time", figure)
        write_run(
            tmp_path / "results" / figure,
            "a" * 40,
            1,
            {key: 1.0, ("4096x4096-bf16", "torch"): 1.0},
            bench=bench,
        )
        write_run(
            tmp_path / "results" / figure,
            "b" * 40,
            2,
            {key: 3.0, ("4096x4096-bf16", "torch"): 3.0},
            bench=bench,
        )
    # the ratio's rise (ours faster) is compared and never a regression; the bandwidth is
    # read, not compared (the public ratio against torch gates where it falls:
    # tests/test_public_ratio_gate.py)
    assert regressions.main([*results, "--cold", "--public-time"]) == 0
    out = capsys.readouterr().out
    assert "REGRESSION" not in out and "not gating:" not in out
    assert "track_bandwidth: bbbbbbbb vs aaaaaaaa: 0 figures" in out
    assert "track_public_ratio: bbbbbbbb vs aaaaaaaa: 1 figures of triton compared" in out


def test_the_regressions_page_config_lists_what_gates():
    # asv.conf.json's regexes (asv's own options) and the gate agree on every figure
    first = asvfiles.read_conf()["regressions_first_commits"]
    figures = ("time", "device_time", "peak_memory", "public_ratio", "device_time_cold")
    for figure in [f"track_{name}" for name in (*figures, "bandwidth")]:
        for backend in common.BACKENDS:
            bench = f"bench_rmsnorm.FusedAddRMSNormForward.{figure}"
            entry = f"{bench}('1x4096-bf16', '{backend}')@main"
            listed = not any(re.match(regex, entry) for regex in first)
            # the public ratio gates (higher is better), which asv's page cannot be told: a
            # rise would be listed as a regression there, so it is left off the page
            gates = regressions.gates((bench, ("1x4096-bf16", backend)))
            assert listed == (gates and figure != regressions.RATIO), entry


def test_published_regressions_hold_our_figures_only(tmp_path):
    # a triton and a torch figure both twice as slow: only ours is on the page and in the feed
    commits = subprocess.run(
        ["git", "rev-list", "--first-parent", "-n", "4", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[::-1]
    results = tmp_path / "results"
    bench = "bench_rmsnorm.RMSNormBackward.track_device_time"
    listed = asvfiles.read_json(ROOT / "results" / "benchmarks.json")
    public = bench.replace("track_device_time", "track_time")
    for date, (commit, value) in enumerate(zip(commits, (1e-4, 1e-4, 2e-4, 2e-4), strict=True), 1):
        values = {("1x256-bf16", "triton"): value, ("1x256-bf16", "torch"): value}
        path = write_run(results / "h200", commit, date, values, listed[bench]["version"], bench)
        run = json.loads(path.read_text())
        write_run(results / "h200", commit, date, values, listed[public]["version"], public)
        run["results"].update(json.loads(path.read_text())["results"])  # public time too
        run.update(env_name="virtualenv-py3.11", python="3.11", version=2, date=date * 1000)
        run.update(requirements={}, env_vars={}, durations={})
        run["params"]["python"] = "3.11"
        path.write_text(json.dumps(run))
    (results / "h200" / "machine.json").write_text('{"machine": "h200", "version": 1}')
    (results / "benchmarks.json").write_text(json.dumps(listed))
    publish.publish(tmp_path / "html", ["HEAD"], results)
    found = json.loads((tmp_path / "html" / "regressions.json").read_text())["regressions"]
    names = [entry[0] for entry in found]
    assert names == [f"{bench}('1x256-bf16', 'triton')"], names
    feed = (tmp_path / "html" / "regressions.xml").read_text()
    assert "'triton'" in feed and "'torch'" not in feed and "track_time" not in feed


def test_union_benchmarks_lists_every_machines_shapes(tmp_path):
    results = tmp_path / "results"
    write_run(results / "cpu-smoke", "a" * 40, 1, {("1x256-bf16", "triton"): 1e-3})
    write_run(results / "h200", "b" * 40, 2, {("16384x4096-bf16", "torch"): 2e-4})
    bench = "bench_rmsnorm.RMSNormBackward.track_time"
    listed = {"params": [["'1x256-bf16'"], ["'triton'"]], "version": "v"}
    (results / "benchmarks.json").write_text(json.dumps({bench: listed, "version": 2}))
    before = (results / "benchmarks.json").read_text()
    params = asvfiles.union_benchmarks(results)[bench]["params"]
    assert params == [["'1x256-bf16'", "'16384x4096-bf16'"], ["'triton'", "'torch'"]]
    assert (results / "benchmarks.json").read_text() == before  # read, never rewritten


def test_conf_copy_changes_only_the_keys_given(tmp_path):
    out = tmp_path / "conf.json"
    assert asvfiles.main(["conf-copy", str(out), "env_dir=.asv/env-gpu1"]) == 0
    conf, original = json.loads(out.read_text()), asvfiles.read_conf()
    assert (
        conf == {**original, "env_dir": ".asv/env-gpu1"} and original["env_dir"] != conf["env_dir"]
    )
    with pytest.raises(SystemExit):
        asvfiles.main(["conf-copy", str(out), "env_dir"])


def test_the_report_tables_the_seeds_columns(tmp_path, capsys):
    shape = common.Shape(512, 3000, "f32")
    text = report.seed_table(
        [("rmsnorm_bwd", shape, 2e-6, 5e-6), ("fused_add_bwd", shape, 1e-6, None)]
    )
    lines = [line.split("\t") for line in text.splitlines()]
    assert lines[0] == report.HEAD
    assert lines[1] == ["rmsnorm_bwd", "512x3000", "f32", "2.0", "5.0", "2.50x"]
    assert lines[2][-2:] == ["n/a", "n/a"]
    # from results files: the public-call table of the newest commit of a machine
    folder = tmp_path / "results" / "h200"
    write_run(folder, "a" * 40, 1, {("512x3000-f32", "triton"): 9e-6})
    write_run(
        folder, "b" * 40, 2, {("512x3000-f32", "triton"): 4e-6, ("512x3000-f32", "torch"): 6e-6}
    )
    report.main(["--results", str(tmp_path / "results"), "--out", str(tmp_path / "r"), "--no-plot"])
    written = (tmp_path / "r" / "report.md").read_text()
    assert "commit bbbbbbbb" in written
    assert "| rmsnorm_bwd | 512x3000 | f32 | 4.0 | 6.0 | 1.50x |" in written


def test_offline_page_serves_cdn_files_locally():
    page = vendor.offline_page(
        '<script src="https://code.jquery.com/jquery-3.3.1.min.js" integrity="sha256-x" '
        'crossorigin="anonymous"></script>\n'
        '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css">'
    )
    assert "https://" not in page and "integrity" not in page
    assert '<script src="vendor/jquery.min.js">' in page
    assert 'href="vendor/css/bootstrap.min.css"' in page
    with pytest.raises(vendor.NoLocalCopy, match="unknown.js"):
        vendor.offline_page('<script src="https://example.org/unknown.js"></script>')
    assert vendor.main([]) == 0  # every file the page loads is in html/vendor/


def fake_site(folder: Path) -> Path:
    """What asv publish writes, in small: an index.html that loads jQuery from a CDN."""
    (folder / "graphs").mkdir(parents=True)
    (folder / "graphs" / "g.json").write_text("[]")
    (folder / "index.json").write_text("{}")
    (folder / "asv.js").write_text("// asv's")
    (folder / "index.html").write_text(
        '<script src="https://code.jquery.com/jquery-3.3.1.min.js"></script>'
    )
    return folder


def test_publish_writes_a_dashboard_with_its_own_vendor_copy(tmp_path):
    site = fake_site(tmp_path / "site")
    asv_page = (site / "index.html").read_text()
    out = tmp_path / "out"
    publish.install(site, out)
    assert (out / "graphs" / "g.json").is_file()
    assert 'src="vendor/jquery.min.js"' in (out / "index.html").read_text()
    assert (site / "index.html").read_text() == asv_page  # asv's output is left as it was
    assert (out / "vendor" / "jquery.min.js").read_bytes() == (
        vendor.DIR / "jquery.min.js"
    ).read_bytes()
    # a second publish replaces the first, files that are gone included
    (site / "graphs" / "g.json").unlink()
    publish.install(site, out)
    assert not (out / "graphs" / "g.json").exists()
    # a folder that is not a dashboard is not replaced
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(publish.PublishError, match="holds no dashboard"):
        publish.install(site, tmp_path / "other")
    # nor is one that has an index.json of its own among a project's files: it would be
    # replaced whole
    (tmp_path / "other" / "index.json").write_text("{}")
    (tmp_path / "other" / "src").mkdir()
    with pytest.raises(publish.PublishError, match="holds no dashboard"):
        publish.install(site, tmp_path / "other")
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == [
        "index.json", "notes.txt", "src"
    ]  # fmt: skip


def test_publish_into_the_vendor_folders_dashboard_keeps_it(tmp_path):
    site = fake_site(tmp_path / "site")
    out = tmp_path / "html"
    assets = out / "vendor"
    kept = assets / "jquery.min.js"
    assets.mkdir(parents=True)
    kept.write_text("jquery")
    (out / "stale.js").write_text("")
    fake_site(out)  # an earlier dashboard
    publish.install(site, out, assets)
    assert kept.read_text() == "jquery" and not (out / "stale.js").exists()
    with pytest.raises(publish.PublishError, match="no results"):
        publish.check_results(tmp_path / "empty")
    with pytest.raises(publish.PublishError, match="'no-such-branch' is not in this clone"):
        publish.check_branches(["HEAD", "no-such-branch"])


def test_machine_names_facts_and_registers_them(tmp_path, no_gpu):
    gpu = {"gpu": "NVIDIA H200", "gpu_count": "1", "torch": "2", "triton": "3"}
    assert machine.default_name(gpu) == "nvidia-h200"
    assert machine.default_name(gpu, "3") == "nvidia-h200-gpu3"
    assert machine.default_name({"gpu": "none", "gpu_count": "0"}) == "cpu-smoke"
    facts = machine.facts()
    assert facts["gpu_count"] == "0" and facts["gpu"] == "none"  # a machine without a GPU
    assert facts["cpu"] and int(facts["num_cpu"]) == os.cpu_count()  # asv's own fields
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Intel(R)  Xeon(R) Platinum 8480C\n")
    assert machine.cpu_model(str(cpuinfo)) == "Intel(R) Xeon(R) Platinum 8480C"
    import torch

    assert str(Path(torch.__file__).parent.parent) in machine.torch_site()
    path = tmp_path / "asv-machine.json"
    path.write_text(json.dumps({"other": {"machine": "other"}, "h200": {"note": "kept"}}))
    entry = machine.register("h200", gpu, path)
    saved = json.loads(path.read_text())
    assert saved["h200"] == entry == {"note": "kept", "machine": "h200", **gpu}
    assert saved["other"] == {"machine": "other"} and saved["version"] == 1


def test_machine_prints_the_smoke_mode_without_a_gpu(no_gpu, capsys):
    assert machine.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "machine=cpu-smoke" in out and "device=cpu" in out


def test_a_gpu_machine_is_named_after_its_gpu_and_measured_on_it(monkeypatch, capsys):
    # a CUDA machine made by hand (the facts asv records of it): the same on either machine
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    props = type("Props", (), {"name": "NVIDIA H200"})
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    smi = type("Done", (), {"stdout": "570.86.15\n"})
    monkeypatch.setattr(machine.subprocess, "run", lambda *a, **k: smi)
    facts = machine.facts()
    assert (facts["gpu"], facts["gpu_count"], facts["cuda"]) == ("NVIDIA H200", "8", "12.8")
    assert facts["driver"] == "570.86.15" and "rocm" not in facts
    assert machine.main(["--gpu", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "machine=nvidia-h200-gpu3" in out and "device=cuda" in out
    assert '"gpu_index": "3"' in next(line for line in out if line.startswith("facts="))


def test_link_torch_writes_the_folders_it_is_given(tmp_path, monkeypatch):
    monkeypatch.delenv(link_torch.VAR, raising=False)
    with pytest.raises(SystemExit) as unset:
        link_torch.main([])
    assert unset.value.code == 2
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    pth = link_torch.write_pth(dirs, str(tmp_path))
    assert pth.read_text().splitlines() == dirs


def test_link_torch_adds_the_peers_folders_after_torchs(tmp_path, monkeypatch):
    # a peer installed with pip --target (quack) reaches asv's benchmarks this way only
    torch_dir, peer, deep = tmp_path / "torch", tmp_path / "quack", tmp_path / "quack" / "dsl"
    for d in (torch_dir, deep):
        d.mkdir(parents=True)
    monkeypatch.setenv(link_torch.VAR, str(torch_dir))
    monkeypatch.setenv(link_torch.PEERS_VAR, os.pathsep.join([str(peer), str(deep)]))
    written = {}
    monkeypatch.setattr(link_torch, "write_pth", lambda dirs: written.setdefault("dirs", dirs))
    assert link_torch.main([]) == 0
    assert written["dirs"] == [str(torch_dir), str(peer), str(deep)]
    monkeypatch.setenv(link_torch.PEERS_VAR, str(tmp_path / "gone"))
    with pytest.raises(SystemExit) as missing:
        link_torch.main([])
    assert missing.value.code == 2


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_answers_help(tool, capsys):
    module = importlib.import_module(f"rmsnorm_bench.{tool}")
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m rmsnorm_bench.{tool}")


def test_no_extensionless_python_file_is_tracked():
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    python = []
    for name in files:
        path = ROOT / name
        if path.suffix or not path.is_file():
            continue
        with open(path, "rb") as f:
            if b"python" in f.readline():
                python.append(name)
    assert not python


# One end-to-end run of each shell entry point, on its cheap paths (CI runs run and publish
# in full).


def test_script_test_sets_up_and_runs_pytest():
    done = shell("test", "--collect-only", "tests/test_codegen.py", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "setup: torch" in done.stdout  # scripts/setup, which scripts/test runs first
    assert "test_codegen.py::test_kernels_compile_to_vector_accesses" in done.stdout


def test_script_run_parses_its_arguments():
    helped = shell("run", "--help")
    assert helped.returncode == 0 and "--history" in helped.stdout
    refused = shell("run", "--bogus")
    assert refused.returncode == 2 and "unknown option --bogus" in refused.stderr


def test_script_compare_refuses_what_is_not_a_commit():
    assert shell("compare").returncode == 2
    refused = shell("compare", "no-such-commit")
    assert refused.returncode == 2 and "'no-such-commit' is not a commit here" in refused.stderr
    helped = shell("compare", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python -m rmsnorm_bench")
    assert "--self-test" in helped.stdout and "Exit status" in helped.stdout


def fake_tools(monkeypatch, asv=0, gate=0):
    """compare's tools replaced: each records its arguments and exits with the given status
    (report's refusal: SystemExit, which must not stop the gate)."""
    calls = {}

    def tool(name, status):
        def main(argv):
            calls[name] = argv
            if name == "report":
                raise SystemExit(2)
            return status

        return type(name, (), {"main": staticmethod(main)})

    for name, status in (("asvrun", asv), ("report", 0), ("regressions", gate)):
        monkeypatch.setattr(compare, name, tool(name, status))
    return calls


RUN = ["--conf", "c.json", "--machine", "h200"]


def commit(rev):
    return subprocess.run(
        ["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize(
    "asv, gate, status, said",
    [
        (0, 0, 0, None),
        (1, 0, 0, "asv's comparison above flags a slowdown of some figure"),
        (0, 1, 1, "HEAD is significantly slower than HEAD~1 in figures of this package"),
        (1, 2, 2, "the gate could not judge (exit status 2"),
    ],
)
def test_compare_exits_with_the_gates_verdict(asv, gate, status, said, monkeypatch, capsys):
    calls = fake_tools(monkeypatch, asv, gate)
    argv = [*RUN, "--public-time", "--cpu-affinity", "0-3", "HEAD~1", "--", "-b", "Forward"]
    assert compare.main(argv) == status
    err = capsys.readouterr().err
    if said:
        assert said in err
    else:
        assert "compare:" not in err
    assert calls["asvrun"] == [
        *RUN,
        "--",
        "continuous",
        "--config",
        "c.json",
        "--machine",
        "h200",
        "--factor",
        "1.1",
        "--split",
        "--show-stderr",
        "--cpu-affinity",
        "0-3",
        commit("HEAD~1"),
        commit("HEAD"),
        "-b",
        "Forward",
    ]  # fmt: skip  (the commits fixed before asv runs: the gate judges what asv measured)
    assert calls["report"] == ["--machine", "h200", "--commit", commit("HEAD"), "--no-plot"]
    assert calls["regressions"] == [
        "--machine", "h200", "--threshold", "1.1", "--public-time",
        "--base", commit("HEAD~1"), "--head", commit("HEAD"),
    ]  # fmt: skip


@pytest.mark.parametrize("asv", [2, 143])
def test_compare_judges_nothing_where_asv_failed(asv, monkeypatch, capsys):
    calls = fake_tools(monkeypatch, asv)
    assert compare.main([*RUN, "--no-wait", "--factor", "1.25", "HEAD~1", "HEAD"]) == asv
    assert f"failed (exit status {asv}; see above): nothing judged" in capsys.readouterr().err
    assert list(calls) == ["asvrun"] and calls["asvrun"][4] == "--no-wait"
    assert calls["asvrun"][calls["asvrun"].index("--factor") + 1] == "1.25"


def test_compare_find_and_self_test_run_what_they_name(monkeypatch):
    calls = fake_tools(monkeypatch, asv=1)
    bench = r"\.RMSNormForward\.track_time\('1x4096-bf16', 'triton'\)"  # one case, as asv
    assert compare.main([*RUN, "--find", "HEAD~3..HEAD", bench, "--", "-q"]) == 1
    assert calls["asvrun"] == [
        *RUN, "--", "find", "--config", "c.json", "--machine", "h200", "--show-stderr",
        "HEAD~3..HEAD", bench, "-q",
    ]  # fmt: skip
    ran = []

    def execv(path, command):
        ran.append(command)
        raise SystemExit(0)  # as the self-test would end

    monkeypatch.setattr(compare.os, "execv", execv)
    argv = [
        *RUN,
        "--factor",
        "1.2",
        "--cpu-affinity",
        "0",
        "--self-test",
        "--find",
        "--",
        "-b",
        "F",
    ]
    with pytest.raises(SystemExit):
        compare.main(argv)
    assert ran == [
        [sys.executable, "-m", "rmsnorm_bench.selftest", *RUN, "--factor", "1.2", "--find",
         "--", "--cpu-affinity", "0", "-b", "F"],
    ]  # fmt: skip


def test_script_publish_publishes_the_results(tmp_path):
    # HEAD: this clone may have no local main (a CI clone of another branch)
    done = shell("publish", "--html-dir", tmp_path / "site", "--branch", "HEAD", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "site" / "index.html").read_text()
    assert "https://" not in page.split("<body")[0] and "vendor/jquery.min.js" in page
    index = json.loads((tmp_path / "site" / "index.json").read_text())
    assert {"cpu-smoke", "nvidia-h200"} <= set(index["params"]["machine"])


def test_torch_site_lists_only_folders_that_exist(monkeypatch, tmp_path):
    import site

    from rmsnorm_bench import machine

    monkeypatch.setattr(site, "getsitepackages", lambda: [str(tmp_path), str(tmp_path / "gone")])
    dirs = machine.torch_site()
    assert str(tmp_path) in dirs and str(tmp_path / "gone") not in dirs
    assert all(os.path.isdir(d) for d in dirs)


def test_parameter_lists_are_the_same_on_every_machine():
    # one benchmarks.json serves every machine (stock asv show/compare/publish): the GPU
    # matrix and the smoke shapes are listed in both modes; each mode measures its own
    code = (
        "import json\nfrom rmsnorm_bench import instrument as i\n"
        "print(json.dumps([[s.label for s in i.param_shapes(p)] for p in ('forward', 'backward')]"
        " + [[s.label for s in i.shapes_for('forward')]]))"
    )
    seen = {}
    for device in ("cpu", "cuda"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RMSNORM_BENCH")}
        env[common.DEVICE_VAR] = device
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        seen[device] = json.loads(done.stdout)
    assert seen["cpu"][:2] == seen["cuda"][:2]
    assert seen["cpu"][0] == [
        common.Shape(*s).label for s in common.DEFAULT_SHAPES + common.SMOKE_SHAPES
    ]
    assert seen["cpu"][2] == ["1x256-bf16", "16x1000-f32", "3x20000-bf16"]
    assert seen["cuda"][2][0] == "1x4096-bf16" and "1x256-bf16" not in seen["cuda"][2]


def test_an_override_shape_is_added_to_the_parameters(monkeypatch):
    monkeypatch.setenv(common.FWD_SHAPES_VAR, "1,4096,bf16;7,77,f32")
    labels = [s.label for s in common.param_shapes("forward")]
    assert labels[-1] == "7x77-f32" and labels.count("1x4096-bf16") == 1


def test_runs_are_measured_in_several_processes_unless_told():
    from rmsnorm_bench.asvargs import with_rounds

    n, inter = common.PROCESSES, "--interleave-rounds"
    # interleaved: without it `asv run` makes a commit's rounds in one batch that shares one
    # setup_cache, and each round would report the same measurement again
    assert with_rounds(["run", "HEAD^!"]) == ["run", "-a", f"rounds={n}", inter, "HEAD^!"]
    assert with_rounds(["continuous", "A", "B"])[:4] == ["continuous", "-a", f"rounds={n}", inter]
    for given in (["-a", "rounds=1"], ["--attribute", "rounds=1"], ["-arounds=1"]):
        assert with_rounds(["run", *given, "HEAD^!"]) == ["run", *given, "HEAD^!"]
    assert with_rounds(["run", "-a", "rounds=2", "X"]) == ["run", inter, "-a", "rounds=2", "X"]
    for one_batch in (
        ["--no-interleave-rounds"],
        ["--no-interleave-processes"],
        ["--no-interleave-r"],
        ["-E", "existing:/usr/bin/python3"],
        ["--python=same"],
    ):
        with pytest.raises(ValueError, match="share one setup_cache"):
            with_rounds(["run", *one_batch, "X"])
    assert with_rounds(["run", "-a", "processes=1", "X"]) == ["run", "-a", "processes=1", "X"]
    assert with_rounds(["run", "--dry-run", "X"]) == ["run", "-a", f"rounds={n}", "--dry-run", "X"]
    assert with_rounds(["run", "--interleave-processes", "X"]).count(inter) == 0
    assert (
        with_rounds(["run", "-a", "rounds=1", "--no-interleave-rounds"])[-1]
        == inter[:2] + "no-" + inter[2:]
    )
    assert with_rounds(["run", "-a", "repeat=2"])[1:3] == ["-a", f"rounds={n}"]
    assert with_rounds(["publish"]) == ["publish"]


def test_the_self_test_sorts_detections_false_alarms_and_misses(tmp_path):
    from rmsnorm_bench.selftest import plants, verdicts

    def run(name, bench, values):  # ten samples around each value, as asv records them
        samples = {k: [v * (1 + 0.001 * i) for i in range(10)] for k, v in values.items()}
        sha = hashlib.sha1(name.encode()).hexdigest()
        return asvfiles.load_run(write_run(tmp_path / name, sha, 1, values, "v", bench, samples))

    device = "bench_rmsnorm.RMSNormForward.track_device_time"
    big, small = "16384x4096-bf16", "1x4096-bf16"
    old = run("a", device, {(big, "triton"): 1e-4, (small, "triton"): 2e-6, (big, "torch"): 1e-4})
    slower = run(
        "b", device, {(big, "triton"): 1.1e-4, (small, "triton"): 2e-6, (big, "torch"): 1.2e-4}
    )
    same = run("c", device, {(big, "triton"): 1e-4, (small, "triton"): 2e-6, (big, "torch"): 1e-4})

    v = verdicts.judge("device", old, slower, 1.05)
    assert v.ok and len(v.detected) == 1 and big in v.detected[0]
    assert len(v.other) == 1 and "'torch'" in v.other[0]  # a peer: shown, never counted
    # a plant that moved nothing was too small to test the gate: no miss, no pass
    short = verdicts.judge("device", old, same, 1.05)
    assert short.too_small and not short.missed
    assert f"{device}('{big}', 'triton')" in short.too_small[0]
    alarm = verdicts.judge("unchanged", old, slower, 1.05)
    assert not alarm.ok and len(alarm.false_alarms) == 1 and len(alarm.other) == 1
    assert verdicts.judge("unchanged", old, same, 1.05).ok

    ratio = "bench_rmsnorm.RMSNormForward.track_public_ratio"  # higher is better: a drop flags
    public = "bench_rmsnorm.RMSNormForward.track_time"

    def host_run(commit, ratio_value, ours, torch):
        parts = [
            run(commit + "1", device, {(big, "triton"): 1e-4}),
            run(commit + "2", ratio, {(small, "torch"): ratio_value}),
            run(commit + "3", public, {(small, "triton"): ours, (small, "torch"): torch}),
        ]
        return {**parts[0], "results": {k: v for p in parts for k, v in p["results"].items()}}

    base = host_run("d", 1.4, 1e-5, 1e-5)  # the ratio's fall past its noise floor (1.3)
    host = verdicts.judge("host", base, host_run("e", 1.0, 1e-5, 1e-5), 1.05, small)
    assert host.ok and len(host.detected) == 1 and ratio in host.detected[0]
    within = verdicts.judge(
        "host", host_run("k", 1.2, 1e-5, 1e-5), host_run("l", 1.0, 1e-5, 1e-5), 1.05, small
    )
    assert not within.ok  # a fall of 1.2 is within the ratio's floor: no detection
    assert verdicts.judge("host", base, host_run("f", 1.4, 1.2e-5, 1e-5), 1.05, small).ok
    risen = verdicts.judge("host", host_run("g", 1.0, 1e-5, 1e-5), base, 1.05, small)
    assert not risen.ok  # the ratio rose: no detection
    peer_only = verdicts.judge("host", base, host_run("h", 1.4, 1e-5, 2e-5), 1.05, small)
    assert not peer_only.ok and len(peer_only.other) == 1  # torch's own time is no detection

    # nothing that could be judged is an error, never a pass
    ratio_only = run("i", ratio, {(small, "liger"): 1.2})  # torch's ratio would gate
    with pytest.raises(plants.SelfTestError, match="no gating figure"):
        verdicts.judge("unchanged", ratio_only, ratio_only, 1.05)
    tiny = run("j", device, {(small, "triton"): 2e-6})
    with pytest.raises(plants.SelfTestError, match=">= 1M elements"):
        verdicts.judge("device", tiny, tiny, 1.05)


def test_the_self_test_plants_on_scratch_commits_and_leaves_the_tree(tmp_path):
    from rmsnorm_bench.selftest import plants

    before = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    base = plants.git("rev-parse", "HEAD")
    plant = plants.host_plant(fraction=1.0, seconds=0.05)
    planted = plants.commit(base, "test plant", plants.planted_init(base, plant))
    assert plants.git("rev-parse", f"{planted}^") == base
    changed = plants.git("diff", "--name-only", base, planted).split()
    assert changed == [plants.PACKAGE_INIT]
    text = plants.git("show", f"{planted}:{plants.PACKAGE_INIT}")
    calls = []

    def public(*a, n):  # a call that takes 0.02 s
        calls.append((n, a))
        time.sleep(0.02)
        return n

    namespace = {name: (lambda *a, n=name: public(*a, n=n)) for name in plants.PUBLIC}
    exec(compile(text.split("# --- planted", 1)[1].split("\n", 1)[1], "plant", "exec"), namespace)
    start = time.perf_counter()
    assert namespace["rms_norm"](1, 2) == "rms_norm" and calls == [("rms_norm", (1, 2))]
    # the planted wait ran: as long again as the call (fraction 1), then the fixed 0.05 s
    assert time.perf_counter() - start >= 0.02 * 2 + 0.05
    assert plants.commit(base, "empty") != base
    after = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    assert after == before


def test_the_device_plant_adds_the_same_share_of_bytes_to_every_call_and_leaves_results_alone():
    from rmsnorm_bench.selftest import plants

    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    clones = []
    real_clone = torch.Tensor.clone

    def norm(x, w, eps):
        return F.rms_norm(x, (x.shape[-1],), w, eps)

    def planted(fraction):
        namespace = {
            "rms_norm": norm,
            "fused_add_rms_norm": lambda x, r, w, e: (norm(x + r, w, e), x + r),
        }
        exec(compile(plants.device_plant(fraction) + plants.WRAP, "plant", "exec"), namespace)
        return namespace

    def copied(call):  # the rows of each copy the plant made during `call`
        clones.clear()
        torch.Tensor.clone = lambda t, *a, **k: clones.append(t.shape[0]) or real_clone(t, *a, **k)
        try:
            out = call()
        finally:
            torch.Tensor.clone = real_clone
        return out, list(clones)

    x = torch.randn(2, 10, 8, requires_grad=True)  # 20 rows
    w = torch.randn(8, requires_grad=True)
    ns = planted(0.1)
    y, made = copied(lambda: ns["rms_norm"](x, w, 1e-6))
    assert made == [2]  # x in, y out: a tenth of x's rows adds a tenth of 2 x's bytes
    _, made = copied(lambda: y.sum().backward())
    assert made == [3]  # x and dy in, dx out: 15% of dy's rows
    grad = x.grad.clone()
    (y2, _), made = copied(lambda: ns["fused_add_rms_norm"](x, x, w, 1e-6))
    assert made == [4]  # x and the residual in, both out: a fifth of x's rows
    _, made = copied(lambda: y2.sum().backward())
    assert made == [4]  # dy, d_residual_out and the saved sum in, dx out
    _, made = copied(lambda: planted(0.1)["rms_norm"](x[:, :3], w, 1e-6).sum().backward())
    assert made == [1, 1]  # 6 rows: never fewer than the share (0.6 and 0.9 of a row)
    # a share above the whole tensor copies it whole as often as it takes, then the rest
    _, made = copied(lambda: planted(0.6)["fused_add_rms_norm"](x, x, w, 1e-6))
    assert made == [20, 4]
    expected = x.detach().clone().requires_grad_()
    norm(expected, w, 1e-6).sum().backward()
    assert torch.equal(y, norm(x, w, 1e-6)) and torch.allclose(grad, expected.grad)
    assert torch.equal(y2, norm(x + x, w, 1e-6))


def test_asv_starts_processes_for_the_measured_cases_only(monkeypatch):
    import re

    from rmsnorm_bench import asvargs

    monkeypatch.setenv(common.FWD_SHAPES_VAR, "1,4096,bf16;16384,4096,bf16")
    monkeypatch.setenv(common.BWD_SHAPES_VAR, "16384,4096,bf16")
    monkeypatch.setenv(common.BACKENDS_VAR, "triton,torch")
    monkeypatch.setattr(common.matrix, "DEVICE", "cuda")
    args = asvargs.measured_only(["run", "HEAD^!"])
    assert args[:2] == ["run", "-b"] and args[3:] == ["HEAD^!"]

    def selected(suite, case, backend):
        name = f"bench_rmsnorm.{suite}.track_time({case!r}, {backend!r})"  # as asv names it
        return bool(re.search(args[2], name))

    assert selected("RMSNormForward", "1x4096-bf16", "triton")
    assert selected("FusedAddRMSNormForward", "16384x4096-bf16", "torch")
    assert not selected("RMSNormBackward", "1x4096-bf16", "triton")  # not the backward's
    assert not selected("RMSNormForward", "1x4096-bf16", "liger")  # not among the backends
    assert not selected("RMSNormForward", "1x4096-bf16", "tritonx")
    assert selected("FusedAddRMSNormBackward", "16384x4096-bf16", "triton")
    monkeypatch.setattr(common.matrix, "DEVICE", "cpu")  # GPU-only peers are left out there
    monkeypatch.delenv(common.BACKENDS_VAR)
    args = asvargs.measured_only(["continuous", "A", "B"])
    assert selected("RMSNormForward", "1x4096-bf16", "torch")
    assert not selected("RMSNormForward", "1x4096-bf16", "torch_compile")
    # a selection of the user's own is theirs; other commands are passed on as they are
    for given in (["-b", "Forward"], ["--bench=Forward"], ["-bForward"]):
        assert asvargs.measured_only(["run", *given, "HEAD^!"]) == ["run", *given, "HEAD^!"]
    assert asvargs.measured_only(["find", "A..B", "x"]) == ["find", "A..B", "x"]


def test_a_default_run_leaves_out_the_peers_not_installed_and_our_ratio(monkeypatch, tmp_path):
    import re

    from rmsnorm_bench import asvargs, link_torch

    (tmp_path / "liger_kernel").mkdir()  # a package asv's environment would find
    (tmp_path / "liger_kernel" / "__init__.py").write_text("")
    monkeypatch.setenv(link_torch.VAR, str(tmp_path))
    monkeypatch.delenv(link_torch.PEERS_VAR, raising=False)
    monkeypatch.delenv(common.BACKENDS_VAR, raising=False)
    monkeypatch.delenv("FLYDSL_ROOT", raising=False)
    monkeypatch.setenv(common.FWD_SHAPES_VAR, "1,4096,bf16")
    monkeypatch.setattr(common.matrix, "DEVICE", "cuda")
    regex = asvargs.measured_cases()

    def selected(figure, backend):
        return bool(re.search(regex, f"b.RMSNormForward.{figure}('1x4096-bf16', {backend!r})"))

    for backend in ("triton", "torch", "torch_compile", "liger"):
        assert selected("track_device_time", backend), backend
    assert not selected("track_device_time", "quack")  # not found there
    assert not selected("track_device_time", "flydsl")  # no FLYDSL_ROOT
    assert selected("track_public_ratio", "liger") and not selected("track_public_ratio", "triton")
    monkeypatch.setenv(link_torch.PEERS_VAR, str(tmp_path / "peers"))  # quack installed apart
    (tmp_path / "peers" / "quack").mkdir(parents=True)
    (tmp_path / "peers" / "quack" / "__init__.py").write_text("")
    regex = asvargs.measured_cases()
    assert selected("track_device_time", "quack")
    monkeypatch.setenv(common.BACKENDS_VAR, "triton,flydsl")  # named: run, and skipped there
    regex = asvargs.measured_cases()
    assert selected("track_time", "flydsl") and not selected("track_time", "liger")
    monkeypatch.setenv(common.BACKENDS_VAR, "quack")  # ours not among them: no ours at all
    regex = asvargs.measured_cases()
    assert selected("track_time", "quack") and not selected("track_time", "triton")


def test_the_selection_matches_asvs_own_names_of_the_stored_parameters(monkeypatch):
    import itertools
    import re

    from rmsnorm_bench import asvargs

    stored = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    params = stored["bench_rmsnorm.RMSNormBackward.track_device_time"]["params"]
    monkeypatch.setenv(common.BWD_SHAPES_VAR, "16384,4096,bf16;1,4096,bf16")
    monkeypatch.setenv(common.BACKENDS_VAR, "triton,liger")
    monkeypatch.setattr(common.matrix, "DEVICE", "cuda")
    regex = asvargs.measured_cases()
    names = [  # as asv.benchmarks.Benchmarks names a parameter set for -b
        f"bench_rmsnorm.RMSNormBackward.track_device_time({', '.join(p)})"
        for p in itertools.product(*params)
    ]
    chosen = [n for n in names if re.search(regex, n)]
    assert len(chosen) == 4 and all("'liger'" in n or "'triton'" in n for n in chosen)


def test_one_commit_is_measured_in_several_processes_of_one_round():
    from rmsnorm_bench.asvargs import pooled_rounds

    n = common.PROCESSES
    # HEAD^! and a range of one commit: one round, its setup_cache measuring in n processes
    assert pooled_rounds(["run", "HEAD^!"], ROOT) == (["run", "-a", "rounds=1", "HEAD^!"], n)
    one = pooled_rounds(["run", "-b", "X", "HEAD~1..HEAD"], ROOT)
    assert one == (["run", "-a", "rounds=1", "-b", "X", "HEAD~1..HEAD"], n)
    # several commits interleave their rounds; rounds given, continuous, a dry run: as asked
    for args in (
        ["run", "HEAD~2..HEAD"],
        ["run", "-a", "rounds=2", "HEAD^!"],
        ["run", "-arounds=1", "HEAD^!"],
        ["continuous", "HEAD~1", "HEAD"],
        ["run", "--dry-run", "HEAD^!"],
        ["run", "--quick", "HEAD^!"],
        ["run", "NEW"],
        ["run", "HASHFILE:-"],
        ["run", "no-such-revision^!"],
        ["find", "HEAD~3..HEAD", "X"],
    ):
        assert pooled_rounds(args, ROOT) == (args, 1), args
    assert pooled_rounds(["run", "HEAD^!"], ROOT, processes=1) == (["run", "HEAD^!"], 1)


def test_pooled_processes_keep_every_sample_as_asv_rounds_would():
    from rmsnorm_bench.instrument.processes import pool

    M, key, suite = common.Measurement, ("1x4096-bf16", "torch"), ("rms_norm", "forward")
    first = M(time=[1.0, 2.0], device_time=[3.0], device_time_cold=[4.0], public_ratio=[1.1],
              peak_memory=100, seconds={"public": 1.0}, compile_cache={"hit": 1})  # fmt: skip
    second = M(time=[5.0], device_time=[6.0, 7.0], device_time_cold=[8.0], public_ratio=[1.2],
               peak_memory=120, seconds={"public": 2.0, "device": 1.0})  # fmt: skip
    third = M(time=[9.0], public_ratio_skipped="timing failed", device_time_skipped="no graph")
    m = pool([{suite: {key: first}}, {suite: {key: second}}, {suite: {key: third}}])[suite][key]
    assert m.time == [1.0, 2.0, 5.0, 9.0] and m.device_time == [3.0, 6.0, 7.0]
    assert m.device_time_cold == [4.0, 8.0] and m.public_ratio == [1.1, 1.2]
    assert m.peak_memory == 120 and not (m.failed or m.skipped)
    assert m.public_ratio_skipped is None and m.device_time_skipped is None
    assert m.seconds == {"public": 3.0, "device": 1.0} and m.compile_cache == {"hit": 1}
    # a case that fails in any process fails, saying where; one no process sampled says why
    bad = M(failed="AssertionError: wrong dx")
    m = pool([{suite: {key: first}}, {suite: {key: bad}}])[suite][key]
    assert m.failed == "in measuring process 2: AssertionError: wrong dx"
    ours = M(time=[1.0], public_ratio_skipped="ours has none")
    m = pool([{suite: {key: ours}}, {suite: {key: M(time=[2.0], public_ratio_skipped="x")}}])
    assert m[suite][key].public_ratio is None
    assert m[suite][key].public_ratio_skipped == "ours has none"
    skipped = M(skipped="quack is not installed")
    assert pool([{suite: {key: skipped}}] * 3)[suite][key].skipped == "quack is not installed"
    # failed and skipped in two processes: failed, which the suites' setup would not see
    # behind `skipped`; peak memory: the last process's, as asv keeps a plain value
    m = pool([{suite: {key: skipped}}, {suite: {key: bad}}])[suite][key]
    assert m.failed and m.skipped is None
    assert pool([{suite: {key: second}}, {suite: {key: first}}])[suite][key].peak_memory == 100


def test_pooling_joins_every_field_of_a_measurement():
    import dataclasses

    from rmsnorm_bench.instrument.processes import JOINED

    assert set(JOINED) == {f.name for f in dataclasses.fields(common.Measurement)}


def test_a_sigterm_raises_what_it_is_told_meanwhile(tmp_path):  # a pooled round's exit
    import signal

    from rmsnorm_bench.lifetime import sigterm_raises

    with (
        pytest.raises(SystemExit) as stop,
        sigterm_raises(lambda: SystemExit(128 + signal.SIGTERM)),
    ):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert stop.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_processes_per_round_is_read_and_checked(monkeypatch):
    from rmsnorm_bench.instrument.processes import processes_per_round

    monkeypatch.delenv(common.PROCESSES_VAR, raising=False)
    assert processes_per_round() == 1
    monkeypatch.setenv(common.PROCESSES_VAR, "3")
    assert processes_per_round() == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(common.PROCESSES_VAR, bad)
        with pytest.raises(ValueError, match=common.PROCESSES_VAR):
            processes_per_round()


@pytest.mark.skipif(common.DEVICE != "cpu", reason="the smoke mode's shapes: a CPU run")
def test_a_round_in_two_processes_pools_both(monkeypatch, tmp_path):
    from rmsnorm_bench.instrument import processes

    monkeypatch.setenv(common.BACKENDS_VAR, "torch")
    monkeypatch.setenv(common.FWD_SHAPES_VAR, "1,256,bf16")
    monkeypatch.setenv(common.BWD_SHAPES_VAR, "1,256,bf16")
    times = tmp_path / "times.jsonl"
    monkeypatch.setenv(progress.TIMES_VAR, str(times))
    logged = []
    results = processes.measure_in_processes(2, log=logged.append)
    m = results[("rms_norm", "forward")][("1x256-bf16", "torch")]
    assert not m.failed and len(m.time) == 2 * common.SMOKE_CONTRACT.samples
    pids = {t["process"] for t in progress.read_times(times) if "process" in t}
    assert len(pids) == 2 and os.getpid() not in pids
    assert logged[:1] == ["measuring process 1 of 2"]


def test_a_measuring_process_that_fails_fails_the_round(monkeypatch):
    from rmsnorm_bench.instrument import processes

    monkeypatch.setenv(common.FWD_SHAPES_VAR, "1,256,nosuchdtype")
    with pytest.raises(RuntimeError, match="measuring process 1 of 2 ended with exit status 1"):
        processes.measure_in_processes(2)


def test_a_child_dies_with_its_parent(monkeypatch):
    import signal

    from rmsnorm_bench import lifetime

    calls, ended = [], []
    monkeypatch.setattr(lifetime.os, "_exit", ended.append)
    lifetime.die_with(lambda *a: calls.append(a), os.getppid(), signal.SIGKILL)
    assert calls == [(1, signal.SIGKILL)] and ended == []  # PR_SET_PDEATHSIG, parent alive
    lifetime.die_with(lambda *a: calls.append(a), -1, signal.SIGTERM)  # its parent is gone
    assert ended == [128 + signal.SIGTERM]
    if sys.platform == "linux":
        assert "preexec_fn" in lifetime.ended_with_parent(signal.SIGTERM)
