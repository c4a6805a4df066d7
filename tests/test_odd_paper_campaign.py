"""examples/odd_paper.py's protocol as a campaign on a local Dask cluster.

A small grid of the paper's runs (both split types, skeleton I and the ODT, two α, Table 2's
stability at S = 0.1n) runs through ``--executor dask``: the first invocation is killed after
its first recorded run, ``--resume`` finishes it, and a second ``--resume`` computes nothing.
The output has every table, one verdict line per claim and the two PNG figures; every run is
a proven optimum equal to the optimum another MILP solver finds for the same instance.

The assertions are on events (rows recorded, runs reused, statuses), never on durations: the
time limits are far above what these runs need, so a loaded machine changes no status.
"""
from __future__ import annotations

import importlib
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odtk import solve
from odtk.experiments.store import ResultStore
from odtk.experiments.worker import splits
from odtk.solvers import solver_status

pytestmark = pytest.mark.slow  # a campaign on a local Dask cluster: a minute or more

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))
odd_paper = importlib.import_module("odd_paper")

GRID = ("--datasets", "uci/soybean-small", "--rows", "24", "--skeletons", "I", "--alphas", "0.01", "1",
        "--shares", "0.1", "--time-limit", "300", "--heuristic-time", "0.5")
CALIBRATION, STABILITY = 8, 2  # (I, I(tree)) × 2 α × 2 split types; one chosen ODD per split type × one share
VERDICT = re.compile(r": (agrees.*|disagrees by \d+\.\d points.*|not shown.*)$")
PNG = b"\x89PNG\r\n\x1a\n"
ORACLES = ("cbc", "scip")  # another MILP solver than the campaign's HiGHS


def script(db: Path, figures: Path, scheduler: str, *extra: str) -> subprocess.Popen:
    """``odd_paper.py`` on the small grid, its runs on the Dask scheduler ``scheduler``."""
    command = [sys.executable, str(EXAMPLES / "odd_paper.py"), *GRID, "--db", str(db), "--figures", str(figures),
               "--executor", "dask", "--scheduler", scheduler, *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=EXAMPLES.parent)


def finished(process: subprocess.Popen) -> str:
    """The stdout of ``process``, which must exit 0."""
    out, err = process.communicate(timeout=1800)
    assert process.returncode == 0, out + err
    return out


def recorded(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        (count,), = connection.execute("SELECT COUNT(*) FROM runs WHERE status IN ('done', 'failed')")
    return count


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> dict:
    """The grid killed after its first recorded run, resumed to the end on a one-worker Dask
    cluster, then resumed again; the outputs, database, figures and the runs Dask computed."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    folder = tmp_path_factory.mktemp("odd_campaign")
    db, figures = folder / "runs.sqlite", folder / "figures"
    with dask.config.set({"distributed.admin.low-level-log-length": 100_000}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        address = cluster.scheduler_address
        killed = script(db, figures, address)
        for line in killed.stderr:  # wait for the first run to be recorded, then kill the script
            if line.startswith("[1/"):
                break
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=120)
        before = recorded(db)
        resumed = finished(script(db, figures, address, "--resume"))
        on_dask = client.run_on_scheduler(
            lambda dask_scheduler: sorted({str(t[0]) for t in dask_scheduler.transition_log if t[2] == "memory"}))
        refused = script(db, figures, address, "--resume")
        refused_out, refused_err = refused.communicate(timeout=600)
        again = finished(script(db, figures, address, "--resume", "--force"))
    return {"db": db, "figures": figures, "before": before, "resumed": resumed, "again": again,
            "on_dask": set(on_dask), "refused": (refused.returncode, refused_out, refused_err)}


def test_killed_campaign_resumes_on_dask(campaign: dict) -> None:
    before, db = campaign["before"], campaign["db"]
    assert 1 <= before < CALIBRATION  # killed midway, the first run recorded
    assert (f"campaign odd-paper: {CALIBRATION - before} of {CALIBRATION} runs computed now, {before} from "
            f"earlier runs in {db}") in campaign["resumed"]
    assert f"campaign odd-paper-stability: {STABILITY} of {STABILITY} runs computed now" in campaign["resumed"]
    frame = ResultStore(db).frame()
    assert len(frame) == CALIBRATION + STABILITY and frame["id"].is_unique
    assert (frame["attempts"] == 1).all()  # no run computed twice
    # the runs computed after the kill went through the cluster (the runs before it did as well,
    # but their keys may have been forgotten with the killed client)
    assert {f"odtk-run-{i}" for i in frame["id"]} - campaign["on_dask"] <= {
        f"odtk-run-{i}" for i in frame.sort_values("finished")["id"][:before]}


def test_second_resume_computes_nothing_and_figures_are_never_overwritten_silently(campaign: dict) -> None:
    code, out, err = campaign["refused"]
    assert code == 2 and out == f"results database {campaign['db']} (resumed: runs of this odtk and solver " \
                                "version reused)\n"
    assert err.strip() == (f"odtk: {campaign['figures'] / 'figure_2.png'} already exists; choose another name or "
                           "pass --force to overwrite it.")
    again = campaign["again"]
    for name, total in (("odd-paper", CALIBRATION), ("odd-paper-stability", STABILITY)):
        assert f"campaign {name}: 0 of {total} runs computed now, {total} from earlier runs" in again
    tables = lambda out: out.split("rows 'Table1'")[1]  # noqa: E731 - everything after the settings
    assert tables(again) == tables(campaign["resumed"])  # the same tables and verdicts from the same rows


def test_tables_verdict_lines_and_figures(campaign: dict) -> None:
    out = campaign["resumed"]
    for title in ("Table 1:", "Table 1 shares:", "Figure 2:", "Figure 3:", "Table 2:"):
        assert f"\n{title}" in out
    assert "failed runs: none" in out
    claims = out.split("The paper's claims")[1].strip().splitlines()[1:]
    assert [line.split(",")[0] for line in claims] == ["Table 1"] * 3 + ["Figures 2-3"] * 2 + ["Table 2"] * 2
    assert all(VERDICT.search(line) for line in claims), claims
    table_1 = out.split("\nTable 1: ")[1].split("\n\n")[0].splitlines()[2:]
    assert all(row.split()[-3:] == ["0", "0", "0"] for row in table_1 if " odtk " in row)  # open, failed, gap
    written = [campaign["figures"] / name for name in ("figure_2.png", "figure_3.png")]
    assert f"figures written: {written[0]}, {written[1]}" in out
    matplotlib_image = pytest.importorskip("matplotlib.image")
    for path in written:
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 20_000, path
        pixels = matplotlib_image.imread(path)
        assert pixels.shape[0] >= 300 and pixels.shape[1] >= 800 and np.ptp(pixels[..., :3]) > 0.5, path


def test_every_optimum_is_proven_and_equals_another_solvers(campaign: dict) -> None:
    oracle = next((name for name in ORACLES if solver_status(name).available), None)
    if oracle is None:
        pytest.skip(f"none of {', '.join(ORACLES)} installed")
    args = odd_paper.parse_args([*GRID])
    frame = ResultStore(campaign["db"]).frame().set_index("id")
    runs = odd_paper.calibration(args).runs
    pairs = odd_paper.chosen_models(odd_paper.described(frame.reset_index()), len(args.seeds))
    runs += odd_paper.stability(pairs[pairs["kept"]], args).runs
    assert sorted(run["id"] for run in runs) == sorted(frame.index)
    for run in runs:
        row = frame.loc[run["id"]]
        assert (row["status"], row["termination"]) == ("done", "optimal"), run
        train, _, _ = splits(run)
        other = solve("odd", train, depth=run["depth"], skeleton=run["skeleton"], solver=oracle, time_limit=600,
                      threads=1, seed=run["seed"], **run["settings"], **run["options"])
        assert other.termination == "optimal", (oracle, run)
        assert other.objective == pytest.approx(row["objective"], abs=1e-6), (oracle, run)
    assert pd.to_numeric(frame["test_accuracy"]).between(0, 1).all()
