"""The tracker under faults of the disk and of other processes: a full disk, a read-only
folder, a lock held, a kept copy that is not whole, files put in by another process during a
run, configs asv accepts. Nothing stored or tracked is changed or lost, and each refusal
names the cause (exit status 2).

A full disk is simulated by a fault injected into the one writer every tool writes through
(rmsnorm_bench.atomic): it writes a part of the file, then fails with ENOSPC, as a write onto
a full disk does; a test that also uses a real small file system says so in its skip reason
where it cannot make one."""

import errno
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from rmsnorm_bench import ROOT, asvfiles, asvrun, atomic, compare, locks, machine, merge, publish
from rmsnorm_bench import store as keeper

from .test_reliability import (
    BENCH,
    NAN,
    A,
    B,
    fake_asv,
    file_of,
    guarded,
    make_store,
    run_file,
    stored,
)
from .test_tracker import fake_site, write_run


@pytest.fixture
def store(tmp_path, monkeypatch):
    """results/ holding one commit's figures on machine h200, and benchmarks.json."""
    return make_store(tmp_path, monkeypatch)


def full_disk(monkeypatch, after: int = 0, at: str = ""):
    """Every write through rmsnorm_bench.atomic (from the `after`+1-th on, of a file whose
    name holds `at`) writes half its bytes, then fails as a full disk does."""
    real = atomic._write_chunks
    count = [0]

    def failing(fd, data):
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else ""
        if at and at not in name:
            return real(fd, data)
        count[0] += 1
        if count[0] <= after:
            return real(fd, data)
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic, "_write_chunks", failing)


# the writer: whole or not at all


def test_a_failed_write_leaves_the_file_as_it_was_and_names_the_cause(tmp_path, monkeypatch):
    target = tmp_path / "benchmarks.json"
    target.write_text('{"old": 1}')
    full_disk(monkeypatch)
    with pytest.raises(atomic.WriteFailed, match=r"benchmarks.json failed: the disk is full"):
        atomic.write_text(target, '{"new": 2}' * 1000)
    assert target.read_text() == '{"old": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["benchmarks.json"]  # no temporary left


@pytest.mark.parametrize(
    "code, words",
    [(errno.EROFS, "read-only (EROFS)"), (errno.EACCES, "permission denied"),
     (errno.EDQUOT, "quota")],
)  # fmt: skip
def test_each_cause_is_named(code, words):
    assert words in atomic.cause(OSError(code, os.strerror(code)))


# item 1: a kept copy is whole, or it is never settled


def test_a_run_whose_copy_cannot_be_made_changes_nothing_and_says_why(store, tmp_path, monkeypatch):
    # before: a raw traceback (exit 1), and a truncated benchmarks.json left in kept-h200/,
    # which the next settle copied over results/benchmarks.json
    (store / "benchmarks.json").write_text(json.dumps({"bench": list(range(5000))}))
    before = stored(store)
    asv_ran = tmp_path / "asv-ran"
    full_disk(monkeypatch, after=1)  # machine.json copied, then the disk is full
    command = [sys.executable, "-c", f"open({str(asv_ran)!r}, 'w')"]
    with pytest.raises(atomic.WriteFailed, match="the disk is full"):
        guarded(store, command)
    monkeypatch.undo()
    state = store.parent / ".asv"
    assert not asv_ran.exists() and stored(store) == before
    assert not (state / "kept-h200").exists() and not list(state.glob(".kept-h200*"))


def test_asvrun_exits_2_naming_a_full_disk(store, tmp_path, monkeypatch, capsys):
    real = asvrun.run_guarded
    state = store.parent / ".asv"
    monkeypatch.setattr(
        asvrun, "run_guarded", lambda command, *a, **k: real(["true"], "h200", store, state)
    )
    full_disk(monkeypatch)
    with pytest.raises(SystemExit) as stopped:
        asvrun.main(["--machine", "h200", "--", "run", "HEAD^!"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "the disk is full (ENOSPC)" in err
    assert "Traceback" not in err


def kept(store):
    copy = store.parent / ".asv" / "kept-h200"
    keeper.keep(store, "h200", copy)
    return copy


@pytest.mark.parametrize("damage", ["truncated", "missing", "no manifest"])
def test_a_copy_that_is_not_whole_is_never_settled(damage, store, capsys):
    # before: "settled" (exit 0), a truncated benchmarks.json copied over the stored one, or,
    # with no benchmarks.json in the copy, the stored one deleted
    (store / "benchmarks.json").write_text(json.dumps({"bench": list(range(5000))}))
    copy = kept(store)
    text = (copy / "benchmarks.json").read_text()
    if damage == "truncated":  # as a full disk left it, still JSON
        (copy / "benchmarks.json").write_text(text[: len(text) // 2].rsplit(",", 1)[0] + "]}")
    elif damage == "missing":  # a kill between two copies
        (copy / "benchmarks.json").unlink()
    else:  # a copy made before copies were listed
        (copy / keeper.MANIFEST).unlink()
    before, copy_before = stored(store), stored(copy)
    with pytest.raises(SystemExit) as stopped:
        keeper.main([str(store), "h200", "--state", str(copy.parent)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "not" in err and "nothing settled" in err, err
    assert stored(store) == before and stored(copy) == copy_before
    # nor does the next run take it
    with pytest.raises(asvfiles.BadFile, match="kept-h200"):
        guarded(store, ["true"])
    assert stored(store) == before


def test_a_kept_copy_is_made_whole_and_read_back(store):
    copy = kept(store)
    manifest = keeper.check_copy(copy)
    assert set(manifest["machine"]) == {"machine.json", file_of(store, A).name}
    assert manifest["benchmarks.json"]["size"] == len((store / "benchmarks.json").read_bytes())


def test_a_copy_of_no_benchmarks_json_removes_only_the_one_asv_made(store, tmp_path):
    (store / "benchmarks.json").unlink()
    writes = {store / "benchmarks.json": "{}"}
    assert guarded(store, fake_asv(tmp_path, writes)) == 2  # nothing measured
    assert not (store / "benchmarks.json").exists()


def test_a_settling_that_fails_keeps_the_copy_and_completes_later(store, tmp_path, monkeypatch):
    new = run_file(store, A, {("1x256-bf16", "triton"): 4e-3})
    full_disk(monkeypatch, at=f"h200/.{file_of(store, A).name}.")
    with pytest.raises(atomic.WriteFailed, match="the disk is full.*copy .*kept-h200 is kept"):
        guarded(store, fake_asv(tmp_path, {file_of(store, A): new}))
    monkeypatch.undo()
    copy = store.parent / ".asv" / "kept-h200"
    assert keeper.check_copy(copy)  # whole, to be settled
    # the stored file as it was is kept whole before anything replaces it
    archived = list((store / "h200" / "replaced").glob("*.replaced"))
    assert len(archived) == 1
    assert keeper.main([str(store), "h200", "--state", str(copy.parent)]) == 0
    values = asvfiles.figures(asvfiles.load_run(file_of(store, A)))
    assert values[(BENCH, ("1x256-bf16", "triton"))] == 4e-3
    assert values[(BENCH, ("1x256-bf16", "torch"))] == 2e-3
    assert len(list((store / "h200" / "replaced").glob("*.replaced"))) == 1  # not twice
    assert not copy.exists()


def test_a_read_only_results_folder_is_found_before_asv_runs(store, tmp_path, monkeypatch):
    asv_ran = tmp_path / "asv-ran"
    before = stored(store)

    def read_only(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", read_only)
    command = [sys.executable, "-c", f"open({str(asv_ran)!r}, 'w')"]
    with pytest.raises(atomic.WriteFailed, match=r"read-only \(EROFS\); nothing ran"):
        guarded(store, command)
    assert not asv_ran.exists() and stored(store) == before
    assert not (store.parent / ".asv" / "kept-h200").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a folder without write permission")
def test_a_results_folder_without_write_permission_is_refused(store, tmp_path):
    before = stored(store)
    os.chmod(store / "h200", 0o555)
    try:
        with pytest.raises(atomic.WriteFailed, match=r"permission denied.*nothing ran"):
            guarded(store, fake_asv(tmp_path, {}))
    finally:
        os.chmod(store / "h200", 0o755)
    assert stored(store) == before


# item 3: what another process adds during a run is not the run's


def test_files_put_in_during_a_run_are_not_counted_as_its_own(store, tmp_path, capsys):
    # before: a run that measured nothing said "24 figure(s) stored", exit 0
    elsewhere = tmp_path / "other" / "h200"
    other = write_run(elsewhere, B, 2, {("1x256-bf16", "triton"): 3e-3})
    os.utime(other, (time.time() - 3600,) * 2)
    skipped = {("1x256-bf16", "triton"): NAN}
    script = tmp_path / "adds.py"  # asv measuring nothing while another process copies in
    script.write_text(
        f"import shutil; shutil.copy2({str(other)!r}, {str(file_of(store, B))!r})\n"
        f"open({str(file_of(store, A))!r}, 'w').write({run_file(store, A, skipped).strip()!r})\n"
    )
    assert guarded(store, [sys.executable, str(script)]) == 2
    err = capsys.readouterr().err
    assert "nothing measured" in err and "not by this run" in err
    assert file_of(store, B).read_bytes() == other.read_bytes()  # left as it is
    values = asvfiles.figures(asvfiles.load_run(file_of(store, A)))
    assert values[(BENCH, ("1x256-bf16", "torch"))] == 2e-3


def test_merge_waits_for_a_run(store, tmp_path, capsys):
    # before: merge took no lock, and copied its files into a run's results midway
    source = tmp_path / "other"
    write_run(source / "h200", B, 2, {("1x256-bf16", "triton"): 3e-3})
    done = []
    with locks.results_lock(store, shared=True):  # as a run holds it
        worker = threading.Thread(
            target=lambda: done.append(merge.main([str(source), "--into", str(store)]))
        )
        worker.start()
        time.sleep(1.0)
        assert not done and not file_of(store, B).exists()
    worker.join(30)
    assert done == [0] and file_of(store, B).exists()
    assert "waiting for" in capsys.readouterr().err


def test_a_run_waits_for_a_merge_or_refuses(store, tmp_path):
    with locks.results_lock(store, tool="merge"):
        with pytest.raises(asvrun.Busy, match="lock-results"):
            guarded(store, fake_asv(tmp_path, {}), wait=False)


# item 2: a merge copies every file or none


def test_a_merge_onto_a_full_disk_copies_nothing_and_can_be_done_again(
    store, tmp_path, monkeypatch, capsys
):
    # before: a raw traceback (exit 1), four files copied and one truncated, no machine.json;
    # the next merge refused: "the same machine name used twice?"
    source = tmp_path / "other"
    for i, commit in enumerate("cdef"):
        write_run(source / "mi355x", commit * 40, i, {("1x256-bf16", "triton"): 1e-3 * (i + 1)})
    before = stored(store)
    full_disk(monkeypatch, after=3)
    with pytest.raises(SystemExit) as stopped:
        merge.main([str(source), "--into", str(store)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "nothing copied" in err and "disk is full (ENOSPC)" in err
    assert "Traceback" not in err and stored(store) == before
    assert not (store / "mi355x").exists()
    monkeypatch.undo()
    assert merge.main([str(source), "--into", str(store)]) == 0
    assert len(list((store / "mi355x").glob("*.json"))) == 5


# item 5: publish onto a full disk, or while a run is on


@pytest.fixture(autouse=True)
def sigterm_as_it_was():
    """publish.main handles SIGTERM for its process: put back for the tests that follow."""
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def test_publish_onto_a_full_disk_names_it_and_leaves_the_dashboard(tmp_path, monkeypatch, capsys):
    # before: a raw traceback, exit 1
    site = fake_site(tmp_path / "site")
    out = tmp_path / "html"
    publish.install(site, out)
    before = stored(out)
    real_copytree = publish.shutil.copytree

    def fills_the_disk(src, dst, *args, **kw):
        if Path(dst).name == "vendor":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real_copytree(src, dst, *args, **kw)

    monkeypatch.setattr(publish.shutil, "copytree", fills_the_disk)
    monkeypatch.setattr(publish, "publish", lambda out, *a, **k: publish.install(site, out))
    with pytest.raises(SystemExit) as stopped:
        publish.main(["--html-dir", str(out)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "the disk is full (ENOSPC)" in err and "unchanged" in err
    assert "Traceback" not in err
    assert stored(out) == before and not list(tmp_path.glob(".html.publish-*"))


def test_publish_waits_for_a_run(tmp_path, monkeypatch):
    published, held, released = [], threading.Event(), []
    monkeypatch.setattr(publish, "publish", lambda *a, **k: published.append(time.monotonic()))

    def a_run():
        with locks.results_lock(ROOT / asvfiles.read_conf()["results_dir"], shared=True):
            held.set()
            time.sleep(1.0)
            released.append(time.monotonic())

    holder = threading.Thread(target=a_run)
    holder.start()
    held.wait(30)
    publish.main(["--html-dir", str(tmp_path / "html")])
    holder.join(30)
    assert len(published) == 1 and published[0] >= released[0]


# item 4: asv.conf.json read as asv reads it


@pytest.fixture
def conf_file(tmp_path, monkeypatch):
    """A copy of asv.conf.json that every tool reads in its place (returned: its path)."""
    path = tmp_path / "asv.conf.json"
    path.write_text((ROOT / "asv.conf.json").read_text())
    monkeypatch.setattr(asvfiles.read_conf, "__defaults__", (path,))
    return path


def test_a_config_with_an_end_of_line_comment_is_read_as_asv_reads_it(conf_file):
    # before: json.loads failed on it: every tool's traceback, exit 1
    text = conf_file.read_text()
    conf_file.write_text(
        text.replace('"results_dir": "results",', '"results_dir": "results", // here')
    )
    assert "// here" in conf_file.read_text()
    assert asvfiles.read_conf() == asvfiles.read_conf(ROOT / "asv.conf.json")


def test_a_config_read_without_asv_strips_comments_outside_strings(monkeypatch, tmp_path):
    path = tmp_path / "asv.conf.json"
    path.write_text(
        '{"version": 1, "show_commit_url": "https://x//y", // a comment\n /* and */ "env_dir": "e"}'
    )
    monkeypatch.setitem(sys.modules, "asv", None)  # asv not importable
    conf = asvfiles.read_conf(path)
    assert conf["show_commit_url"] == "https://x//y" and conf["env_dir"] == "e"


@pytest.mark.parametrize(
    "change, problem",
    [
        (
            lambda t: t.replace('"results_dir": "results",', '"results_dir": 5,'),
            '"results_dir" is 5',
        ),
        (lambda t: t.replace('"results_dir"', '"results_dir" "x"'), "not a config asv reads"),
        (lambda t: t.replace('"branches": ["main"]', '"branches": "main"'), '"branches" is "main"'),
        (lambda t: t.replace('"version": 1,', ""), '"version" is null'),
    ],
    ids=["results_dir 5", "syntax error", "branches a string", "no version"],
)
def test_a_config_asv_refuses_is_named_by_every_tool(change, problem, conf_file, capsys):
    conf_file.write_text(change(conf_file.read_text()))
    tools = [
        (publish.main, []),
        (machine.main, []),
        (compare.main, ["--check", "HEAD~1"]),
        (asvrun.main, ["--machine", "h200", "--conf", str(conf_file), "--", "run", "HEAD^!"]),
        (asvfiles.main, ["conf-copy", str(conf_file.parent / "copy.json"), "env_dir=e"]),
    ]
    for main, argv in tools:
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        err = capsys.readouterr().err
        assert stopped.value.code == 2, (main, err)
        assert str(conf_file) in err and problem in err and "Traceback" not in err, err


# probed again: a progress line that cannot be written


def test_a_log_line_that_cannot_be_written_fails_no_measurement(tmp_path, monkeypatch):
    # before: the benchmark process raised (a full disk, the log's folder gone), and asv
    # recorded the case as failed, over its stored figure
    from rmsnorm_bench import progress

    monkeypatch.setenv(progress.VAR, str(tmp_path / "gone" / "progress.log"))
    monkeypatch.setenv(progress.TIMES_VAR, str(tmp_path / "gone" / "times.jsonl"))
    progress.record("[rms_norm forward 1/1] 1x256-bf16 triton: ok (0.10 s)")
    progress.record_times(suite="s", process=1, started=1.0, seconds=2.0, phases={})
    assert not (tmp_path / "gone").exists()


# a real full disk: a small tmpfs, where this may mount one


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KiB tmpfs (unmounted afterwards); skipped where mounting one is not allowed."""
    import subprocess

    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the fault injected into the writer covers it")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(where)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode:
        pytest.skip(f"no tmpfs could be mounted here ({done.stderr.strip()}); the fault "
                    "injected into the writer covers it")  # fmt: skip
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """A file that leaves about `leave` bytes free on `disk`."""
    stat = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
    return filler


def test_a_run_and_a_merge_on_a_really_full_disk_change_nothing(small_disk, tmp_path, capsys):
    results = small_disk / "results"
    write_run(results / "h200", A, 1, {("1x256-bf16", "triton"): 1e-3})
    (results / "benchmarks.json").write_text(json.dumps({"bench": list(range(20000))}))
    before = stored(results)
    filler = fill(small_disk, 40_000)  # room for the copy's small files, not benchmarks.json
    with pytest.raises(atomic.WriteFailed, match=r"ENOSPC"):
        guarded(results, fake_asv(tmp_path, {}))
    assert stored(results) == before
    assert not [p for p in (small_disk / ".asv").iterdir() if "kept" in p.name]
    source = tmp_path / "other"
    for i, commit in enumerate("cdef1"):
        values = {(f"{n}x256-bf16", "triton"): 1e-3 for n in range(1, 400)}
        write_run(source / "mi355x", commit * 40, i, values)
    with pytest.raises(SystemExit) as stopped:
        merge.main([str(source), "--into", str(results)])
    assert stopped.value.code == 2 and "ENOSPC" in capsys.readouterr().err
    assert stored(results) == before
    filler.unlink()
    assert guarded(results, fake_asv(tmp_path, {})) == 2  # room again: runs, measures nothing
    assert merge.main([str(source), "--into", str(results)]) == 0


def test_a_merge_interrupted_midway_copies_nothing(store, tmp_path, monkeypatch, capsys):
    # probed again: Ctrl-C between two copies left the first ones, and a traceback
    source = tmp_path / "other"
    for i, commit in enumerate("cd"):
        write_run(source / "mi355x", commit * 40, i, {("1x256-bf16", "triton"): 1e-3})
    before = stored(store)
    real, copies = atomic.copy_file, []

    def stopped_on_the_second(src, dst):
        if copies:
            raise KeyboardInterrupt
        copies.append(real(src, dst))

    monkeypatch.setattr(atomic, "copy_file", stopped_on_the_second)
    with pytest.raises(SystemExit) as stopped:
        merge.main([str(source), "--into", str(store)])
    assert stopped.value.code == 130 and "nothing copied" in capsys.readouterr().err
    assert copies and stored(store) == before and not (store / "mi355x").exists()


def test_a_new_machine_that_measured_nothing_leaves_no_folder(store, tmp_path):
    # as before the copy was checked: the folder asv made for a machine is removed again
    skipped = run_file(store, A, {("1x256-bf16", "triton"): NAN}, machine_name="mi355x")
    new = store / "mi355x" / file_of(store, A).name
    writes = {new: skipped, store / "mi355x" / "machine.json": '{"machine": "mi355x"}'}
    got = asvrun.run_guarded(fake_asv(tmp_path, writes), "mi355x", store, store.parent / ".asv")
    assert got == 2 and not (store / "mi355x").exists()
