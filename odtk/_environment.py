"""Thread-count variables of the environment that a library odtk loads would fail on.

numexpr, which pandas loads when it is installed, reads ``NUMEXPR_NUM_THREADS``, or else
``OMP_NUM_THREADS``, with ``int()`` when it is imported: any other text
(``OMP_NUM_THREADS=abc``, or OpenMP's list form ``4,2``) ends the import in a traceback, and a
number below 1 (there or in ``NUMEXPR_MAX_THREADS``) makes it print an error on standard
output. ``import odtk`` therefore sets such a value aside (removes it from the environment)
before numpy, pandas or numexpr can read it, so that every library takes its default; the
command line, or else the first solve, says so in a warning (:func:`warn_set_aside`). An
OpenMP list of thread counts is valid and kept; numexpr is given its first count instead.
"""
from __future__ import annotations

import os
import re
from collections.abc import MutableMapping

THREAD_VARIABLES = ("OMP_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS")
_COUNT = re.compile(r"0*[1-9][0-9]*")
_set_aside: list[str] = []  # the warnings still to give, one per variable set aside


def set_aside_invalid_thread_counts(environ: MutableMapping[str, str] = os.environ) -> list[str]:
    """Remove from ``environ`` each of :data:`THREAD_VARIABLES` that is set to anything but a
    whole number above 0 (``OMP_NUM_THREADS``: or OpenMP's list of them, such as ``4,2``); the
    warnings for them, also kept for :func:`warn_set_aside`."""
    found = []
    for name in THREAD_VARIABLES:
        value = environ.get(name, "")
        counts = value.strip().split(",") if name == "OMP_NUM_THREADS" else [value.strip()]
        if value == "" or all(_COUNT.fullmatch(count.strip()) for count in counts):
            continue  # unset, empty (numexpr's "unset" too) or valid
        del environ[name]
        found.append(f"{name}={value!r} is not a number of threads (a whole number above 0), so odtk set it "
                     "aside and every library it loads takes its default; set it to a number such as 4, "
                     "or unset it.")
    omp = environ.get("OMP_NUM_THREADS", "")
    if "," in omp and not environ.get("NUMEXPR_NUM_THREADS", "").strip():
        environ["NUMEXPR_NUM_THREADS"] = omp.split(",")[0].strip()  # numexpr reads no list
    _set_aside.extend(found)
    return found


def warn_set_aside() -> None:
    """Give the warnings of :func:`set_aside_invalid_thread_counts` not given yet, once each."""
    from odtk.exceptions import OdtkWarning
    from odtk.warn import warn

    while _set_aside:
        warn(_set_aside.pop(0), OdtkWarning)
