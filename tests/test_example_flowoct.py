"""examples/flowoct_paper.py: a status per cell, the paper's own figures in its rows, and one
verdict line per claim of the paper."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CLAIMS = ("solve more instances", '"30×"', '"50×"', "small instances", "largest instances", "out-of-sample")
VERDICT = re.compile(r" — (agrees|disagrees|not shown at this scale)\b")


def run(tmp_path: Path, *args: str) -> tuple[dict[str, list[dict[str, str]]], list[str]]:
    """Run the script on 16 rows of monk3, sample 1, depth 2: its tables by title's first words, and its claim lines."""
    done = subprocess.run([sys.executable, str(EXAMPLES / "flowoct_paper.py"), "--datasets", "monk3", "--samples", "1",
                           "--rows", "16", "--lambdas", "0", "0.5", "--db", str(tmp_path / "runs.sqlite"), *args],
                          capture_output=True, text=True, timeout=600, cwd=EXAMPLES.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    _, *blocks, claims = done.stdout.strip().split("\n\n")
    tables = {}
    for block in blocks:
        title, header, *rows = block.splitlines()
        tables[title.split(":")[0]] = [dict(zip(header.split(), row.split())) for row in rows]
    heading, *lines = claims.splitlines()
    assert heading.startswith("Claims of the paper")
    return tables, lines


def odtk_rows(tables: dict, title: str) -> list[dict[str, str]]:
    return [row for row in tables[title] if row["source"] == "odtk"]


@pytest.mark.slow
def test_proven_run_prints_status_paper_figures_and_claims(tmp_path: Path) -> None:
    tables, claims = run(tmp_path, "--time-limit", "60")
    for title in ("Figure 3(a)", "Figure 3(b)"):  # status: solved of instances, largest gap
        assert all(row["solved"] == row["instances"] and float(row["max_gap_%"]) == 0
                   for row in odtk_rows(tables, title))
    for title in ("Figure 3(c)", "Table 2"):  # status per row, no cell marked unproven
        for row in odtk_rows(tables, title):
            done, total = row["proven"].split("/")
            assert done == total and float(row["max_gap_%"]) == 0
            assert not any(row[m].endswith("*") for m in ("OCT", "BinOCT", "FlowOCT", "Benders"))
    paper = {row["method"]: row for row in tables["Figure 3(a)"] if row["source"] == "paper"}
    assert (paper["BinOCT"]["solved"], paper["Benders"]["t_ref_s"], paper["Benders"]["speedup"]) == \
        ("79", "140", "30×")
    paper = {row["method"]: row for row in tables["Figure 3(b)"] if row["source"] == "paper"}
    assert (paper["OCT"]["solved"], paper["Benders"]["t_ref_s"], paper["Benders"]["speedup"]) == ("666", "70", "50×")
    (table_2,) = [row for row in tables["Table 2"] if row["source"] == "Table2"]  # monk3, depth 2
    assert [table_2[m] for m in ("OCT", "BinOCT", "FlowOCT", "Benders")] == ["92.3"] * 4
    assert len(claims) == len(CLAIMS)
    for claim, line in zip(CLAIMS, claims):
        assert claim in line and VERDICT.search(line), line
    verdicts = {claim: VERDICT.search(line).group(1) for claim, line in zip(CLAIMS, claims)}
    assert verdicts['"30×"'] == verdicts['"50×"'] == "not shown at this scale"  # 60 s, not the paper's hour
    assert verdicts["solve more instances"] == "not shown at this scale"  # every method proves every instance
    assert verdicts["small instances"] == "agrees"


@pytest.mark.slow
def test_unproven_cells_are_marked(tmp_path: Path) -> None:
    tables, claims = run(tmp_path, "--rows", "60", "--time-limit", "0.01")
    rows = odtk_rows(tables, "Figure 3(c)") + odtk_rows(tables, "Table 2")
    for row in rows:
        done, total = row["proven"].split("/")
        assert int(done) < int(total) and float(row["max_gap_%"]) > 0
    assert any(row[m].endswith("*") for row in rows for m in ("OCT", "BinOCT", "FlowOCT", "Benders"))
    assert VERDICT.search(claims[3]).group(1) == "disagrees"  # the small instances are not all proven
    assert "solves none more than" in claims[0]  # no method proves anything


@pytest.fixture(scope="module")
def script():
    """The script's claims module (``examples/flowoct_claims.py``)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import flowoct_claims
        yield flowoct_claims
    finally:
        sys.path.remove(str(EXAMPLES))


def grid(proven: dict[str, list[bool]], times: list[float] | None = None) -> pd.DataFrame:
    """Grid runs at λ = 0 and 0.5 (BinOCT: 0), ``proven`` per method and instance."""
    rows = [{"method": method, "lam": lam, "proven": flag, "solve_time": (times or [1.0] * len(flags))[i]}
            for method, flags in proven.items() for lam in ((0.0,) if method == "binoct" else (0.0, 0.5))
            for i, flag in enumerate(flags)]
    return pd.DataFrame(rows)


def test_solved_claim(script) -> None:
    verdict = script.solved_claim(grid({"oct": [True, False], "binoct": [True, False],
                                        "flowoct": [True, True], "benders": [True, True]}))[1]
    assert verdict.startswith("agrees")
    verdict = script.solved_claim(grid({"oct": [True, True], "binoct": [True, False],
                                        "flowoct": [True, False], "benders": [True, True]}))[1]
    assert verdict.startswith("disagrees: FlowOCT or Benders solves 1 fewer")
    assert script.solved_claim(grid({m: [True] for m in ("oct", "binoct", "flowoct", "benders")}))[1].startswith(
        "not shown at this scale")


@pytest.mark.parametrize(("benders_seconds", "verdict"), [
    (10.0, "agrees: odtk's Benders 360×"), (200.0, "disagrees: odtk's Benders 18× against the paper's 50×")])
def test_speedup_claim(script, benders_seconds: float, verdict: str) -> None:
    runs = grid({"oct": [True, False], "flowoct": [True, True], "benders": [True, True]},
                [benders_seconds, 3000.0])
    paper_hour = argparse.Namespace(time_limit=3600.0)
    assert script.speedup_claim(runs, "b", paper_hour)[1] == verdict
    shorter = argparse.Namespace(time_limit=600.0)
    assert script.speedup_claim(runs, "b", shorter)[1].startswith("not shown at this scale")
