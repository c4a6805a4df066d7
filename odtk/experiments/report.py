"""The report of an experiment campaign, built from its results database alone.

:func:`write_report` reads every run of a :class:`~odtk.experiments.store.ResultStore` and
writes into one folder:

* ``runs.csv`` — every run (all columns but the learned model);
* ``summary.md`` / ``summary.csv`` — per method and solver: run counts, median wall time,
  mean gap of the runs not solved to optimality, mean accuracies (:func:`summary_table`);
* ``selection.md`` / ``selection.csv`` — the setting chosen on validation accuracy per
  campaign, dataset, sample size, seed, method and solver, with its test accuracy
  (:func:`selection_table`);
* ``failures.md`` — the failed runs and why;
* ``profile.png``, ``gap_vs_size.png``, ``test_accuracy_box.png``, ``sorted_accuracy.png``.

Every file is written through a temporary file in the same folder, so a reader never sees
half a report file.
"""
from __future__ import annotations

import io
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from odtk.exceptions import DataError, SkeletonError
from odtk.experiments.runner import select
from odtk.experiments.store import COLUMNS, ResultStore
from odtk.files import write_atomic
from odtk.skeletons import SHAPES, parse_widths, topology_skeleton

SETTING = ["options", "depth", "skeleton"]
SELECTION_KEY = ["campaign", "dataset", "rows", "seed", "method", "solver"]
PLOTS = ["profile.png", "gap_vs_size.png", "test_accuracy_box.png", "sorted_accuracy.png"]
FILES = ["runs.csv", "summary.md", "summary.csv", "selection.md", "selection.csv", "failures.md", *PLOTS]
FIGSIZE = (7.0, 4.5)  # inches, at DPI: 700 × 450 pixels
DPI = 100
_LINESTYLES = ["-", "--", ":", "-."]
_MARKERS = "osD^vP*Xhp"


def write_report(db_path: str | os.PathLike, out_dir: str | os.PathLike, force: bool = False) -> list[Path]:
    """Write the report of the results database ``db_path`` into ``out_dir``; return the files.

    ``out_dir`` is created if missing. If any report file already exists there, nothing is
    written and :class:`~odtk.exceptions.DataError` is raised, unless ``force``.
    """
    db_path, out_dir = Path(db_path), Path(out_dir)
    if not db_path.is_file():
        raise DataError(f"Results database {db_path} does not exist; run the campaign first or check --db.")
    runs = _typed(ResultStore(db_path, read_only=True).frame().drop(columns="model"))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"Cannot create the report folder {out_dir} ({exc.strerror}); choose another --out "
                        "folder.") from None
    existing = [name for name in FILES if (out_dir / name).exists()]
    if existing and not force:
        raise DataError(f"{out_dir} already holds {', '.join(existing)}; pass --force to overwrite the report.")
    summary, selection = summary_table(runs), selection_table(runs)
    texts = {
        "runs.csv": runs.to_csv(index=False),
        "summary.md": _summary_markdown(summary, db_path, runs),
        "summary.csv": summary.to_csv(index=False),
        "selection.md": _selection_markdown(selection, db_path),
        "selection.csv": selection.to_csv(index=False),
        "failures.md": _failures_markdown(runs, db_path),
    }
    for name, text in texts.items():
        write_atomic(out_dir / name, text, force=True)
    styles = _method_styles(runs)
    plotters: dict[str, Callable[[Axes], None]] = {
        "profile.png": lambda ax: _plot_profile(ax, runs, styles),
        "gap_vs_size.png": lambda ax: _plot_gap_vs_size(ax, runs, styles),
        "test_accuracy_box.png": lambda ax: _plot_accuracy_box(ax, selection, styles),
        "sorted_accuracy.png": lambda ax: _plot_sorted_accuracy(ax, selection, styles),
    }
    for name, plot in plotters.items():
        _save_plot(out_dir / name, plot)
    return [out_dir / name for name in FILES]


# --- tables -------------------------------------------------------------------------------


def _typed(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs with numeric columns as numbers (an empty or all-NULL column is ``object``)."""
    runs = runs.copy()
    for name, kind in COLUMNS.items():
        if name in runs and kind == "INTEGER":
            runs[name] = pd.to_numeric(runs[name]).astype("Int64")
        elif name in runs and kind == "REAL":
            runs[name] = pd.to_numeric(runs[name]).astype("float64")
    return runs


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (method, solver), over all runs of both phases: counts, times, gaps, accuracies.

    ``median_wall_time_s`` and the mean accuracies are over the done runs;
    ``mean_gap_pct`` over the done runs not solved to optimality (with a finite gap).
    """
    done = runs["status"].eq("done")
    optimal = done & runs["termination"].eq("optimal")
    gap = 100 * runs["gap"].where(np.isfinite(runs["gap"]))
    flags = runs.assign(
        done=done, failed=runs["status"].eq("failed"), optimal=optimal,
        done_wall_time=runs["wall_time"].where(done), open_gap=gap.where(done & ~optimal),
        **{f"done_{part}": runs[f"{part}_accuracy"].where(done) for part in ("train", "val", "test")},
    )
    return flags.groupby(["method", "solver"], dropna=False).agg(
        runs=("id", "size"), done=("done", "sum"), failed=("failed", "sum"), optimal=("optimal", "sum"),
        median_wall_time_s=("done_wall_time", "median"), mean_gap_pct=("open_gap", "mean"),
        mean_train_accuracy=("done_train", "mean"), mean_val_accuracy=("done_val", "mean"),
        mean_test_accuracy=("done_test", "mean"),
    ).reset_index()


def selection_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The settings chosen on validation accuracy, with their test accuracy.

    Where the campaign retrained its choices, the done retrain runs are the selection (test
    accuracy after retraining on train + validation, ``test_source`` "retrain"); elsewhere the
    grid run :func:`~odtk.experiments.runner.select` picks per campaign, dataset, sample size,
    seed, method and solver, with its own test accuracy ("grid").
    """
    grid = runs[runs["phase"].eq("grid") & runs["status"].eq("done")]
    retrain = runs[runs["phase"].eq("retrain") & runs["status"].eq("done")][[*SELECTION_KEY, *SETTING, "test_accuracy"]]
    validated = grid[[*SELECTION_KEY, *SETTING, "val_accuracy"]].drop_duplicates([*SELECTION_KEY, *SETTING])
    retrained = retrain.merge(validated, on=[*SELECTION_KEY, *SETTING], how="left").assign(test_source="retrain")
    covered = retrained[SELECTION_KEY].drop_duplicates().assign(_covered=True)
    picked = select(runs).merge(covered, on=SELECTION_KEY, how="left")
    picked = picked[picked["_covered"].isna()].assign(test_source="grid")
    columns = [*SELECTION_KEY, *SETTING, "val_accuracy", "test_accuracy", "test_source"]
    return pd.concat([retrained[columns], picked[columns]]).sort_values(SELECTION_KEY, ignore_index=True)


def _summary_markdown(summary: pd.DataFrame, db_path: Path, runs: pd.DataFrame) -> str:
    return (
        f"# Summary of {db_path.name}\n\n"
        f"{len(runs)} runs (grid and retrain phases), counted per method and solver. Median wall time and "
        "mean accuracies are over done runs; mean gap (%) over done runs not solved to optimality.\n\n"
        + _markdown_table(summary)
    )


def _selection_markdown(selection: pd.DataFrame, db_path: Path) -> str:
    return (
        f"# Selected settings in {db_path.name}\n\n"
        "The settings retrained on train + validation (`test_source` retrain) or, where none was, "
        "per campaign, dataset, rows, seed, method and solver the done grid run of best validation "
        "accuracy (ties: the smaller depth, then the first setting in a fixed order).\n\n"
        + _markdown_table(selection)
    )


def _failures_markdown(runs: pd.DataFrame, db_path: Path) -> str:
    failed = runs[runs["status"].eq("failed")]
    columns = ["campaign", "phase", "dataset", "seed", "method", "solver", *SETTING, "attempts", "message"]
    return f"# Failed runs in {db_path.name}\n\n" + _markdown_table(failed[columns])


def _markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub markdown table of ``frame``, or "none" when it has no rows."""
    if frame.empty:
        return "none\n"
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


# --- plots --------------------------------------------------------------------------------


def _save_plot(path: Path, plot: Callable[[Axes], None]) -> None:
    """Draw ``plot`` on a fresh figure and save it as PNG (atomically)."""
    figure = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    plot(figure.add_subplot())
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=DPI)
    write_atomic(path, image.getvalue(), force=True)


def _method_styles(runs: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """One colour and marker per method, the same in every plot."""
    methods = sorted(runs["method"].dropna().unique())
    return {method: {"color": f"C{i % 10}", "marker": _MARKERS[i % len(_MARKERS)]}
            for i, method in enumerate(methods)}


def _no_runs(ax: Axes) -> None:
    ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center", va="center", fontsize=14, color="grey")
    ax.set(xticks=[], yticks=[])


def _log_x(ax: Axes) -> None:
    """Log-scale x axis labelled with plain numbers: at 1, 2, 5 × 10^k over a short range, else
    at powers of ten (minor ticks unlabelled, as their labels would overlap)."""
    ax.set_xscale("log")
    low, high = ax.get_xlim()
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if high <= 300 * low else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _legend(ax: Axes, title: str) -> None:
    ax.legend(title=title, fontsize="small", title_fontsize="small", loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _plot_profile(ax: Axes, runs: pd.DataFrame, styles: dict[str, dict[str, Any]]) -> None:
    """Grid runs solved to optimality within a time, one step line per (method, solver)."""
    grid = runs[runs["phase"].eq("grid")]
    solved = grid[grid["status"].eq("done") & grid["termination"].eq("optimal") & grid["wall_time"].notna()]
    ax.set(title="Performance profile: grid runs solved to optimality",
           xlabel="wall time (s, log scale)", ylabel="grid runs solved to optimality")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if solved.empty:
        _no_runs(ax)
        return
    times = solved["wall_time"].clip(lower=1e-3)
    end = np.nanmax([times.max(), grid["time_limit"].max()])  # lines run on to the time limit
    solvers = sorted(solved["solver"].dropna().unique())
    for (method, solver), group in solved.assign(time=times).groupby(["method", "solver"]):
        steps = np.sort(group["time"].to_numpy())
        ax.step(np.r_[steps[0], steps, end], np.r_[0, np.arange(1, len(steps) + 1), len(steps)], where="post",
                color=styles[method]["color"], linestyle=_LINESTYLES[solvers.index(solver) % len(_LINESTYLES)],
                label=f"{method} / {solver}")
    _log_x(ax)
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, "method / solver")


def _branching_nodes(depth: Any, skeleton: Any) -> float:
    """Split nodes of a run's tree or diagram: from its skeleton (widths or shape), else its depth."""
    if isinstance(skeleton, str) and skeleton:
        if skeleton in SHAPES:
            graph = topology_skeleton(skeleton)
            return float(sum(1 for node in graph if graph.out_degree(node)))
        try:
            return float(sum(parse_widths(skeleton)))
        except SkeletonError:
            return math.nan
    return math.nan if pd.isna(depth) else 2.0 ** int(depth) - 1


def _plot_gap_vs_size(ax: Axes, runs: pd.DataFrame, styles: dict[str, dict[str, Any]]) -> None:
    """Optimality gap (%) of done runs against n_train × branching nodes, one marker per method."""
    done = runs[runs["status"].eq("done") & np.isfinite(runs["gap"])]
    size = done["n_train"].astype("float64") * [
        _branching_nodes(depth, skeleton) for depth, skeleton in zip(done["depth"], done["skeleton"])]
    shown = done.assign(size=size, gap_pct=100 * done["gap"])[size > 0]
    ax.set(title="Optimality gap of done runs by instance size",
           xlabel="instance size: training rows × branching nodes (log scale)", ylabel="optimality gap (%)")
    if shown.empty:
        _no_runs(ax)
        return
    for method, group in shown.groupby("method"):
        ax.scatter(group["size"], group["gap_pct"], **styles[method], alpha=0.7, label=method)
    if len(shown) < len(done):
        ax.text(0.01, 0.98, f"{len(done) - len(shown)} runs of unknown size not shown", transform=ax.transAxes,
                va="top", fontsize="small", color="grey")
    _log_x(ax)
    ax.grid(True, alpha=0.3)
    _legend(ax, "method")


def _accuracies(selection: pd.DataFrame) -> dict[str, np.ndarray]:
    """Method → its selected test accuracies (all campaigns, datasets, seeds and solvers)."""
    known = selection[selection["test_accuracy"].notna()]
    return {method: group["test_accuracy"].to_numpy(float) for method, group in known.groupby("method")}


def _plot_accuracy_box(ax: Axes, selection: pd.DataFrame, styles: dict[str, dict[str, Any]]) -> None:
    """Box plot of the selected test accuracy per method."""
    accuracies = _accuracies(selection)
    ax.set(title="Test accuracy of the selected settings", xlabel="method (number of selected settings)",
           ylabel="test accuracy")
    if not accuracies:
        _no_runs(ax)
        return
    boxes = ax.boxplot(list(accuracies.values()), patch_artist=True, showmeans=True,
                       medianprops={"color": "black"},
                       meanprops={"marker": "^", "markerfacecolor": "white", "markeredgecolor": "black"})
    for patch, method in zip(boxes["boxes"], accuracies):
        patch.set(facecolor=styles[method]["color"], alpha=0.6)
    ax.set_xticks(range(1, len(accuracies) + 1),
                  [f"{method} (n={len(values)})" for method, values in accuracies.items()],
                  rotation=30, ha="right", rotation_mode="anchor", fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(handles=[Line2D([], [], color="black", label="median"),
                       Line2D([], [], color="black", marker="^", markerfacecolor="white", linestyle="",
                              label="mean"),
                       Line2D([], [], color="black", marker="o", markerfacecolor="none", linestyle="",
                              label="outlier")],
              fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _plot_sorted_accuracy(ax: Axes, selection: pd.DataFrame, styles: dict[str, dict[str, Any]]) -> None:
    """Each method's selected test accuracies sorted ascending against their rank."""
    accuracies = _accuracies(selection)
    ax.set(title="Selected test accuracies, sorted", xlabel="rank (ascending test accuracy)",
           ylabel="test accuracy")
    if not accuracies:
        _no_runs(ax)
        return
    for method, values in accuracies.items():
        ax.plot(np.arange(1, len(values) + 1), np.sort(values), **styles[method], markersize=4, label=method)
    ax.grid(True, alpha=0.3)
    _legend(ax, "method")
