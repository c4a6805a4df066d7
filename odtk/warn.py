"""Warnings that point at the user's line: the first caller outside odtk, however deep in odtk
(or in its formulations) the warning is raised.

On Python 3.12 and later :func:`warnings.warn` skips odtk's frames itself
(``skip_file_prefixes``); before, the stack level is counted the same way.
"""
from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import FrameType

import odtk


def _source_folders() -> tuple[str, ...]:
    """odtk's folder and its formulations' wherever they are: inside odtk in a wheel, the
    top-level ``formulations/`` in an editable checkout (found without importing them)."""
    spec = importlib.util.find_spec("odtk.formulations")
    found = spec.submodule_search_locations if spec is not None else None
    folders = [Path(odtk.__file__).parent, *(Path(f) for f in found or [])]
    return tuple(sorted({f"{path}/" for folder in folders for path in (folder, folder.resolve())}))


PREFIXES = _source_folders()


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
