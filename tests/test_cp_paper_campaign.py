"""examples/cp_paper.py as a campaign: a small grid of the paper's protocol (two small datasets,
depth 2, in-sample) on a local Dask cluster, its proven optima against brute force, then the
same command with --resume, which computes nothing again."""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest

from odtk.datasets import load_dataset

from brute_force import best_value

distributed = pytest.importorskip("distributed")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import cp_paper  # noqa: E402

pytestmark = pytest.mark.slow  # a campaign on a local Dask cluster: a minute or more

DATASETS = ["binary/hepatitis", "binary/lymph"]
ARGS = ["--datasets", *DATASETS, "--depths", "2", "--time-limit", "300"]
VERDICTS = (": agrees (", ": disagrees (", ": not shown", ": not comparable (")
RUNS = len(DATASETS) * len(cp_paper.VARIANTS)  # depth 2 only, no MILP


def run(argv: list[str]) -> tuple[int, str]:
    """``cp_paper.main(argv)``: its exit status and what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cp_paper.main(argv)
    return code, printed.getvalue()


def table(printed: str, title: str) -> list[dict[str, str]]:
    """The rows of the table whose title starts with ``title``."""
    lines = printed.split(f"\n{title}")[1].split("\n\n")[0].splitlines()
    start = next(k for k, line in enumerate(lines) if line.split()[:2] == ["dataset", "depth"])
    header = lines[start].split()
    return [dict(zip(header, line.split(), strict=True)) for line in lines[start + 1:]]


def fewest_errors(name: str, depth: int) -> int:
    """Brute force: the fewest training errors of a tree of depth ≤ ``depth`` on the whole dataset."""
    data = load_dataset(name)
    classes, y = np.unique(data.target.to_numpy(), return_inverse=True)
    tests = data.features.to_numpy().astype(int)
    return data.n_rows - int(best_value(tests, y, len(classes), depth))


@pytest.fixture(scope="module")
def on_dask(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """The small grid run on a one-worker local Dask cluster: (database, exit status, output)."""
    db = tmp_path_factory.mktemp("cp_paper") / "runs.sqlite"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        code, printed = run([*ARGS, "--executor", "dask", "--scheduler", cluster.scheduler_address,
                             "--db", str(db)])
    return db, code, printed


def test_the_papers_search_and_odtks_prove_the_brute_force_optimum_on_dask(on_dask) -> None:
    _, code, printed = on_dask
    print(printed)
    assert code == 0
    assert f"{RUNS} of {RUNS} solves computed now, 0 from earlier runs" in printed
    methods, ablation = table(printed, "Methods:"), table(printed, "Ablation:")
    assert [(row["dataset"], row["depth"]) for row in ablation] == [("hepatitis", "2"), ("lymph", "2")]
    for name, row, method_row in zip(DATASETS, ablation, methods):
        oracle = fewest_errors(name, 2)
        assert {int(row[f"{variant}_err"]) for variant in cp_paper.VARIANTS} == {oracle}
        assert all(row[f"{variant}_st"] == "optimal" and float(row[f"{variant}_gap"]) == 0
                   for variant in cp_paper.VARIANTS)
        assert int(row["paper_nodes"]) > int(row["odtk_nodes"]) >= 1  # odtk's counting solves depth 2 at once
        assert row["agree"] == method_row["agree"] == "yes"
        if cp_paper.has_pydl85():
            assert int(method_row["dl8_err"]) == int(method_row["dl85_err"]) == oracle
    claims = [line for line in printed.splitlines() if line.startswith("claim: ")]
    assert len(claims) == 7 and all(any(word in line for word in VERDICTS) for line in claims)
    assert "failed solves: none" in printed


def test_resume_computes_no_cell_again(on_dask) -> None:
    db, _, first = on_dask
    code, printed = run([*ARGS, "--db", str(db), "--resume", "--jobs", "1"])
    print(printed)
    assert code == 0
    assert f"0 of {RUNS} solves computed now, {RUNS} from earlier runs in {db}" in printed
    if cp_paper.has_pydl85():
        peers = len(DATASETS) * len(cp_paper.PEERS)
        assert f"pydl8.5 (in this process): 0 of {peers} solves computed now, {peers} from earlier runs" in printed
    assert table(printed, "Ablation:") == table(first, "Ablation:")  # the same cells, CPU seconds included
    assert [line for line in printed.splitlines() if line.startswith("claim: ")] == \
        [line for line in first.splitlines() if line.startswith("claim: ")]
