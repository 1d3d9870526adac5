"""The self-test's verdicts: what a compare of the current commit with a scratch commit
flagged, sorted into detections, false alarms, misses and figures judged neither way."""

from dataclasses import dataclass, field

from .. import asvfiles, instrument, regressions
from .plants import SelfTestError

MIN_ELEMENTS = 2**20  # the device plant must be seen at shapes of at least this many elements
RATIO = "track_public_ratio"


@dataclass
class Verdict:
    """What one compare flagged."""

    name: str
    detected: list = field(default_factory=list)
    false_alarms: list = field(default_factory=list)
    other: list = field(default_factory=list)  # flagged, counted neither way
    missed: list = field(default_factory=list)  # expected and not flagged
    notes: list = field(default_factory=list)  # printed with the verdict
    # expected, not flagged, and moved by the plant less than the factor plus the noise: the
    # plant could not test the gate there (the self-test then exits 2, never "missed")
    too_small: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.false_alarms and not self.missed


def elements(params) -> int:
    shape = instrument.Shape.from_label(params[0])
    return shape.m * shape.n


def reached(params) -> bool:
    """Whether the device plant must show at this case: a shape of >= MIN_ELEMENTS."""
    return elements(params) >= MIN_ELEMENTS


def label(key) -> str:
    bench, params = key
    return f"{bench}({', '.join(map(repr, params))})"


def flagged(old: dict, new: dict, factor: float) -> dict:
    """{(benchmark, params): 'old -> new'} of every figure of either commit that got worse, as
    the gate judges it (regressions.worse): slower, or for the public ratio (higher is
    better) lower, by more than its own noise floor too."""
    before, after = asvfiles.figures(old), asvfiles.figures(new)
    old_stats, new_stats = asvfiles.figure_stats(old), asvfiles.figure_stats(new)
    old_versions, new_versions = asvfiles.versions(old), asvfiles.versions(new)
    out = {}
    for key in sorted(set(before) & set(after)):
        if old_versions[key[0]] != new_versions[key[0]]:
            continue
        a, b, sa, sb = before[key], after[key], old_stats.get(key), new_stats.get(key)
        if regressions.worse(key, a, b, sa, sb, factor):
            out[key] = f"{before[key]:.4g} -> {after[key]:.4g}"
    return out


def gating(key) -> bool:
    """Whether a figure gates: as rmsnorm_bench.regressions judges by default, and our public
    time in the CPU smoke mode, which has no device figures."""
    return regressions.gates(key, public_time=instrument.DEVICE == "cpu")


def noise(key, old: dict, same: list[dict]) -> float:
    """How far figure `key` moved with no code changed: the largest relative change of its
    value from `old` (the current commit) to each of `same` (unchanged commits measured with
    it); 0 where none measured it."""
    base = asvfiles.figures(old).get(key)
    moved = [abs(value / base - 1) for run in same
             if base and (value := asvfiles.figures(run).get(key)) is not None]  # fmt: skip
    return max(moved, default=0.0)


def judge(
    kind: str,
    old: dict,
    new: dict,
    factor: float,
    host_case: str | None = None,
    same: list[dict] = (),
) -> Verdict:
    """Sort what the compare of `old` (the current commit) and `new` (a scratch commit)
    flagged, for a pair of `kind` unchanged, device or host. For the device pair, each gated
    figure the plant should move is measured: the plant's effect (new / old) against the
    factor plus the noise (`same`: the unchanged commits' runs, see `noise`). A figure not
    flagged where the effect reached that is missed; one where it did not, the plant was too
    small to test the gate there (`too_small`), which is no miss and no pass."""
    v = Verdict(kind)
    found = flagged(old, new, factor)
    judged = [key for key in set(asvfiles.figures(old)) & set(asvfiles.figures(new)) if gating(key)]
    if not judged:
        raise SelfTestError(
            f"{kind} pair: no gating figure of ours was measured in both commits, so nothing "
            "could be judged (do ASV_ARGS or RMSNORM_BENCH_* leave our suites out?)"
        )
    for key, change in found.items():
        bench, params = key
        ours = params[-1] == regressions.OURS
        is_gating = gating(key)
        figure = regressions.figure_name(bench)
        line = f"{label(key)}: {change}"
        if kind == "unchanged":
            (v.false_alarms if is_gating else v.other).append(line)
        elif not ours and figure != RATIO:
            v.other.append(line)  # a peer's: its code did not change, and it never gates
        elif kind == "device" and figure == "track_device_time" and reached(params):
            v.detected.append(line)
        elif kind == "host" and params[0] == host_case and figure in ("track_time", RATIO):
            v.detected.append(line)  # a peer's public time went to v.other above
        else:
            v.other.append(line)
    if kind == "device":
        expected = {
            key
            for key in asvfiles.figures(old)
            if gating(key)
            and regressions.figure_name(key[0]) == "track_device_time"
            and reached(key[1])
        }
        if not expected:
            raise SelfTestError(
                "device pair: no device time of ours at a shape of >= 1M elements was "
                "measured: the plant cannot be judged (add such a shape)"
            )
        before, after = asvfiles.figures(old), asvfiles.figures(new)
        for key in sorted(expected):
            effect = after[key] / before[key] if key in after and before[key] else None
            needed = factor + noise(key, old, same)
            if effect is not None:
                v.notes.append(f"plant's effect on {label(key)}: {effect:.3f}x "
                               f"(needed {needed:.3f}x: the factor plus the noise)")  # fmt: skip
            if key in found:
                continue
            if effect is not None and effect < needed:
                v.too_small.append(f"{label(key)}: {effect:.3f}x, under {needed:.3f}x")
            else:
                v.missed.append(label(key))
    if kind == "host":
        hits = [
            key
            for key in found
            if key[1][0] == host_case
            and (
                (key[1][-1] == regressions.OURS and regressions.figure_name(key[0]) == "track_time")
                or regressions.figure_name(key[0]) == RATIO
            )
        ]
        if not hits:
            v.missed = [f"our public time or a peer's ratio at {host_case}"]
    return v


def report(v: Verdict) -> str:
    lines = [
        f"{v.name}: {len(v.detected)} detection(s), {len(v.false_alarms)} false alarm(s), "
        f"{len(v.missed)} missed, {len(v.other)} other figure(s) flagged"
        + (f", plant too small at {len(v.too_small)}" if v.too_small else "")
    ]
    for title, items in (
        ("detected", v.detected),
        ("FALSE ALARM", v.false_alarms),
        ("MISSED", v.missed),
        ("PLANT TOO SMALL", v.too_small),
        ("flagged, not judged", v.other),
    ):
        lines += [f"  {title}: {item}" for item in items]
    return "\n".join(lines + [f"  {note}" for note in v.notes])
