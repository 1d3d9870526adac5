"""The locks of the tools that write results: one run at a time per environment and machine,
and no merge, settling or publishing while a run has asv's files in results/.

Each lock is a flock on a file in a state folder (.asv/), naming its holder. A run holds its
environment's and its machine's locks, and the results folder's lock shared (runs on two GPUs
go side by side); `merge`, `store` and `publish` take the results folder's lock alone,
exclusively, so they wait for every run on that results folder to end, and a run waits for
them. The results folder's lock is .asv/lock-results beside that folder (results_lock): every
tool finds the same one, whichever config or option named the folder.
"""

import fcntl
import os
import sys
import time
from pathlib import Path

from . import atomic

RESULTS_LOCK = "lock-results"


class Busy(Exception):
    pass


class Locks:
    """flocks on files in `folder` (exclusive, or shared with shared=True), taken in a fixed
    order; each file names its holder. Waits for a holder to finish (saying who it is, as
    `tool`), or raises Busy with wait=False; WriteFailed where a lock file cannot be made."""

    def __init__(
        self,
        folder: Path,
        names: list[str],
        wait: bool = True,
        shared: bool = False,
        tool: str = "run",
    ):
        self.paths = [folder / name for name in sorted(set(names))]
        self.wait, self.tool = wait, tool
        self.mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        self.files = []

    def _open(self, path: Path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return open(path, "a+")  # noqa: SIM115 - held until __exit__
        except OSError as e:
            raise atomic.WriteFailed(path, e, "taking the lock") from None

    def __enter__(self):
        try:
            for path in self.paths:
                f = self._open(path)
                self.files.append(f)
                try:
                    fcntl.flock(f, self.mode | fcntl.LOCK_NB)
                except BlockingIOError:
                    f.seek(0)
                    holder = f.read().strip() or "another process"
                    if not self.wait:
                        raise Busy(f"{path} is held by {holder}") from None
                    print(f"{self.tool}: waiting for {path}, held by {holder} (Ctrl-C gives up)",
                          file=sys.stderr, flush=True)  # fmt: skip
                    fcntl.flock(f, self.mode)
                try:  # who holds it, for the next one to wait (a full disk: said by no one)
                    f.truncate(0)
                    f.write(f"pid {os.getpid()} ({' '.join(sys.argv[1:])[:200]}), "
                            f"since {time.ctime()}")  # fmt: skip
                    f.flush()
                except OSError:
                    pass
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for f in self.files:
            try:
                f.close()  # closing releases the lock (once no child holds it too)
            except OSError:  # the holder's name not flushed (a full disk): released all the same
                pass
        self.files = []

    def fds(self) -> list[int]:
        """The locks' file descriptors: a child given them holds the locks while it lives."""
        return [f.fileno() for f in self.files]


def results_lock(results: Path, wait: bool = True, shared: bool = False, tool: str = "run"):
    """The lock of the results folder `results` (.asv/lock-results beside it)."""
    state = Path(results).absolute().parent / ".asv"
    return Locks(state, [RESULTS_LOCK], wait=wait, shared=shared, tool=tool)
