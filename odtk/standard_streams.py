"""The ``odtk`` command's standard streams: an answer that cannot be written is an error.

- A descriptor 0, 1 or 2 that the command starts without (``odtk ... 2>&-``) is opened on the
  null device first (:func:`open_closed_descriptors`), so that no file odtk or a solver opens
  later takes its number: a log written to "standard error" would land in a saved model.
- Standard output closed (``>&-``): the command is refused, as nothing it answers could be
  shown (:func:`stdout_closed`); ``> /dev/null`` discards the output on purpose.
- Standard error closed: the command runs, its messages are dropped (never written on standard
  output) and its exit code says how it ended.
- A write to standard output that fails (a full disk, ``/dev/full``, an I/O error) ends the
  command with a one-line error (:func:`failed_output`); a pipe closed by its reader
  (``odtk ... | head``) ends it quietly with exit code 1, as click does.
"""
from __future__ import annotations

import errno
import os
import sys
import traceback

import click

STANDARD_DESCRIPTORS = (0, 1, 2)


def open_closed_descriptors() -> None:
    """Open each of the standard descriptors that is closed on the null device; standard error
    closed, Python's ``sys.stderr`` (None) becomes that device too, so that every message odtk or
    click writes there is dropped alike."""
    for descriptor in STANDARD_DESCRIPTORS:
        try:
            os.fstat(descriptor)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: ``descriptor`` itself
            if null != descriptor:
                os.dup2(null, descriptor)
                os.close(null)
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # the process's standard error: never closed


def stdout_closed() -> bool:
    """Whether the process started with standard output closed (Python then has no ``sys.stdout``)."""
    return sys.stdout is None


def failed_output(exc: OSError) -> str | None:
    """The reason to give when ``exc`` is a failed write of the command's output (raised inside
    :func:`click.echo`, but not a pipe its reader closed); else None. Standard output is then
    pointed at the null device, so that the exit does not try the failed write again."""
    if exc.errno == errno.EPIPE or not any(frame.f_code is click.echo.__code__
                                           for frame, _ in traceback.walk_tb(exc.__traceback__)):
        return None
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's captured output)
        pass
    return exc.strerror or str(exc)
