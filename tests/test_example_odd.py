"""examples/odd_paper.py and examples/odd_fairness.py: Table 2 over the same runs, Ctrl-C,
the paper's claims, and fairness's positive class (the desirable outcome)."""
from __future__ import annotations

import importlib
import re
import signal
import sqlite3
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))
odd_paper = importlib.import_module("odd_paper")
odd_fairness = importlib.import_module("odd_fairness")

VERDICT = re.compile(r": (agrees.*|disagrees by \d+\.\d points.*|not shown.*)$")


def chosen(accuracies: dict[str, float]) -> pd.DataFrame:
    """Chosen multivariate ODDs (proven), one per dataset, seed 0, with these test accuracies."""
    return pd.DataFrame({"dataset": list(accuracies), "seed": 0, "split_type": "multivariate", "kept": True,
                         "test_accuracy": list(accuracies.values()), "status": "done", "proven": True, "gap": 0.0})


def stability_runs(outcomes: dict[str, float | None], share: float = 0.2) -> pd.DataFrame:
    """Their stability runs at ``share``: an accuracy (done, proven), or None (failed)."""
    return pd.DataFrame({"dataset": list(outcomes), "seed": 0, "split_type": "multivariate", "share": share,
                         "test_accuracy": [np.nan if a is None else a for a in outcomes.values()],
                         "status": ["failed" if a is None else "done" for a in outcomes.values()],
                         "proven": [a is not None for a in outcomes.values()],
                         "gap": [np.nan if a is None else 0.0 for a in outcomes.values()]})


def test_table_2_averages_every_column_over_the_same_runs() -> None:
    # iris's stability run failed: averaging S0 over both and S0.2n over wine alone would
    # show stability raising accuracy (0.9434 -> 0.95)
    pairs = chosen({"uci/iris": 0.9868, "uci/wine": 0.9})
    stable = stability_runs({"uci/iris": None, "uci/wine": 0.95})
    ours, paper = odd_paper.table_2(pairs, stable, Namespace(shares=[0.2]))
    assert (ours["S0"], ours["S0.2n"]) == (0.9, 0.95)  # wine alone, in both columns
    assert (ours["averaged"], ours["failed"], ours["proven"]) == (1, 1, "2/2")
    assert paper["S0.2n"] == 0.823
    (claim,) = odd_paper.stability_claims([ours, paper])
    assert "+5.0 points over 1 chosen ODDs: agrees" in claim


def test_table_2_with_every_stability_run_failed() -> None:
    pairs = chosen({"uci/iris": 0.9868})
    ours, _ = odd_paper.table_2(pairs, stability_runs({"uci/iris": None}), Namespace(shares=[0.2]))
    assert (ours["averaged"], ours["failed"]) == (0, 1) and np.isnan(ours["S0"]) and np.isnan(ours["S0.2n"])
    (claim,) = odd_paper.stability_claims([ours])
    assert claim.endswith("not shown at this scale (no chosen ODD finished every column; 1 failed)")
    lines = odd_paper.failures(pd.DataFrame({"status": ["failed"], "dataset": ["uci/iris"], "seed": [0],
                                             "split_type": ["multivariate"], "shape": ["II"], "alpha": [0.1],
                                             "share": [0.2], "message": ["infeasible"]}))
    assert lines == ["failed: uci/iris seed 0 multivariate II α 0.1, S = 0.2n: infeasible"]


def test_figure_claims_say_by_how_much() -> None:
    pairs = chosen({"uci/iris": 0.90, "uci/wine": 0.80}).assign(
        test_accuracy_odt=[0.95, 0.85], proven_odt=True, gap_odt=0.0)
    (line,) = odd_paper.figure_claims(pairs, Namespace(splits=["multivariate"]))
    assert line.endswith("ODD − ODT mean test accuracy -5.0 points over 2 instances: disagrees by 5.0 points")
    (line,) = odd_paper.figure_claims(pairs.assign(test_accuracy_odt=[0.90, 0.80]), Namespace(splits=["multivariate"]))
    assert line.endswith("not shown at this scale (ODD and ODT equally accurate on all 2 instances)")
    ties = pairs.assign(test_accuracy_odt=[0.90, 0.80], split_type="univariate")
    (line,) = odd_paper.figure_claims(ties, Namespace(splits=["univariate"]))
    assert line.endswith("+0.0 points over 2 instances: agrees")


def run_paper(db: Path, *extra: str) -> subprocess.Popen:
    args = ("--datasets", "uci/soybean-small", "--rows", "24", "--skeletons", "I", "--shares", "0.1",
            "--time-limit", "60", "--jobs", "1", "--db", str(db), *extra)
    return subprocess.Popen([sys.executable, str(EXAMPLES / "odd_paper.py"), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=EXAMPLES.parent)


@pytest.mark.slow
def test_odd_paper_ends_with_one_line_per_claim(tmp_path: Path) -> None:
    process = run_paper(tmp_path / "runs.sqlite", "--alphas", "0.5", "1")
    out, err = process.communicate(timeout=900)
    assert process.returncode == 0, err
    claims = out.split("The paper's claims")[1].strip().splitlines()[1:]
    assert [line.split(",")[0] for line in claims] == ["Table 1"] * 3 + ["Figures 2-3"] * 2 + ["Table 2"] * 2
    assert all(VERDICT.search(line) for line in claims), claims
    assert "failed runs: none" in out
    table_1 = out.split("Table 1: ")[1].split("\n\n")[0].splitlines()[2:]
    assert all(row.split()[-3:] == ["0", "0", "0"] for row in table_1 if " odtk " in row)  # open, failed, gap


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    process = run_paper(db, "--splits", "multivariate", "univariate")
    for line in process.stderr:  # wait for the first run to be recorded
        if line.startswith("[1/"):
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGINT
    with sqlite3.connect(db) as connection:
        (recorded,), = connection.execute("SELECT COUNT(*) FROM runs WHERE status IN ('done', 'failed')")
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"interrupted: {recorded} runs recorded in {db}; run again with --resume to continue")
    assert recorded >= 1 and out == f"results database {db} (new)\n"  # no table of a stopped run


def test_fairness_positive_class_is_the_desirable_outcome() -> None:
    train, _, _ = odd_fairness.load_split("binary/compas", 0, rows=40, fractions=(0.5, 0.0, 0.5))
    relabelled = odd_fairness.desirable_positive(train, "0")
    assert (relabelled.target == 1).tolist() == (train.target == 0).tolist()  # 1: did not re-offend
    with pytest.raises(SystemExit, match="--desirable yes must name one of the two classes"):
        odd_fairness.check_desirable(train, "yes")


def test_fairness_output_names_form_and_positive_class_and_judges_the_claims_on_proven_runs() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / "odd_fairness.py"), "--rows", "40", "--xis", "0.8",
                           "--heuristic-time", "0.5"], capture_output=True, text=True,
                          timeout=900, cwd=EXAMPLES.parent)
    assert done.returncode == 0, done.stderr
    title = done.stdout.splitlines()[0]
    assert "positive class 1 = binary/compas's label 0 (the desirable outcome, as (19) assumes: did not " \
           "re-offend within two years)" in title
    assert "the rate form (odtk's default; the paper's (19) is the count form)" in title
    verdicts = done.stdout.strip().split("\n\n")[-1].splitlines()
    assert [line.split(": ")[1] for line in verdicts] == [
        "each fairness ratio ξ is met on the training rows (ξ = 0.8", "extra linear constraints, complexity not "
        "significantly changed"], verdicts
    assert all(": agrees (" in line for line in verdicts), verdicts  # 40 rows: every run proven in the default budget
