"""Writing an HDF5 file that a full disk cannot crash.

When a write fails inside HDF5 (a full disk), HDF5 and h5py fail again on every later flush and
on every object they free, printing dozens of "Exception ignored" tracebacks and at times ending
the process with a segfault. So HDF5 writes through a file object (h5py's ``fileobj`` driver)
whose writes never fail: the first failed write is kept, later ones are dropped, and the caller
raises the kept ``OSError`` (``check``, and on closing), which ``atomic_write`` turns into its
one-line error and removal of the temporary file.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any


class _GuardedFile:
    """The file object HDF5 writes through (read, write, seek, tell, truncate, flush)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._raw = open(path, "r+b", buffering=0)  # noqa: SIM115  # closed by close()
        self.error: OSError | None = None

    def readinto(self, buffer: Any) -> int:
        return self._raw.readinto(buffer) or 0

    def read(self, size: int = -1) -> bytes:
        return self._raw.read(size) or b""

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        size = len(view)
        if self.error is None:
            try:
                while view:  # a raw write may write only part of the bytes
                    view = view[self._raw.write(view) or 0:]
            except OSError as error:
                self.error = error
        return size

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def truncate(self, size: int | None = None) -> int:
        if self.error is None:
            try:
                return self._raw.truncate(size)
            except OSError as error:
                self.error = error
        return self._raw.tell() if size is None else size

    def flush(self) -> None:
        """Nothing is buffered here (``atomic_write`` syncs the file)."""

    def close(self) -> None:
        self._raw.close()


class HDF5Output:
    """``with HDF5Output(tmp) as out:`` writes ``out.file`` (an ``h5py.File`` opened ``"w"``
    on ``tmp``, a temporary of ``atomic_write``). ``out.check()`` raises the first failed write
    (an ``OSError``): call it after each dataset of a long write to stop at once. Leaving the
    block closes the file and raises that error, if any."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import h5py

        self._guard = _GuardedFile(path)
        try:
            self.file = h5py.File(self._guard, "w")
        except BaseException:
            self._guard.close()
            raise

    def check(self) -> None:
        if self._guard.error is not None:
            raise self._guard.error

    def close(self) -> None:
        try:
            self.file.close()
        finally:
            self._guard.close()
        self.check()

    def __enter__(self) -> HDF5Output:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            self.close()
        except OSError:
            if kind is None:
                raise  # else the error already on its way (usually this one) goes on
