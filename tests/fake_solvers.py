"""Stand-in solvers for fault tests: CBC look-alike shell scripts and registries that name them."""
from __future__ import annotations

import importlib.resources
from pathlib import Path

import yaml

VERSION_LINE = "Welcome to the CBC MILP Solver Version: 2.10.12"


def bundled_entries() -> dict:
    """The bundled solver registry as plain data, to copy entries from."""
    return yaml.safe_load((importlib.resources.files("odtk") / "solvers.yaml").read_text())


def write_registry(path: Path, entries: dict) -> Path:
    """A solver registry file (for ``$ODTK_SOLVERS``) holding ``entries``."""
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return path


def fake_cbc(path: Path, action: str) -> Path:
    """A shell script that answers ``-quit`` like CBC and otherwise does ``action``."""
    path.write_text(f'#!/bin/sh\nif [ "$1" = "-quit" ]; then echo "{VERSION_LINE}"; exit 0; fi\n{action}\n')
    path.chmod(0o755)
    return path


def fake_registry(folder: Path, **executables: Path) -> Path:
    """A solver registry: the bundled highs entry plus one copy of the cbc entry per fake binary."""
    bundled = bundled_entries()
    entries = {"highs": bundled["highs"]}
    for name, binary in executables.items():
        entries[name] = {**bundled["cbc"], "description": f"fake CBC: {name}", "executable": str(binary)}
    return write_registry(folder / "solvers.yaml", entries)
