"""The CP and SAT paper examples: the paper's own CP search, DT_size's n, the claim lines."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import odtk
from odtk.cli import main
from odtk.datasets import FeatureEncoder, from_dataframe, load_dataset
from odtk.engines import cp_search

from brute_force import fewest_leaves_of_a_perfect_tree, min_error

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import cp_paper  # noqa: E402
import sat_paper  # noqa: E402

VERDICTS = (": agrees (", ": disagrees (", ": not shown", ": not comparable (")


def _binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    data = load_dataset(name)
    return data.features.to_numpy().astype(bool), np.unique(data.target.to_numpy(), return_inverse=True)[1]


@pytest.mark.parametrize("name", ["binary/zoo-1", "binary/hepatitis", "binary/lymph", "binary/vote"])
def test_the_papers_search_finds_odtks_optimum(name):
    X, y = _binary(name)
    for depth in (2, 3):
        ours = cp_search.search(X, y, 2, depth)
        papers = [cp_search.search(X, y, 2, depth, search="paper", cache=cache, bounds=bounds)
                  for cache, bounds in ((True, True), (False, True), (True, False))]
        assert ours.status == "optimal" and all(found.status == "optimal" for found in papers)
        assert {found.error for found in papers} == {ours.error}
        # none of odtk's additions (counting, bounds, greedy start): more of the tree is searched
        assert depth == 2 or papers[0].search_nodes > ours.search_nodes


@pytest.mark.parametrize("seed", range(8))
def test_the_papers_search_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    classes, min_support = 2 + seed % 2, 1 + seed % 3
    X, y = rng.integers(0, 2, (20 + seed, 4)), rng.integers(0, classes, 20 + seed)
    for depth in (1, 2):  # brute force enumerates every tree: depth 2 at most
        found = cp_search.search(X, y, classes, depth, min_support, search="paper")
        assert found.status == "optimal" and found.error == min_error(X, y, classes, depth, min_support)
    deeper = cp_search.search(X, y, classes, 3, min_support, search="paper")
    assert deeper.error == cp_search.search(X, y, classes, 3, min_support, counting_depth=0).error


def test_the_papers_search_is_a_model_option_and_a_command_line_switch():
    X, y = _binary("binary/vote")
    result = odtk.solve("cp", (X, y), depth=3, search="paper")
    assert result.optimal and result.hyperparameters["search"] == "paper"
    assert result.objective == odtk.solve("cp", (X, y), depth=3).objective
    ran = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "binary/vote", "--depth", "2",
                                    "--paper-search"])
    assert ran.exit_code == 0, ran.output
    assert "'search': 'paper'" in ran.output
    with pytest.raises(cp_search.InvalidOptions, match="search='fast'"):
        cp_search.search(X, y, 2, 2, search="fast")


def _claims(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("claim: ")]


def test_sat_paper_n_on_monk1_split_0_is_the_brute_force_minimum_and_every_claim_has_a_verdict(tmp_path, capsys):
    """Table 3's n is DT_size's proven fewest nodes, 17 on monk1's split 0 (the perfect tree of
    the last SAT answer has 31), and every claim of the paper gets a verdict line."""
    assert sat_paper.main(["--tables", "3", "--datasets", "monk1", "--splits", "0",
                           "--db", str(tmp_path / "runs.sqlite")]) == 0
    printed = capsys.readouterr().out
    lines = printed.split("Table 3:")[1].split("\n\n")[0].splitlines()
    header = next(line.split() for line in lines if line.split()[:1] == ["dataset"])
    (row,) = [dict(zip(header, line.split(), strict=True)) for line in lines if line.split()[:1] == ["monk1"]]
    train = from_dataframe(pd.read_csv(sat_paper.part("monk1", "train", 0)), "target")
    X = np.asarray(FeatureEncoder(thresholds="values").fit(train).transform(train), dtype=int)
    y = np.unique(train.target.to_numpy(), return_inverse=True)[1]
    assert row["proven"] == "1" and float(row["k"]) == 4
    assert float(row["n"]) == 2 * fewest_leaves_of_a_perfect_tree(X, y, 4) - 1 == 17
    claims = _claims(printed)
    assert len(claims) == 9 and all(any(word in line for word in VERDICTS) for line in claims)
    assert any(line.startswith("claim: Table 1 (Mouse)") and "not shown" in line for line in claims)


@pytest.mark.slow
def test_cp_paper_ablation_agrees_and_prints_a_verdict_per_claim(capsys):
    args = ["--datasets", "binary/zoo-1", "binary/hepatitis", "--depths", "2", "3", "--time-limit", "300"]
    assert cp_paper.main(args) == 0
    out = capsys.readouterr().out
    ablation = out.split("Ablation:")[1].splitlines()
    header, rows = ablation[1].split(), [dict(zip(ablation[1].split(), line.split())) for line in ablation[2:6]]
    assert {"paper_err", "odtk_err", "paper_nocache_err", "paper_nobounds_err", "paper_nodes"} <= set(header)
    for row in rows:
        assert len({row[f"{name}_err"] for name in cp_paper.VARIANTS}) == 1
        assert all(row[f"{name}_st"] == "optimal" for name in cp_paper.VARIANTS) and row["agree"] == "yes"
    claims = _claims(out)
    assert len(claims) == 7 and all(any(word in line for word in VERDICTS) for line in claims)
    assert any("roughly 75 %" in line and "not comparable" in line for line in claims)
