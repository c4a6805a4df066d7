"""Sphinx configuration of odtk's documentation (``make docs``)."""
from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

from sphinx.util import logging  # noqa: E402

import odtk  # noqa: E402  (after the path: the installed or the checked-out package)

project = "odtk"
author = "the odtk authors"
copyright = "the odtk authors"  # noqa: A001  (Sphinx's name)
release = version = odtk.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_click",
    "myst_parser",
    "odtk_examples",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "requirements.txt"]
root_doc = "index"

# API reference: one page per public name, members in source order, the numpydoc docstrings.
autosummary_generate = True
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # the signature shows them; numpydoc's Parameters say the rest
numpydoc_show_class_members = False  # autodoc lists the members
numpydoc_class_members_toctree = False

# Markdown pages (the guide, the papers, DATASETS.md): GitHub-style anchors for headings,
# so links written for GitHub (`file.md#a-heading`) resolve in the site as well.
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"odtk {release}"
html_static_path: list[str] = []
templates_path = ["_templates"]


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out members another library defines (scikit-learn's ``set_fit_request``, …)."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and callable(obj) and not module.startswith("odtk"):
        return True
    return None


def _check_public_names(app):
    """Warn (an error under ``-W``) about a name of ``odtk.__all__`` the API page leaves out."""
    listed = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    missing = [name for name in odtk.__all__ if f"odtk.{name}\n" not in listed]
    if missing:
        logging.getLogger(__name__).warning("docs/api/index.rst does not list odtk.%s", ", odtk.".join(missing))


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("builder-inited", _check_public_names)
