"""odtk.plot_tree: trees and diagrams drawn with matplotlib."""
from __future__ import annotations

import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import odtk

matplotlib.use("Agg")  # no display needed

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"age": rng.integers(18, 70, 40), "colour": rng.choice(["red", "blue"], 40)})
    return X, np.where((X["age"] > 40) & (X["colour"] == "blue"), "yes", "no")


def _png(ax, path) -> bytes:
    ax.figure.savefig(path, format="png")
    return path.read_bytes()


def test_tree_and_diagram_render_to_png(frame, tmp_path):
    X, y = frame
    tree = odtk.OptimalTreeClassifier(max_depth=2, thresholds="quantiles", max_thresholds=3).fit(X, y)
    diagram = odtk.OptimalDiagramClassifier(skeleton="1-2", univariate=True, strategy="heuristic",
                                            heuristic_time=0.1).fit(X[["age"]], y)
    for name, model in (("tree", tree), ("diagram", diagram)):
        ax = odtk.plot_tree(model)
        texts = [t.get_text() for t in ax.texts]
        assert {"yes", "no"} <= set(texts) and any("n = 40" in t for t in texts)
        png = _png(ax, tmp_path / f"{name}.png")
        assert png.startswith(PNG_SIGNATURE) and len(png) > 5_000


def test_plot_tree_takes_results_models_and_rows(frame, tmp_path):
    X, y = frame
    result = odtk.solve("flowoct", (X, y), depth=1, thresholds="quantiles", max_thresholds=3)
    _, ax = plt.subplots()
    assert odtk.plot_tree(result, ax=ax, X=X, y=y) is ax
    boxes = [t.get_text().split("\n") for t in ax.texts if "\n" in t.get_text()]
    leaves = [lines for lines in boxes if lines[0] in ("yes", "no")]
    assert len(leaves) == 2 and sum(int(lines[1].removeprefix("n = ")) for lines in leaves) == len(y)
    assert _png(odtk.plot_tree(result.model.graph), tmp_path / "graph.png").startswith(PNG_SIGNATURE)
    with pytest.raises(TypeError, match="plot_tree draws"):
        odtk.plot_tree("tree")
    with pytest.raises(ValueError, match="labels as y"):
        odtk.plot_tree(result, X=X)


def test_import_odtk_does_not_import_matplotlib():
    code = "import sys, odtk; assert 'matplotlib' not in sys.modules and 'plot_tree' in dir(odtk)"
    subprocess.run([sys.executable, "-c", code], check=True)
