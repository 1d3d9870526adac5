"""The tracker under bad input, faults and concurrency: nothing stored is lost, nothing wrong
recorded, every refusal names the problem (exit status 2; 1 is a regression only).

asv itself is replaced by a small script that writes results files as asv would, so these run
in seconds; one real `scripts/run`, refused before it measures, is at the end."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rmsnorm_bench import (
    ROOT,
    asvargs,
    asvfiles,
    asvrun,
    dashboard,
    machine,
    merge,
    publish,
    regressions,
    report,
)
from rmsnorm_bench import instrument as common

from .test_tracker import fake_site, shell, write_run

NAN = float("nan")
BENCH = "bench_rmsnorm.RMSNormBackward.track_time"
A, B = "a" * 40, "b" * 40


def run_file(results: Path, commit: str, values: dict, version="v", machine_name="h200") -> str:
    """The text of a results file as asv writes it: {(case, backend): value}."""
    folder = results.parent / "scratch" / machine_name  # the folder's name is the machine's
    path = write_run(folder, commit, 1, values, version)
    text = path.read_text()
    path.unlink()
    return text


FAKE_ASV = """
import json, pathlib, sys
for path, text in json.loads(pathlib.Path(sys.argv[1]).read_text()).items():
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(text)
sys.exit(int(sys.argv[2]))
"""


def fake_asv(tmp_path: Path, writes: dict, status=0) -> list[str]:
    """A command that writes `writes` ({path: text}) as asv run would, then exits."""
    (tmp_path / "asv.py").write_text(FAKE_ASV)
    spec = tmp_path / f"writes-{len(list(tmp_path.glob('writes-*')))}.json"
    spec.write_text(json.dumps({str(k): v for k, v in writes.items()}))
    return [sys.executable, str(tmp_path / "asv.py"), str(spec), str(status)]


def stored(results: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(results.rglob("*")) if p.is_file()}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """results/ holding one commit's figures on machine h200, and benchmarks.json."""
    return make_store(tmp_path, monkeypatch)


def make_store(tmp_path, monkeypatch):
    for var in asvargs.OVERRIDES:
        monkeypatch.delenv(var, raising=False)
    results = tmp_path / "results"
    write_run(
        results / "h200", A, 1, {("1x256-bf16", "triton"): 1e-3, ("1x256-bf16", "torch"): 2e-3}
    )
    (results / "h200" / "machine.json").write_text('{"machine": "h200", "version": 1}')
    (results / "benchmarks.json").write_text('{"version": 2}')
    return results


def guarded(results, command, **kw):
    return asvrun.run_guarded(command, "h200", results, results.parent / ".asv", **kw)


def file_of(results, commit):
    return results / "h200" / f"{commit[:8]}-virtualenv-py3.11.json"


# 1. stored results are never wiped


def test_a_run_that_skips_everything_changes_no_file(store, tmp_path, capsys):
    before = stored(store)
    all_skipped = run_file(store, A, {("1x256-bf16", "triton"): NAN, ("1x256-bf16", "torch"): NAN})
    new_commit = run_file(store, B, {("1x256-bf16", "triton"): NAN})
    writes = {
        file_of(store, A): all_skipped,
        file_of(store, B): new_commit,
        store / "benchmarks.json": "{}",
        store / "h200" / "machine.json": "{}",
    }
    assert guarded(store, fake_asv(tmp_path, writes)) == 2
    assert stored(store) == before
    assert "nothing measured" in capsys.readouterr().err


@pytest.mark.parametrize("status, expected", [(1, 2), (0, 2), (130, 130)])
def test_a_run_that_measured_nothing_never_exits_as_a_regression(status, expected, store, tmp_path):
    # asv exits 1 where `-b` selects no benchmark: passed on, it read as a regression
    assert guarded(store, fake_asv(tmp_path, {}, status=status)) == expected


@pytest.mark.parametrize("damage", ["truncated", "negative"])
def test_a_damaged_stored_file_is_named_before_asv_runs(damage, store, tmp_path):
    # before, asv ran (minutes on a GPU) and then the run failed, naming asv, or threw the new
    # figures away
    path = file_of(store, A)
    if damage == "truncated":
        path.write_text(path.read_text()[:50])
    else:
        run = json.loads(path.read_text())
        run["results"][BENCH][0][0] = -0.5
        path.write_text(json.dumps(run))
    before = stored(store)
    asv_ran = tmp_path / "asv-ran"
    command = [sys.executable, "-c", f"open({str(asv_ran)!r}, 'w')"]
    with pytest.raises(asvfiles.BadFile, match=f"{path}: .*; nothing ran"):
        guarded(store, command)
    assert not asv_ran.exists() and stored(store) == before


def test_a_run_where_every_case_fails_keeps_asvs_status_and_changes_no_file(store, tmp_path):
    before = stored(store)
    failed = run_file(store, A, {("1x256-bf16", "triton"): None, ("1x256-bf16", "torch"): None})
    assert guarded(store, fake_asv(tmp_path, {file_of(store, A): failed}, status=2)) == 2
    assert stored(store) == before


def test_a_run_adds_to_what_is_stored_and_names_what_it_replaced(store, tmp_path, capsys):
    # another shape (an override), torch skipped: the stored figures of 1x256 stay
    new = run_file(store, A, {("16x1000-f32", "triton"): 5e-3, ("1x256-bf16", "triton"): 4e-3})
    assert guarded(store, fake_asv(tmp_path, {file_of(store, A): new})) == 0
    values = asvfiles.figures(asvfiles.load_run(file_of(store, A)))
    assert values == {
        (BENCH, ("1x256-bf16", "triton")): 4e-3,  # re-measured
        (BENCH, ("1x256-bf16", "torch")): 2e-3,  # kept
        (BENCH, ("16x1000-f32", "triton")): 5e-3,  # added
    }
    err = capsys.readouterr().err
    assert "1 stored figure(s) re-measured and replaced" in err and "0.001 -> 0.004" in err
    assert "1 stored figure(s) not measured now, kept" in err


def test_figures_of_another_method_are_kept_whole_where_a_new_one_replaces_them(
    store, tmp_path, capsys
):
    before = file_of(store, A).read_bytes()
    for n, value in ((1, 4e-3), (2, 3e-3)):  # twice: the second keeps the first's file too
        new = run_file(store, A, {("1x256-bf16", "triton"): value}, version=f"new-{n}")
        assert guarded(store, fake_asv(tmp_path, {file_of(store, A): new})) == 0
        err = capsys.readouterr().err
        assert "measured by another method" in err and "is kept as" in err
    kept = sorted((store / "h200" / "replaced").iterdir())
    assert [p.name for p in kept] == [f"{file_of(store, A).name}.{n}.replaced" for n in (1, 2)]
    assert kept[0].read_bytes() == before
    assert asvfiles.figures(asvfiles.load_run(file_of(store, A))) == {
        (BENCH, ("1x256-bf16", "triton")): 3e-3
    }
    assert [p.name for p in asvfiles.results_files(store / "h200")] == [file_of(store, A).name]


def with_facts(text: str, **facts) -> str:
    """A results file's text with these machine facts (asv's params) added."""
    run = json.loads(text)
    run["params"].update(facts)
    return json.dumps(run)


def archived(results: Path) -> list:
    folder = results / "h200" / "replaced"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_re_measured_figure_keeps_the_earlier_run_whole(store, tmp_path, capsys):
    before = file_of(store, A).read_bytes()
    new = run_file(store, A, {("1x256-bf16", "triton"): 4e-3, ("1x256-bf16", "torch"): NAN})
    assert guarded(store, fake_asv(tmp_path, {file_of(store, A): new})) == 0
    assert archived(store) == [f"{file_of(store, A).name}.1.replaced"]
    assert (store / "h200" / "replaced" / archived(store)[0]).read_bytes() == before
    assert "re-measured and replaced" in capsys.readouterr().err


def test_a_case_that_fails_now_is_recorded_as_failed_over_its_stored_figure(
    store, tmp_path, capsys
):
    # before, the stored figure stayed, as if this run had measured it again
    new = run_file(store, A, {("1x256-bf16", "triton"): None, ("1x256-bf16", "torch"): 3e-3})
    assert guarded(store, fake_asv(tmp_path, {file_of(store, A): new})) == 0
    values = asvfiles.figures(asvfiles.load_run(file_of(store, A)), measured_only=False)
    assert values == {
        (BENCH, ("1x256-bf16", "torch")): 3e-3,
        (BENCH, ("1x256-bf16", "triton")): None,
    }
    err = capsys.readouterr().err
    assert "1 stored figure(s) failed in this run, recorded as failed" in err
    assert "RMSNormBackward.track_time('1x256-bf16', 'triton') (was 0.001)" in err
    assert archived(store) == [f"{file_of(store, A).name}.1.replaced"]


def test_a_stopped_run_adds_figures_and_replaces_none(store, tmp_path, capsys):
    # before, a compare stopped by SIGTERM replaced 3 processes' figures with 1 process's
    new = run_file(
        store,
        A,
        {("1x256-bf16", "triton"): 4e-3, ("1x256-bf16", "torch"): None,
         ("16x1000-f32", "triton"): 5e-3},
    )  # fmt: skip
    assert guarded(store, fake_asv(tmp_path, {file_of(store, A): new}, status=143)) == 143
    values = asvfiles.figures(asvfiles.load_run(file_of(store, A)))
    assert values == {
        (BENCH, ("1x256-bf16", "torch")): 2e-3,  # stored, kept over the stopped run's failure
        (BENCH, ("1x256-bf16", "triton")): 1e-3,  # stored, kept over the partial figure
        (BENCH, ("16x1000-f32", "triton")): 5e-3,  # new: added
    }
    assert "the run was stopped: 2 stored figure(s) kept over its partial ones" in (
        capsys.readouterr().err
    )


def test_a_run_that_only_failed_says_nothing_of_records_it_did_not_make(store, tmp_path, capsys):
    before = stored(store)
    new = run_file(store, A, {("1x256-bf16", "triton"): None, ("1x256-bf16", "torch"): NAN})
    assert guarded(store, fake_asv(tmp_path, {file_of(store, A): new})) == 2
    err = capsys.readouterr().err
    assert "nothing measured" in err and "recorded as failed" not in err
    assert stored(store) == before


def test_a_run_on_other_machine_facts_is_not_merged_with_the_stored_one(store, tmp_path, capsys):
    # before, the stored torch figure stayed in the file, labelled with the new run's facts
    path = file_of(store, A)
    path.write_text(with_facts(path.read_text(), cpu="Xeon", num_cpu="16"))
    before = path.read_bytes()
    new = run_file(store, A, {("1x256-bf16", "triton"): 4e-3, ("1x256-bf16", "torch"): NAN})
    new = with_facts(new, cpu="EPYC", num_cpu="32")
    assert guarded(store, fake_asv(tmp_path, {path: new})) == 0
    run = asvfiles.load_run(path)
    assert asvfiles.figures(run) == {(BENCH, ("1x256-bf16", "triton")): 4e-3}
    assert run["params"]["cpu"] == "EPYC"
    assert (store / "h200" / "replaced" / archived(store)[0]).read_bytes() == before
    err = capsys.readouterr().err
    assert "other machine facts than the stored run (cpu 'Xeon' -> 'EPYC', num_cpu" in err


def test_a_run_on_other_facts_that_measured_nothing_of_a_commit_leaves_its_file(store, tmp_path):
    path = file_of(store, A)
    before = path.read_bytes()
    skipped = with_facts(run_file(store, A, {("1x256-bf16", "triton"): NAN}), cpu="EPYC")
    other = run_file(store, B, {("1x256-bf16", "triton"): 5e-3})
    assert guarded(store, fake_asv(tmp_path, {path: skipped, file_of(store, B): other})) == 0
    assert path.read_bytes() == before and archived(store) == []
    assert asvfiles.figures(asvfiles.load_run(file_of(store, B)))


def test_an_unusable_file_asv_wrote_over_a_stored_one_is_put_back(store, tmp_path, capsys):
    path = file_of(store, A)
    before = path.read_bytes()
    other = run_file(store, B, {("1x256-bf16", "triton"): 5e-3})
    writes = {path: '{"results": 1}', file_of(store, B): other}
    assert guarded(store, fake_asv(tmp_path, writes)) == 0
    assert path.read_bytes() == before
    assert "asv wrote an unusable file, not kept" in capsys.readouterr().err


def test_overrides_leave_benchmarks_json_as_it_was(store, tmp_path, monkeypatch):
    monkeypatch.setenv(common.FWD_SHAPES_VAR, "16,1000,f32")
    new = run_file(store, A, {("16x1000-f32", "triton"): 5e-3})
    writes = {file_of(store, A): new, store / "benchmarks.json": '{"shapes": "overridden"}'}
    assert guarded(store, fake_asv(tmp_path, writes)) == 0
    assert (store / "benchmarks.json").read_text() == '{"version": 2}'
    monkeypatch.delenv(common.FWD_SHAPES_VAR)  # a run of the default matrix updates it
    assert guarded(store, fake_asv(tmp_path, writes)) == 0
    assert (store / "benchmarks.json").read_text() == '{"shapes": "overridden"}'


def test_continuous_keeps_both_commits_stored_figures(store, tmp_path):
    write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 7e-3})
    writes = {
        file_of(store, A): run_file(store, A, {("1x256-bf16", "torch"): 3e-3}),
        file_of(store, B): run_file(store, B, {("1x256-bf16", "torch"): 3e-3}),
    }
    assert guarded(store, fake_asv(tmp_path, writes, status=1)) == 1  # a regression: asv's 1
    a = asvfiles.figures(asvfiles.load_run(file_of(store, A)))
    b = asvfiles.figures(asvfiles.load_run(file_of(store, B)))
    assert a[(BENCH, ("1x256-bf16", "triton"))] == 1e-3
    assert b[(BENCH, ("1x256-bf16", "triton"))] == 7e-3


def test_a_run_killed_before_it_settled_is_settled_by_the_next(store, tmp_path, capsys):
    from rmsnorm_bench import store as keeper

    state = store.parent / ".asv"
    keeper.keep(store, "h200", state / "kept-h200")  # then killed: asv had wiped the file
    file_of(store, A).write_text(run_file(store, A, {("1x256-bf16", "triton"): NAN}))
    assert guarded(store, fake_asv(tmp_path, {})) == 2  # this run measures nothing
    values = asvfiles.figures(asvfiles.load_run(file_of(store, A)))
    assert values[(BENCH, ("1x256-bf16", "torch"))] == 2e-3
    assert not (state / "kept-h200").exists()


@pytest.mark.parametrize("value", ["tritn", "TRITON", "triton,tritn", "triton;torch"])
def test_unknown_backends_are_refused_before_anything_runs(value, monkeypatch, capsys):
    monkeypatch.setenv(common.BACKENDS_VAR, value)
    with pytest.raises(ValueError, match="unknown backend"):
        common.selected_backends()
    monkeypatch.setattr(asvrun, "run_guarded", lambda *a, **k: pytest.fail("it ran"))
    with pytest.raises(SystemExit) as refused:
        asvrun.main(["--machine", "h200", "--", "run"])
    assert refused.value.code == 2 and repr(value) in capsys.readouterr().err


def test_cpu_affinity_is_checked_against_what_the_host_allows(monkeypatch, capsys):
    assert asvargs.parse_cpus("0-3,8") == {0, 1, 2, 3, 8}
    assert asvargs.format_cpus({0, 1, 2, 3, 8}) == "0-3,8"
    for bad in ("", "a", "3-1", "0,,1"):
        with pytest.raises(ValueError, match="--cpu-affinity"):
            asvargs.parse_cpus(bad)
    allowed = sorted(os.sched_getaffinity(0))
    asvargs.check_affinity(["run", "--cpu-affinity", str(allowed[0]), "HEAD^!"])
    monkeypatch.setattr(asvrun, "run_guarded", lambda *a, **k: pytest.fail("it ran"))
    with pytest.raises(SystemExit) as refused:
        asvrun.main(["--machine", "h200", "--", "run", "--cpu-affinity", "4096"])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "4096 not available to this run" in err


def test_backend_lists_may_hold_spaces_and_shapes_may_not_repeat(monkeypatch):
    monkeypatch.setenv(common.BACKENDS_VAR, "torch, triton")
    assert common.selected_backends() == ["triton", "torch"]
    with pytest.raises(ValueError, match="2x64-f32 is given twice"):
        common.parse_shapes("2,64,f32;2,64,f32", "VAR")


# 2. publishing swaps the whole dashboard in, or leaves the old one


def test_a_publish_stopped_midway_leaves_the_old_dashboard(tmp_path, monkeypatch):
    site = fake_site(tmp_path / "site")
    out = tmp_path / "html"
    publish.install(site, out)
    before = stored(out)
    (site / "graphs" / "new.json").write_text("[]")

    def copy_then_stop(src, dst, *args, **kw):
        if Path(dst).name == "vendor":  # the last copy: the new dashboard is half written
            raise KeyboardInterrupt
        return real_copytree(src, dst, *args, **kw)

    real_copytree = publish.shutil.copytree
    monkeypatch.setattr(publish.shutil, "copytree", copy_then_stop)
    with pytest.raises(KeyboardInterrupt):
        publish.install(site, out)
    assert stored(out) == before and not list(tmp_path.glob(".html.publish-*"))
    monkeypatch.setattr(publish.shutil, "copytree", real_copytree)
    monkeypatch.setattr(publish, "_exchange", lambda a, b: False)  # the two-rename fallback
    publish.install(site, out)
    assert (out / "graphs" / "new.json").is_file() and (out / "vendor" / "jquery.min.js").is_file()
    assert not list(tmp_path.glob(".html.publish-*"))


# 3. one run per environment and machine at a time


def test_a_second_run_waits_for_the_first_or_refuses(store, tmp_path):
    state = store.parent / ".asv"
    new = run_file(store, A, {("1x256-bf16", "triton"): 4e-3})
    with asvrun.Locks(state, ["lock-env"]):
        with pytest.raises(asvrun.Busy, match=f"pid {os.getpid()}"):
            guarded(store, fake_asv(tmp_path, {file_of(store, A): new}), wait=False)
        done = []
        waiting = threading.Thread(
            target=lambda: done.append(guarded(store, fake_asv(tmp_path, {file_of(store, A): new})))
        )
        waiting.start()
        time.sleep(1.0)
        assert not done  # it waits for the environment
        # a run on another GPU has its own environment (and machine name): it goes on
        gpu1 = run_file(store, A, {("1x256-bf16", "triton"): 4e-3}, machine_name="h200-gpu1")
        other = fake_asv(tmp_path, {store / "h200-gpu1" / file_of(store, A).name: gpu1})
        got = asvrun.run_guarded(other, "h200-gpu1", store, state, ".asv/env-gpu1")
        assert got == 0
    waiting.join(30)
    assert done == [0]


# 4. the gate fails when it checked nothing


@pytest.mark.parametrize("args", [["--results", "/nonexistent"], ["--results", "{empty}"]])
def test_regressions_with_nothing_to_check_fail(args, tmp_path):
    args = [a.format(empty=tmp_path) for a in args]
    with pytest.raises(SystemExit) as failed:
        regressions.main(args)
    assert failed.value.code == 2


@pytest.mark.parametrize("threshold", ["nan", "inf", "0.9"])
def test_regressions_refuse_a_threshold_that_is_not_one(threshold, store):
    with pytest.raises(SystemExit) as failed:
        regressions.main(["--results", str(store), "--threshold", threshold])
    assert failed.value.code == 2


# 5. malformed data is refused where it comes in, naming the file


def test_merge_refuses_a_file_without_what_the_tools_read(tmp_path, store, capsys):
    (tmp_path / "src" / "h200").mkdir(parents=True)
    bad = tmp_path / "src" / "h200" / "deadbeef-virtualenv-py3.11.json"
    bad.write_text('{"commit_hash": "deadbeef"}')
    before = stored(store)
    with pytest.raises(SystemExit) as refused:
        merge.main([str(tmp_path / "src"), "--into", str(store)])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and str(bad) in err and "no 'date'" in err
    assert stored(store) == before


def test_results_with_a_parameter_value_twice_are_refused(store, capsys):
    path = file_of(store, A)
    run = json.loads(path.read_text())
    run["results"][BENCH][1][0] = ["'2x64-f32'", "'2x64-f32'"]
    path.write_text(json.dumps(run))
    with pytest.raises(asvfiles.BadFile, match=r"'2x64-f32' listed twice"):
        asvfiles.load_run(path)
    for tool in (regressions, report):
        with pytest.raises(SystemExit) as refused:
            tool.main(["--results", str(store)])
        assert refused.value.code == 2 and str(path) in capsys.readouterr().err


# 6. errors name the file and the problem


def test_a_truncated_results_file_is_named_with_status_2(store, capsys):
    path = file_of(store, A)
    path.write_text(path.read_text()[:50])
    write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 1e-3})
    for tool in (regressions, report):
        with pytest.raises(SystemExit) as refused:
            tool.main(["--results", str(store)])
        err = capsys.readouterr().err
        assert refused.value.code == 2 and f"{path}: not valid JSON" in err and "truncated" in err
    with pytest.raises(publish.PublishError, match=f"{path}: not valid JSON"):
        publish.check_results(store)


def test_a_corrupt_machine_file_is_named(tmp_path, monkeypatch, capsys):
    path = tmp_path / ".asv-machine.json"
    path.write_text('{"cpu-smoke": {"machine": "cpu-sm')
    with pytest.raises(asvfiles.BadFile, match="not valid JSON"):
        machine.register("cpu-smoke", {}, path)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SystemExit) as refused:
        machine.main(["--register", "--results", str(tmp_path / "results")])
    assert refused.value.code == 2 and str(path) in capsys.readouterr().err
    assert path.read_text() == '{"cpu-smoke": {"machine": "cpu-sm'


@pytest.mark.parametrize(
    "script,args",
    [("run", ["--machine"]), ("run", ["--gpu", "--no-publish"]), ("compare", ["--factor"])]
    + [("compare", ["--factor", "x", "HEAD"]), ("compare", ["--machine"])]
    + [("compare", ["--cpu-affinity"]), ("run", ["--cpu-affinity", "--no-publish"])],
)
def test_an_option_without_its_value_is_named(script, args):
    done = shell(script, *args)
    assert done.returncode == 2 and args[0] in done.stderr and "unbound" not in done.stderr


# 7. nothing is left out silently


def test_publish_counts_figures_its_graphs_leave_out(store):
    write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 1e-3}, version="old")
    (store / "benchmarks.json").write_text(json.dumps({BENCH: {"version": "v"}}))
    (line,) = publish.check_results(store)
    assert "h200" in line and BENCH in line and "1 figure(s) of 1 commit(s)" in line
    assert "'old'" in line
    # a benchmark benchmarks.json does not list (renamed, or another clone's): not shown
    unknown = "bench_rmsnorm.Renamed.track_time"
    write_run(store / "h200", "c" * 40, 3, {("1x256-bf16", "triton"): 1e-3}, bench=unknown)
    lines = publish.check_results(store)
    assert any(f"{unknown}: 1 figure(s) of 1 commit(s) are not shown" in x for x in lines)


def test_report_resolves_revisions_and_refuses_ambiguous_prefixes(store, capsys):
    head = subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", "HEAD"], text=True)
    write_run(store / "h200", head.strip(), 2, {("1x256-bf16", "triton"): 1e-3})
    write_run(store / "h200", "aaaa" + "c" * 36, 3, {("1x256-bf16", "triton"): 1e-3})
    report.main(["--results", str(store), "--commit", "HEAD", "--no-plot"])
    assert f"commit {head[:8]}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        report.main(["--results", str(store), "--commit", "aaaa"])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "matches 2 commits" in err and "aaaacccccc" in err


# 8. one rule for every tool that reads results (asvfiles.load_runs): one file per machine and
# commit, figures finite numbers >= 0 or null (NaN: asv's skipped), asv's results format 2


def refused_by_every_reader(results: Path, problem: str, capsys, tmp_path) -> None:
    """regressions, report, publish, the dashboard check and merge (into an empty folder)
    each refuse `results` with status 2, naming `problem`; nothing is written."""
    before = stored(results)
    argvs = {
        regressions: ["--results", results, "--public-time"],
        report: ["--results", results],
        dashboard: [fake_index(tmp_path / "html"), "--results", results],
        merge: [results, "--into", tmp_path / "merged"],
    }
    for tool, argv in argvs.items():
        with pytest.raises(SystemExit) as refused:
            tool.main([str(a) for a in argv])
        err = capsys.readouterr().err
        assert refused.value.code == 2, (tool.__name__, err)
        assert problem in err and "Traceback" not in err, (tool.__name__, err)
    with pytest.raises(publish.PublishError, match=re.escape(problem)):
        publish.check_results(results)
    assert stored(results) == before and not (tmp_path / "merged").exists()


def fake_index(folder: Path) -> Path:
    """The smallest index.json the dashboard check reads before anything else."""
    folder.mkdir()
    (folder / "index.json").write_text('{"revision_to_hash": {}, "params": {}, "machines": {}}')
    return folder


def test_a_second_file_for_one_commit_is_refused_by_every_reader(store, tmp_path, capsys):
    # the issue's: B measured again under another environment name, beside A and B
    write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 1e-3})
    first = file_of(store, B)
    second = first.with_name(f"{B[:8]}-virtualenv-py3.12.json")
    run = json.loads(first.read_text())
    second.write_text(json.dumps({**run, "env_name": "virtualenv-py3.12", "python": "3.12"}))
    problem = f"2 results files hold commit {B[:8]} ({first.name}, {second.name})"
    refused_by_every_reader(store, problem, capsys, tmp_path)
    # merge: a file of another environment for a commit this folder has already
    source = tmp_path / "src"
    (source / "h200").mkdir(parents=True)
    shutil.move(second, source / "h200" / second.name)
    before = stored(store)
    with pytest.raises(SystemExit) as refused:
        merge.main([str(source), "--into", str(store)])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and problem in err and stored(store) == before


@pytest.mark.parametrize(
    "value,problem",
    [
        ("0.01", '"0.01" is not a number'),
        (True, "true is not a number"),
        (-1e6, "-1000000.0 is negative"),
        (float("inf"), "inf is not a finite number"),
        (0.0, "0 s is no measurement"),
        (10**400, "1" + "0" * 19 + "... (401 digits) is not a measured figure"),  # overflowed
    ],
)
def test_figures_that_cannot_be_measurements_are_refused_by_every_reader(
    value, problem, store, tmp_path, capsys
):
    write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 1e-3})
    path = file_of(store, A)
    run = json.loads(path.read_text())
    run["results"][BENCH][0][0] = value  # the figure of ("1x256-bf16", "torch")
    path.write_text(json.dumps(run))
    refused_by_every_reader(store, f"{BENCH}('1x256-bf16', 'torch'): {problem}", capsys, tmp_path)


def test_a_sample_that_is_no_number_is_refused(store):
    path = write_run(
        store / "h200", B, 2, {("1x256-bf16", "triton"): 1e-3},
        samples={("1x256-bf16", "triton"): [1e-3, "x"]},
    )  # fmt: skip
    with pytest.raises(asvfiles.BadFile, match=r"triton'\): a sample: \"x\" is not a number"):
        asvfiles.load_runs(path.parent)


def test_skipped_and_failed_figures_and_a_peak_memory_of_zero_are_read(store, capsys):
    memory = "bench_rmsnorm.RMSNormBackward.track_peak_memory"
    write_run(store / "h200", A, 1, {("1x256-bf16", "triton"): 0}, bench=memory)
    write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 4096, ("1x256-bf16", "torch"): NAN},
              bench=memory)  # fmt: skip
    # from 0 bytes to 4096 is a regression: a figure of 0 is compared like any other
    assert regressions.main(["--results", str(store)]) == 1
    assert "0 -> 4096 (from 0)" in capsys.readouterr().out


@pytest.mark.parametrize("version,problem", [(3, "'version' is 3"), (None, "no 'version'")])
def test_results_of_another_asv_format_are_refused_by_every_reader(
    version, problem, store, tmp_path, capsys
):
    # the issue's: the gate and report took a "version": 3 file as the newest commit, which
    # asv publish leaves out
    path = write_run(store / "h200", B, 2, {("1x256-bf16", "triton"): 1e-3})
    run = json.loads(path.read_text())
    run.pop("version") if version is None else run.update(version=version)
    path.write_text(json.dumps(run))
    refused_by_every_reader(store, f"{path}: not a usable asv results file: {problem}", capsys,
                            tmp_path)  # fmt: skip


@pytest.mark.parametrize(
    "content,problem",
    [
        ('{"machine": "h200"}', "machine.json: not a usable asv machine file: no 'version'"),
        (None, "no machine.json beside its results"),
    ],
)
def test_a_machine_folder_asv_publish_would_skip_is_refused_by_every_reader(
    content, problem, store, tmp_path, capsys
):
    # asv publish leaves out every result of a machine whose machine.json it cannot read
    machine_file = store / "h200" / "machine.json"
    machine_file.unlink() if content is None else machine_file.write_text(content)
    refused_by_every_reader(store, problem, capsys, tmp_path)


def test_a_results_file_asv_would_skip_is_refused(store):
    path = file_of(store, A)
    run = json.loads(path.read_text())
    for change, problem in (
        ({"commit_hash": A[:8]}, "is not a commit's full hash"),
        ({"python": None}, "'python' is not a str"),
        ({"result_columns": [*run["result_columns"], "extra"]}, "'extra': asv reads no such"),
        (
            {"results": {BENCH: [[1e-3], [["'1x256-bf16"], ["'triton'"]], "v"]}},
            "parameter value(s) '1x256-bf16 are no repr",
        ),
    ):
        path.write_text(json.dumps({**run, **change}))
        with pytest.raises(asvfiles.BadFile, match=re.escape(problem)):
            asvfiles.load_run(path)


def test_publish_refuses_commits_this_clone_lacks_and_names_those_off_the_branch(store):
    def first_parents(rev):
        return git("rev-list", "--first-parent", rev).split()

    merges = git("rev-list", "--first-parent", "--merges", "-n", "1", "HEAD").split()
    if not merges:
        pytest.skip("no merge commit in this clone's history")
    side = git("rev-parse", f"{merges[0]}^2").strip()  # a commit off HEAD's first parents
    assert side not in first_parents("HEAD")
    for path in asvfiles.results_files(store / "h200"):
        path.unlink()
    write_run(store / "h200", git("rev-parse", "HEAD").strip(), 2, {("1x256-bf16", "triton"): 1e-3})
    write_run(store / "h200", side, 1, {("1x256-bf16", "triton"): 1e-3})
    (store / "benchmarks.json").write_text(json.dumps({BENCH: {"version": "v"}}))
    (warning,) = publish.check_results(store, ["HEAD"])
    assert f"h200: {side[:8]}: not on the first-parent history of HEAD" in warning
    write_run(store / "h200", A, 3, {("1x256-bf16", "triton"): 1e-3})  # no commit of this clone
    with pytest.raises(publish.PublishError, match=f"does not have \\(h200: {A[:8]}\\)"):
        publish.check_results(store, ["HEAD"])


def git(*args) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout


def test_a_run_in_another_environment_replaces_the_commits_file_and_keeps_it(
    store, tmp_path, capsys
):
    before = file_of(store, A).read_bytes()
    other = file_of(store, A).with_name(f"{A[:8]}-virtualenv-py3.12.json")
    new = run_file(store, A, {("1x256-bf16", "triton"): 4e-3})
    assert guarded(store, fake_asv(tmp_path, {other: new})) == 0
    assert [p.name for p in asvfiles.results_files(store / "h200")] == [other.name]
    kept = store / "h200" / "replaced" / f"{file_of(store, A).name}.1.replaced"
    assert kept.read_bytes() == before
    assert "measured again in another environment" in capsys.readouterr().err
    # one that measured nothing leaves the stored file as it was
    nothing = run_file(store, A, {("1x256-bf16", "triton"): NAN})
    third = other.with_name(f"{A[:8]}-virtualenv-py3.13.json")
    assert guarded(store, fake_asv(tmp_path, {third: nothing})) == 2
    assert [p.name for p in asvfiles.results_files(store / "h200")] == [other.name]


# 9. preview and interruption leave nothing behind


def test_preview_ports_are_checked_before_publishing():
    with pytest.raises(publish.PublishError, match="99999 is not a port"):
        publish.server(ROOT, 99999)
    httpd = publish.server(ROOT, 0)  # any free port: the one bound is announced
    try:
        port = httpd.server_address[1]
        assert port > 0
        with pytest.raises(publish.PublishError, match=f"127.0.0.1:{port}.*in use"):
            publish.server(ROOT, port)
    finally:
        httpd.server_close()


def test_an_interrupted_publish_leaves_no_temporary_files(store, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    left = set(ROOT.glob(".asv-publish-*"))
    monkeypatch.setattr(publish.subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publish.asv_publish(store, store.parent / "site", ["HEAD"])
    assert set(ROOT.glob(".asv-publish-*")) == left


def test_an_interrupted_run_keeps_what_it_stored_and_leaves_no_follower(store, tmp_path):
    # Ctrl-C as a terminal sends it: Python's handler in place (a shell starts background
    # jobs with SIGINT ignored, and Python then leaves it so)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    script = tmp_path / "interrupts.py"
    script.write_text(
        "import os, signal, time\ntime.sleep(0.5)\nos.kill(os.getppid(), signal.SIGINT)\n"
        "time.sleep(30)\n"
    )
    before = stored(store)
    try:
        assert guarded(store, [sys.executable, str(script)]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stored(store) == before
    assert not [t for t in threading.enumerate() if isinstance(t, asvrun.Follow)]


def test_scripts_run_refuses_an_unknown_backend_and_changes_nothing():
    # the one real run: refused before asv starts
    tracked = subprocess.run(
        ["git", "status", "--porcelain", "results", "html"], cwd=ROOT, capture_output=True
    ).stdout
    env = {**os.environ, common.BACKENDS_VAR: "tritn"}
    done = shell("run", "--no-publish", env=env, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "unknown backend(s) 'tritn'" in done.stderr
    after = subprocess.run(
        ["git", "status", "--porcelain", "results", "html"], cwd=ROOT, capture_output=True
    ).stdout
    assert after == tracked


def test_scripts_compare_runs_in_the_environment_it_set_up_and_judges_nothing_refused():
    # checked, set up (scripts/_env.sh), then run as python -m rmsnorm_bench.compare with the
    # machine's config: asvrun refuses before asv starts, and nothing is judged
    env = {**os.environ, common.BACKENDS_VAR: "tritn"}
    done = shell("compare", "HEAD~1", "HEAD", env=env, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "unknown backend(s) 'tritn'" in done.stderr
    assert "compare: failed (exit status 2; see above): nothing judged" in done.stderr
