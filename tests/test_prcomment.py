"""The pull request's benchmark comment, from the committed H200 results: its verdict is the
gate's, its figures and ratios those of the results files."""

import pytest

from rmsnorm_bench import ROOT, asvfiles, prcomment, regressions

RESULTS = ROOT / "results"
H200 = RESULTS / "nvidia-h200"


def committed(prefix):
    (run,) = [r for r in asvfiles.load_runs(H200) if r["commit_hash"].startswith(prefix)]
    return run


def gate(base, head) -> int:
    args = ["--machine", "nvidia-h200", "--base", base, "--head", head]
    return regressions.main(args)


def test_a_pair_with_a_regression_says_so_with_the_gates_figures(capsys):
    base, head = "6690e887", "33dc0b7e"
    assert gate(base, head) == 1
    gated = [line for line in capsys.readouterr().out.splitlines() if line.startswith("REGR")]
    text = prcomment.comment(RESULTS, base, head)
    assert "**Regression**: 2 figure(s)" in text and len(gated) == 2
    # the ratio shown is the results files' own
    key = ("bench_rmsnorm.RMSNormBackward.track_peak_memory", ("512x2048-bf16", "triton"))
    ratio = asvfiles.figures(committed(head))[key] / asvfiles.figures(committed(base))[key]
    row = next(line for line in text.splitlines() if "track_peak_memory` 512x2048-bf16" in line)
    assert f"| {ratio:.3f} |" in row and row.endswith("| regression |")
    assert f"base {committed(base)['commit_hash']}, head {committed(head)['commit_hash']}" in text
    assert "Machine: nvidia-h200 (gpu NVIDIA H200, torch 2.11.0+cu130" in text
    # ours against each peer at the head: torch's device time over ours
    peers = text.split("Ours against each peer", 1)[1]
    assert "| case | ours | liger | torch | torch_compile |" in peers
    fwd = "bench_rmsnorm.RMSNormForward.track_device_time"
    values = asvfiles.figures(committed(head))
    mine, torch = (values[(fwd, ("4096x4096-bf16", b))] for b in ("triton", "torch"))
    wanted = "| `RMSNormForward.track_device_time` 4096x4096-bf16 |"
    line = next(x for x in peers.splitlines() if x.startswith(wanted))
    assert f"{torch / mine:.2f}x" in line


def test_an_unchanged_pair_passes_and_a_known_step_does_not_fail(capsys):
    # 25ed384's public ratio against torch fell at 2 large backwards (a change of measuring,
    # docs/comparisons.md), a known step: the gate and the comment pass with the steps file
    steps = prcomment.knownsteps.load()
    assert gate("61ebc07e", "25ed384c") == 0
    text = prcomment.comment(RESULTS, "61ebc07e", "25ed384c", steps=steps)
    assert text.startswith("### Benchmark: `25ed384c` against `61ebc07e` on nvidia-h200")
    assert "**No regression** in 132 figures" in text and "2 known step(s)" in text
    assert "**Regression**: 2" in prcomment.comment(RESULTS, "61ebc07e", "25ed384c")
    assert gate("759181ab", "6690e887") == 0
    capsys.readouterr()
    text = prcomment.comment(RESULTS, "759181ab", "6690e887", steps=steps)
    assert "**No regression**" in text and "19 known step(s)" in text
    assert prcomment.comment(RESULTS, "759181ab", "6690e887").startswith("### ")
    assert "**Regression**: 19" in prcomment.comment(RESULTS, "759181ab", "6690e887")


@pytest.mark.parametrize(
    "args, problem",
    [
        (["--base", "6690e887", "--head", "6690e887"], "name one commit"),
        (["--base", "ffffffff", "--head", "6690e887"], "ffffffff"),
        (["--base", "6690e887", "--head", "33dc0b7e", "--machine", "nowhere"], "nowhere"),
        (["--base", "6690e887", "--head", "33dc0b7e", "--threshold", "0.5"], "--threshold"),
    ],
)
def test_bad_input_is_named_with_exit_status_2(capsys, args, problem):
    with pytest.raises(SystemExit) as out:
        prcomment.main(args)
    assert out.value.code == 2 and problem in capsys.readouterr().err


def test_the_tool_writes_the_markdown(tmp_path):
    out = tmp_path / "comment.md"
    assert prcomment.main(["--base", "61ebc07e", "--head", "25ed384c", "--out", str(out)]) == 0
    assert out.read_text().startswith("### Benchmark:")


def test_the_workflow_runs_the_gate_and_the_tool_with_options_they_take():
    flow = (ROOT / ".github" / "workflows" / "benchmark-pr.yml").read_text()
    assert 'bash scripts/compare --machine "$RMSNORM_BENCH_MACHINE" "$BASE" "$HEAD"' in flow
    command = flow.split("python -m rmsnorm_bench.prcomment", 1)[1].split("--out comment.md")[0]
    for option in ("--machine", "--base", "--head"):
        assert option in command and option in prcomment.__doc__
    assert "runs-on: [self-hosted, gpu]" in flow and "gh pr comment" in flow
    assert "bash scripts/run --machine" in flow  # on main: results stored, html/ published
