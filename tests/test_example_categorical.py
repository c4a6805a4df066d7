"""examples/categorical_paper.py on a small scale: status and gap per cell, one line per claim,
Table 7 with feature selection, and Table 13's CART pruned on validation rows."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from sklearn.tree import DecisionTreeClassifier

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CLAIMS = 6  # §5.1, §5.2, §5.3, §5.4, §5.6, §5.7


@pytest.fixture
def script(monkeypatch):
    """The script as a module, bc cut to its first 200 rows so that its solves take seconds."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    module = importlib.import_module("categorical_paper")
    whole = module.DATASETS["bc"]
    monkeypatch.setitem(module.DATASETS, "bc", lambda: whole().subset(list(range(200))))
    yield module
    for name in ("categorical_paper", "categorical_tables", "_common"):
        sys.modules.pop(name, None)


@pytest.fixture
def fits(script, monkeypatch):
    """The options of every ODT the script fits, in order."""
    calls = []
    fit = script.fit

    def spy(train, topology, args, **options):
        calls.append(options)
        return fit(train, topology, args, **options)

    monkeypatch.setattr(script, "fit", spy)
    return calls


def test_every_cell_has_status_and_gap_and_every_claim_a_line(script, fits, capsys):
    script.main(["--tables", "7", "13", "14", "--datasets", "bc", "--betas", "1", "0.95"])
    printed = capsys.readouterr().out.splitlines()
    header = next(line for line in printed if line.split()[:2] == ["table", "dataset"])
    assert header.split()[-2:] == ["status", "gap"]
    odt_rows = [line for line in printed if line.lstrip()[:2] in ("7 ", "13", "14") and "CART" not in line]
    assert len(odt_rows) == 2 + 1 + 2 and all("optimal" in line for line in odt_rows), printed
    claims = [line for line in printed if line.startswith("- §")]
    assert len(claims) == CLAIMS
    assert all(any(v in line for v in ("agrees", "disagrees", "not shown at this scale")) for line in claims)
    shown = {line.split(",")[0][3:]: "not shown" not in line for line in claims}
    assert shown == {"5.1": False, "5.2": False, "5.3": shown["5.3"], "5.4": False, "5.6": True, "5.7": True}


def test_table7_selects_features_as_the_paper(script, fits):
    args = script.parse_args(["--tables", "7", "--datasets", "bc"])
    rows = script.table7(args)
    assert [r["setting"] for r in rows] == ["depth-2 n", "depth-2 c"]
    assert [(f["numeric"], f["feature_selection"]) for f in fits] == [("ordinal", "cart"), ("categorical", "cart")]


def test_pruned_cart_has_at_most_the_leaves_of_the_unpruned_tree(script):
    from _common import one_hot, pruned_cart

    data = script.DATASETS["monks-1"]()
    train, val, _ = script.validation_split(data, seed=0)
    whole = script.pooled(train, val)
    tree, columns = pruned_cart(train, val, seed=0, refit=whole)
    unpruned = DecisionTreeClassifier(random_state=0).fit(one_hot(whole), whole.target)
    assert tree.ccp_alpha > 0 and list(columns) == list(one_hot(whole).columns)
    assert tree.get_n_leaves() < unpruned.get_n_leaves()


def test_table13_reports_the_pruned_cart(script):
    rows = script.table13(script.parse_args(["--datasets", "votes"]))
    cart = next(r for r in rows if r["setting"] == "CART pruned")
    assert cart["paper"] == "95.5/2.4" and cart["_numbers"]["leaves"] < 20
