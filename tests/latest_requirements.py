"""Print odtk's requirements (with the extras named on the command line) without upper bounds.

``make test-latest`` installs odtk without its dependencies, then these (one per line, a
requirements file), to test odtk against the newest release of every dependency, beyond the
tested ranges of ``pyproject.toml``. They are read from the installed odtk's metadata
(``pyproject.toml`` itself needs ``tomllib``, which Python 3.10 lacks).
"""
from __future__ import annotations

import re
import sys
from importlib.metadata import requires

EXTRA = r"""\s*(?:and\s+)?extra\s*==\s*['"]([^'"]+)['"]"""


def unbounded(requirement: str) -> str:
    """``requirement`` with its ``<`` / ``<=`` clauses dropped (lower bounds kept)."""
    name, _, spec = re.match(r"([A-Za-z0-9_.\-\[\]]+)(\s*)(.*)", requirement).groups()
    kept = [clause.strip() for clause in spec.split(",") if clause.strip() and not clause.strip().startswith("<")]
    return name + ",".join(kept)


def selected(requirement: str, extras: set[str]) -> str | None:
    """``requirement`` unbounded, with its other markers (``python_version``) but no extra,
    when odtk needs it with ``extras``; else None."""
    spec, _, marker = requirement.partition(";")
    extra = re.search(EXTRA, marker)
    if extra is not None and extra.group(1) not in extras:
        return None
    rest = re.sub(EXTRA, "", marker).strip()
    return unbounded(spec.strip()) + (f"; {rest}" if rest else "")


def main(extras: list[str]) -> None:
    chosen = {extra for extra in ",".join(extras).split(",") if extra}
    wanted = [selected(requirement, chosen) for requirement in requires("odtk") or []]
    print("\n".join(requirement for requirement in wanted if requirement))


if __name__ == "__main__":
    main(sys.argv[1:])
