"""The tracker's own logic: shape overrides, results merging, regression checks, offline page."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import common

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["result", "params", "version", "started_at", "duration"]


def script(name, *args):
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / name), *map(str, args)],
        capture_output=True,
        text=True,
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


def write_run(folder: Path, commit: str, date: int, values: dict, version="v"):
    """An asv results file with one parametrized benchmark of the given (case, backend) values."""
    cases = sorted({c for c, _ in values})
    backends = sorted({b for _, b in values})
    result = [values.get((c, b)) for c in cases for b in backends]
    params = [[repr(c) for c in cases], [repr(b) for b in backends]]
    run = {
        "commit_hash": commit,
        "date": date,
        "params": {"machine": folder.name},
        "result_columns": COLUMNS,
        "results": {"bench_rmsnorm.RMSNormBackward.track_time": [result, params, version, 0, 1.0]},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{commit[:8]}-virtualenv-py3.11.json"
    path.write_text(json.dumps(run))
    return path


def test_short_calls_are_captured_several_times_per_graph():
    # a replay of a short call waits on the host: the graph holds enough calls to last
    # GRAPH_MIN_SECONDS, within [1, MAX_CALLS_PER_GRAPH]
    assert common.calls_per_graph(2 * common.GRAPH_MIN_SECONDS) == 1
    assert common.calls_per_graph(common.GRAPH_MIN_SECONDS) == 1
    assert common.calls_per_graph(common.GRAPH_MIN_SECONDS / 20) == 20
    assert common.calls_per_graph(common.GRAPH_MIN_SECONDS / 20.5) == 21
    assert common.calls_per_graph(0.0) == common.MAX_CALLS_PER_GRAPH


def test_torch_compile_adapter_builds():
    # its GPU-only set-up, run in a fresh process as asv's are (it once failed there only:
    # a torch submodule that this test process had already imported)
    code = (
        "import torch._functorch\n"
        "from benchmarks import common\n"
        "common.DEVICE = 'cuda'\n"
        "for op in common.OPS:\n"
        "    assert callable(common.make_backend('torch_compile', op))\n"
        "assert torch._functorch.config.donated_buffer is False\n"
    )
    env = {k: v for k, v in os.environ.items() if k != common.BACKENDS_VAR}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_an_error_in_one_backend_fails_only_its_case(monkeypatch):
    def broken(name, op):
        raise RuntimeError("adapter broke")

    monkeypatch.setattr(common, "make_backend", broken)
    shape = common.Shape(1, 256, "bf16")
    m = common.measure_case("rms_norm", "forward", shape, "torch", common.contract())
    assert m.failed == "RuntimeError: adapter broke" and m.time is None and not m.skipped


def test_progress_lines_are_written_and_summed_up(tmp_path, monkeypatch):
    progress = tmp_path / "progress.log"
    monkeypatch.setenv(common.PROGRESS_VAR, str(progress))
    monkeypatch.delenv(common.BWD_SHAPES_VAR, raising=False)
    outcomes = {"triton": common.Measurement(time=[1.0]), "torch": common.Measurement(skipped="x")}
    monkeypatch.setattr(common, "measure_case", lambda op, ph, shape, b, c: outcomes[b])
    common.measure_suite("fused_add", "backward", backends=["triton", "torch"])
    lines = progress.read_text().splitlines()
    shapes = common.shapes_for("backward")
    assert len(lines) == 2 * len(shapes)
    assert lines[0].startswith(f"[fused_add backward 1/{len(shapes)}] {shapes[0].label} triton: ok")
    assert lines[1].startswith(
        f"[fused_add backward 1/{len(shapes)}] {shapes[0].label} torch: skipped"
    )
    summary = common.progress_summary(lines + ["asv noise", "[bad line"])
    assert f"in {len(lines)} cases" in summary and "fused_add backward triton" in summary
    assert common.progress_summary([]) == "no cases measured"


def test_merge_results_copies_new_and_refuses_conflicts(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    kept = write_run(ours / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 1e-4})
    write_run(theirs / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 1e-4})  # identical
    write_run(theirs / "mi355x", "b" * 40, 2, {("1x4096-bf16", "triton"): 2e-4})  # new
    done = script("merge-results", theirs, "--into", ours)
    assert done.returncode == 0, done.stderr
    assert "1 file(s) copied, 1 already here" in done.stdout
    assert (ours / "mi355x" / f"{'b' * 8}-virtualenv-py3.11.json").exists()

    write_run(theirs / "h200", "a" * 40, 1, {("1x4096-bf16", "triton"): 9e-4})  # conflicts
    write_run(theirs / "h200", "c" * 40, 3, {("1x4096-bf16", "triton"): 1e-4})  # would be new
    before = kept.read_text()
    refused = script("merge-results", theirs, "--into", ours)
    assert refused.returncode != 0
    assert str(kept) in refused.stderr and "nothing copied" in refused.stderr
    assert kept.read_text() == before
    assert not (ours / "h200" / f"{'c' * 8}-virtualenv-py3.11.json").exists()


def test_merge_results_refuses_files_that_are_not_results(tmp_path):
    (tmp_path / "src" / "h200").mkdir(parents=True)
    (tmp_path / "src" / "h200" / "x.json").write_text("{not json")
    refused = script("merge-results", tmp_path / "src", "--into", tmp_path / "dst")
    assert refused.returncode != 0 and "x.json: not JSON" in refused.stderr


def test_copy_ceiling_names_a_bad_shape():
    refused = script("copy-ceiling", "4096,4096,bf16", "4096,x,bf16")
    assert refused.returncode == 2 and "'4096,x,bf16'" in refused.stderr


def test_check_regressions_names_benchmark_and_parameters(tmp_path):
    folder = tmp_path / "results" / "h200"
    write_run(
        folder, "a" * 40, 1, {("4096x4096-bf16", "triton"): 1.0e-4, ("1x4096-bf16", "triton"): 5e-5}
    )
    write_run(
        folder, "b" * 40, 2, {("4096x4096-bf16", "triton"): 1.3e-4, ("1x4096-bf16", "triton"): 5e-5}
    )
    found = script("check-regressions", "--results", tmp_path / "results", "--threshold", 1.2)
    assert found.returncode == 1
    assert "RMSNormBackward.track_time('4096x4096-bf16', 'triton')" in found.stdout
    assert "1x4096-bf16" not in found.stdout.split("REGRESSION", 1)[1]
    lenient = script("check-regressions", "--results", tmp_path / "results", "--threshold", 1.5)
    assert lenient.returncode == 0, lenient.stdout
    other = script("check-regressions", "--results", tmp_path / "results", "--bench", "device")
    assert other.returncode == 0 and "0 figures compared" in other.stdout, other.stdout
    chosen = script("check-regressions", "--results", tmp_path / "results", "--bench", "Backward")
    assert chosen.returncode == 1 and "2 figures compared" in chosen.stdout, chosen.stdout
    bad = script("check-regressions", "--results", tmp_path / "results", "--bench", "(")
    assert bad.returncode != 0 and "not a regular expression" in bad.stderr


def test_check_regressions_compares_only_figures_of_one_method(tmp_path):
    folder = tmp_path / "results" / "h200"
    write_run(folder, "a" * 40, 1, {("1x4096-bf16", "triton"): 5e-6}, version="graph-1")
    write_run(folder, "b" * 40, 2, {("1x4096-bf16", "triton"): 9e-6}, version="graph-2")
    found = script("check-regressions", "--results", tmp_path / "results")
    assert found.returncode == 0, found.stdout
    assert "0 figures compared" in found.stdout and "1 not compared" in found.stdout
    write_run(folder, "c" * 40, 3, {("1x4096-bf16", "triton"): 2e-5}, version="graph-2")
    found = script("check-regressions", "--results", tmp_path / "results")
    assert found.returncode == 1 and "9e-06 -> 2e-05" in found.stdout, found.stdout


def test_union_benchmarks_lists_every_machines_shapes(tmp_path):
    results = tmp_path / "results"
    write_run(results / "cpu-smoke", "a" * 40, 1, {("1x256-bf16", "triton"): 1e-3})
    write_run(results / "h200", "b" * 40, 2, {("16384x4096-bf16", "torch"): 2e-4})
    bench = "bench_rmsnorm.RMSNormBackward.track_time"
    listed = {"params": [["'1x256-bf16'"], ["'triton'"]], "version": "v"}
    (results / "benchmarks.json").write_text(json.dumps({bench: listed, "version": 2}))
    before = (results / "benchmarks.json").read_text()
    done = script("asvfiles.py", "union-benchmarks", results)
    assert done.returncode == 0, done.stderr
    params = json.loads((results / "benchmarks.json").read_text())[bench]["params"]
    assert params == [["'1x256-bf16'", "'16384x4096-bf16'"], ["'triton'", "'torch'"]]
    assert (results / "benchmarks.json").read_text() != before


def test_offline_html_serves_cdn_files_locally(tmp_path):
    (tmp_path / "index.html").write_text(
        '<script src="https://code.jquery.com/jquery-3.3.1.min.js" integrity="sha256-x" '
        'crossorigin="anonymous"></script>\n'
        '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css">'
    )
    done = script("offline-html", tmp_path)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "index.html").read_text()
    assert "https://" not in page and 'src="vendor/jquery.min.js"' in page
    assert (tmp_path / "vendor" / "css" / "bootstrap.min.css").is_file()
    (tmp_path / "index.html").write_text('<script src="https://example.org/unknown.js"></script>')
    refused = script("offline-html", tmp_path)
    assert refused.returncode != 0 and "unknown.js" in refused.stderr
