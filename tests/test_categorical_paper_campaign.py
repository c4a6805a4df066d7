"""examples/categorical_paper.py as a campaign: a small grid of the paper's protocol (monks-1,
depth 2, one seed) on a local Dask cluster, its proven optimum against an exhaustive search over
depth-2 subset trees, then the same command with --resume, which computes nothing again."""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest

from odtk.experiments.store import ResultStore

from subset_trees import best_score

distributed = pytest.importorskip("distributed")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import categorical_paper  # noqa: E402

pytestmark = pytest.mark.slow  # a campaign on a local Dask cluster: a minute or more

ARGS = ["--tables", "8", "13", "--datasets", "monks-1", "--time-limit", "3600"]
RUNS = 2  # Table 8's depth-2 tree, Table 13's with feature selection
VERDICTS = ("agrees", "disagrees", "not shown at this scale")


def run(argv: list[str]) -> tuple[int, str]:
    """``categorical_paper.main(argv)``: its exit status and what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = categorical_paper.main(argv)
    return code, printed.getvalue()


def most_correct(db: Path) -> int:
    """Exhaustive search: the most training rows of Table 8's monks-1 run that a depth-2 tree of
    subset tests (any values of one attribute go left) classifies correctly."""
    args = categorical_paper.parse_args([*ARGS, "--db", str(db)])
    train = categorical_paper.Runs(args).data(categorical_paper.Cell("monks-1", "depth-2", 1), seed=0)[0]
    columns = [np.unique(train.features[name].astype(str), return_inverse=True) for name in train.features]
    values = np.column_stack([codes for _, codes in columns])
    positive = train.target.to_numpy() == train.target.to_numpy()[0]
    return int(best_score(values, positive, ("node", "last", "last"), [len(levels) for levels, _ in columns],
                          [False] * len(columns)))


@pytest.fixture(scope="module")
def on_dask(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """The small grid run on a one-worker local Dask cluster: (database, exit status, output)."""
    db = tmp_path_factory.mktemp("categorical_paper") / "runs.sqlite"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        code, printed = run([*ARGS, "--executor", "dask", "--scheduler", cluster.scheduler_address, "--db", str(db)])
    return db, code, printed


def test_the_proven_depth2_tree_is_the_exhaustive_optimum_on_dask(on_dask) -> None:
    db, code, printed = on_dask
    print(printed)
    assert code == 0
    assert f"{RUNS} of {RUNS} runs computed now, 0 from earlier runs" in printed
    frame = ResultStore(db).frame()
    assert len(frame) == RUNS and set(frame["termination"]) == {"optimal"}
    table8 = frame[frame["options"] == "{}"].iloc[0]
    assert round(table8["train_accuracy"] * table8["n_train"]) == most_correct(db)
    claims = [line for line in printed.splitlines() if line.startswith("- §")]
    assert claims and all(any(word in line for word in VERDICTS) for line in claims)
    odt_rows = [line.split() for line in printed.splitlines()
                if line.split()[:2] in (["8", "monks-1"], ["13", "monks-1"]) and "CART" not in line]
    assert len(odt_rows) == RUNS and all(line[-2:] == ["optimal", "0.00%"] for line in odt_rows)


def test_resume_computes_no_run_again(on_dask) -> None:
    db, _, first = on_dask
    code, printed = run([*ARGS, "--db", str(db), "--resume", "--jobs", "1"])
    print(printed)
    assert code == 0
    assert f"0 of {RUNS} runs computed now, {RUNS} from earlier runs in {db}" in printed
    table = lambda text: text.split("campaign categorical-paper")[1].split("†")[0].splitlines()[1:]  # noqa: E731
    assert table(printed) == table(first)
    assert [line for line in printed.splitlines() if line.startswith("- §")] == \
        [line for line in first.splitlines() if line.startswith("- §")]
