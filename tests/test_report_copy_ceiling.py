"""The report's device table: every backend's percentage of the machine's copy ceiling,
from synthetic asv results."""

import json

import pytest

from rmsnorm_bench import report
from rmsnorm_bench.instrument import Shape, ideal_bytes

from .test_tracker import ASV_FIELDS, write_machine

CASE = "4096x4096-bf16"
BENCH = "bench_rmsnorm.RMSNormForward.track_device_time"
BACKENDS = ["triton", *report.PEERS]


def write_results(root, machine, seconds: dict):
    """One results file: the forward suite's device time of CASE for the given backends (the
    others skipped, as asv stores them: null)."""
    run = {
        **ASV_FIELDS,
        "commit_hash": "c" * 40,
        "date": 1,
        "params": {"machine": machine},
        "result_columns": ["result", "params", "version", "started_at", "duration"],
        "results": {
            BENCH: [
                [seconds.get(b) for b in BACKENDS],
                [[repr(CASE)], [repr(b) for b in BACKENDS]],
                "v",
                0,
                1.0,
            ]
        },
    }
    folder = root / machine
    write_machine(folder)
    (folder / "cccccccc-virtualenv-py3.11.json").write_text(json.dumps(run))


def device_row(text):
    """The device table's head and its rmsnorm_fwd row, as {column: cell}."""
    tables = [block for block in text.split("\n\n") if block.startswith("| op |")]
    head, _, row = tables[1].splitlines()[:3]
    cells = lambda line: [c.strip() for c in line.strip("|").split("|")]  # noqa: E731
    return dict(zip(cells(head), cells(row), strict=True))


def test_percent_of_ceiling():
    assert report.percent_of_ceiling(2e12, 1.0, 4000) == "50%"  # 2,000 GB/s
    assert report.percent_of_ceiling(2e9, None, 4000) == "n/a"  # skipped or failed
    assert report.percent_of_ceiling(2e9, 1.0, None) == "n/a"  # no ceiling known


def test_every_backend_gets_its_share_of_the_given_ceiling(tmp_path, capsys):
    nbytes = ideal_bytes("rms_norm", "forward", Shape.from_label(CASE))
    # at 1,000 GB/s: triton at 800 GB/s, torch 500, liger 1,000 (quack, flydsl skipped)
    seconds = {"triton": nbytes / 800e9, "torch": nbytes / 500e9, "liger": nbytes / 1000e9}
    write_results(tmp_path, "some-gpu", seconds)
    report.main(["--results", str(tmp_path), "--copy-ceiling", "1000"])
    text = capsys.readouterr().out
    assert "against the copy ceiling, 1,000 GB/s" in text
    row = device_row(text)
    assert row["Triton GB/s"] == "800"
    assert [row[f"{b} % of copy"] for b in BACKENDS] == ["80%", "50%", "n/a", "100%", "n/a", "n/a"]


def test_the_h200_has_a_default_ceiling_and_unknown_machines_none(tmp_path, capsys):
    nbytes = ideal_bytes("rms_norm", "forward", Shape.from_label(CASE))
    write_results(tmp_path / "a", "nvidia-h200", {"triton": nbytes / 4200e9})
    report.main(["--results", str(tmp_path / "a")])
    text = capsys.readouterr().out
    assert report.COPY_CEILING_GBPS["nvidia-h200"] == 4200
    assert "4,200 GB/s" in text and device_row(text)["triton % of copy"] == "100%"

    write_results(tmp_path / "b", "cpu-smoke", {"triton": nbytes / 4200e9})
    report.main(["--results", str(tmp_path / "b")])
    text = capsys.readouterr().out
    assert "none known" in text
    row = device_row(text)
    assert row["Triton GB/s"] == "4200"  # bandwidth still shown; no percentage without a ceiling
    assert {row[f"{b} % of copy"] for b in BACKENDS} == {"n/a"}


@pytest.mark.parametrize("bad", ["0", "-5"])
def test_a_ceiling_must_be_positive(tmp_path, bad):
    with pytest.raises(SystemExit):
        report.main(["--results", str(tmp_path), "--copy-ceiling", bad])
