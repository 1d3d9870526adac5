"""Scratch commits for the self-test: git plumbing, and the regressions planted in them.

A commit is made from its parent's tree with some files replaced (nothing outside git's
object store changes: the working tree, the index and the branches are left alone). A plant
is Python text appended to the package's __init__.py that wraps the public calls.
"""

import os
import re
import subprocess
import tempfile
from pathlib import Path

from .. import ROOT

PACKAGE_INIT = "rmsnorm_kernels/__init__.py"
PUBLIC = ("rms_norm", "fused_add_rms_norm")  # what the instrument calls
FRACTION = 0.1  # of the time the host plant waits after each call
# of the bytes the device plant adds to each call, at first: a share of the bytes is not that
# share of the time on every GPU (on an H100 a tenth more bytes moved the fused-add backward
# of 16384x4096 by 4.2%, under the factor 1.05), so the self-test measures the plant's effect
# on each gated figure and doubles the plant, up to DEVICE_FRACTION_MAX, until it moves every
# one by more than the factor plus the noise; past that it stops: "plant too small", exit 2
DEVICE_FRACTION = 0.25
DEVICE_FRACTION_MAX = 1.0
SMOKE_DELAY = 4.0  # the host plant's fraction in the smoke mode (see selftest.FACTOR)
CHAIN = 8  # commits in the range asv find searches
PLANTED_AT = 4  # the planted one among them

# The bytes each public call's kernels move, in units of x's: what the device plant scales
# its copies by, so that every suite's device time grows by about the same `fraction`.
# rms_norm: x in, y out; back: x, dy in, dx out. fused_add_rms_norm: x, residual in, y and
# the new residual out; back: dy, the saved sum and the residual's grad in, dx out.
BYTES_IN_X = {"rms_norm": (2, 3), "fused_add_rms_norm": (4, 4)}  # (forward, backward)

DEVICE_PLANT = """

# --- planted by rmsnorm_bench.selftest: a device regression; never merged ---
def _planted(public, name, fraction={fraction!r}, bytes_in_x={bytes_in_x!r}):
    import functools
    import math

    forward, backward = (fraction * n / 2 for n in bytes_in_x[name])

    def copy_rows(t, share):  # a copy reads and writes: share * t's bytes, twice
        rows = t.detach().reshape(-1, t.shape[-1])
        whole, part = divmod(share, 1.0)
        for _ in range(int(whole)):
            rows.clone()
        if part:
            rows[: max(1, math.ceil(rows.shape[0] * part - 1e-9))].clone()  # at least part

    @functools.wraps(public)
    def call(x, *args, **kwargs):
        copy_rows(x, forward)
        out = public(x, *args, **kwargs)
        y = out[0] if isinstance(out, tuple) else out
        if y.requires_grad:
            y.register_hook(lambda grad: (copy_rows(grad, backward), None)[1])  # grad unchanged
        return out

    return call
"""

HOST_PLANT = """

# --- planted by rmsnorm_bench.selftest: a host-side delay; never merged ---
def _planted(public, name, fraction={fraction!r}, seconds={seconds!r}):
    import functools
    import time

    @functools.wraps(public)
    def call(*args, **kwargs):
        start = time.perf_counter()
        out = public(*args, **kwargs)
        took = time.perf_counter() - start
        end = start + took + fraction * took + seconds
        while time.perf_counter() < end:
            pass
        return out

    return call
"""

WRAP = "".join(f"\n{name} = _planted({name}, {name!r})" for name in PUBLIC) + "\n"


def device_plant(fraction: float) -> str:
    """Copies that add about `fraction` to the bytes of every public call, forward and back."""
    return DEVICE_PLANT.format(fraction=fraction, bytes_in_x=BYTES_IN_X)


def host_plant(fraction: float = 0.0, seconds: float = 0.0) -> str:
    """A wait after each public call: `fraction` of the time the call took, plus `seconds`."""
    return HOST_PLANT.format(fraction=fraction, seconds=seconds)


class SelfTestError(Exception):
    """The self-test could not run (exit status 2)."""


def git(*args: str, stdin: str | None = None, env: dict | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if done.returncode:
        raise SelfTestError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


# commits of the self-test have an author of their own, whatever git's configuration
IDENTITY = {
    "GIT_AUTHOR_NAME": "rmsnorm_bench selftest",
    "GIT_AUTHOR_EMAIL": "selftest@rmsnorm-bench.invalid",
    "GIT_COMMITTER_NAME": "rmsnorm_bench selftest",
    "GIT_COMMITTER_EMAIL": "selftest@rmsnorm-bench.invalid",
}


def commit(parent: str, message: str, changes: dict[str, str] | None = None) -> str:
    """A new commit on `parent` whose tree is the parent's with `changes` (path: new text)
    written in; nothing outside git's object store changes."""
    tree = git("rev-parse", f"{parent}^{{tree}}")
    if changes:
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            git("read-tree", tree, env=env)
            for path, text in changes.items():
                blob = git("hash-object", "-w", "--stdin", stdin=text)
                git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = git("write-tree", env=env)
    return git("commit-tree", tree, "-p", parent, "-m", message, env=IDENTITY)


def planted_init(base: str, plant: str) -> dict[str, str]:
    """The package's __init__.py of `base` with a plant wrapped around the public calls."""
    text = git("show", f"{base}:{PACKAGE_INIT}") + "\n"
    missing = [name for name in PUBLIC if not re.search(rf"\b{name}\b", text)]
    if missing:
        raise SelfTestError(f"{PACKAGE_INIT} of {base[:8]} has no {', '.join(missing)} to plant in")
    return {PACKAGE_INIT: text + plant + WRAP}


def chain(base: str, plant: str) -> tuple[list[str], str]:
    """CHAIN commits on `base`, the PLANTED_AT-th planted: (their hashes, the planted one)."""
    tip, hashes = base, []
    for i in range(1, CHAIN + 1):
        changes = planted_init(tip, plant) if i == PLANTED_AT else None
        message = f"selftest: chain commit {i}" + (" (planted)" if changes else "")
        tip = commit(tip, message, changes)
        hashes.append(tip)
    return hashes, hashes[PLANTED_AT - 1]
