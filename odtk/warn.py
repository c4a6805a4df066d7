"""Warnings that point at the user's line: the first caller outside odtk, however deep in odtk
(or in its formulations) the warning is raised.

On Python 3.12 and later :func:`warnings.warn` skips odtk's frames itself
(``skip_file_prefixes``); before, the stack level is counted the same way.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import FrameType

import odtk

# odtk's sources, and its formulations wherever they are installed (a source checkout links them)
PREFIXES = tuple(sorted({str(Path(odtk.__file__).parent) + "/",
                         str(Path(odtk.__file__).parent.resolve()) + "/",
                         str((Path(odtk.__file__).parent / "formulations").resolve()) + "/"}))


def warn(message: str, category: type[Warning]) -> None:
    """Issue ``message`` as a ``category`` warning attributed to the first line outside odtk."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=PREFIXES)  # type: ignore[call-arg]
        return
    warnings.warn(message, category, stacklevel=_user_level())


def _user_level() -> int:
    """The stack level of the first frame outside odtk, counted from :func:`warn`'s caller."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(PREFIXES):
        frame, level = frame.f_back, level + 1
    return level
