"""What publish adds to asv's site: commit links, default views per machine, reports."""

import json
import math
import shutil
import subprocess

import pytest

from rmsnorm_bench import ROOT, asvfiles, pages, publish

from .test_tracker import ASV_FIELDS, write_machine

BENCH = "bench_rmsnorm.RMSNormForward.track_device_time"
CASES = ["1x256-bf16", "1x4096-bf16", "16384x4096-bf16"]


def run(machine, gpu, seconds: dict, commit="a" * 40, date=1):
    """A results file's content: BENCH's figures {(case, backend): seconds}."""
    backends = ["triton", "torch"]
    return {
        **ASV_FIELDS,
        "commit_hash": commit,
        "date": date,
        "params": {"machine": machine, "gpu": gpu},
        "result_columns": ["result", "params", "version"],
        "results": {
            BENCH: [
                [seconds.get((c, b)) for c in CASES for b in backends],
                [[repr(c) for c in CASES], [repr(b) for b in backends]],
                "v1",
            ]
        },
    }


def test_commit_url_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv(publish.COMMIT_URL_ENV, raising=False)
    none = tmp_path / "pyproject.toml"
    none.write_text("[project]\nname = 'x'\n")
    no_origin = lambda: None  # noqa: E731
    # nothing known: no URL (hashes without links), never a placeholder
    for conf in ({"show_commit_url": publish.LEGACY_PLACEHOLDER}, {"show_commit_url": ""}, {}):
        url, warning = publish.commit_url(None, conf, none, origin=no_origin)
        assert url is None and "without links" in warning
    origin = lambda: "https://github.com/o/from-origin"  # noqa: E731
    assert publish.commit_url(None, {}, none, origin=origin)[0] == (
        "https://github.com/o/from-origin/commit/"
    )
    repo = tmp_path / "repo.toml"
    repo.write_text("[project.urls]\nRepository = 'https://github.com/o/r'\n")
    assert publish.commit_url(None, {}, repo, origin=origin) == (
        "https://github.com/o/r/commit/",
        None,
    )
    conf = {"show_commit_url": "https://conf/commit/"}
    assert publish.commit_url(None, conf, repo)[0] == "https://conf/commit/"
    monkeypatch.setenv(publish.COMMIT_URL_ENV, "https://env/commit/")
    assert publish.commit_url(None, conf, repo)[0] == "https://env/commit/"
    assert publish.commit_url("https://opt/commit/", conf, repo)[0] == "https://opt/commit/"


@pytest.mark.parametrize(
    "remote, page",
    [
        ("git@github.com:owner/repo.git", "https://github.com/owner/repo"),
        ("ssh://git@gitlab.example.com:2222/group/sub/repo.git",
         "https://gitlab.example.com/group/sub/repo"),
        ("https://user:secret@github.com/owner/repo.git", "https://github.com/owner/repo"),
        ("https://github.com/owner/repo/", "https://github.com/owner/repo"),
        ("/srv/git/repo.git", None),
        ("file:///srv/git/repo.git", None),
        ("../repo", None),
    ],
)  # fmt: skip
def test_the_origin_remotes_web_page(remote, page):
    assert publish.web_url(remote) == page


def test_the_project_link_is_the_repository_or_the_dashboard():
    assert publish.project_url("https://github.com/o/r/commit/") == "https://github.com/o/r/"
    assert publish.project_url(None) == "./"


def test_a_run_without_a_later_fact_joins_its_machines_series(tmp_path):
    # the H200's first runs lack the host CPU: asv drew each case twice
    facts = {"machine": "m", "gpu": "G"}
    new = {**facts, "cpu": "Xeon", "num_cpu": "16"}
    runs = [{"params": dict(facts)}, {"params": dict(new)}, {"params": dict(new)}]
    assert publish.fill_facts(runs) == {0: {"cpu": "Xeon", "num_cpu": "16"}}
    # runs that disagree on a fact leave it unknown; another GPU is another machine's facts
    runs.append({"params": {**new, "num_cpu": "32"}})
    runs.append({"params": {**facts, "gpu": "H", "cpu": "Epyc"}})
    assert publish.fill_facts(runs) == {0: {"cpu": "Xeon"}}
    # on publish only: the copy changes, results/ does not
    write_machine(tmp_path / "m")
    path = tmp_path / "m" / "aaaaaaaa-env.json"
    path.write_text(json.dumps({**run("m", "G", {}), "params": dict(facts)}))
    (tmp_path / "m" / "bbbbbbbb-env.json").write_text(
        json.dumps({**run("m", "G", {}, commit="b" * 40), "params": dict(new)})
    )
    assert publish.merge_series(tmp_path) == [
        "m/aaaaaaaa-env.json: {'cpu': 'Xeon', 'num_cpu': '16'}"
    ]
    assert json.loads(path.read_text())["params"] == new


def test_the_gpu_machines_view_is_the_default(tmp_path):
    gpu = {(c, "triton"): t for c, t in zip(CASES[1:], [3e-6, 4e-4], strict=True)}
    for machine, gpu_name, figures in [("cpu-smoke", "none", {(CASES[0], "triton"): 0.5}),
                                       ("nvidia-h200", "NVIDIA H200", gpu)]:  # fmt: skip
        write_machine(tmp_path / machine)
        content = run(machine, gpu_name, figures)
        (tmp_path / machine / "aaaaaaaa-env.json").write_text(json.dumps(content))
    runs = pages.machines(tmp_path)
    assert list(runs) == ["nvidia-h200", "cpu-smoke"]  # GPU machines first
    params = [[repr(c) for c in CASES], ["'triton'", "'torch'"]]
    bench = {"params": params, "param_names": ["case", "backend"], "version": "v1"}
    views = pages.views({"benchmarks": {BENCH: bench}}, runs)
    assert views["default"] == "nvidia-h200"
    h200 = views["benchmarks"][BENCH]["nvidia-h200"]
    assert h200 == (
        "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='16384x4096-bf16'"
        "&p-backend='triton'&y-axis-scale=log&view=nvidia-h200"
    )
    smoke = views["benchmarks"][BENCH]["cpu-smoke"]
    assert "p-case='1x256-bf16'" in smoke and "log" not in smoke  # one value spans no decade
    # figures of another version are not shown by asv, so they choose nothing
    bench["version"] = "v2"
    other = pages.views({"benchmarks": {BENCH: bench}}, runs)["benchmarks"][BENCH]
    assert "p-case" not in other["nvidia-h200"]


def test_the_front_page_graphs_are_the_gpu_machines_figures_of_ours(tmp_path):
    # before: asv's geometric mean of every series of every machine, so the CPU smoke mode's
    # and the peers' figures moved the line of ours
    site = tmp_path / "site"
    params = [[repr(c) for c in CASES], ["'triton'", "'torch'"]]
    bench = {"params": params, "param_names": ["case", "backend"], "version": "v1"}
    (site / "graphs" / "summary").mkdir(parents=True)
    (site / "index.json").write_text(json.dumps({"benchmarks": {BENCH: bench}}))

    def graph(machine, points):  # asv's graph file: [[revision, [value per parameter set]]]
        folder = site / "graphs" / "branch-main" / f"machine-{machine}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{BENCH}.json").write_text(json.dumps(points))

    # values in product order: (case 0, triton), (case 0, torch), (case 1, triton), ...
    graph("nvidia-h200", [
        [0, [None, None, 2e-6, 9e-6, 8e-6, 9e-5]],  # ours 2 and 8 us: mean 4 us
        [1, [None, None, 2e-6, 9e-6, None, None]],  # subsets: gaps, not jumps
        [2, [None, None, None, None, 8e-6, 9e-6]],
        [3, [None, None, 4e-6, 1e-6, 16e-6, 1e-6]],  # ours twice as slow; torch faster
        [4, [1e-6, None, None, None, None, None]],  # a case of one commit: not summarised
    ])  # fmt: skip
    graph("cpu-smoke", [[0, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]]])
    runs = {"nvidia-h200": [], "cpu-smoke": []}
    pages.add_summaries(site, runs)
    points = json.loads((site / "graphs" / "summary" / f"{BENCH}.json").read_text())
    assert [p[0] for p in points] == [0, 3]
    assert points[0][1] == pytest.approx(4e-6) and points[1][1] == pytest.approx(8e-6)


def test_views_and_reports_join_asvs_page(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.json").write_text(json.dumps({"benchmarks": {}}))
    (site / "index.html").write_text(f"<html><head></head><body>{pages.NAV_AFTER}</body></html>")
    pages.add_views(site, {})
    page = (site / "index.html").read_text()
    assert '<script src="views.js"></script>' in page and 'href="report/"' in page
    assert "var VIEWS" in (site / "views.js").read_text()
    (site / "index.html").write_text("<html><head></head><body></body></html>")
    with pytest.raises(pages.PageError):
        pages.add_views(site, {})


def test_a_report_page_per_machine(tmp_path):
    site = tmp_path / "site"
    figures = {(CASES[1], "triton"): 3e-6, (CASES[1], "torch"): 5e-6}
    runs = {"nvidia-h200": [run("nvidia-h200", "NVIDIA H200", figures, commit="b" * 40)]}
    (folder,) = pages.add_reports(site, runs, "https://x/commit/", grid=tmp_path / "no-grid")
    assert folder == site / "report" / "nvidia-h200" / "bbbbbbbb"
    page = (folder / "index.html").read_text()
    assert 'href="https://x/commit/' + "b" * 40 + '"' in page
    assert '<img src="rmsnorm_fwd.png"' in page and (folder / "rmsnorm_fwd.png").is_file()
    assert "nvidia-h200/bbbbbbbb/" in (site / "report" / "index.html").read_text()


def grid_file(folder):
    """A grid.json of one cell (ours 1.2x torch's time) and its one heatmap."""
    from rmsnorm_bench import gridfile

    folder.mkdir(parents=True, exist_ok=True)
    backends = {
        "triton": {"status": "ok", "median_s": 1.44e-6, "samples": 5},
        "torch": {"status": "ok", "median_s": 1.2e-6, "samples": 5},
    }
    cell = {"op": "rms_norm", "phase": "forward", "dtype": "bf16", "weight": "same", "m": 1,
            "n": 4096, "backends": backends, **gridfile.judge(backends)}  # fmt: skip
    data = {
        "format": gridfile.FORMAT,
        "commit": "c" * 40,
        "machine": {"gpu": "NVIDIA H200"},
        "device_time": True,
        "grid": {
            "ops": ["rms_norm"],
            "phases": ["forward", "backward"],
            "dtypes": ["bf16"],
            "weights": ["same"],
            "backends": ["triton", "torch"],
            "m": [1],
            "n": [4096],
        },
        "cells": [cell],
    }
    (folder / "grid.json").write_text(json.dumps(data))
    (folder / "rms_norm_forward.png").write_bytes(b"\x89PNG fake")
    return folder / "grid.json"


def test_the_reports_page_shows_the_committed_grid_and_links_its_heatmaps(tmp_path):
    site = tmp_path / "site"
    runs = {"nvidia-h200": [run("nvidia-h200", "NVIDIA H200", {(CASES[1], "triton"): 3e-6})]}
    pages.add_reports(site, runs, "https://x/commit/", grid=grid_file(tmp_path / "grid"))
    index = (site / "report" / "index.html").read_text()
    assert "Shape grid (NVIDIA H200, commit cccccccc)" in index
    assert "1 cells measured (ours and a peer timed): 0 (0%) within 2%" in index
    assert '<a href="grid/rms_norm_forward.png">rms norm forward</a>' in index
    assert "rms norm backward" not in index  # no heatmap drawn: no link
    copied = site / "report" / "grid"
    assert (copied / "rms_norm_forward.png").read_bytes() == b"\x89PNG fake"
    assert json.loads((copied / "grid.json").read_text())["commit"] == "c" * 40


@pytest.mark.parametrize(
    "broken",
    [
        lambda d: {"format": 99},  # not a grid file
        lambda d: {**d, "grid": None},  # no axes
        lambda d: {**d, "grid": {**d["grid"], "ops": 3}},
        lambda d: {**d, "machine": None},
        lambda d: {**d, "cells": [{k: v for k, v in d["cells"][0].items() if k != "behind"}]},
    ],
)
def test_a_grid_file_that_cannot_be_read_is_named_and_left_out(tmp_path, capsys, broken):
    site = tmp_path / "site"
    bad = grid_file(tmp_path / "grid")
    bad.write_text(json.dumps(broken(json.loads(bad.read_text()))))
    runs = {"nvidia-h200": [run("nvidia-h200", "NVIDIA H200", {(CASES[1], "triton"): 3e-6})]}
    pages.add_reports(site, runs, "https://x/commit/", grid=bad)
    assert str(bad) in capsys.readouterr().err
    assert "Shape grid" not in (site / "report" / "index.html").read_text()
    assert not (site / "report" / "grid").exists()  # nothing copied
    # and no grid file at all: nothing said, nothing copied
    pages.add_reports(site, runs, "https://x/commit/", grid=tmp_path / "none" / "grid.json")
    assert capsys.readouterr().err == ""


def test_the_committed_dashboard_is_published_from_the_committed_results():
    # results committed without a publish left html/ a commit behind (25ed384 missing)
    site = ROOT / "html"
    index = json.loads((site / "index.json").read_text())
    published = set(index["revision_to_hash"].values())
    # the committed results only: a local run (scripts/run --no-publish) adds files here
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "results/*/*.json"],
                            capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    committed = {}
    for path in map(ROOT.joinpath, listed):
        if path.name != "machine.json" and not asvfiles.is_verdict(path):
            committed.setdefault(path.parent.name, []).append(asvfiles.load_run(path))
    for machine, runs in committed.items():
        newest = max(runs, key=lambda r: (r["date"], r["commit_hash"]))["commit_hash"]
        assert newest in published, f"{machine}'s newest {newest[:8]}: run scripts/publish"
    # the front page's machine, as pages.machines orders them: GPU machines first, by name
    default = min(committed, key=lambda m: (not pages.is_gpu(committed[m][0]["params"]), m))
    files = pages.graph_files(site, default)
    for name, bench in index["benchmarks"].items():  # the front page of today's publish
        written = json.loads((site / "graphs" / "summary" / f"{name}.json").read_text())
        assert_points_close(written, pages.summary_points(bench, files.get(name, [])), name)


# A summary point is a geometric mean thinned by asv's resampling: numpy builds sum in
# different orders, so the same results give values a few ulps apart (650.8179844398525
# against 650.817984439853). Revisions are compared exactly; values to 1e-12 of themselves,
# a millionth of the smallest difference a graph can show.
SUMMARY_REL_TOL = 1e-12


def assert_points_close(written, expected, what):
    revisions = [[point[0] for point in points] for points in (written, expected)]
    assert revisions[0] == revisions[1], f"{what}: revisions {revisions[0]} != {revisions[1]}"
    for (revision, got), (_, want) in zip(written, expected, strict=True):
        close = math.isclose(got, want, rel_tol=SUMMARY_REL_TOL, abs_tol=0.0)
        assert close, f"{what} at revision {revision}: {got!r} != {want!r}"


def test_summary_points_compare_within_rounding_and_no_further():
    points = [[1, 650.8179844398525], [2, 1.5]]
    assert_points_close([[1, 650.817984439853], [2, 1.5]], points, "ulps")
    for wrong in (
        [[1, 650.8179844398525 * (1 + 1e-9)], [2, 1.5]],  # a real difference, however small
        [[1, 650.8179844398525], [3, 1.5]],  # another revision
        [[1, 650.8179844398525]],  # a point missing
        [[1, 650.8179844398525], [2, 1.5], [3, 1.0]],  # one more
    ):
        with pytest.raises(AssertionError):
            assert_points_close(wrong, points, "wrong")


def test_a_ratio_opens_on_the_peer_it_is_recorded_under_and_gpus_side_by_side(tmp_path):
    # the ratio is recorded under the peer (torch's time over ours); a view of ours was empty
    ratio = "bench_rmsnorm.RMSNormForward.track_public_ratio"
    params = [[repr(c) for c in CASES], ["'triton'", "'torch'"]]
    runs = {}
    for machine, gpu in [("nvidia-h100", "NVIDIA H100"), ("nvidia-h200", "NVIDIA H200")]:
        content = run(machine, gpu, {(CASES[1], "torch"): 1.3, (CASES[2], "torch"): 0.9})
        content["results"] = {ratio: content["results"][BENCH]}
        runs[machine] = [content]
    index = {"benchmarks": {ratio: {"params": params, "param_names": ["case", "backend"],
                                    "version": "v1", "unit": "peer/ours"}}}  # fmt: skip
    views = pages.views(index, runs)
    assert views["default"] == "nvidia-h100+nvidia-h200"  # every GPU machine, side by side
    both = views["benchmarks"][ratio]["nvidia-h100+nvidia-h200"]
    assert both.startswith("machine=nvidia-h100&machine=nvidia-h200&p-case=")
    assert "p-backend='torch'" in both and "'triton'" not in both
    assert views["ratio"] == [ratio] and views["higher_is_better"] == [ratio]
    assert "p-backend='torch'" in views["benchmarks"][ratio]["nvidia-h200"]


def test_the_benchmark_list_leaves_out_rows_without_a_value(tmp_path):
    folder = tmp_path / "graphs" / "branch-main" / "machine-m"
    folder.mkdir(parents=True)
    rows = [{"name": "a", "last_value": 1.0}, {"name": "b", "last_value": None}]
    (folder / "summary.json").write_text(json.dumps(rows))
    assert pages.drop_empty_rows(tmp_path) == 1
    assert json.loads((folder / "summary.json").read_text()) == rows[:1]


def test_views_js_carries_its_data_and_code(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.json").write_text(json.dumps({"benchmarks": {}}))
    (site / "index.html").write_text(f"<html><head></head><body>{pages.NAV_AFTER}</body></html>")
    pages.add_views(site, {}, no_link=publish.NO_COMMIT_URL)
    script = (site / "views.js").read_text()
    data = json.loads(script.split("var VIEWS = ", 1)[1].split(";\n", 1)[0])
    assert data["no_commit_url"] == publish.NO_COMMIT_URL and data["known"] == []
    assert "$.plot = wrapped" in script and "rb-legend" in script


def test_the_reports_page_counts_the_commits_its_graphs_draw(tmp_path):
    # it counted the commits with results (25), the graphs drew 23
    folder = tmp_path / "graphs" / "branch-main" / "machine-m"
    folder.mkdir(parents=True)
    (folder / f"{BENCH}.json").write_text(json.dumps([[1, [1e-6, None]], [2, [None, None]]]))
    (folder / "other.json").write_text(json.dumps([[3, 2.0]]))
    assert pages.graphed_commits(tmp_path, {"m": [], "n": []}) == {"m": 2, "n": 0}


def test_a_second_gpu_machines_history_is_published_beside_the_first(tmp_path):
    # a copy of the H200's newest three runs under another GPU machine's name, in a
    # temporary folder: publish shows both side by side, with no change to the code
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy2(ROOT / "results" / "benchmarks.json", results / "benchmarks.json")
    h200 = ROOT / "results" / "nvidia-h200"
    newest = sorted(asvfiles.results_files(h200), key=lambda p: asvfiles.load_run(p)["date"])[-3:]
    for machine, gpu in [("nvidia-h200", None), ("nvidia-h100", "NVIDIA H100 80GB HBM3")]:
        folder = results / machine
        folder.mkdir()
        for path in [h200 / "machine.json", *newest]:
            content = json.loads(path.read_text())
            facts = content if path.name == "machine.json" else content["params"]
            facts["machine"] = machine
            facts["gpu"] = gpu or facts["gpu"]
            (folder / path.name).write_text(json.dumps(content))
    out = tmp_path / "html"
    publish.publish(out, ["HEAD"], results, url="https://example.org/r/commit/")
    index = json.loads((out / "index.json").read_text())
    assert index["params"]["machine"] == ["nvidia-h100", "nvidia-h200"]
    assert index["project_url"] == "https://example.org/r/"
    script = (out / "views.js").read_text()
    data = json.loads(script.split("var VIEWS = ", 1)[1].split(";\n", 1)[0])
    assert data["default"] == "nvidia-h100+nvidia-h200"
    device = "bench_rmsnorm.RMSNormForward.track_device_time"
    assert data["benchmarks"][device][data["default"]].startswith(
        "machine=nvidia-h100&machine=nvidia-h200&"
    )
    summaries = data["summaries"][device]
    assert sorted(summaries) == ["nvidia-h100", "nvidia-h200"]
    assert (
        len(summaries["nvidia-h100"]) == 3 and summaries["nvidia-h100"] == summaries["nvidia-h200"]
    )
    reports = (out / "report" / "index.html").read_text()
    assert "GPU: NVIDIA H100 80GB HBM3" in reports and "GPU: NVIDIA H200" in reports
    assert (ROOT / "results" / "nvidia-h100").exists() is False  # nothing written to results/


def test_the_dashboard_check_finds_links_that_lead_nowhere(tmp_path):
    from rmsnorm_bench import dashboard

    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "index.html").write_text("ok")
    server = dashboard.serve(tmp_path)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        good = '<a href="report/">r</a><a href="#bench?x=1">b</a><a href="https://x.org/c/1">c</a>'
        assert dashboard.check_links(base, {base: good}, publish.NO_COMMIT_URL) == ([], 2)
        for bad in ('href="missing.html"', f'href="{publish.NO_COMMIT_URL}abc"',
                    f'href="{publish.LEGACY_PLACEHOLDER}abc"', 'href=""'):  # fmt: skip
            problems, _ = dashboard.check_links(
                base, {base: f"<a {bad}>x</a>"}, publish.NO_COMMIT_URL
            )
            assert len(problems) == 1, bad
    finally:
        server.shutdown()
