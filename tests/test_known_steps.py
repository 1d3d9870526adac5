"""Known, explained steps (docs/known-steps.json): the gate and the Regressions page show
them as known, with their reason, and a step they do not explain stays a regression."""

import json
import subprocess

import pytest

from rmsnorm_bench import ROOT, asvfiles, knownsteps, pages, regressions

from .test_tracker import write_run

BENCH = "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time"


def history(n=3) -> list[str]:
    """The last n commits of this clone's first-parent history, oldest first."""
    out = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--first-parent", f"-n{n}", "HEAD"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.split()[::-1]


def step_file(tmp_path, after, upto, pattern=r"FusedAddRMSNormBackward\..*'triton'\)$"):
    path = tmp_path / "known-steps.json"
    step = {"after": after, "upto": upto, "benchmarks": pattern, "reason": "a fix",
            "doc": "docs/perf-notes.md"}  # fmt: skip
    path.write_text(json.dumps({"steps": [step]}))
    return path


def test_the_committed_steps_are_readable_and_name_commits_of_this_clone():
    steps = knownsteps.load()
    assert steps, "docs/known-steps.json lists no step"
    for step in steps:
        for rev in (step["after"], step["upto"]):
            assert knownsteps._commit(rev), f"{rev}: no commit of this clone"
        assert (ROOT / step["doc"].split("#")[0]).is_file()


def test_a_change_is_a_known_step_only_within_its_commits_and_figures():
    c0, c1, c2 = history()
    steps = [{"after": c0, "upto": c1[:10], "benchmarks": r"Backward\.", "reason": "r",
              "doc": "d"}]  # fmt: skip
    assert knownsteps.explain(steps, BENCH + "('1x4096-bf16', 'triton')", c0, c1) is steps[0]
    assert knownsteps.explain(steps, BENCH + "('1x4096-bf16', 'triton')", c0, c2) is None
    assert knownsteps.explain(steps, BENCH + "('1x4096-bf16', 'triton')", c1, c2) is None
    assert knownsteps.explain(steps, "bench_rmsnorm.RMSNormForward.x()", c0, c1) is None
    assert knownsteps.explain(steps, BENCH + "()", "f" * 40, c1) is None  # not in this clone
    machine = [{**steps[0], "machines": ["nvidia-h100"]}]
    assert knownsteps.explain(machine, BENCH + "()", c0, c1, "nvidia-h200") is None


@pytest.mark.parametrize(
    "content, problem",
    [
        ("[]", "no list of steps"),
        ('{"steps": [{"after": "a"}]}', "upto, benchmarks, reason, doc missing"),
        ('{"steps": [{"after": "a", "upto": "b", "benchmarks": "(", "reason": "r", "doc": "d"}]}',
         "not a regular expression"),
    ],
)  # fmt: skip
def test_a_bad_steps_file_is_named(tmp_path, capsys, content, problem):
    path = tmp_path / "steps.json"
    path.write_text(content)
    with pytest.raises(asvfiles.BadFile, match=problem):
        knownsteps.load(path)
    with pytest.raises(SystemExit) as out:
        knownsteps.main([str(path)])
    assert out.value.code == 2 and str(path) in capsys.readouterr().err


def test_the_gate_shows_a_known_step_and_does_not_fail_on_it(tmp_path, capsys):
    c0, c1, _ = history()
    folder = tmp_path / "results" / "h200"
    write_run(folder, c0, 1, {("4096x4096-bf16", "triton"): 1e-4}, bench=BENCH)
    write_run(folder, c1, 2, {("4096x4096-bf16", "triton"): 2e-4}, bench=BENCH)
    base = ["--results", str(tmp_path / "results")]
    assert regressions.main([*base, "--known-steps", str(tmp_path / "none.json")]) == 1
    assert "REGRESSION h200" in capsys.readouterr().out
    steps = step_file(tmp_path, c0, c1)
    assert regressions.main([*base, "--known-steps", str(steps)]) == 0
    out = capsys.readouterr().out
    assert "REGRESSION" not in out and "1 known step(s)" in out
    assert "known step, not gating: h200: " + BENCH in out and "a fix" in out
    # a step that names other figures explains nothing here
    other = step_file(tmp_path, c0, c1, pattern="RMSNormForward")
    assert regressions.main([*base, "--known-steps", str(other)]) == 1
    capsys.readouterr()
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SystemExit) as bad:
        regressions.main([*base, "--known-steps", str(tmp_path / "bad.json")])
    assert bad.value.code == 2 and "bad.json" in capsys.readouterr().err


def test_the_regressions_page_lists_known_steps_apart(tmp_path):
    c0, c1, c2 = history()
    site = tmp_path / "site"
    site.mkdir()
    hashes = {"1": c0, "2": c1, "3": c2}
    bench = {"unit": "seconds", "param_names": ["case", "backend"]}
    (site / "index.json").write_text(
        json.dumps({"revision_to_hash": hashes, "benchmarks": {BENCH: bench}})
    )
    known = BENCH + "('4096x4096-bf16', 'triton')"
    still = BENCH + "('1x4096-bf16', 'triton')"
    params = {"machine": "h200"}
    entries = [
        [known, "g.json", params, 0, 2e-4, 1e-4, [[1, 2, 1e-4, 2e-4]]],
        [still, "g.json", params, 1, 2e-6, 1e-6, [[1, 2, 1e-6, 1.5e-6], [2, 3, 1.5e-6, 2e-6]]],
    ]
    (site / "regressions.json").write_text(json.dumps({"regressions": entries}))
    ns = "http://www.w3.org/2005/Atom"
    feed = "".join(f"<entry><title>50.00% {n}</title></entry>" for n in (known, still))
    (site / "regressions.xml").write_text(f'<feed xmlns="{ns}">{feed}</feed>')
    steps = knownsteps.load(step_file(tmp_path, c0, c1))
    found = pages.split_known(site, steps)
    assert [k["name"] for k in found] == [known]
    assert found[0]["before"] == "100.0 us" and found[0]["after"] == "200.0 us"
    assert "a fix" in found[0]["reason"] and "p-case='4096x4096-bf16'" in found[0]["link"]
    left = json.loads((site / "regressions.json").read_text())["regressions"]
    assert [e[0] for e in left] == [still]  # one of its two steps is not explained
    text = (site / "regressions.xml").read_text()
    assert still in text and known not in text
