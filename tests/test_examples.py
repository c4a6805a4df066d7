"""The example scripts run end to end on tiny settings and print well-formed tables."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_output(script: str, *args: str) -> list[str]:
    """Run ``examples/<script>``; the lines it printed, blank ones dropped."""
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                          text=True, timeout=600, cwd=EXAMPLES.parent)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


def table(lines: list[str]) -> list[dict[str, str]]:
    """The rows of a printed table: title, header, rows."""
    header = lines[1].split()
    rows = [line.split() for line in lines[2:]]
    assert rows and all(len(row) == len(header) for row in rows), "\n".join(lines)
    return [dict(zip(header, row)) for row in rows]


def run_script(script: str, *args: str) -> list[dict[str, str]]:
    """Run ``examples/<script>`` and parse the table it prints."""
    return table(run_output(script, *args))


def share(cell: str) -> float:
    value = float(cell)
    assert 0.0 <= value <= 1.0, cell
    return value


def run_blocks(script: str, *args: str, notes: int = 0) -> dict[str, list[dict[str, str]]]:
    """Run ``examples/<script>``; its tables (blocks of title, header, rows) by title's first words;
    the last ``notes`` blocks (lines of text, not tables) under their indices -1, -2, …"""
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                          text=True, timeout=600, cwd=EXAMPLES.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    blocks = done.stdout.strip().split("\n\n")
    tables = {-k: blocks[-k].splitlines() for k in range(1, notes + 1)}
    for block in blocks[1:len(blocks) - notes]:  # the first block: settings and sources
        title, header, *rows = block.strip().splitlines()
        if title.startswith("Claims of the paper"):  # the closing verdict lines, not a table
            continue
        cells = [row.split() for row in rows]
        assert cells and all(len(row) == len(header.split()) for row in cells), block
        tables[title.split(":")[0]] = [dict(zip(header.split(), row)) for row in cells]
    return tables


@pytest.mark.slow
def test_flowoct_paper(tmp_path: Path) -> None:
    args = ("--datasets", "monk3", "--samples", "1", "--rows", "16", "--lambdas", "0", "0.5", "--time-limit", "60",
            "--db", str(tmp_path / "runs.sqlite"))
    tables = run_blocks("flowoct_paper.py", *args)
    assert list(tables) == ["Table 1", "Figure 3(a)", "Figure 3(b)", "Figure 3(c)", "Table 2"]
    assert tables["Table 1"] == [{"dataset": "monk3", "odtk": "flowoct/monk3", "rows": "122", "paper_rows": "122",
                                  "features": "15", "paper_features": "15", "classes": "2", "paper_classes": "2"}]
    # exit status 0 and "yes": the four methods' proven optima agree at equal λ
    for panel, methods in (("Figure 3(a)", ["OCT", "BinOCT", "FlowOCT", "Benders"]),
                           ("Figure 3(b)", ["OCT", "FlowOCT", "Benders"])):
        ours = [row for row in tables[panel] if row["source"] == "odtk"]
        assert [row["method"] for row in ours] == methods
        assert all(row["agree"] == "yes" and row["instances"] == "1" and int(row["solved"]) <= 1 for row in ours)
    paper = {row["method"]: row for row in tables["Figure 3(a)"] if row["source"] == "paper"}
    assert paper["BinOCT"]["solved"] == "79" and paper["Benders"]["t_ref_s"] == "140"
    paper = {row["method"]: row for row in tables["Figure 3(b)"] if row["source"] == "paper"}
    assert paper["OCT"]["solved"] == "666" and paper["Benders"]["t_ref_s"] == "70"
    ours, logs = tables["Figure 3(c)"]
    assert (ours["source"], ours["size"], logs["source"], logs["size"]) == ("odtk", "32", "logs", "240")
    assert all(0 <= float(ours[m]) <= 100 for m in ("OCT", "BinOCT", "FlowOCT", "Benders"))
    ours, paper, logs = tables["Table 2"]
    assert [row["source"] for row in (ours, paper, logs)] == ["odtk", "Table2", "logs"]
    for method in ("OCT", "BinOCT", "FlowOCT", "Benders"):
        assert paper[method] == "92.3" and 0 <= float(ours[method]) <= 100  # monk3, depth 2
    again = run_blocks("flowoct_paper.py", *args, "--resume")  # every solve recorded: nothing runs again
    assert again == tables


@pytest.mark.slow
def test_odd_paper(tmp_path: Path) -> None:
    args = ("--datasets", "uci/soybean-small", "--rows", "24", "--skeletons", "I", "--alphas", "0.5",
            "--splits", "univariate", "--shares", "0.1", "--time-limit", "10", "--heuristic-time", "0.5",
            "--jobs", "1", "--db", str(tmp_path / "runs.sqlite"))
    tables = run_blocks("odd_paper.py", *args, notes=2)
    assert list(tables) == [-1, -2, "Table 1", "Table 1 shares", "Figure 2", "Figure 3", "Table 2"]
    diagram, diagram_paper, tree, tree_paper = tables["Table 1"]
    assert diagram_paper == {"skeleton": "I", "source": "Table1", "runs": "540", "opt_0.5": "179", "imp_0.5": "202",
                             "total": "381", "open": "-", "failed": "-", "max_gap": "-"}
    assert (tree["skeleton"], tree_paper["opt_0.5"], tree_paper["imp_0.5"]) == ("I(tree)", "177", "208")
    for row in (diagram, tree):  # one run each: proven, improved without proof, or neither
        assert row["runs"] == "1" and int(row["opt_0.5"]) + int(row["imp_0.5"]) == int(row["total"]) <= 1
    (shares,) = tables["Table 1 shares"]
    assert shares["runs"] == "2"
    assert math.isclose(float(shares["paper_opt_pct"]), 100 * (179 + 177) / 1080, rel_tol=1e-3)
    assert [row["model"] for row in tables["Figure 2"]] == ["ODD", "ODT"]
    for row in tables["Figure 2"]:
        assert row["paper"] == "ODD≈ODT" and row["instances"] == "1"
        assert share(row["q1"]) <= share(row["median"]) <= share(row["q3"])
    (figure_3,) = tables["Figure 3"]
    assert int(figure_3["odd_wins"]) + int(figure_3["ties"]) + int(figure_3["odt_wins"]) == 1
    ours, paper = tables["Table 2"]
    assert (paper["source"], paper["S0.1n"]) == ("Table2", "0.838")
    assert (ours["averaged"], ours["failed"]) in (("0", "1"), ("1", "0"))
    assert ours["S0.1n"] == ours["S0"] == "-" if ours["failed"] == "1" else share(ours["S0.1n"]) >= 0
    assert tables[-1][0].startswith("The paper's claims") and len(tables[-1]) == 1 + 3 + 1 + 1
    again = run_blocks("odd_paper.py", *args, "--resume", notes=2)  # every run recorded: nothing runs again
    assert again == tables


@pytest.mark.slow
def test_odd_fairness() -> None:
    lines = run_output("odd_fairness.py", "--rows", "80", "--skeleton", "1-2", "--xis", "0.8",
                       "--time-limit", "5", "--heuristic-time", "0.5")
    verdicts = [line for line in lines if line.startswith("claim: ")]
    rows = table([line for line in lines if line not in verdicts])
    assert len(verdicts) == 2
    assert [(row["constraint"], row["xi"]) for row in rows] == [("none", "-"), ("demographic_parity", "0.8")]
    for row in rows:
        for column in ("train_acc", "test_acc", "dp_train", "dp_test"):
            share(row[column])
        for column in ("eo_train", "eo_test"):  # '-' when a group has no true positives
            assert row[column] == "-" or share(row[column]) >= 0
        assert row["status"] in ("optimal", "time_limit")
    # (19) holds on the training data: the rate ratio is at least ξ (printed to 4 digits)
    assert float(rows[1]["dp_train"]) >= 0.8 - 1e-3
    assert all(math.isfinite(float(row["cpu_s"])) for row in rows)


@pytest.mark.slow
def test_cp_paper() -> None:
    printed = run_output("cp_paper.py", "--datasets", "binary/zoo-1", "binary/hepatitis", "--depths", "2",
                         "--milps", "binoct", "--time-limit", "60")
    start = next(i for i, line in enumerate(printed) if line.startswith("Methods:"))
    rows = table([printed[start], *printed[start + 2:start + 5]])  # title, header, rows (a legend between)
    assert [(row["dataset"], row["depth"]) for row in rows] == [("zoo-1", "2"), ("hepatitis", "2")]
    for row in rows:
        assert row["paper_st"] == row["odtk_st"] == "optimal" and row["agree"] == "yes"
        assert row["binoct_st"] in ("optimal", "time_limit", "error")  # no MILP tree beats the proven optimum
        assert row["binoct_err"] == "-" or int(row["binoct_err"]) >= int(row["paper_err"])
    assert rows[0]["paper_err"] == "0"  # zoo-1 is separable at depth 2
    assert any(line.startswith("claim: the paper's search proves optimality on roughly 75 %") for line in printed)


@pytest.mark.slow
def test_sat_paper(tmp_path: Path) -> None:
    printed = run_output("sat_paper.py", "--tables", "3", "--datasets", "iris", "monk1", "--splits", "0", "1",
                         "--db", str(tmp_path / "sat.sqlite"))
    rows = table([printed[2], *printed[4:7]])  # database and title lines, then title, header, rows (a legend between)
    assert [row["dataset"] for row in rows] == ["iris", "monk1"]
    for row in rows:
        assert row["splits"] == row["proven"] == "2" and row["consistent"] == "yes"
        depth, nodes = float(row["k"]), float(row["n"])
        assert nodes >= 2 * depth + 1 and float(row["depth_expl"]) <= float(row["S"])
    assert float(rows[0]["k"]) == float(rows[0]["paper_k"]) == 3  # DT_depth's k for iris is the paper's


@pytest.mark.parametrize("script", ["flowoct_paper.py", "odd_paper.py", "odd_fairness.py", "cp_paper.py",
                                    "sat_paper.py", "categorical_paper.py"])
def test_help(script: str) -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / script), "--help"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and "--solver" in done.stdout
