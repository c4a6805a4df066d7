"""examples/categorical_paper.py on a small scale: status and gap per cell, one line per claim,
Table 7's cells with feature selection, and Table 13's CART pruned on validation rows, every ODT solve a
run of the script's campaign."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from sklearn.tree import DecisionTreeClassifier

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CLAIMS = 15  # §5.1 (4), §5.2, §5.3, §5.4 (5), §5.5, §5.6, §5.7, §5.8


@pytest.fixture
def script(monkeypatch):
    """The script as a module."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    module = importlib.import_module("categorical_paper")
    yield module
    for name in ("categorical_paper", "categorical_campaign", "categorical_tables", "_common"):
        sys.modules.pop(name, None)


def solved(script, table, argv: list[str], db: Path) -> list[dict]:
    """``table``'s rows after its cells ran as a campaign recorded in ``db``."""
    from odtk.experiments.store import ResultStore

    args = script.parse_args([*argv, "--db", str(db), "--jobs", "1"])
    runs = script.Runs(args)
    table(args, runs)
    runs.execute(ResultStore(db))
    return table(args, runs)


@pytest.mark.slow
def test_every_cell_has_status_and_gap_and_every_claim_a_line(script, tmp_path, capsys):
    code = script.main(["--tables", "13", "14", "--datasets", "bc", "--betas", "1", "0.98",
                        "--db", str(tmp_path / "runs.sqlite")])
    printed = capsys.readouterr().out.splitlines()
    assert code == 0
    assert "campaign categorical-paper: 3 of 3 runs computed now, 0 from earlier runs" in "\n".join(printed)
    header = next(line for line in printed if line.split()[:2] == ["table", "dataset"])
    assert header.split()[-2:] == ["status", "gap"]
    odt_rows = [line for line in printed if line.lstrip()[:2] in ("13", "14") and "CART" not in line]
    assert len(odt_rows) == 1 + 2 and all("optimal" in line for line in odt_rows), printed
    claims = [line for line in printed if line.startswith("- §")]
    assert len(claims) == CLAIMS
    assert all(any(v in line for v in ("agrees", "disagrees", "not shown at this scale")) for line in claims)
    shown = {line.split(":")[0][3:] for line in claims if "not shown" not in line}
    assert shown == {"5.6, Table 13", "5.8, Table 14"}
    assert "heloc is not bundled" in "\n".join(claims)


def test_table7_selects_features_as_the_paper(script, tmp_path):
    args = script.parse_args(["--tables", "7", "--datasets", "bc", "--db", str(tmp_path / "runs.sqlite")])
    runs = script.Runs(args)
    script.table7(args, runs)  # gathers its cells; nothing solved
    assert [(c.topology, dict(c.options)) for c in runs.grids] == [
        ("depth-2", {"numeric": "ordinal", "feature_selection": "cart"}),
        ("depth-2", {"numeric": "categorical", "feature_selection": "cart"})]


def test_pruned_cart_has_at_most_the_leaves_of_the_unpruned_tree(script, tmp_path):
    from _common import one_hot, pruned_cart

    args = script.parse_args(["--db", str(tmp_path / "runs.sqlite")])
    runs, cell = script.Runs(args), script.Cell("monks-1", "depth-2", 1, "validation")
    train, val, _ = runs.data(cell, seed=0)
    whole = runs.data(cell, seed=0, whole=True)[0]
    assert whole.n_rows == train.n_rows + val.n_rows  # monks-1 trains on four fifths of the 90 %
    tree, columns = pruned_cart(train, val, seed=0, refit=whole)
    unpruned = DecisionTreeClassifier(random_state=0).fit(one_hot(whole), whole.target)
    assert tree.ccp_alpha > 0 and list(columns) == list(one_hot(whole).columns)
    assert tree.get_n_leaves() <= unpruned.get_n_leaves()


@pytest.mark.slow
def test_table13_reports_the_pruned_cart(script, tmp_path):
    rows = solved(script, script.table13, ["--datasets", "votes"], tmp_path / "runs.sqlite")
    cart = next(r for r in rows if r["setting"] == "CART pruned")
    odt = next(r for r in rows if r["setting"].startswith("ODT"))
    assert cart["paper"] == "95.5/2.4" and cart["_numbers"]["leaves"] < 20
    assert odt["status"] == "optimal" and odt["_numbers"]["leaves"] <= 4  # a depth-2 tree


def cell(table: int, dataset: str, setting: str, proven: bool = True, **numbers: float) -> dict:
    """A printed row as the claims read it."""
    return {"table": table, "dataset": dataset, "setting": setting, "_numbers": numbers, "_proven": proven}


def test_time_claims_compare_cpu_ratios_and_count_ties_as_neither(script):
    from categorical_claims import selection_time_claim, size_claim

    times = [cell(4, "bc", "depth-2 100 rows", cpu=1.0, size=100, topology="depth-2"),
             cell(4, "bc", "depth-2 300 rows", cpu=9.0, size=300, topology="depth-2"),
             cell(5, "bc", "depth-2 100 rows", cpu=0.9, size=100, topology="depth-2"),
             cell(5, "bc", "depth-2 300 rows", cpu=3.0, size=300, topology="depth-2")]
    assert size_claim(times)[0] == "agrees" and "paper 5.0×" in size_claim(times)[1]
    verdict, detail = selection_time_claim(times)
    assert verdict == "agrees" and "1.1× (a tie)" in detail and "3.0×" in detail
    slower = times[:2] + [cell(5, "bc", "depth-2 300 rows", cpu=30.0, size=300, topology="depth-2")]
    assert selection_time_claim(slower)[0] == "disagrees on bc depth-2 300"
    unproven = [{**row, "_proven": False} if row["table"] == 5 else row for row in times]
    assert selection_time_claim(unproven)[0] == "not shown at this scale"


def test_time_limit_claims_read_only_the_cells_the_limit_stopped(script):
    from categorical_claims import deep_limit_claim, limited_selection_claim, short_limit_claim

    rows = [cell(8, "bc", "depth-2", train=0.96, test=0.95), cell(10, "bc", "depth-2", train=0.96, test=0.95),
            cell(8, "bc", "depth-3", train=0.98, test=0.95), cell(10, "bc", "depth-3", False, train=0.97, test=0.96),
            cell(11, "bc", "depth-3", False, train=0.975, test=0.96)]
    assert short_limit_claim(rows)[0] == "agrees"
    assert deep_limit_claim(rows)[0] == "agrees"
    assert limited_selection_claim(rows) == ("agrees", "1 of 1 stopped cells helped")
    assert deep_limit_claim(rows[:2])[0] == limited_selection_claim(rows[:2])[0] == "not shown at this scale"
