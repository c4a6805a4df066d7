"""The experiment report: tables, selection, plots and overwrite rules, on a fabricated database."""
from __future__ import annotations

import itertools
import json
import zlib

import matplotlib.image
import pandas as pd
import pytest
from matplotlib.figure import Figure

from odtk.exceptions import DataError
from odtk.experiments import report
from odtk.experiments.report import FILES, write_report
from odtk.experiments.store import ResultStore

DATASETS, SEEDS, SOLVERS, LAMS = ["a", "b"], [0, 1], ["highs", "gurobi"], [0.1, 0.5, 1.0]
METHODS, RETRAINED = ["flowoct", "benders", "odd"], ["flowoct", "odd"]  # odd: a skeleton, no depth


def _row(phase: str, dataset: str, seed: int, method: str, solver: str, lam: float) -> dict:
    """A done run whose numbers depend on its parameters; odd runs with λ = 0.1 hit the time limit."""
    wiggle = zlib.crc32(f"{dataset}{seed}{method}{solver}{lam}".encode()) % 7 / 100
    timed_out = method == "odd" and lam == 0.1
    return {
        "id": f"{phase}-{dataset}-{seed}-{method}-{solver}-{lam}", "campaign": "c1", "phase": phase,
        "dataset": dataset, "seed": seed, "method": method, "solver": solver,
        "depth": None if method == "odd" else 2, "skeleton": "1-2" if method == "odd" else None,
        "options": {"lam": lam}, "time_limit": 60.0, "threads": 1, "status": "done",
        "termination": "time_limit" if timed_out else "optimal",
        "objective": 10.0, "bound": 8.0 if timed_out else 10.0,
        "gap": 0.2 if timed_out else 0.0, "wall_time": 60.0 if timed_out else 1.0 + 10 * wiggle + lam,
        "variables": 500, "n_train": 100 if dataset == "a" else 400, "n_val": 50, "n_test": 50,
        "train_accuracy": 0.9, "val_accuracy": round(0.7 + wiggle, 2), "test_accuracy": 0.6 + wiggle, "model": "{}",
    }


def _grid_rows() -> list[dict]:
    rows = [_row("grid", *key) for key in itertools.product(DATASETS, SEEDS, METHODS, SOLVERS, LAMS)]
    for row in rows:
        if row["method"] == "benders" and row["solver"] == "gurobi" and row["options"]["lam"] == 1.0:
            row.update(status="failed", termination=None, message="licence limit | model too large",
                       val_accuracy=None, test_accuracy=None)
    # a case checked by hand: λ = 0.5 and 1.0 tie on validation; 1.0 is faster but the choice
    # never depends on timing: the first setting in a fixed order (the options' text) wins
    hand = {row["options"]["lam"]: row for row in rows if row["id"].startswith("grid-a-0-flowoct-highs-")}
    hand[0.1].update(val_accuracy=0.80, wall_time=1.0)
    hand[0.5].update(val_accuracy=0.85, wall_time=5.0)
    hand[1.0].update(val_accuracy=0.85, wall_time=2.0)
    return rows


def _chosen_lam(rows: list[dict], key: tuple) -> float:
    """The oracle: best validation accuracy among done grid runs, then the options' text."""
    candidates = [r for r in rows if r["phase"] == "grid" and r["status"] == "done"
                  and (r["dataset"], r["seed"], r["method"], r["solver"]) == key]
    return min(candidates, key=lambda r: (-r["val_accuracy"], json.dumps(r["options"])))["options"]["lam"]


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> tuple:
    """A database of grid runs and retrain runs (the latter for flowoct and odd only)."""
    grid = _grid_rows()
    retrain = []
    for key in itertools.product(DATASETS, SEEDS, RETRAINED, SOLVERS):
        row = _row("retrain", *key, _chosen_lam(grid, key))
        row.update(test_accuracy=0.95, val_accuracy=None)
        retrain.append(row)
    path = tmp_path_factory.mktemp("db") / "runs.db"
    store = ResultStore(path)
    for row in grid + retrain:
        store.record(row)
    return path, grid + retrain


def test_report_files_tables_and_plots(database, tmp_path) -> None:
    db, rows = database
    out = tmp_path / "report"
    written = write_report(db, out)
    assert written == [out / name for name in FILES] and all(path.is_file() for path in written)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left

    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == len(rows) and "model" not in runs.columns

    summary = pd.read_csv(out / "summary.csv").set_index(["method", "solver"])
    for (method, solver), line in summary.iterrows():
        mine = [r for r in rows if (r["method"], r["solver"]) == (method, solver)]
        assert line["runs"] == len(mine)
        assert line["failed"] == sum(r["status"] == "failed" for r in mine)
        assert line["optimal"] == sum(r["termination"] == "optimal" for r in mine)
    assert summary.loc[("flowoct", "highs"), ["runs", "done", "failed"]].tolist() == [16, 16, 0]
    assert summary.loc[("benders", "gurobi"), ["runs", "done", "failed"]].tolist() == [12, 8, 4]
    assert summary.loc[("odd", "highs"), "mean_gap_pct"] == pytest.approx(20.0)
    assert pd.isna(summary.loc[("flowoct", "highs"), "mean_gap_pct"])

    selection = pd.read_csv(out / "selection.csv")
    assert len(selection) == len(DATASETS) * len(SEEDS) * len(METHODS) * len(SOLVERS)
    hand = selection.query("dataset == 'a' and seed == 0 and method == 'flowoct' and solver == 'highs'").iloc[0]
    assert (hand["options"], hand["val_accuracy"], hand["test_accuracy"], hand["test_source"]) == (
        '{"lam": 0.5}', 0.85, 0.95, "retrain")
    for line in selection.itertuples():
        key = (line.dataset, line.seed, line.method, line.solver)
        assert line.options == f'{{"lam": {_chosen_lam(rows, key)}}}'
        assert line.test_source == ("retrain" if line.method in RETRAINED else "grid")
    assert "licence limit \\| model too large" in (out / "failures.md").read_text()
    assert "| flowoct | highs | 16 | 16 | 0 |" in (out / "summary.md").read_text()

    for name in report.PLOTS:
        assert matplotlib.image.imread(out / name).shape[:2] == (450, 700)


def test_empty_database_gives_a_report_and_an_existing_report_needs_force(tmp_path) -> None:
    db, out = tmp_path / "empty.db", tmp_path / "out"
    ResultStore(db)
    written = write_report(db, out)
    assert (out / "failures.md").read_text().endswith("none\n")
    assert pd.read_csv(out / "summary.csv").empty and pd.read_csv(out / "selection.csv").empty
    for path in written:
        if path.suffix == ".png":
            assert matplotlib.image.imread(path).shape[:2] == (450, 700)

    (out / "summary.md").write_text("stale")
    with pytest.raises(DataError, match="already holds runs.csv, summary.md"):
        write_report(db, out)
    assert (out / "summary.md").read_text() == "stale"
    assert write_report(db, out, force=True) == written
    assert (out / "summary.md").read_text().startswith("# Summary of empty.db")


@pytest.mark.parametrize("plot", ["_plot_profile", "_plot_gap_vs_size",
                                  "_plot_accuracy_box", "_plot_sorted_accuracy"])
def test_empty_plot_says_no_runs(tmp_path, plot) -> None:
    runs = report._typed(ResultStore(tmp_path / "empty.db").frame())
    data = runs if plot in ("_plot_profile", "_plot_gap_vs_size") else report.selection_table(runs)
    ax = Figure().add_subplot()
    getattr(report, plot)(ax, data, {})
    assert [text.get_text() for text in ax.texts] == ["no runs"] and ax.get_title()


def test_missing_database_is_an_error(tmp_path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        write_report(tmp_path / "nothing.db", tmp_path / "out")
    assert not (tmp_path / "nothing.db").exists()
