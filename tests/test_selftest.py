"""The self-test's check of asv find: it passes only where asv names the planted commit and
the gate confirms that commit against its parent; the plant's step is set by the noise."""

import hashlib
import re
import statistics

import pytest

from rmsnorm_bench import asvfiles, regressions
from rmsnorm_bench.selftest import find, plants, verdicts
from tests.test_tracker import write_run

DEVICE = "bench_rmsnorm.RMSNormForward.track_device_time"
BIG = "16384x4096-bf16"


def stored(folder, name, value, spread=0.001):
    """A results file of one figure of ours at BIG: ten samples around `value`, spread over `spread` of it."""
    key = (BIG, regressions.OURS)
    samples = {key: [value * (1 + spread * (i / 9 - 0.5)) for i in range(10)]}
    sha = hashlib.sha1(name.encode()).hexdigest()
    path = write_run(folder / name, sha, 1, {key: value}, "v", DEVICE, samples)
    return asvfiles.load_run(path)


class FakeRunner:
    """Stands in for asv: `find` names the chain commit at `names` (1-based), `measure`
    gives the planted commits a device time `slower` times the others'."""

    def __init__(self, tmp_path, names: int, slower: float):
        self.tmp, self.names, self.slower = tmp_path, names, slower
        self.values, self.measured = {}, []

    def find(self, revisions, bench, env):
        base, tip = revisions.split("..")
        chain = plants.git("rev-list", "--reverse", f"{base}..{tip}").split()
        for i, h in enumerate(chain, 1):
            self.values[h] = 1e-4 * (self.slower if i >= plants.PLANTED_AT else 1.0)
        return f"Greatest regression found: {chain[self.names - 1][:8]} <x>\n"

    def stored(self, commit_hash):
        value = self.values.get(commit_hash)
        return stored(self.tmp, f"s{commit_hash}", value) if value else None

    def measure(self, commits, env=None, bench=""):
        self.measured.append(commits)
        planted = plants.PACKAGE_INIT
        out = {}
        for c in commits:
            text = plants.git("show", f"{c}:{planted}")
            value = 1e-4 * (self.slower if "planted by rmsnorm_bench.selftest" in text else 1.0)
            out[c] = stored(self.tmp, f"m{c}", value)
        return out


def plan():
    return find.FindPlan("device", DEVICE, BIG, plants.device_plant(0.1), 0.1, 0.005)


def check(tmp_path, names, slower):
    base = plants.git("rev-parse", "HEAD")
    runner = FakeRunner(tmp_path, names, slower)
    branch = f"selftest/test-{tmp_path.name[-12:]}"
    try:
        v, found = find.check_find(runner, base, plan(), 1.05, branch)
    finally:
        plants.git("branch", "-D", branch)
    return v, found, runner


def test_find_passes_where_asv_names_the_plant_and_the_gate_confirms_it(tmp_path):
    v, found, runner = check(tmp_path, plants.PLANTED_AT, 1.5)
    assert v.ok and len(v.detected) == 1 and "confirms" in v.detected[0]
    assert found["named"] == found["planted"]
    # confirmed as a user would: the named commit measured against its parent
    (pair,) = runner.measured
    assert pair == [plants.git("rev-parse", f"{found['planted']}^"), found["planted"]]
    assert sum("chain" in note for note in v.notes) == plants.CHAIN  # every value shown


def test_find_fails_where_asv_names_a_commit_other_than_the_plant(tmp_path):
    v, found, runner = check(tmp_path, plants.CHAIN - 1, 1.5)
    assert not v.ok and v.missed and not v.detected
    assert found["named"] != found["planted"]
    assert runner.measured == []  # nothing to confirm: the check has failed
    # the values asv measured are printed, the named and planted commits among them
    shown = "\n".join(v.notes)
    assert "values asv find measured" in shown and "(planted)" in shown
    assert found["named"][:8] in shown


def test_find_fails_where_the_gate_does_not_confirm_the_named_commit(tmp_path):
    v, found, _ = check(tmp_path, plants.PLANTED_AT, 1.0)  # named right, no real step
    assert not v.ok and "does not flag it" in v.missed[0]
    assert found["named"] == found["planted"]


def test_the_find_plant_is_set_by_the_noise(tmp_path):
    runs = [stored(tmp_path, f"n{i}", 1e-4, spread) for i, spread in enumerate((0.01, 0.03))]
    measured = find.noise(runs, DEVICE, BIG)
    assert measured == pytest.approx(0.03, rel=1e-6)  # the largest spread of samples
    # a proportional step (the device plant) beats a process off by step / (1 + step)
    step = find.find_step("device", measured)
    assert step / (1 + step) == pytest.approx(find.FIND_MARGIN * measured)
    assert find.find_step("device", 0.0001) == find.FIND_FLOOR["device"]  # never below
    assert find.find_step("host", 0.0001) == find.FIND_FLOOR["host"]
    # a fixed wait (the host plant) beats a process off by the step itself
    assert find.find_step("host", 0.8) == pytest.approx(find.FIND_MARGIN * 0.8)
    with pytest.raises(plants.SelfTestError, match="too large"):
        find.find_step("device", 0.2)  # would need more than every row copied again
    with pytest.raises(plants.SelfTestError, match="too large"):
        find.find_step("host", 6.0)
    # the medians of two commits of one code count as noise too
    apart = [stored(tmp_path, "a", 1e-4, 0.0), stored(tmp_path, "b", 1.2e-4, 0.0)]
    assert find.noise(apart, DEVICE, BIG) == pytest.approx(
        0.2e-4 / statistics.median([1e-4, 1.2e-4])
    )


def test_a_verdict_beside_the_results_is_merged_as_it_is_and_read_by_no_reader(tmp_path):
    from rmsnorm_bench import merge

    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    sha = hashlib.sha1(b"verdict").hexdigest()
    write_run(theirs / "gpu", sha, 1, {(BIG, regressions.OURS): 1e-4}, "v", DEVICE)
    verdict = theirs / "gpu" / f"selftest-{sha[:8]}.json"
    verdict.write_text('{"machine": "gpu", "passed": true}\n')
    assert asvfiles.results_files(theirs / "gpu") == [
        theirs / "gpu" / f"{sha[:8]}-virtualenv-py3.11.json"
    ]
    assert merge.main([str(theirs), "--into", str(ours)]) == 0
    assert (ours / "gpu" / verdict.name).read_text() == verdict.read_text()
    assert len(asvfiles.load_runs(ours / "gpu")) == 1  # the verdict is no results file


class SizedRunner(FakeRunner):
    """Stands in for asv where the device plant's effect on the device time is `efficiency`
    times the share of bytes it adds (a tenth of the bytes was 4.2% of the time on an H100)."""

    def __init__(self, tmp_path, efficiency: float):
        super().__init__(tmp_path, names=1, slower=1.0)
        self.efficiency = efficiency

    def measure(self, commits, env=None, bench=""):
        self.measured.append(commits)
        out = {}
        for c in commits:
            text = plants.git("show", f"{c}:{plants.PACKAGE_INIT}")
            found = re.search(r"def _planted\(public, name, fraction=([0-9.]+)", text)
            share = float(found.group(1)) if found else 0.0
            out[c] = stored(self.tmp, f"m{c}", 1e-4 * (1 + self.efficiency * share))
        return out


def device_verdict(tmp_path, runner, base, fraction):
    head = plants.commit(base, "device", plants.planted_init(base, plants.device_plant(fraction)))
    runs = runner.measure([base, head])
    same = [stored(tmp_path, "unchanged", 1.003e-4)]  # the noise: 0.3%
    v = verdicts.judge("device", runs[base], runs[head], 1.05, None, same)
    v.name = "device"
    return v, same


@pytest.mark.parametrize(
    "efficiency, fraction, outcome",
    [
        (0.42, 0.25, "detected"),  # the H100's efficiency: a quarter of the bytes is 10.5%
        (0.15, 0.5, "detected"),  # 3.75% at a quarter: doubled once, then 7.5%
        (0.02, 1.0, "too small"),  # 2% at four times the bytes: the gate cannot be tested
    ],
)
def test_the_device_plant_is_sized_by_its_measured_effect(tmp_path, efficiency, fraction, outcome):
    from rmsnorm_bench import selftest

    base = plants.git("rev-parse", "HEAD")
    runner = SizedRunner(tmp_path, efficiency)
    v, same = device_verdict(tmp_path, runner, base, plants.DEVICE_FRACTION)
    found = [v]
    branches = []
    try:
        sized = selftest.size_device_plant(runner, base, found, 1.05, same, branches)
    finally:
        for name in branches:
            plants.git("branch", "-D", name)
    assert sized == fraction and len(runner.measured) == 1 + len(branches)
    v = found[0]
    assert not v.missed  # a plant that moved a figure too little is never a miss
    if outcome == "detected":
        assert v.ok and len(v.detected) == 1 and not v.too_small
    else:
        assert v.too_small and "under 1.053x" in v.too_small[0] and not v.detected
    assert any("plant's effect" in note for note in v.notes)


def test_a_plant_too_small_is_told_apart_from_a_miss(tmp_path):
    # the issue's: a tenth of the bytes moved the fused-add backward by 4.2%, under 1.05
    base, same = stored(tmp_path, "a", 240e-6), [stored(tmp_path, "u", 241e-6)]
    small = verdicts.judge("device", base, stored(tmp_path, "b", 250e-6), 1.05, None, same)
    assert small.too_small and not small.missed and "1.042x" in small.too_small[0]
    # moved past the factor plus the noise, but not flagged (its samples overlap): a miss
    noisy = stored(tmp_path, "c", 270e-6, spread=0.9)
    missed = verdicts.judge("device", base, noisy, 1.05, None, same)
    assert missed.missed and not missed.too_small and not missed.ok
