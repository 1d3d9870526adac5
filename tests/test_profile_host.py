"""profile_host times its routes in turns, so that the host's drift within a process hits
every route alike (its rows were timed one route after another, and two instruments of the
same call disagreed by 1.4x on an H100)."""

from rmsnorm_bench import instrument, profile_host


class DriftingHost:
    """A host whose speed falls as time goes by: each block of calls takes `us` per call
    times 1 + `drift` per block timed so far (a fake of profile_host.block_us)."""

    def __init__(self, drift: float):
        self.drift, self.blocks, self.calls = drift, 0, []

    def block(self, call, n):
        self.calls.append((call, n))
        us = call() * (1 + self.drift * self.blocks)
        self.blocks += 1
        return us


def test_routes_timed_in_turns_see_the_same_host():
    routes = {"torch": lambda: 70.0, "ours": lambda: 70.0}  # one call, two names
    host = DriftingHost(drift=0.02)
    times = profile_host.interleaved_us(routes, rounds=20, calls=100, block=host.block)
    assert [len(v) for v in times.values()] == [20, 20]
    quotient = instrument.median(
        [t / o for t, o in zip(times["torch"], times["ours"], strict=True)]
    )
    assert abs(quotient - 1) < 0.03  # the drift divides out of each round's pair
    assert abs(instrument.median(times["torch"]) / instrument.median(times["ours"]) - 1) < 0.03
    # every route warmed up, then one block of each per round, the order rotated
    assert len(host.calls) == 2 + 40 and {n for _, n in host.calls[2:]} == {100}
    firsts = [host.calls[2 + 2 * r][0] for r in range(4)]
    assert firsts[0] is not firsts[1] and firsts[0] is firsts[2]


def test_routes_timed_one_after_another_do_not():
    # the method before: all of torch's blocks, then all of ours: the same call comes out
    # 1.4x slower for the route timed second, as the H100's 70.7 against 100.1 us did
    host = DriftingHost(drift=0.02)
    torch_ = [host.block(lambda: 70.0, 100) for _ in range(20)]
    ours = [host.block(lambda: 70.0, 100) for _ in range(20)]
    assert instrument.median(ours) / instrument.median(torch_) > 1.3
