"""scripts/run and scripts/compare under bad commits, names and signals: refused before asv
starts (exit status 2, the problem named), and nothing of a stopped run left running."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from rmsnorm_bench import ROOT, asvargs, asvrun, compare, machine, selftest, store

from .test_tracker import write_run


def check(*asv_args):
    asvargs.check_asv_args(list(asv_args), ROOT)


@pytest.mark.parametrize(
    "args, message",
    [
        (("run", "deadbeef^!"), "'deadbeef^!' is not a commit or range here"),
        (("run", "nosuch..HEAD"), "is not a commit or range here"),
        (("run", "HEAD..HEAD~1"), "'HEAD..HEAD~1' selects no commit"),
        (("run", "HASHFILE:/nonexistent/hashes.txt"), "no such file"),
        (("run", "-b", "[", "HEAD^!"), "'[' is not a regular expression"),
        (("find", "deadbeef..HEAD", "bench_rmsnorm.RMSNormForward.track_time"), "deadbeef"),
        (("find", "HEAD~1..HEAD", "("), "'(' is not a regular expression"),
        (("continuous", "HEAD", "nosuchbranch"), "'nosuchbranch' is not a commit"),
        (("run", "--no-such-option"), "asv refuses"),
        (("continuous", "HEAD", "HEAD^{commit}"), "name one commit"),
        # one revision alone is that commit and all before it, as git rev-list reads it
        (("run", "HEAD~1"), "range 'HEAD~1' is every commit up to HEAD~1 ("),
        (("run", "HEAD~2"), "give HEAD~2^! for that commit alone, or A..HEAD~2"),
    ],
)
def test_asv_arguments_are_checked_before_asv_runs(args, message):
    with pytest.raises(ValueError, match=message.replace("^", r"\^").replace("[", r"\[")
                       .replace("(", r"\(")):  # fmt: skip
        check(*args)


def test_good_ranges_pass():
    for args in (
        ("run", "HEAD^!"),
        ("run", "NEW"),
        ("run", "TAGS"),
        ("run", "HEAD~1..HEAD"),
        ("run", "^HEAD~2 HEAD"),  # several words, split as asv splits them for git
        ("run", "HEAD --max-count=2"),
        ("run", "HASHFILE:-"),  # the hashes on standard input
        ("run", "-b", "Forward", "-b", "Backward", "HEAD^!"),
        ("continuous", "-b", "Forward", "HEAD~1", "HEAD"),
        ("find", "--invert", "HEAD~1..HEAD", "bench_rmsnorm.RMSNormForward.track_time"),
        ("run",),
    ):
        check(*args)


def test_asv_help_is_passed_through_not_refused():
    with pytest.raises(SystemExit) as stopped:
        check("run", "--help")
    assert not stopped.value.code


def test_a_hash_file_that_exists_passes(tmp_path):
    hashes = tmp_path / "hashes.txt"
    hashes.write_text(subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=ROOT, text=True))
    check("run", f"HASHFILE:{hashes}")


@pytest.mark.parametrize("name", [".", "..", "-x", "a/b", ".hidden", "", "h200\n"])
def test_machine_names_that_are_no_plain_folder_name_are_refused(name, capsys):
    assert not machine.NAME.fullmatch(name)
    with pytest.raises(SystemExit) as stopped:
        asvrun.main([f"--machine={name}", "--", "run", "HEAD^!"])
    assert stopped.value.code == 2
    assert "a machine name starts with a letter or digit" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["../x", "..", "a/b", ".hidden"])
def test_the_self_test_refuses_a_machine_name_as_compare_does(name, monkeypatch, capsys):
    # the issue's: ../x reached the config's copy, .asv-selftest-../x.json, as a raw OSError
    monkeypatch.setattr(selftest, "run", lambda *a: pytest.fail("the self-test ran"))
    with pytest.raises(SystemExit) as stopped:
        selftest.main(["--machine", name])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and machine.NAME_RULE in err and "Errno" not in err


def test_machine_tool_refuses_dot_dot(capsys):
    with pytest.raises(SystemExit) as stopped:
        machine.main(["--machine", ".."])
    assert stopped.value.code == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "give BASE and optionally HEAD"),
        (["HEAD~2", "HEAD~1", "HEAD"], "give BASE and optionally HEAD"),
        (["no-such-commit"], "'no-such-commit' is not a commit here"),
        (["HEAD", "deadbeef"], "'deadbeef' is not a commit here"),
        (["--factor", "0.9", "HEAD"], "--factor: takes a number >= 1"),
        (["--factor", "nan", "HEAD"], "--factor: takes a number >= 1"),
        (["--factor", "x", "HEAD"], "--factor: takes a number >= 1"),
        (["--machine", "..", "HEAD"], machine.NAME_RULE),
        (["--gpu", "x", "HEAD"], "--gpu takes a GPU index, got 'x'"),
        (["--conf", "asv.conf.json", "HEAD"], "--conf is scripts/compare's to give"),
        (["--bogus", "HEAD"], "unrecognized arguments: --bogus"),
        (["--self", "HEAD"], "unrecognized arguments: --self"),  # no abbreviations
        (["HEAD", "--self-test"], "--self-test takes no BASE/HEAD (got HEAD)"),
        (["--public-time", "--self-test"], "--public-time does not go with --self-test"),
        (["--no-wait", "--self-test"], "--no-wait does not go with --self-test"),
        (["--find", "HEAD~1..HEAD", "B", "HEAD"], "--find takes no BASE/HEAD (got HEAD)"),
        (["--find", "HEAD~1", "B"], "--find needs A..B and a benchmark"),
        (["--find", "HEAD~1..HEAD"], "--find: expected 2 arguments"),
        (["--cpu-affinity", "0", "--find", "A..B", "B"], "asv find takes no --cpu-affinity"),
        (["--factor", "1.1", "--find", "A..B", "B"], "--factor does not go with --find"),
        (["--public-time", "--find", "A..B", "B"], "--public-time does not go with --find"),
        (["--find", "A..B", "B", "--self-test"], "--self-test and --find do not go together"),
        # before, asv built environments first, then exited 1 (read as a regression)
        (["--find", "A..B", "nosuchbench"], "'nosuchbench' selects no benchmark"),
        (["--find", "A..B", "RMSNorm"], "'RMSNorm' selects 24 benchmarks"),
        (["--find", "A..B", "("], "'(' is not a regular expression"),
        # asv matches a parametrized benchmark by name(parameters): a bare name$ selects none
        (["--find", "A..B", r"\.RMSNormForward\.track_time$"], "selects no benchmark"),
    ],
)
def test_compare_refuses_what_makes_no_comparison(argv, message, monkeypatch, capsys):
    # refused before anything is set up or run: scripts/compare checks with --check first
    monkeypatch.setattr(compare, "status_of", lambda *a: pytest.fail("a tool ran"))
    monkeypatch.setattr(compare.os, "execv", lambda *a: pytest.fail("the self-test ran"))
    with pytest.raises(SystemExit) as refused:
        compare.main(["--check", *argv])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and message in err, err


def test_compare_runs_only_in_the_environment_scripts_compare_sets_up(capsys):
    with pytest.raises(SystemExit) as refused:
        compare.main(["HEAD~1", "HEAD"])
    assert refused.value.code == 2 and "run it as bash scripts/compare" in capsys.readouterr().err


def test_compare_check_prints_what_scripts_env_sh_reads(capsys):
    assert (
        compare.main(["--check", "--machine", "h200", "--gpu", "1", "HEAD~1", "--", "-b", "x"]) == 0
    )
    assert capsys.readouterr().out == "machine=h200\ngpu=1\n"
    assert compare.main(["--check", "--self-test", "--pairs", "2"]) == 0
    assert capsys.readouterr().out == "machine=''\ngpu=''\n"


def gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rpartition(")")[2].split()[0] == "Z":  # ended, not yet reaped
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads Linux's /proc")
def test_nothing_asv_started_outlives_the_run(tmp_path):
    """asv's benchmark server runs in a process group of its own; once asv has ended, the run
    ends it too (before, a stopped run left it running)."""
    pid_file = tmp_path / "server.pid"
    script = textwrap.dedent(f"""
        import os, subprocess, sys
        server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                  process_group=0)
        open({str(pid_file)!r}, "w").write(str(server.pid))
    """)
    assert asvrun.run_asv([sys.executable, "-c", script], dict(os.environ)) == 0
    assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_asv_ends_with_a_killed_run_and_holds_its_locks_until_then(tmp_path):
    """A run killed by SIGKILL (no handler runs) released its locks while asv ran on alone,
    and a second run's stored figures were later overwritten by it. asv now ends with the
    run, and holds the run's locks itself while it lives."""
    asv_pid = tmp_path / "asv.pid"
    # the run: locks taken, then "asv", which takes a second to end on SIGTERM (as a process
    # busy saving would), and records its pid
    run = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from rmsnorm_bench import asvrun
        asv = ("import os, signal, time; signal.signal(signal.SIGTERM, lambda *a: "
               "(time.sleep(1.5), os._exit(143)));"
               "open({str(asv_pid)!r}, 'w').write(str(os.getpid())); time.sleep(60)")
        with asvrun.Locks(Path({str(tmp_path)!r}), ["lock-env"]) as locks:
            asvrun.run_asv([sys.executable, "-c", asv], {{}}, hold=locks.fds())
    """)
    parent = subprocess.Popen([sys.executable, "-c", run], cwd=ROOT)
    deadline = time.monotonic() + 30
    while not asv_pid.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    parent.kill()
    parent.wait()
    with pytest.raises(asvrun.Busy):  # asv lives: the locks are still held
        with asvrun.Locks(tmp_path, ["lock-env"], wait=False):
            pass
    assert gone(int(asv_pid.read_text()))  # ended with the run
    with asvrun.Locks(tmp_path, ["lock-env"], wait=False):  # and the locks with it
        pass


def test_a_signal_that_ends_asv_gives_128_plus_its_number():
    script = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    assert asvrun.run_asv([sys.executable, "-c", script], dict(os.environ)) == 137


def forward_signals_script(child: str) -> str:
    env_sh = (ROOT / "scripts" / "_env.sh").read_text()
    function = env_sh[env_sh.index("forward_signals() {") :]
    function = function[: function.index("\n}\n") + 3]
    return f"set -euo pipefail\n{function}\nforward_signals {sys.executable} -c '{child}'\n"


CHILD = """
import signal, sys, time
def stop(signum, frame):
    print("got", signal.Signals(signum).name, flush=True)
    sys.exit(7)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)  # a background job starts with SIGINT ignored
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize(
    "signum, to_group",
    [(signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGTERM to the script", "Ctrl-C to the process group"],
)
def test_a_signal_to_the_script_reaches_its_child(signum, to_group):
    """scripts/run's forward_signals: bash waits for a foreground child before it runs a
    trap, so without it a SIGTERM ended the script and left the run going on alone. The
    child's own exit status comes back (7 here)."""
    bash = subprocess.Popen(
        ["bash", "-c", forward_signals_script(CHILD)],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert bash.stdout.readline().strip() == "ready"
    if to_group:
        os.killpg(bash.pid, signum)
    else:
        bash.send_signal(signum)
    assert bash.wait(timeout=20) == 7
    assert bash.stdout.read().strip() == f"got {signum.name}"


def test_forward_signals_passes_status_and_standard_input_on():
    script = forward_signals_script("import sys; sys.exit(len(sys.stdin.read()))")
    done = subprocess.run(["bash", "-c", script], input="12345", text=True, timeout=60)
    assert done.returncode == 5


# a machine's name: at most NAME_MAX characters, and bound to the facts its results record

H200 = {"gpu": "NVIDIA H200", "gpu_count": "1", "cuda": "13.0", "driver": "580.159.04"}
H200 = {**H200, "torch": "2.11.0+cu130", "triton": "3.6.0", "cpu": "Xeon", "num_cpu": "16"}
CPU = {"gpu": "none", "gpu_count": "0", "torch": "2.13.0+cpu", "triton": "3.6.0", "cpu": "EPYC"}


def recorded(results, name, facts):
    """results/NAME/machine.json as asv writes it: the facts, the name, asv's version."""
    (results / name).mkdir(parents=True, exist_ok=True)
    path = results / name / "machine.json"
    path.write_text(json.dumps({**facts, "machine": name, "version": 1}))
    return path


def register(monkeypatch, tmp_path, host: dict, *argv) -> int:
    """machine --register on a host of the facts `host`, HOME and results/ in tmp_path."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(machine, "facts", lambda: dict(host))
    try:
        return machine.main(["--register", "--results", str(tmp_path / "results"), *argv])
    except SystemExit as stopped:
        return stopped.code


def test_a_machine_name_is_bound_to_the_facts_of_its_results(monkeypatch, tmp_path, capsys):
    results = tmp_path / "results"
    recorded(results, "nvidia-h200", H200)
    asv_file = tmp_path / ".asv-machine.json"
    # the issue's: a host without a GPU, run as nvidia-h200
    assert register(monkeypatch, tmp_path, CPU, "--machine", "nvidia-h200") == 2
    err = capsys.readouterr().err
    for difference in (
        "gpu 'NVIDIA H200' there, 'none' here",
        "gpu_count '1' there, '0' here",
        "driver '580.159.04' there, '(none)' here",
        "torch '2.11.0+cu130' there, '2.13.0+cpu' here",
    ):
        assert difference in err
    assert "--machine NAME" in err and "--force" in err and "cpu 'Xeon'" not in err
    assert not asv_file.exists()  # nothing written
    # the same machine with another CPU count or Triton: the same name (they bind nothing)
    same = {**H200, "num_cpu": "8", "triton": "3.9.0"}
    assert register(monkeypatch, tmp_path, same, "--machine", "nvidia-h200") == 0
    # a new driver: refused, then re-registered with --force, and only then
    newer = {**H200, "driver": "590.1"}
    assert register(monkeypatch, tmp_path, newer, "--machine", "nvidia-h200") == 2
    assert "driver '580.159.04' there, '590.1' here" in capsys.readouterr().err
    assert json.loads(asv_file.read_text())["nvidia-h200"]["driver"] == "580.159.04"
    assert register(monkeypatch, tmp_path, newer, "--machine", "nvidia-h200", "--force") == 0
    assert json.loads(asv_file.read_text())["nvidia-h200"]["driver"] == "590.1"
    # a new name, and a name with no machine.json yet, are free
    assert register(monkeypatch, tmp_path, CPU, "--machine", "laptop") == 0


def test_a_machine_file_that_records_too_little_or_is_unreadable_binds_by_name(
    monkeypatch, tmp_path, capsys
):
    results = tmp_path / "results"
    path = recorded(results, "cpu-smoke", {})  # a machine.json missing its facts
    assert register(monkeypatch, tmp_path, CPU) == 2  # cpu-smoke: this host's default name
    assert "gpu '(not recorded)' there, 'none' here" in capsys.readouterr().err
    path.write_text('{"machine": "cpu-smo')
    assert register(monkeypatch, tmp_path, CPU) == 2
    err = capsys.readouterr().err
    assert f"{path}: not valid JSON" in err and "Traceback" not in err
    assert not (tmp_path / ".asv-machine.json").exists()
    with pytest.raises(SystemExit) as stopped:
        machine.main(["--force"])
    assert stopped.value.code == 2 and "--force goes with --register" in capsys.readouterr().err


def test_a_gpu_index_that_names_no_gpu_is_refused(monkeypatch, tmp_path, capsys):
    # CUDA_VISIBLE_DEVICES=7 on a host of one GPU leaves none: the run would have taken the
    # CPU smoke mode as "cpu-smoke"
    assert register(monkeypatch, tmp_path, CPU, "--gpu", "7") == 2
    assert "--gpu 7: no GPU of that index" in capsys.readouterr().err
    assert not (tmp_path / ".asv-machine.json").exists()


def test_a_machine_name_too_long_for_a_file_name_is_refused_first(monkeypatch, tmp_path, capsys):
    # the issue's: 300 characters ended in a raw OSError after the name was written to
    # ~/.asv-machine.json
    assert machine.NAME.fullmatch("a" * machine.NAME_MAX)
    name = "a" * 300
    assert register(monkeypatch, tmp_path, CPU, "--machine", name) == 2
    err = capsys.readouterr().err
    assert "(300 characters)" in err and f"at most {machine.NAME_MAX} characters" in err
    assert not (tmp_path / ".asv-machine.json").exists()
    with pytest.raises(SystemExit) as stopped:
        asvrun.main(["--machine", name, "--", "run", "HEAD^!"])
    assert stopped.value.code == 2 and "(300 characters)" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host could be the committed H200")
def test_scripts_run_refuses_a_machine_name_of_other_facts_and_force_re_registers(tmp_path):
    # scripts/run on this host (no H200) as nvidia-h200: refused before anything is written;
    # with --force, registered (in a scratch HOME). An unknown backend stops both runs before
    # asv starts, should the machine check let one through.
    extensions = os.environ.get(
        "TORCH_EXTENSIONS_DIR", str(Path.home() / ".cache/torch_extensions")
    )
    env = {**os.environ, "HOME": str(tmp_path), "TORCH_EXTENSIONS_DIR": extensions}
    env["RMSNORM_BENCH_BACKENDS"] = "tritn"
    status = ["git", "status", "--porcelain", "results", "html"]
    tracked = subprocess.run(status, cwd=ROOT, capture_output=True).stdout
    run = ["bash", "scripts/run", "--machine", "nvidia-h200", "--no-publish"]
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "the name 'nvidia-h200' stands for another machine's results" in done.stderr
    assert "unknown backend" not in done.stderr and not (tmp_path / ".asv-machine.json").exists()
    forced = subprocess.run([*run, "--force"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=600)  # fmt: skip
    assert forced.returncode == 2 and "unknown backend(s) 'tritn'" in forced.stderr
    assert json.loads((tmp_path / ".asv-machine.json").read_text())["nvidia-h200"]["gpu"] == "none"
    assert subprocess.run(status, cwd=ROOT, capture_output=True).stdout == tracked


# store RESULTS MACHINE: a killed run's copy is settled into the results it was kept of only


def kept_run(tmp_path):
    """results/ of machine h200 and the copy a run kept of it (STATE/kept-h200)."""
    results, state = tmp_path / "results", tmp_path / "state"
    write_run(results / "h200", "a" * 40, 1, {("1x256-bf16", "triton"): 1e-3})
    (results / "benchmarks.json").write_text('{"version": 2}')
    store.keep(results, "h200", state / "kept-h200")
    return results, state


def files(folder: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_store_refuses_a_results_folder_the_copy_was_not_kept_of(tmp_path, capsys):
    results, state = kept_run(tmp_path)
    copy = files(state)
    (tmp_path / "notes.md").write_text("mine")
    (tmp_path / "docs").mkdir()
    for where, problem in [
        ("typo", "does not exist"),
        ("notes.md", "is not a folder"),
        ("docs", "holds no h200/ and no benchmarks.json"),
    ]:
        with pytest.raises(SystemExit) as stopped:
            store.main([str(tmp_path / where), "h200", "--state", str(state)])
        err = capsys.readouterr().err
        assert stopped.value.code == 2 and problem in err and err.count("\n") == 1, err
        assert files(state) == copy  # the copy stays, to be settled into the real results
    assert not (tmp_path / "typo").exists() and list((tmp_path / "docs").iterdir()) == []
    assert store.main([str(results), "h200", "--state", str(state)]) == 0
    assert not (state / "kept-h200").exists()


def test_store_names_a_corrupt_file_of_the_copy_and_changes_nothing(tmp_path, capsys):
    results, state = kept_run(tmp_path)
    kept = state / "kept-h200" / "machine" / f"{'a' * 8}-virtualenv-py3.11.json"
    kept.write_text("{")
    write_run(results / "h200", "a" * 40, 1, {("1x256-bf16", "triton"): 2e-3})  # re-measured
    before, copy = files(results), files(state)
    with pytest.raises(SystemExit) as stopped:
        store.main([str(results), "h200", "--state", str(state)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and f"store: {kept}: not valid JSON" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert files(results) == before and files(state) == copy


def test_a_path_given_to_a_script_is_read_from_the_folder_it_was_called_in(monkeypatch, tmp_path):
    # scripts/ go to the repository root first: `--html-dir out` typed in docs/ wrote ./out
    # there, and `--html-dir html` from any folder would have replaced the dashboard
    from rmsnorm_bench import CALLER_DIR_VAR, user_path

    monkeypatch.setenv(CALLER_DIR_VAR, str(tmp_path))
    assert user_path("out/x") == tmp_path / "out" / "x"
    assert user_path("/abs/x") == Path("/abs/x")
    for script in ("run", "publish", "compare"):
        text = (ROOT / "scripts" / script).read_text()
        assert text.index(f"export {CALLER_DIR_VAR}=") < text.index('cd "$(dirname "$0")/.."')
    monkeypatch.delenv(CALLER_DIR_VAR)
    assert user_path("out") == Path("out")  # a tool run directly: its own folder
