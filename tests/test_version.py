"""odtk's version is written in one place, ``pyproject.toml``: ``odtk --version`` and
``odtk.__version__`` both read it from the installed package."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import odtk

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def pyproject_version() -> str:
    """The ``version`` of pyproject.toml's [project] table (Python 3.10 has no tomllib)."""
    return re.search(r'^version\s*=\s*"([^"]+)"', PYPROJECT.read_text(), re.M).group(1)


def test_odtk_version_prints_the_pyproject_version():
    run = subprocess.run([sys.executable, "-m", "odtk", "--version"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"odtk {pyproject_version()}\n"


def test_dunder_version_is_the_pyproject_version():
    assert odtk.__version__ == pyproject_version()


def test_import_odtk_reads_no_package_metadata_until_asked():
    """``import odtk`` stays light: the version is looked up on first read."""
    code = ("import sys, odtk\nprint('importlib.metadata' in sys.modules)\n"
            "odtk.__version__\nprint('importlib.metadata' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]
