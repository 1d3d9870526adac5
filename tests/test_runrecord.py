"""The record of a run (rmsnorm_bench.runrecord): where its time went, written by asvrun after
a run that stored results, never over another record."""

import errno
import json
import os
import sys
import time
from pathlib import Path

import pytest

from rmsnorm_bench import asvargs, asvrun, atomic, progress, runrecord

from .test_reliability import file_of, guarded, run_file, store  # noqa: F401  (store: fixture)

B = "b" * 40

# A fake asv run: writes one results file, and the timing lines two benchmark processes of
# the instrument would write, with the setup_cache duration asv keeps of the last one.
FAKE_ASV = """
import json, os, pathlib, sys, time
results, text = sys.argv[1], pathlib.Path(sys.argv[2]).read_text()
run = json.loads(text)
run["durations"] = {"<setup_cache bench_rmsnorm:151>": 4.5}
pathlib.Path(results).write_text(json.dumps(run))
now = time.time()
lines = [{"warm": {"seconds": 2.5, "workers": 4, "pairs": 8, "cases": 16, "forgotten": 3}}]
for pid in (11, 12):
    lines.append({"suite": "rms_norm forward", "case": "1x256-bf16", "backend": "torch_compile",
                  "status": "skipped", "seconds": 0.0, "phases": {"backend": 0.0}})
    lines.append({"suite": "rms_norm forward", "case": "1x256-bf16", "backend": "triton",
                  "status": "ok", "seconds": 2.0, "phases": {"backend": 0.5, "validation": 1.0}})
    lines.append({"suite": "rms_norm forward", "case": "16x1000-f32", "backend": "torch",
                  "status": "ok", "seconds": 1.0, "phases": {"public": 0.75},
                  "compile_cache": {"inductor.fxgraph_cache_hit": 2}})
    lines.append({"suite": "rms_norm forward", "process": pid, "started": now,
                  "seconds": 3.5, "phases": {"import torch": 1.25}})
with open(os.environ["RMSNORM_BENCH_TIMES"], "a") as f:
    f.writelines(json.dumps(line) + "\\n" for line in lines)
"""

BENCHMARKS = {
    "bench_rmsnorm.RMSNormForward.track_time": {"setup_cache_key": "bench_rmsnorm:151"},
    "version": 2,
}


def recorder(tmp_path, **kw):
    kw.setdefault("folder", tmp_path / "runs")
    return runrecord.Recorder("h200", ["run", "-a", "rounds=2", "HEAD^!"],
                              tmp_path / "env", **kw)  # fmt: skip


def fake_run(store, tmp_path):  # noqa: F811
    (store / "benchmarks.json").write_text(json.dumps(BENCHMARKS))
    text = tmp_path / "run.json"
    text.write_text(run_file(store, B, {("1x256-bf16", "triton"): 1e-3}))
    (tmp_path / "fake_asv.py").write_text(FAKE_ASV)
    return [sys.executable, str(tmp_path / "fake_asv.py"), str(file_of(store, B)), str(text)]


def test_a_run_writes_where_its_time_went(store, tmp_path, capsys):  # noqa: F811
    (tmp_path / "env" / "3b0c1f").mkdir(parents=True)  # an asv environment: not a fresh clone
    started = time.time() - 5  # the caller's set-up took 5 s
    rec = recorder(tmp_path, started_at=started, fresh_venv=False)
    assert guarded(store, fake_run(store, tmp_path), recorder=rec) == 0
    path = tmp_path / "runs" / f"h200-{B[:8]}.json"
    assert f"record: {path}" in capsys.readouterr().err
    record = json.loads(path.read_text())
    assert record["commit"] == B and record["commits"] == [B] and record["machine"] == "h200"
    assert record["processes"] == 2 and record["rounds"] == 2
    assert record["processes_per_round"] == 1  # asv's rounds, each one process
    assert record["fresh"]["clone"] is False and record["fresh"]["venv"] is False
    assert record["cases"] == {"ok": 4, "skipped": 2, "FAILED": 0}
    s = record["seconds"]
    assert s["measuring"] == 7.0  # the two processes' own seconds
    assert 4.5 <= s["setup_parts"]["before_asv"] <= s["setup"] <= s["total"]
    assert s["asv"] <= s["total"] - s["setup_parts"]["before_asv"] + 0.1
    suite = record["suites"]["rms_norm forward"]
    assert suite["processes"] == [3.5, 3.5] and suite["seconds"] == 7.0
    assert suite["asv_last_setup_seconds"] == 4.5  # named from benchmarks.json's key
    triton = suite["backends"]["triton"]
    assert triton["seconds"] == 4.0 and triton["ok"] == 2
    assert triton["phases"] == {"backend": 1.0, "validation": 2.0}
    assert suite["backends"]["torch"]["compile_cache"] == {"inductor.fxgraph_cache_hit": 4}
    assert suite["backends"]["torch_compile"] == {
        "seconds": 0.0, "ok": 0, "skipped": 2, "FAILED": 0, "phases": {}
    }  # fmt: skip
    first = record["first_cases"]
    assert [(f["case"], f["backend"], f["seconds"]) for f in first] == [
        ("1x256-bf16", "triton", 2.0),
        ("1x256-bf16", "triton", 2.0),
    ]  # the first case measured, not the skipped one before it
    assert first[0]["process_start"] == {"import torch": 1.25}
    assert record["warm"] == [
        {"seconds": 2.5, "workers": 4, "pairs": 8, "cases": 16, "forgotten": 3}
    ]  # what the warm step wrote in asv's install step, listed as it was
    assert runrecord.main([str(path)]) == 0
    shown = capsys.readouterr().out
    assert "rms_norm forward triton: 4.0 s (backend 1.0, validation 2.0)" in shown
    assert "warm step: 2.5 s (16 cases validated in 4 processes)" in shown


def test_a_record_says_how_many_processes_each_round_measured_in(store, tmp_path):  # noqa: F811
    rec = recorder(tmp_path, per_round=3)
    assert guarded(store, fake_run(store, tmp_path), recorder=rec) == 0
    path = tmp_path / "runs" / f"h200-{B[:8]}.json"
    assert json.loads(path.read_text())["processes_per_round"] == 3


def test_a_record_is_never_replaced(store, tmp_path):  # noqa: F811
    taken = tmp_path / "runs" / f"h200-{B[:8]}.json"
    taken.parent.mkdir()
    taken.write_text("an earlier record")
    assert guarded(store, fake_run(store, tmp_path), recorder=recorder(tmp_path)) == 0
    assert taken.read_text() == "an earlier record"
    assert json.loads((taken.parent / f"h200-{B[:8]}-2.json").read_text())["commit"] == B
    assert runrecord.default_path("h200", B, taken.parent).name == f"h200-{B[:8]}-3.json"


def test_the_set_up_is_what_came_before_the_first_benchmark_and_the_builds(tmp_path):
    rec = recorder(tmp_path, started_at=100.0)
    rec.clock = {"asv_started": 110.0, "waiting": 2.0, "asv_ended": 200.0}
    durations = {"<build>": 5.0, "<setup_cache bench_rmsnorm:151>": 7.0}
    old = {"durations": {"<build>": 1.0, "<setup_cache bench_rmsnorm:151>": 7.0}}
    run = {"commit_hash": B, "date": 1, "params": {"gpu": "H200"}, "durations": durations}
    rec.written = [(run, old), (dict(run, durations={"<build>": 1.0}), old)]  # asv kept 1.0
    times = [{"suite": "rms_norm forward", "process": 1, "started": 120.0, "seconds": 30.0}]
    record = rec.record(times, 0, BENCHMARKS)
    assert record["seconds"]["setup_parts"] == {
        "before_asv": 8.0,  # 10 s before asv, 2 of them waiting for another run
        "asv_before_the_first_benchmark": 10.0,
        "later_builds": 5.0,  # this run's build; the 1.0 both files held is an earlier one's
    }
    assert record["seconds"]["setup"] == 23.0 and record["seconds"]["waiting"] == 2.0
    assert record["seconds"]["asv"] == 90.0 and record["seconds"]["measuring"] == 30.0
    assert record["seconds"]["asv_other"] == 45.0
    # the suite's last set-up duration is an earlier run's (the file held it): not named
    assert "asv_last_setup_seconds" not in record["suites"]["rms_norm forward"]
    assert record["facts"] == {"gpu": "H200"}
    assert rec.record(times, 0, {}) is not None
    rec.written = []
    assert rec.record(times, 0, {}) is None  # asv wrote nothing: no record


def test_a_record_file_that_exists_or_a_find_is_refused_before_anything_runs(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(asvrun, "run_guarded", lambda *a, **k: pytest.fail("it ran"))
    monkeypatch.setattr(asvrun, "run_asv", lambda *a, **k: pytest.fail("it ran"))
    monkeypatch.setattr(asvargs, "check_asv_args", lambda *a: None)
    taken = tmp_path / "record.json"
    taken.write_text("{}")
    refusals = {
        ("--record-to", str(taken), "--", "run", "HEAD^!"): "exists; a record is never replaced",
        # found before the run, not after it: a folder that is a file, or is not there
        ("--record-to", str(taken / "r.json"), "--", "run"): f"{taken} is not a folder",
        ("--record-to", str(tmp_path / "no" / "r.json"), "--", "run"): "no is not a folder",
        ("--record", "--", "find", "HEAD~1..HEAD", "x"): "asv find stores nothing",
        ("--record", "--started-at", str(time.time() + 3600), "--", "run"): "not a time before",
    }
    for args, why in refusals.items():
        with pytest.raises(SystemExit) as stop:
            asvrun.main(["--machine", "h200", *args])
        assert stop.value.code == 2 and why in capsys.readouterr().err
    assert taken.read_text() == "{}"


def test_the_record_tool_refuses_what_is_not_a_record(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    for text in ("not json", '{"seconds": 1}', "[]"):
        bad.write_text(text)
        with pytest.raises(SystemExit) as stop:
            runrecord.main([str(bad)])
        assert stop.value.code == 2 and "runrecord:" in capsys.readouterr().err


def test_times_are_read_by_the_record_from_the_file_the_instrument_writes(tmp_path, monkeypatch):
    monkeypatch.setenv(progress.TIMES_VAR, str(tmp_path / "t.jsonl"))
    progress.record_times(suite="s", process=1, started=1.0, seconds=2.0, phases={})
    assert progress.read_times(Path(tmp_path / "t.jsonl"))[0]["process"] == 1


def test_a_process_shared_by_the_suites_is_listed_under_each_and_not_summed_four_times():
    both = ["rms_norm forward", "rms_norm backward"]
    processes = [{"suites": both, "process": 1, "seconds": 10.0}]
    cases = [
        {"suite": "rms_norm forward", "case": "a", "backend": "triton", "status": "ok",
         "seconds": 3.0, "phases": {"validation": 2.0, "public": 1.0}},
        {"suite": "rms_norm backward", "case": "a", "backend": "triton", "status": "ok",
         "seconds": 1.5, "phases": {"public": 1.5}},
    ]  # fmt: skip
    key = "bench_rmsnorm:60"
    benchmarks = {
        f"bench_rmsnorm.{c}.track_time": {"setup_cache_key": key}
        for c in ("RMSNormForward", "RMSNormBackward")
    }
    runs = [({"durations": {f"<setup_cache {key}>": 9.0}}, {})]
    suites = runrecord._suites(processes, cases, runs, benchmarks)
    assert (
        suites["rms_norm forward"]["processes"]
        == [10.0]
        == suites["rms_norm backward"]["processes"]
    )
    assert (
        suites["rms_norm forward"]["seconds"] == 3.0
        and suites["rms_norm backward"]["seconds"] == 1.5
    )
    assert {s["asv_last_setup_seconds"] for s in suites.values()} == {9.0}


def test_a_record_onto_a_full_disk_leaves_no_part_of_one(store, tmp_path, monkeypatch, capsys):  # noqa: F811
    # before: open(path, "x") then a write: a full disk left a truncated record under its name
    real = atomic._write_chunks

    def half_then_full(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp") and b'"commit"' in data:
            os.write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(atomic, "_write_chunks", half_then_full)
    assert guarded(store, fake_run(store, tmp_path), recorder=recorder(tmp_path)) == 0
    assert list((tmp_path / "runs").iterdir()) == []
    assert "record not written" in capsys.readouterr().err  # the results are stored
