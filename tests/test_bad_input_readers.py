"""The tools that read results (report, regressions, merge, publish, dashboard, asvfiles)
under bad input: each refusal names the problem, exits with status 2 and no traceback, and
leaves what is recorded (results/, html/, tracked files) as it was."""

import functools
import json
import subprocess
import sys

import pytest

from rmsnorm_bench import ROOT, asvfiles, dashboard, merge, publish, regressions, report

from .test_tracker import write_run

A, B = "a" * 40, "b" * 40
CASE = {("1x256-bf16", "triton"): 1e-3, ("1x256-bf16", "torch"): 2e-3}


def stored(folder) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def store(tmp_path):
    """results/ holding two commits' figures on machine h200, and benchmarks.json."""
    results = tmp_path / "results"
    write_run(results / "h200", A, 1, CASE)
    write_run(results / "h200", B, 2, CASE)
    (results / "h200" / "machine.json").write_text('{"machine": "h200", "version": 1}')
    (results / "benchmarks.json").write_text('{"version": 2}')
    return results


def refused(capsys, tool, *argv) -> str:
    """Run a tool's main; it must exit with status 2. Returns what it wrote to stderr."""
    with pytest.raises(SystemExit) as done:
        tool.main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    return err


# results files that are not UTF-8


def test_a_results_file_that_is_not_utf8_is_named_with_status_2(store, tmp_path, capsys):
    bad = store / "h200" / f"{'c' * 8}-virtualenv-py3.11.json"
    bad.write_bytes(b"\xff\xfe")
    for tool in (report, regressions):
        err = refused(capsys, tool, "--results", store)
        assert f"{bad}: not UTF-8" in err
    source = tmp_path / "src" / "h200"
    source.mkdir(parents=True)
    (source / bad.name).write_bytes(b"\xff\xfe")
    into = tmp_path / "into"
    err = refused(capsys, merge, tmp_path / "src", "--into", into)
    assert f"{source / bad.name}: not UTF-8" in err and not into.exists()
    with pytest.raises(publish.PublishError, match=f"{bad}: not UTF-8"):
        publish.check_results(store)


# report --out: never into what is recorded, never onto a file; --html needs --out


@pytest.mark.parametrize(
    "out",
    ["html", "html/report", "html/sub/..", "results", "results/nvidia-h200", "{results}",
     "docs/runs", "docs/grid"],
)  # fmt: skip
def test_report_refuses_to_write_into_what_is_recorded(out, store, monkeypatch, capsys):
    # were it not refused, the report would be written: let that fail the test, writing nothing
    monkeypatch.setattr(report, "write", lambda *a, **k: pytest.fail("report.write called"))
    out = str(store) if out == "{results}" else str(ROOT / out)
    err = refused(capsys, report, "--results", store, "--out", out, "--html", "--no-plot")
    assert f"--out {out}: lies in " in err and "recorded" in err


def test_report_refuses_an_out_that_resolves_into_html(store, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report, "write", lambda *a, **k: pytest.fail("report.write called"))
    link = tmp_path / "link"
    link.symlink_to(ROOT / "html")
    err = refused(capsys, report, "--results", store, "--out", link, "--html")
    assert "the repository's html/" in err


def test_report_refuses_an_out_that_is_a_file(store, tmp_path, capsys):
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    err = refused(capsys, report, "--results", store, "--out", notes, "--no-plot")
    assert f"--out {notes}: exists and is not a folder" in err and "Traceback" not in err
    err = refused(capsys, report, "--results", store, "--out", notes / "sub", "--no-plot")
    assert f"cannot write into {notes / 'sub'}" in err
    assert notes.read_text() == "mine"


def test_report_never_writes_over_the_report_of_another_run(store, tmp_path, capsys):
    # before, report.md became the newest commit's while the pictures stayed another's
    out = tmp_path / "report-a"
    report.main(["--results", str(store), "--commit", A[:8], "--out", str(out), "--no-plot"])
    before = (out / "report.md").read_text()
    err = refused(capsys, report, "--results", store, "--out", out, "--no-plot")
    assert f"holds the report of h200 (?), commit {A[:8]}" in err and f"commit {B[:8]}" in err
    assert (out / "report.md").read_text() == before
    report.main(["--results", str(store), "--commit", A[:8], "--out", str(out), "--no-plot"])


def test_report_of_a_commit_with_no_figure_is_refused(store, capsys):
    # before: empty tables, exit 0, where the gate said "nothing checked" (exit 2)
    path = store / "h200" / f"{B[:8]}-virtualenv-py3.11.json"
    run = json.loads(path.read_text())
    run["results"] = {}
    path.write_text(json.dumps(run))
    err = refused(capsys, report, "--results", store)
    assert f"h200's commit {B[:8]} has no figure measured" in err


def test_report_html_needs_out(store, capsys):
    err = refused(capsys, report, "--results", store, "--html")
    assert "--html" in err and "--out" in err
    # --no-plot alone asks for what happens anyway (no --out, no plots): scripts/compare
    # passes it so
    report.main(["--results", str(store), "--no-plot"])
    assert f"commit {B[:8]}" in capsys.readouterr().out


# results of a commit this clone lacks are read, with a warning (publish refuses them)


def test_report_and_gate_warn_of_a_commit_this_clone_lacks(store, capsys):
    report.main(["--results", str(store), "--no-plot"])
    assert f"report: warning: commit {B[:10]} is not in this clone" in capsys.readouterr().err
    regressions.main(["--results", str(store), "--public-time"])
    err = capsys.readouterr().err
    assert f"commit {A[:10]} is not in this clone" in err and f"commit {B[:10]}" in err
    from rmsnorm_bench import asvfiles

    assert asvfiles.clone_lacks(asvfiles.resolve("HEAD")) is None  # one it has: no warning


# regressions --base/--head: one commit each, as report --commit resolves it


def test_regressions_refuse_an_ambiguous_or_unknown_commit(store, capsys):
    other = "a" + "c" * 39  # "a" names both it and A
    write_run(store / "h200", other, 3, CASE)
    err = refused(capsys, regressions, "--results", store, "--base", "a", "--head", B[:8])
    assert "--base a matches 2 commits" in err and A[:10] in err and other[:10] in err
    for rev in ("0000000", "no-such-commit"):
        err = refused(capsys, regressions, "--results", store, "--base", A[:8], "--head", rev)
        assert f"--head {rev}: no results for commit" in err
    # one commit as both: it could never be found slower than itself
    err = refused(capsys, regressions, "--results", store, "--base", B[:8], "--head", B)
    assert f"name one commit, {B[:10]}" in err
    # a blank commit is refused, not read as the option left out (the newest commits)
    for tool, argv in ((regressions, ["--base", "", "--head", B]), (report, ["--commit", " "])):
        err = refused(capsys, tool, "--results", store, *argv)
        assert "expected a commit hash or its prefix, got nothing" in err
    # an unambiguous prefix is compared as before
    argv = ["--results", str(store), "--public-time", "--base", "aa", "--head", "b"]
    assert regressions.main(argv) == 0
    assert f"h200: {B[:8]} vs {A[:8]}" in capsys.readouterr().out


# dashboard HTML_DIR: a published dashboard, or a named refusal


def test_dashboard_refuses_what_is_no_dashboard(tmp_path, capsys):
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    empty = tmp_path / "empty"
    empty.mkdir()
    garbled = tmp_path / "garbled"
    garbled.mkdir()
    (garbled / "index.json").write_bytes(b"\xff\xfe")
    other = tmp_path / "other"
    other.mkdir()
    (other / "index.json").write_text("[]")
    expected = {
        tmp_path / "nonexistent": "does not exist",
        notes: "is not a folder",
        empty: f"{empty / 'index.json'}: cannot be read",
        garbled: f"{garbled / 'index.json'}: not UTF-8",
        other: "not the index of asv's dashboard",
    }
    for html_dir, problem in expected.items():
        err = refused(capsys, dashboard, html_dir)
        assert problem in err and "Traceback" not in err


def test_dashboard_gpu_history_is_n_or_machine_equals_n(tmp_path, capsys):
    """--gpu-history N wants N commits of every GPU machine, MACHINE=N of one (the history of
    one GPU is longer than another's); anything else is refused before a browser runs."""
    assert dashboard.history_wanted([]) == {}
    assert dashboard.history_wanted(["22"]) == {None: 22}
    wanted = dashboard.history_wanted(["nvidia-h200=22", "nvidia-h100-80gb-hbm3=3", "1"])
    assert wanted == {"nvidia-h200": 22, "nvidia-h100-80gb-hbm3": 3, None: 1}
    for bad in ("x", "=3", "h200=", "h200=-1", "h200=2.5"):
        err = refused(capsys, dashboard, tmp_path, "--gpu-history", bad)
        assert f"--gpu-history: {bad!r} is neither N nor MACHINE=N" in err, bad
    err = refused(capsys, dashboard, tmp_path, "--gpu-history", "a=1", "--gpu-history", "a=2")
    assert "a given twice" in err and "Traceback" not in err


# asvfiles conf-copy OUT KEY=VALUE...: at least one pair, into a folder that exists


def test_conf_copy_refuses_a_missing_folder_and_no_changes(tmp_path, capsys):
    out = tmp_path / "missing" / "conf.json"
    err = refused(capsys, asvfiles, "conf-copy", out, "env_dir=x")
    assert f"the folder {out.parent} of {out} does not exist" in err and "Traceback" not in err
    err = refused(capsys, asvfiles, "conf-copy", tmp_path / "conf.json")
    assert "KEY=VALUE" in err and not (tmp_path / "conf.json").exists()
    err = refused(capsys, asvfiles, "conf-copy", tmp_path, "env_dir=x")
    assert "is a folder" in err


def test_conf_copy_refuses_to_overwrite_a_tracked_file(monkeypatch, capsys):
    # were it not refused, the copy would be written: let that fail the test, writing nothing
    monkeypatch.setattr(asvfiles, "write_conf", lambda *a: pytest.fail("write_conf called"))
    for name in ("asv.conf.json", "README.md"):
        err = refused(capsys, asvfiles, "conf-copy", ROOT / name, "env_dir=x")
        assert "is a file of the repository" in err


# publish: machine files checked before asv publish reads them; html/ left as it was


def dashboard_copy(folder):
    """A dashboard already published (what publish may replace)."""
    folder.mkdir()
    (folder / "index.json").write_text("{}")
    (folder / "index.html").write_text("the old dashboard")
    return folder


@pytest.mark.parametrize(
    "content,problem",
    [
        (b"", "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[]", "not a JSON object"),
        (b'{"version": 1}', "no 'machine' name"),
        (b'{"machine": "other", "version": 1}', "names machine 'other', kept in 'h200'/"),
    ],
)
def test_publish_names_a_bad_machine_file(content, problem, store, tmp_path, monkeypatch, capsys):
    machine_file = store / "h200" / "machine.json"
    machine_file.write_bytes(content)
    with pytest.raises(publish.PublishError, match=f"{machine_file}: .*{problem}"):
        publish.check_results(store)
    # the command: refused before asv publish runs, the dashboard as it was
    html = dashboard_copy(tmp_path / "html")
    before = stored(html)
    monkeypatch.setattr(publish, "publish", functools.partial(publish.publish, results=store))
    monkeypatch.setattr(publish.signal, "signal", lambda *a: None)
    monkeypatch.setattr(publish, "asv_publish", lambda *a: pytest.fail("asv publish ran"))
    err = refused(capsys, publish, "--html-dir", html, "--branch", "HEAD")
    assert f"publish: {machine_file}: " in err and problem in err
    assert stored(html) == before


def test_publish_refuses_a_results_file_that_is_not_utf8(store, tmp_path, monkeypatch, capsys):
    bad = store / "h200" / f"{'c' * 8}-virtualenv-py3.11.json"
    bad.write_bytes(b"\xff\xfe")
    html = dashboard_copy(tmp_path / "html")
    before = stored(html)
    monkeypatch.setattr(publish, "publish", functools.partial(publish.publish, results=store))
    monkeypatch.setattr(publish.signal, "signal", lambda *a: None)
    err = refused(capsys, publish, "--html-dir", html, "--branch", "HEAD")
    assert f"publish: {bad}: not UTF-8" in err and stored(html) == before


def test_merge_refuses_a_source_with_nothing_to_merge(store, tmp_path, capsys):
    # a clone's root, or an empty folder, in place of its results/: "0 file(s) copied", exit 0
    (tmp_path / "clone" / "docs").mkdir(parents=True)
    err = refused(capsys, merge, tmp_path / "clone", "--into", tmp_path / "into")
    assert "no machine folder of results under" in err and not (tmp_path / "into").exists()


def test_merge_refuses_a_machine_file_without_its_name(store, tmp_path, capsys):
    source = tmp_path / "src" / "h200"
    source.mkdir(parents=True)
    (source / "machine.json").write_text("{}")
    before = stored(store)
    err = refused(capsys, merge, tmp_path / "src", "--into", tmp_path / "into")
    assert f"{source / 'machine.json'}: not a usable asv machine file: no 'machine'" in err
    assert stored(store) == before and not (tmp_path / "into").exists()


# merge --into: every destination checked before anything is copied


def test_merge_refuses_a_destination_it_cannot_copy_into(store, tmp_path, capsys):
    source = tmp_path / "src"
    write_run(source / "h200", "c" * 40, 3, CASE)
    write_run(source / "mi355x", "d" * 40, 4, CASE)
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    expected = {
        notes: f"--into {notes}: exists and is not a folder",
        notes / "sub": f"--into {notes / 'sub'}: {notes} is not a folder",
        "/proc/nope": "nothing copied: writing into /proc failed",
    }
    for into, problem in expected.items():
        err = refused(capsys, merge, source, "--into", into)
        assert problem in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert notes.read_text() == "mine"
    # a file where a machine folder goes: refused before the other machine's files are copied
    into = tmp_path / "into"
    (into / "h200").mkdir(parents=True)
    (into / "mi355x").write_text("mine")
    err = refused(capsys, merge, source, "--into", into)
    assert f"{into / 'mi355x'}: a file where a machine folder goes" in err and "nothing" in err
    assert stored(into) == {into / "mi355x": b"mine"}


def test_merge_names_a_directory_in_the_way_of_a_results_file(store, tmp_path, capsys):
    source = tmp_path / "src"
    path = write_run(source / "h200", "c" * 40, 3, CASE)
    (store / "h200" / path.name).mkdir()
    before = stored(store)
    err = refused(capsys, merge, source, "--into", store)
    assert f"{store / 'h200' / path.name}: a directory where a results file goes" in err
    assert "other content" not in err and stored(store) == before


# publish --html-dir: never into the results, which every tool reads folder by folder


@pytest.mark.parametrize("html_dir", ["results/html", "results", "results/h200/.."])
def test_publish_refuses_an_html_dir_in_the_results(html_dir, monkeypatch, capsys):
    monkeypatch.setattr(publish, "publish", lambda *a, **k: pytest.fail("publish ran"))
    monkeypatch.setattr(publish.signal, "signal", lambda *a: None)
    err = refused(capsys, publish, "--html-dir", ROOT / html_dir)
    assert f"--html-dir {ROOT / html_dir}: lies in the repository's results/" in err
    assert err.count("\n") == 1 and not (ROOT / "results" / "html").exists()


def test_publish_checks_an_html_dir_as_report_checks_its_out(store, tmp_path):
    assert "lies in the results read" in publish.html_dir_problem(store / "html", store)
    assert publish.html_dir_problem(tmp_path / "site", store) is None
    assert publish.html_dir_problem(ROOT / "html", store) is None  # the dashboard's own


# dashboard --screenshots: a folder, checked before the browser runs


def test_dashboard_refuses_screenshots_onto_a_file_first(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dashboard, "read_index", lambda *a: pytest.fail("the check ran"))
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    for folder, problem in [
        (notes, f"--screenshots {notes}: exists and is not a folder"),
        (notes / "pictures", f"--screenshots {notes / 'pictures'}: {notes} is not a folder"),
    ]:
        err = refused(capsys, dashboard, tmp_path, "--commit", "X", "--screenshots", folder)
        assert problem in err and "Traceback" not in err
    assert notes.read_text() == "mine"


# library modules, no tools: run as one, each says so and names the tool (headline printed
# nothing and exited 0)
LIBRARIES = [("pages", "rmsnorm_bench.publish"), ("headline", "rmsnorm_bench.report --headline"),
             ("gridfile", "rmsnorm_bench.grid"), ("gridview", "rmsnorm_bench.grid")]  # fmt: skip


@pytest.mark.parametrize("module, tool", LIBRARIES)
@pytest.mark.parametrize("argv", [[], ["--help"]])
def test_a_library_run_as_a_tool_says_so(module, tool, argv):
    cmd = [sys.executable, "-m", f"rmsnorm_bench.{module}", *argv]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "library module" in done.stderr
    assert tool in done.stderr and "Traceback" not in done.stderr
