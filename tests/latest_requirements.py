"""Print odtk's requirements (with the extras named on the command line) without upper bounds.

``make test-latest`` installs these to test odtk against the newest release of every
dependency, beyond the tested ranges of ``pyproject.toml``.
"""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path


def unbounded(requirement: str) -> str:
    """``requirement`` with its ``<`` / ``<=`` clauses dropped (lower bounds kept)."""
    name, _, spec = re.match(r"([A-Za-z0-9_.\-\[\]]+)(\s*)(.*)", requirement).groups()
    kept = [clause.strip() for clause in spec.split(",") if clause.strip() and not clause.strip().startswith("<")]
    return name + ",".join(kept)


def main(extras: list[str]) -> None:
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in ",".join(extras).split(","):
        if extra:
            requirements += project["optional-dependencies"][extra]
    print(" ".join(unbounded(r) for r in requirements))


if __name__ == "__main__":
    main(sys.argv[1:])
