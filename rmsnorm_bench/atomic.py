"""Writing a tracked or stored file whole, or not at all.

Every tool that writes into results/ (store, merge, publish's copy, a run's record) writes
through here: the new content goes to a temporary file in the same folder, is flushed to the
disk (fsync), and then renamed over the file's name (os.replace, one step on POSIX file
systems). A reader, or a run killed at any moment, sees the old file or the new one, never a
part of one. Where the write fails (a full disk, a read-only folder), the temporary file is
removed, the old file stays as it was, and WriteFailed names the file and the cause.
"""

import errno
import os
import shutil
import tempfile
from pathlib import Path

# what the usual errors of a write mean to someone who must act on them
CAUSES = {
    errno.ENOSPC: "the disk is full (ENOSPC)",
    errno.EDQUOT: "the disk quota is used up (EDQUOT)",
    errno.EROFS: "the file system is read-only (EROFS)",
    errno.EACCES: "permission denied: a read-only folder? (EACCES)",
    errno.EPERM: "not permitted: a read-only folder? (EPERM)",
    errno.EIO: "an input/output error of the disk (EIO)",
}


def cause(error: OSError) -> str:
    """What an OSError of a write means, in words, with its errno's name."""
    if error.errno in CAUSES:
        return CAUSES[error.errno]
    name = errno.errorcode.get(error.errno, "")
    return f"{error.strerror or error}" + (f" ({name})" if name else "")


class WriteFailed(Exception):
    """A file or folder could not be written; the message names it and the cause, and says
    that what was there is left as it was."""

    def __init__(self, path, error: OSError, what: str = "writing", note: str = ""):
        self.path, self.error, self.what = Path(path), error, what
        super().__init__(f"{what} {path} failed: {cause(error)}" + (f"; {note}" if note else ""))


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename) to the disk, where the system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync folders; the rename itself is done
    finally:
        os.close(fd)


def _write_chunks(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_bytes(path, data: bytes, like=None, new: bool = False) -> None:
    """Replace `path` with `data` in one step (see the module's docstring). `like`: a file
    whose permission bits and times the new one takes (as shutil.copy2 would). new=True:
    never over a file (FileExistsError where `path` exists; linked in, not renamed)."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise WriteFailed(path, e) from None
    try:
        try:
            _write_chunks(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if like is not None:
            shutil.copystat(like, tmp)
        else:  # mkstemp makes 0600; a new file gets the usual mode
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        if new:
            os.link(tmp, path)  # fails where path exists: nothing is replaced
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except FileExistsError:
        Path(tmp).unlink(missing_ok=True)
        raise
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise WriteFailed(path, e) from None
    except BaseException:  # interrupted: no temporary file is left behind
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_folder(path.parent)


def check_writable(folder, note: str = "") -> None:
    """WriteFailed where a file cannot be made in `folder` (read-only, no permission), found
    by making one; a folder not there yet is judged by the nearest one that is."""
    folder = Path(folder).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
    except OSError as e:
        raise WriteFailed(folder, e, "writing into", note) from None
    os.close(fd)
    os.unlink(probe)


def write_text(path, text: str, new: bool = False) -> None:
    write_bytes(path, text.encode("utf-8"), new=new)


def copy_file(source, target) -> None:
    """Copy `source` over `target` in one step, with its permission bits and times."""
    try:
        data = Path(source).read_bytes()
    except OSError as e:
        raise WriteFailed(source, e, "reading") from None
    write_bytes(target, data, like=source)
