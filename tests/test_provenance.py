"""Figures stored under a commit come from that commit's code: a working tree that differs
from HEAD in the instrument (or the package) is named and refused, or with --uncommitted
measured into a folder apart that neither the gate nor the dashboard reads."""

import json
import subprocess
from pathlib import Path

import pytest

from rmsnorm_bench import ROOT, asvargs, asvfiles, asvrun, compare, provenance

from .test_tracker import write_run

HEAD = subprocess.run(
    ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
).stdout.strip()
DIRTY = "rmsnorm_bench/instrument/contract.py"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def test_changed_files_names_what_differs_from_head_in_what_measures(tmp_path):
    repo = tmp_path / "repo"
    for path in ("rmsnorm_bench/instrument/contract.py", "rmsnorm_kernels/ops.py", "docs/x.md"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("a = 1\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    assert provenance.changed_files(repo) == []
    (repo / "docs/x.md").write_text("not measuring code\n")
    (repo / "rmsnorm_bench/instrument/__pycache__").mkdir()
    (repo / "rmsnorm_bench/instrument/__pycache__/contract.pyc").write_text("ignored")
    assert provenance.changed_files(repo) == []
    (repo / "rmsnorm_bench/instrument/contract.py").write_text("a = 100\n")  # edited
    (repo / "rmsnorm_bench/instrument/new.py").write_text("")  # untracked
    (repo / "rmsnorm_kernels/ops.py").write_text("b = 2\n")
    git(repo, "add", "rmsnorm_kernels/ops.py")  # staged
    assert provenance.changed_files(repo) == [
        "rmsnorm_bench/instrument/contract.py",
        "rmsnorm_bench/instrument/new.py",
        "rmsnorm_kernels/ops.py",
    ]
    only_instrument = provenance.changed_files(repo, provenance.MEASURING)
    assert only_instrument == ["rmsnorm_bench/instrument/contract.py", "rmsnorm_bench/instrument/new.py"]  # fmt: skip
    with pytest.raises(provenance.NotAGitCheckout):
        provenance.changed_files(tmp_path / "nowhere")


@pytest.fixture
def setting(tmp_path, monkeypatch):
    """asv's config in tmp_path (results there, the repository this checkout), a working tree
    whose instrument differs from HEAD, and asv replaced by a stand-in that stores HEAD's
    figures where the config it is given says."""
    for var in asvargs.OVERRIDES:
        monkeypatch.delenv(var, raising=False)
    conf = tmp_path / "asv.conf.json"
    settings = {**asvfiles.read_conf(ROOT / "asv.conf.json"), "repo": str(ROOT)}
    conf.write_text(json.dumps({**settings, "results_dir": "results", "html_dir": "html"}))
    monkeypatch.setattr(provenance, "changed_files", lambda root, paths=None: [DIRTY])
    monkeypatch.setattr(provenance, "UNCOMMITTED", tmp_path / ".asv" / "uncommitted")
    ran = []

    def asv(command, env, hold=()):
        used = Path(command[command.index("--config") + 1])
        ran.append(used)
        results = used.parent / asvfiles.read_conf(used)["results_dir"]
        write_run(results / "h200", HEAD, 1, {("1x256-bf16", "triton"): 100.0})
        (results / "benchmarks.json").write_text('{"version": 2}')
        return 0

    monkeypatch.setattr(asvrun, "run_asv", asv)
    return conf, ran


def test_a_dirty_instrument_is_refused_and_nothing_runs(setting, capsys):
    conf, ran = setting
    with pytest.raises(SystemExit) as refused:
        asvrun.main(["--conf", str(conf), "--machine", "h200", "--", "run", "HEAD^!"])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and DIRTY in err and "--uncommitted" in err
    assert ran == [] and not (conf.parent / "results").exists()


def test_a_dirty_instrument_is_never_stored_as_the_commits_figures(setting, capsys):
    # the issue's: a timer returning 100x in an uncommitted instrument was stored under HEAD
    conf, ran = setting
    argv = ["--conf", str(conf), "--machine", "h200", "--uncommitted", "--", "run", "HEAD^!"]
    assert asvrun.main(argv) == 0
    assert not (conf.parent / "results").exists()  # the gate's and dashboard's: untouched
    apart = provenance.UNCOMMITTED / "results" / "h200"
    assert [r["commit_hash"] for r in asvfiles.load_runs(apart)] == [HEAD]
    assert len(ran) == 1 and ran[0] != conf and not ran[0].exists()  # its config, removed after
    assert "never in results/" in capsys.readouterr().err


def test_asv_find_on_a_dirty_tree_is_named_not_refused(setting, monkeypatch, capsys):
    conf, ran = setting
    monkeypatch.setattr(asvrun, "run_asv", lambda command, env, hold=(): ran.append(command) or 0)
    bench = "bench_rmsnorm.RMSNormForward.track_time"
    argv = ["--conf", str(conf), "--machine", "h200", "--", "find", "HEAD~1..HEAD", bench]
    assert asvrun.main(argv) == 0
    assert "--skip-save" in ran[0] and DIRTY in capsys.readouterr().err


def test_compare_uncommitted_judges_the_figures_stored_apart(monkeypatch):
    calls = {}

    def tool(name, status):
        def main(argv):
            calls[name] = argv
            return status

        return type(name, (), {"main": staticmethod(main)})

    monkeypatch.setattr(compare, "asvrun", tool("asvrun", 0))
    monkeypatch.setattr(compare, "report", tool("report", 0))
    monkeypatch.setattr(compare, "regressions", tool("regressions", 0))
    run = ["--conf", "c.json", "--machine", "h200"]
    assert compare.main([*run, "--uncommitted", "HEAD~1", "HEAD"]) == 0
    apart = str(provenance.UNCOMMITTED / "results")
    assert "--uncommitted" in calls["asvrun"][: calls["asvrun"].index("--")]
    for name in ("report", "regressions"):
        assert calls[name][calls[name].index("--results") + 1] == apart, name
    with pytest.raises(SystemExit) as refused:
        compare.main([*run, "--uncommitted", "--find", "HEAD~1..HEAD", "x"])
    assert refused.value.code == 2


def test_the_benchmarks_version_covers_the_whole_instrument(tmp_path):
    from benchmarks import bench_rmsnorm as bench
    from rmsnorm_bench.instrument import fingerprint as fp

    # the instrument here is the one its method was declared for: a change of its code needs
    # a declaration in benchmarks/method.json (the same method, or a new one) in its commit
    assert fp.undeclared() is None, fp.undeclared()
    assert bench.METHOD == fp.declared()["method"]
    for suite in (bench.RMSNormForward, bench.FusedAddRMSNormBackward):
        # a figure with no version of its own has the suite's, as asv reads it
        tracks = [getattr(suite, n) for n in dir(suite) if n.startswith("track_")]
        versions = [getattr(t, "version", suite.version) for t in tracks]
        assert versions and all(v.startswith(bench.METHOD) for v in versions)
    covered = fp.files()
    assert ROOT / "rmsnorm_bench/instrument/contract.py" in covered
    assert ROOT / "benchmarks/bench_rmsnorm.py" in covered
    for path in [*covered, ROOT / "rmsnorm_bench/report.py"]:  # a copy of the checkout's
        (tmp_path / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path.relative_to(ROOT)).write_text(path.read_text())
    before = fp.fingerprint(tmp_path)
    assert before == fp.fingerprint()

    def edited(relative: str, text: str) -> str:
        path = tmp_path / relative
        kept = path.read_text() if path.exists() else None
        path.write_text((kept or "") + text)
        try:
            return fp.fingerprint(tmp_path)
        finally:
            path.unlink() if kept is None else path.write_text(kept)

    # a comment or a blank line is not the code; a tool that does not measure is not covered
    assert edited("rmsnorm_bench/instrument/contract.py", "\n# a note\n\n") == before
    assert edited("rmsnorm_bench/report.py", "\nX = 1\n") == before
    for relative in ("rmsnorm_bench/instrument/contract.py", "rmsnorm_bench/instrument/new.py",
                     "benchmarks/bench_rmsnorm.py", "rmsnorm_bench/__init__.py"):  # fmt: skip
        assert edited(relative, "\nSCALE = 100\n") != before, relative
    assert fp.fingerprint(tmp_path) == before
    # an undeclared instrument is named, with what to do
    declaration = tmp_path / "benchmarks" / "method.json"
    declaration.write_text(json.dumps({"method": "m-1", "instrument": before}))
    assert fp.undeclared(tmp_path) is None
    (tmp_path / "rmsnorm_bench/instrument/contract.py").write_text("SCALE = 100\n")
    problem = fp.undeclared(tmp_path)
    assert problem and "'m-1'" in problem and fp.fingerprint(tmp_path) in problem


def test_a_run_of_an_undeclared_instrument_is_refused(setting, monkeypatch, capsys):
    from rmsnorm_bench.instrument import fingerprint as fp

    conf, ran = setting
    monkeypatch.setattr(provenance, "changed_files", lambda root, paths=None: [])  # committed
    monkeypatch.setattr(fp, "fingerprint", lambda root=None: "0123456789ab")
    with pytest.raises(SystemExit) as refused:
        asvrun.main(["--conf", str(conf), "--machine", "h200", "--", "run", "HEAD^!"])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "0123456789ab" in err and "method.json" in err
    assert ran == [] and not (conf.parent / "results").exists()


def test_the_fingerprint_reads_the_same_text_on_every_python():
    """What the fingerprint reads of a file is its text less comments and whitespace, not
    the tokens: Python 3.12 splits an f-string into tokens of its own (PEP 701), and an H100's
    3.12 gave another fingerprint than 3.11 for one instrument. A '#' inside a string stays;
    a change of code (here inside an f-string's expression) does not."""
    from rmsnorm_bench.instrument import fingerprint as fp

    text = 'x = f"{a!r:>{w}} # kept"  # dropped\n\nif x:\n    y = (1 +\n         2)\n'
    assert fp.tokens(text) == 'x=f"{a!r:>{w}}#kept"ifx:y=(1+2)'
    assert fp.tokens(text.replace("{a!r", "{b!r")) != fp.tokens(text)
    assert fp.tokens("x = (\n") == "x = (\n"  # it does not tokenize: the raw text
