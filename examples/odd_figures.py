"""Florio et al., Optimal Decision Diagrams: odtk's Figures 2 and 3 as PNG files.

Figure 2 of the paper is a box plot of the test accuracy of the chosen ODDs and ODTs over
the selected datasets and seeds; Figure 3 plots the same test accuracies (multivariate
splits, 18 datasets × 5 seeds) sorted in ascending order, one curve per model. The paper
gives no numbers for either, only statements ("higher first, second, and third quartiles",
"the sorted accuracy of the ODDs superposes that of the best ODTs"), which each panel quotes.
odtk draws one panel per split type run, from the pairs of ``odd_claims.chosen_models`` the
paper's rule keeps; an instance whose ODD or ODT is not proven optimal is drawn hollow.

Not a script: ``examples/odd_paper.py --figures DIR`` calls it.
"""
from __future__ import annotations

import io
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from odtk.exceptions import DataError
from odtk.files import check_writable, write_atomic

FILES = ("figure_2.png", "figure_3.png")
STATEMENTS = {  # the paper's words on its Figures 2 and 3, per split type
    "figure_2": {"multivariate": "paper: ODDs higher Q1, median, Q3; fewer low outliers",
                 "univariate": "paper: ODDs and ODTs comparable"},
    "figure_3": {"multivariate": "paper (18 × 5 instances): the ODD curve lies above the ODT's",
                 "univariate": "paper: not drawn (comparable accuracy)"},
}
COLOURS = {"ODD": "C0", "ODT": "C1"}
LINES = {"ODD": {"linewidth": 4, "alpha": 0.6}, "ODT": {"linewidth": 1.5, "linestyle": "--"}}  # both seen where equal
MARKER = {"ODD": 60, "ODT": 18}
PANEL = (5.5, 4.5)  # inches per split type
DPI = 100


def figures_folder(folder: Path | None, db: Path, force: bool) -> Path:
    """The folder the figures go to, checked before any run starts. ``folder`` (``--figures``) is
    created if missing; a figure file there is replaced only with ``force`` (else a one-line
    DataError naming ``--force``). Without ``folder``: ``<db stem>-figures`` beside the results
    database, or, when that one holds figures already (a resumed run), the first free
    ``<db stem>-figures-2``, ``-3``, …: an earlier run's figures are never overwritten."""
    if folder is None:
        names = (db.with_name(f"{db.stem}-figures{f'-{k}' if k > 1 else ''}") for k in itertools.count(1))
        folder = next(path for path in names if not any((path / name).exists() for name in FILES))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"Cannot create the figures folder {folder} ({exc.strerror}); choose another "
                        "--figures folder.") from None
    for name in FILES:
        check_writable(folder / name, force)
    return folder


def draw_figures(pairs: pd.DataFrame, splits: list[str], folder: Path) -> list[Path]:
    """Write Figures 2 and 3 of the kept ``pairs`` (one panel per split type in ``splits``) into
    ``folder`` (checked by :func:`figures_folder`); returns the files written."""
    kept = pairs[pairs["kept"]]
    drawers = {"figure_2.png": _box_panel, "figure_3.png": _sorted_panel}
    titles = {"figure_2.png": "Figure 2 (odtk): test accuracy of the chosen ODTs and ODDs",
              "figure_3.png": "Figure 3 (odtk): test accuracy per dataset × seed, ascending order"}
    written = []
    for name, draw in drawers.items():
        figure = Figure(figsize=(PANEL[0] * len(splits), PANEL[1]), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        figure.suptitle(titles[name])
        axes = figure.subplots(1, len(splits), squeeze=False)[0]
        for ax, split_type in zip(axes, splits):
            draw(ax, kept[kept["split_type"] == split_type], split_type)
        image = io.BytesIO()
        figure.savefig(image, format="png", dpi=DPI)
        write_atomic(folder / name, image.getvalue(), force=True)  # checked, force or new, by figures_folder
        written.append(folder / name)
    return written


def _accuracies(group: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Model → (test accuracies, whether each instance's ODD and ODT are both proven)."""
    proven = (group["proven"] & group["proven_odt"]).to_numpy(bool)
    return {"ODD": (group["test_accuracy"].to_numpy(float), proven),
            "ODT": (group["test_accuracy_odt"].to_numpy(float), proven)}


def _title(ax: Axes, group: pd.DataFrame, split_type: str, figure: str) -> None:
    """Panel title: split type, instances and how the datasets were selected; the paper's words."""
    selection = ("the paper's rule" if group["rule"].iloc[0] else "all: none passes the rule") if len(group) else "-"
    ax.set_title(f"{split_type}: {len(group)} instances, {group['dataset'].nunique()} datasets "
                 f"(selected by {selection})\n{STATEMENTS[figure][split_type]}", fontsize="medium")
    ax.set_ylabel("test accuracy")
    ax.grid(True, axis="y", alpha=0.3)
    if len(group):
        low = min(group["test_accuracy"].min(), group["test_accuracy_odt"].min())
        ax.set_ylim(max(0.0, low - 0.05), 1.02)


def _no_instance(ax: Axes) -> None:
    ax.text(0.5, 0.5, "no instance", transform=ax.transAxes, ha="center", va="center", color="grey")


def _box_panel(ax: Axes, group: pd.DataFrame, split_type: str) -> None:
    """Figure 2: box plots of the ODTs' and ODDs' test accuracies, every instance as a dot."""
    _title(ax, group, split_type, "figure_2")
    if group.empty:
        _no_instance(ax)
        return
    accuracies = _accuracies(group)
    order = ["ODT", "ODD"]  # the paper's order, left to right
    boxes = ax.boxplot([accuracies[model][0] for model in order], patch_artist=True, medianprops={"color": "black"},
                       showfliers=False)
    ax.set_xticks([1, 2], order)
    jitter = np.random.default_rng(0).uniform(-0.12, 0.12, len(group))
    for position, (patch, model) in enumerate(zip(boxes["boxes"], order), start=1):
        patch.set(facecolor=COLOURS[model], alpha=0.35)
        values, proven = accuracies[model]
        for mask, face in ((proven, COLOURS[model]), (~proven, "none")):
            ax.scatter(position + jitter[mask], values[mask], s=18, facecolors=face, edgecolors=COLOURS[model])
    ax.legend(handles=_proof_legend(), fontsize="small", loc="best")


def _sorted_panel(ax: Axes, group: pd.DataFrame, split_type: str) -> None:
    """Figure 3: each model's test accuracies in ascending order against their rank."""
    _title(ax, group, split_type, "figure_3")
    ax.set_xlabel("instance (dataset × seed), ascending accuracy")
    if group.empty:
        _no_instance(ax)
        return
    ranks = np.arange(1, len(group) + 1)
    for model, (values, proven) in _accuracies(group).items():  # the ODD's curve wide, the ODT's on it
        order = np.argsort(values, kind="stable")
        ax.plot(ranks, values[order], color=COLOURS[model], **LINES[model])
        ax.scatter(ranks, values[order], s=MARKER[model], edgecolors=COLOURS[model],
                   facecolors=np.where(proven[order], COLOURS[model], "none"), zorder=3)
    ax.legend(handles=[Line2D([], [], color=COLOURS[m], label=m, **LINES[m]) for m in ("ODD", "ODT")] + _proof_legend(),
              fontsize="small", loc="best")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _proof_legend() -> list[Line2D]:
    return [Line2D([], [], marker="o", color="grey", linestyle="", label="ODD and ODT proven"),
            Line2D([], [], marker="o", color="grey", markerfacecolor="none", linestyle="", label="not proven")]
