"""Reading and writing the files a user names: regular files only, read with a size cap,
written whole.

A device (``/dev/zero``), a FIFO or a folder given where odtk expects a file would be read
forever or block; a file far larger than anything odtk can use would fill the memory. Both
are refused before reading, as an :class:`OSError` whose ``strerror`` says why (the callers
turn it into their one-line message). A file odtk writes goes through a temporary file, never
replacing one that exists unless asked (:func:`write_atomic`), and never over a file the same
command reads, even when asked (:func:`check_apart`).
"""
from __future__ import annotations

import errno
import gzip
import io
import os
import secrets
import stat
import zlib
from collections.abc import Mapping
from pathlib import Path

from odtk.exceptions import DataError

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


def check_writable(path: str | os.PathLike, force: bool = False) -> Path:
    """``path`` as a Path if a file may be written there; else a one-line DataError saying why."""
    path = Path(path)
    try:
        exists = path.exists()
        regular = path.is_file()
    except OSError as exc:
        raise DataError(f"Cannot write {path} ({exc.strerror}); choose another file name.") from None
    if exists and not regular:
        raise DataError(f"{path} is not a regular file (a device, pipe or folder); odtk does not replace it, "
                        "even with --force: choose a file name.")
    if exists and not force:
        raise DataError(f"{path} already exists; choose another name or pass --force to overwrite it.")
    if not path.parent.is_dir():
        raise DataError(f"There is no folder {path.parent}; create it first or choose another folder.")
    if not os.access(path.parent, os.W_OK):
        raise DataError(f"Folder {path.parent} is not writable; choose a folder you can write to.")
    return path


def check_apart(outputs: Mapping[str, str | os.PathLike | None],
                inputs: Mapping[str, str | os.PathLike | None]) -> None:
    """Refuse a command that would write over a file it reads, or write one file twice.

    Parameters
    ----------
    outputs, inputs
        The files the command writes and reads, by the option (or variable) naming them;
        ``None`` where none is given.

    Raises
    ------
    DataError
        When an output is the same file as an input or as an earlier output (see
        :func:`same_file`), naming both options and the file; ``--force`` does not change this.
    """
    order = [*outputs, *inputs]  # options named in this order: outputs first
    given = {option: path for option, path in inputs.items() if path}
    for option, path in outputs.items():
        if not path:
            continue
        for other, other_path in given.items():
            if same_file(path, other_path):
                first, second = sorted((option, other), key=order.index)
                paths = {option: str(path), other: str(other_path)}
                shown = paths[first] if paths[first] == paths[second] else f"{paths[first]} is {paths[second]}"
                raise DataError(f"{first} and {second} name the same file ({shown}); odtk never writes over "
                                "a file it reads or writes in the same command, even with --force: give them "
                                "different file names.")
        given[option] = path


def same_file(first: str | os.PathLike, second: str | os.PathLike) -> bool:
    """Whether two paths name one file: the same device and inode when both exist (a hard link,
    a symbolic link, ``./``), else the same path once links and relative parts are resolved."""
    try:
        return os.path.samefile(first, second)
    except OSError:  # one does not exist (yet), or cannot be examined
        return _resolved(first) == _resolved(second)


def _resolved(path: str | os.PathLike) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a symbolic link loop: the path as written, made absolute
        return Path(os.path.abspath(path))


def write_atomic(path: str | os.PathLike, content: str | bytes, force: bool = False) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` via a temporary file in the same folder, so
    ``path`` never holds half a file; never silently overwrite (see :func:`check_writable`). The
    file gets the usual permissions (0666 less the umask). A failure leaves no temporary file
    and is a DataError."""
    path = check_writable(path, force)
    data = content.encode("utf-8") if isinstance(content, str) else content
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as stream:
            stream.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise DataError(f"Cannot write {path} ({exc.strerror or exc}); choose another file name or folder.") from None
    finally:
        tmp.unlink(missing_ok=True)

