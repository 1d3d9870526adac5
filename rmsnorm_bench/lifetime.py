"""How long the tracker's child processes live: no longer than the process that started them.

A library module (no torch, nothing heavy), used wherever a tool starts processes that must not
outlive it: asvrun's asv, a pooled round's measuring processes (instrument.processes), the
grid's warm-up workers (gridwarm); and where a SIGTERM must unwind like Ctrl-C, so that the
`finally` clauses that end those children and keep what was measured run.
"""

import contextlib
import functools
import os
import signal
import sys
import threading


def ended_with_parent(signum: int) -> dict:
    """subprocess.Popen's keyword arguments that have the child sent `signum` when this process
    ends, by any death (kill -9 too; Linux's PR_SET_PDEATHSIG); none elsewhere. libc's prctl
    is looked up here, in the parent: no library is loaded between fork and exec."""
    if sys.platform != "linux":
        return {}
    return {"preexec_fn": functools.partial(die_with, _prctl(), os.getpid(), signum)}


def die_with(prctl, parent: int, signum: int) -> None:
    """In a child (a pre-exec step, or a worker's initializer): `signum` when `parent` ends;
    where it has ended already, the child ends at once (exit status 128 + `signum`)."""
    prctl(1, signum)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(128 + signum)


def die_with_parent(parent: int, signum: int) -> None:
    """die_with for a child that is already running Python (a pool worker's initializer)."""
    if sys.platform == "linux":
        die_with(_prctl(), parent, signum)


def _prctl():
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


@contextlib.contextmanager
def sigterm_raises(error):
    """Meanwhile a SIGTERM raises `error()` (in the main thread, where Python runs signal
    handlers; elsewhere nothing changes), so that it unwinds as Ctrl-C would."""

    def handler(signum, frame):
        raise error()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
