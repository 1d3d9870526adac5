"""The self-test's check of `asv find`, made so that chance cannot decide it.

asv find measures each commit once (one process, no statistics) and names the commit with
the largest step of one benchmark's values, over all its cases. The check searches one
figure of ours at one case, under a plant whose step is FIND_MARGIN times the noise measured
between samples, and confirms the named commit against its parent with the gate.
"""

import math
import re
import statistics
from dataclasses import dataclass

from .. import asvfiles, instrument, regressions
from .plants import (
    PLANTED_AT,
    SelfTestError,
    chain,
    device_plant,
    git,
    host_plant,
)
from .verdicts import Verdict, elements, judge, report

# asv find's step must beat the noise of single processes by this much: for the step to lose,
# one process would have to be FIND_MARGIN times further off than any sample measured
FIND_MARGIN = 10
# the smallest step, whatever the noise: a single process can stray further than the samples
# of three did (seen in the smoke mode: one chain commit 77% off, where they spread by 23%);
# the device plant adds 30% to the bytes a call moves, the host plant waits 5x the call's time
FIND_FLOOR = {"device": 0.3, "host": 5.0}
FIND_CAP = {"device": 1.0, "host": 50.0}  # the largest: twice the bytes; a wait 50x the time


def host_case() -> str:
    """The shape at which the host plant must show: the smallest our forward measures."""
    shapes = instrument.shapes_for("forward")
    return min(shapes, key=lambda s: s.m * s.n).label


def spread(run: dict, bench: str, case: str) -> float | None:
    """The relative spread (max - min) / median of one figure's samples of ours in `run`."""
    stats = asvfiles.figure_stats(run).get((bench, (case, regressions.OURS)))
    samples = [s for s in (stats[1] if stats else None) or [] if s is not None]
    if len(samples) < 2 or statistics.median(samples) <= 0:
        return None
    return (max(samples) - min(samples)) / statistics.median(samples)


def noise(runs: list[dict], bench: str, case: str) -> float:
    """The largest relative spread of one figure's samples among `runs` (commits of one code:
    the current one and the unchanged ones), and of their medians."""
    spreads = [s for s in (spread(r, bench, case) for r in runs) if s is not None]
    values = [asvfiles.figures(r).get((bench, (case, regressions.OURS))) for r in runs]
    values = [v for v in values if v]
    if len(values) >= 2:
        spreads.append((max(values) - min(values)) / statistics.median(values))
    if not spreads:
        raise SelfTestError(f"find: no samples of {bench} at {case} to measure the noise by")
    return max(spreads)


def find_step(kind: str, measured_noise: float) -> float:
    """The plant's step for asv find: FIND_MARGIN times the noise, at least FIND_FLOOR.
    A step the device plant adds in proportion loses to a process off by step / (1 + step);
    the host plant's fixed wait, only to one off by the step itself."""
    floor = FIND_FLOOR[kind]
    wanted = FIND_MARGIN * measured_noise
    if kind == "device":  # step / (1 + step) >= wanted
        step = wanted / (1 - wanted) if wanted < 1 else math.inf
    else:
        step = wanted
    step = max(floor, step)
    if step > FIND_CAP[kind]:
        raise SelfTestError(
            f"find: the noise ({measured_noise:.1%} between samples) is too large for a plant "
            f"{FIND_MARGIN}x above it (it would need a step of {step:.3g}, at most "
            f"{FIND_CAP[kind]:g}): asv find cannot be checked on this machine now"
        )
    return step


def shape_spec(case: str) -> str:
    shape = instrument.Shape.from_label(case)
    return f"{shape.m},{shape.n},{shape.dtype}"


@dataclass
class FindPlan:
    """What asv find is checked on: one benchmark of ours at one case, under one plant."""

    kind: str  # "device" or "host"
    bench: str
    case: str
    plant: str
    step: float
    noise: float

    @property
    def env(self) -> dict:
        # our figure at one case: other cases and the peers' noise would compete with the plant
        return {
            instrument.BACKENDS_VAR: regressions.OURS,
            instrument.FWD_SHAPES_VAR: shape_spec(self.case),
        }


def plan_find(gpu: bool, runs: list[dict], base_run: dict) -> FindPlan:
    """The figure, case and plant of the find check, from the pairs' runs (`runs`: the
    current and unchanged commits) and the current commit's."""
    figure = "track_device_time" if gpu else "track_time"
    bench = f"bench_rmsnorm.RMSNormForward.{figure}"
    cases = [
        key[1][0]
        for key in asvfiles.figures(base_run)
        if key[0] == bench and key[1][-1] == regressions.OURS
    ]
    if not cases:
        raise SelfTestError(f"find: {bench} of ours was not measured (do ASV_ARGS leave it out?)")
    case = max(cases, key=lambda c: elements([c])) if gpu else host_case()
    if case not in cases:
        raise SelfTestError(f"find: {bench} of ours was not measured at {case}")
    measured = noise(runs, bench, case)
    kind = "device" if gpu else "host"
    step = find_step(kind, measured)
    if gpu:
        plant = device_plant(step)
    else:  # a fixed wait: step times the current commit's time at that case
        plant = host_plant(
            seconds=step * asvfiles.figures(base_run)[(bench, (case, regressions.OURS))]
        )
    return FindPlan(kind, bench, case, plant, step, measured)


def named_commit(output: str) -> str:
    found = re.search(r"Greatest regression found: ([0-9a-f]{8})", output)
    if not found:
        raise SelfTestError("asv find named no commit")
    return found.group(1)


def find_values(runner, hashes: list[str], plan: FindPlan) -> list[str]:
    """One line per chain commit: the value asv find measured there, if it measured it."""
    lines = []
    for i, h in enumerate(hashes, 1):
        run = runner.stored(h)
        value = (
            asvfiles.figures(run).get((plan.bench, (plan.case, regressions.OURS))) if run else None
        )
        mark = " (planted)" if i == PLANTED_AT else ""
        shown = f"{value:.4g}" if value is not None else "not measured"
        lines.append(f"chain {i} {h[:8]}{mark}: {shown}")
    return lines


def check_find(
    runner, base: str, plan: FindPlan, factor: float, branch: str
) -> tuple[Verdict, dict]:
    """asv find over a chain whose PLANTED_AT-th commit is planted: does it name that one,
    and does the gate confirm it against its parent? (the verdict, {planted, named})"""
    v = Verdict("find")
    hashes, planted = chain(base, plan.plant)
    git("branch", "-f", branch, hashes[-1])
    output = runner.find(f"{base}..{hashes[-1]}", plan.bench, plan.env)
    named = named_commit(output)
    full = next((h for h in [base, *hashes] if h.startswith(named)), named)
    v.notes.append(
        f"on {plan.bench}({plan.case!r}, {regressions.OURS!r}); noise {plan.noise:.2%} between "
        f"samples, plant step {plan.step:.3g} ({FIND_MARGIN}x the noise at least)"
    )
    values = find_values(runner, hashes, plan)
    line = f"asv find named {named}, planted {planted[:8]}"
    if full != planted:
        v.missed.append(line)
        v.notes += ["values asv find measured:", *values]
        return v, {"planted": planted, "named": full}
    v.notes += values
    parent = git("rev-parse", f"{full}^")
    # asv selects a parametrized benchmark by name(parameters): "^name$" selected nothing,
    # and the confirmation judged asv find's own single measurements
    runs = runner.measure([parent, full], plan.env, bench=f"^{re.escape(plan.bench)}\\(")
    confirm = judge(plan.kind, runs[parent], runs[full], factor, plan.case)
    if confirm.ok and confirm.detected:  # a plant too small to show is no confirmation
        v.detected.append(f"{line}; the gate confirms it against its parent: {confirm.detected[0]}")
    else:
        v.missed.append(f"{line}, but the gate does not flag it against its parent")
        v.notes += [report(confirm)]
    return v, {"planted": planted, "named": full}
