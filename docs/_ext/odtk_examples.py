"""The ``odtk-examples`` directive: every script of ``examples/`` with its module docstring.

A script is a file of ``examples/`` whose name does not start with ``_`` and that runs as
``python examples/<name>.py`` (it has an ``if __name__ == "__main__"`` block); the other
modules are helpers the scripts import, listed with the first line of their docstrings.
"""
from __future__ import annotations

import ast
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _docstring(path: Path) -> tuple[str, bool]:
    """The module docstring of ``path`` and whether it is a script."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    script = any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)
    return ast.get_docstring(tree) or "", script


class ExamplesDirective(SphinxDirective):
    """Sections for the example scripts, then a list of the helper modules."""

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        helpers: list[str] = []
        for path in sorted(EXAMPLES.glob("*.py")):
            self.env.note_dependency(str(path))
            text, script = _docstring(path)
            if not script:
                helpers.append(f"* ``examples/{path.name}``: {text.splitlines()[0] if text else ''}")
                continue
            title = f"``{path.name}``"
            lines += [title, "-" * len(title), "", f"``python examples/{path.name} --help``", "",
                      *text.splitlines(), ""]
        lines += ["Helper modules", "-" * 14, "", *helpers, ""]
        container = nodes.section()
        nested_parse_with_titles(self.state, StringList(lines, source=str(EXAMPLES)), container)
        return container.children


def setup(app: Sphinx) -> dict[str, bool]:
    app.add_directive("odtk-examples", ExamplesDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
