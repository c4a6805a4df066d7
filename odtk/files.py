"""Reading the files a user names: regular files only, read with a size cap.

A device (``/dev/zero``), a FIFO or a folder given where odtk expects a file would be read
forever or block; a file far larger than anything odtk can use would fill the memory. Both
are refused before reading, as an :class:`OSError` whose ``strerror`` says why (the callers
turn it into their one-line message).
"""
from __future__ import annotations

import errno
import gzip
import io
import os
import stat
import zlib

MEGABYTE = 2**20
GZIP_MAGIC = b"\x1f\x8b"
LIMITS = {  # bytes odtk reads at most, per kind of file
    "csv": 512 * MEGABYTE,
    "model": 64 * MEGABYTE,
    "config": MEGABYTE,  # grid files, solver registries
}


def read_regular(path: str | os.PathLike, kind: str) -> bytes:
    """The bytes of ``path``, which must be a regular file within ``LIMITS[kind]``; opening
    never blocks (a FIFO is refused, not waited on). A gzip file is read uncompressed, its
    content within the same cap."""
    limit = LIMITS[kind]
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a device, pipe or folder)")
        _within(info.st_size, limit)  # refused at once, not after reading the first ``limit`` bytes
        data = stream.read(limit + 1)
    _within(len(data), limit)
    if data.startswith(GZIP_MAGIC):  # a gzip file: its content, within the same cap
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
                data = unpacked.read(limit + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise OSError(errno.EINVAL, f"a damaged gzip file ({exc})") from None
        _within(len(data), limit)
    return data


def _within(size: int, limit: int) -> None:
    if size > limit:
        raise OSError(errno.EFBIG, f"larger than the {limit // MEGABYTE} MB odtk reads for such a file")
