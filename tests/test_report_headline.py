"""The report's headline (`report --headline`, README's table), from synthetic asv results."""

import json

import pytest

from rmsnorm_bench import headline, report
from rmsnorm_bench.instrument import Shape, ideal_bytes
from tests.test_tracker import ASV_FIELDS, write_machine

BACKENDS = ["triton", *report.PEERS]
CASES = ["1x4096-bf16", "4096x4096-bf16"]
COLUMNS = ["result", "params", "version", "started_at", "duration"]


def entry(values: dict):
    """One benchmark's results entry: {(case, backend): value}, the rest skipped (null)."""
    result = [values.get((c, b)) for c in CASES for b in BACKENDS]
    return [result, [[repr(c) for c in CASES], [repr(b) for b in BACKENDS]], "v", 0, 1.0]


def write_run(root, benches: dict, machine="some-gpu", commit="c" * 40):
    """A results file of `machine` holding `benches` ({class.figure: {(case, backend): v}})."""
    run = {
        **ASV_FIELDS,
        "commit_hash": commit,
        "date": 1796285924000,  # 2026-12-03
        "params": {"machine": machine, "gpu": "Some GPU", "torch": "2.x", "triton": "3.x"},
        "result_columns": COLUMNS,
        "results": {f"bench_rmsnorm.{k}": entry(v) for k, v in benches.items()},
    }
    folder = root / machine
    write_machine(folder, gpu="Some GPU")
    (folder / f"{commit[:8]}-virtualenv-py3.11.json").write_text(json.dumps(run))
    return root


def table_rows(text):
    """The headline's rows as {(op, case): {column: cell}}."""
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    cells = lambda line: [c.strip() for c in line.strip("|").split("|")]  # noqa: E731
    head = cells(lines[0])
    rows = [dict(zip(head, cells(line), strict=True)) for line in lines[1:]]
    return {(r["op"], r["case"]): r for r in rows}


def run_headline(capsys, results, *args):
    report.main(["--results", str(results), "--headline", *args])
    return capsys.readouterr().out


def test_device_times_share_and_the_quotient_of_medians(tmp_path, capsys):
    big = "4096x4096-bf16"
    nbytes = ideal_bytes("rms_norm", "forward", Shape.from_label(big))
    device = {
        (big, "triton"): nbytes / 800e9,  # 800 GB/s: 80% of a 1,000 GB/s ceiling
        (big, "torch"): 40e-6,
        (big, "torch_compile"): 30e-6,
        (big, "quack"): 1e-6,  # installed apart: a column since the run measured it
    }
    public = {(big, "triton"): 20e-6, (big, "torch"): 25e-6}
    results = write_run(
        tmp_path,
        {"RMSNormForward.track_device_time": device, "RMSNormForward.track_time": public},
    )
    text = run_headline(capsys, results, "--copy-ceiling", "1000", "--cases", big)
    caption = text.split("\n\n")[0]
    assert "some-gpu (Some GPU), commit cccccccc (2026-12-03), torch 2.x, triton 3.x" in caption
    assert "the quotient of the two track_time medians" in caption and "1,000 GB/s" in caption
    rows = table_rows(text)
    assert list(rows) == [("rmsnorm_fwd", big)]  # the other suites measured nothing
    row = rows["rmsnorm_fwd", big]
    assert row["triton (us)"] == f"{nbytes / 800e9 * 1e6:.1f}"
    assert (row["torch (us)"], row["torch_compile (us)"], row["liger (us)"]) == (
        "40.0",
        "30.0",
        "n/a",
    )
    assert row["triton % of copy"] == "80%"
    assert row["public torch/triton"] == "1.25x"
    assert row["quack (us)"] == "1.0" and "flydsl" not in text  # flydsl: not measured


def test_the_interleaved_ratio_is_taken_where_the_run_has_it(tmp_path, capsys):
    case = "1x4096-bf16"
    results = write_run(
        tmp_path,
        {
            "RMSNormBackward.track_device_time": {(case, "triton"): 2e-6},
            "RMSNormBackward.track_time": {(case, "triton"): 10e-6, (case, "torch"): 30e-6},
            "RMSNormBackward.track_public_ratio": {(case, "torch"): 1.07},
        },
    )
    text = run_headline(capsys, results, "--cases", case)
    assert "track_public_ratio (ours and torch interleaved in one process)" in text
    # not the quotient of the medians (3x): the same-process ratio
    assert table_rows(text)["rmsnorm_bwd", case]["public torch/triton"] == "1.07x"
    # no ceiling known for this machine
    assert table_rows(text)["rmsnorm_bwd", case]["triton % of copy"] == "n/a"


def test_default_cases_and_the_machines_ceiling(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(headline, "CASES", tuple(CASES))
    monkeypatch.setitem(report.COPY_CEILING_GBPS, "some-gpu", 2000.0)
    device = {(c, "triton"): 1e-5 for c in CASES}
    results = write_run(tmp_path, {"FusedAddRMSNormForward.track_device_time": device})
    text = run_headline(capsys, results)
    assert [case for _, case in table_rows(text)] == CASES
    assert "(2,000 GB/s)" in text


def test_cases_not_measured_are_refused_naming_them(tmp_path, capsys):
    case = "1x4096-bf16"
    results = write_run(tmp_path, {"RMSNormForward.track_time": {(case, "torch"): 1e-5}})
    for cases, named in [(case, case), ("9x9-bf16", "9x9-bf16"), (",", "(none given)")]:
        with pytest.raises(SystemExit) as exit:
            run_headline(capsys, results, "--cases", cases)
        err = capsys.readouterr().err
        assert exit.value.code == 2 and f"--cases {named}: not measured for triton" in err
        assert "Traceback" not in err


@pytest.mark.parametrize(
    "args,problem",
    [
        (["--cases", "1x4096-bf16"], "--cases chooses the rows of --headline"),
        (["--headline", "--out", "somewhere"], "--headline prints its table and writes no files"),
    ],
)
def test_options_that_do_not_go_together_are_refused(tmp_path, capsys, args, problem):
    with pytest.raises(SystemExit) as exit:
        report.main(["--results", str(tmp_path), *args])
    assert exit.value.code == 2 and problem in capsys.readouterr().err


def test_a_case_given_twice_is_refused(tmp_path, capsys):
    # before: printed twice
    case = "1x4096-bf16"
    results = write_run(tmp_path, {"RMSNormForward.track_device_time": {(case, "triton"): 1e-5}})
    with pytest.raises(SystemExit) as exit:
        run_headline(capsys, results, "--cases", f"{case},{case}")
    err = capsys.readouterr().err
    assert exit.value.code == 2 and f"--cases {case}: given twice" in err


@pytest.mark.parametrize("ceiling", ["1e-300", "1e300", "inf", "0.001"])
def test_a_copy_ceiling_no_machine_has_is_refused(tmp_path, capsys, ceiling):
    # before: 1e-300 printed percentages of 300 digits
    case = "1x4096-bf16"
    results = write_run(tmp_path, {"RMSNormForward.track_device_time": {(case, "triton"): 1e-5}})
    with pytest.raises(SystemExit) as exit:
        run_headline(capsys, results, "--copy-ceiling", ceiling, "--cases", case)
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "--copy-ceiling" in err, err


@pytest.mark.parametrize(
    "tool, argv",
    [("report", []), ("regressions", []), ("machine", []), ("compare", ["--check", "HEAD~1"])],
)
def test_an_empty_machine_name_is_refused_not_read_as_the_default(tool, argv, capsys):
    # before: --machine '' read as not given: the newest machine's report, every machine's gate
    import importlib

    main = importlib.import_module(f"rmsnorm_bench.{tool}").main
    with pytest.raises(SystemExit) as exit:
        main(["--machine", "", *argv])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "expected a machine's name, got nothing" in err, err
