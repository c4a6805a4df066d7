"""The command line: real solves, saved models, and one-line errors for bad input."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from odtk.cli import main
from odtk.datasets import load_dataset
from odtk.exceptions import install_hint


def odtk(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m odtk`` as a user would."""
    return subprocess.run([sys.executable, "-m", "odtk", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def assert_one_line_error(run, *words: str) -> None:
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("odtk: error: ")
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in lines[0]


@pytest.fixture(scope="module")
def monk_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "monk.csv"
    load_dataset("flowoct/monk1-categorical").features.assign(
        target=load_dataset("flowoct/monk1-categorical").target).iloc[:40].to_csv(path, index=False)
    return path


def test_solve_save_and_predict_reproduce_training_predictions(tmp_path, monk_csv):
    model = tmp_path / "m.json"
    run = odtk("solve", "--model", "flowoct", "--csv", str(monk_csv), "--target", "target",
               "--depth", "2", "--output", str(model))
    assert run.returncode == 0, run.stderr
    assert "status      optimal" in run.stdout and "predict" in run.stdout
    saved = json.loads(model.read_text())
    assert saved["format"] == "odtk-model"
    accuracy = float(run.stdout.split("accuracy")[1].split()[0])

    predictions = tmp_path / "p.csv"
    run = odtk("predict", "--model-file", str(model), "--csv", str(monk_csv), "--output", str(predictions))
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(predictions)
    assert (frame["prediction"] == frame["target"]).mean() == pytest.approx(accuracy, abs=1e-4)
    assert f"accuracy {accuracy:.4f}" in run.stderr


def test_predictions_equal_the_in_memory_model(tmp_path, monk_csv):
    import odtk as api
    from odtk.datasets import from_csv
    from odtk.models import TrainedModel

    data = from_csv(monk_csv, "target")
    result = api.solve("flowoct", data, depth=2)
    result.model.save(tmp_path / "m.json")
    loaded = TrainedModel.load(tmp_path / "m.json")
    assert list(loaded.predict(data.features)) == list(result.model.predict(data.features))
    run = odtk("predict", "--model-file", str(tmp_path / "m.json"), "--csv", str(monk_csv))
    assert run.stdout.split() == [str(v) for v in result.model.predict(data.features)]


def test_output_is_never_overwritten_without_force(tmp_path):
    target = tmp_path / "m.json"
    target.write_text("precious")
    run = odtk("solve", "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1",
               "--output", str(target))
    assert_one_line_error(run, "already exists", "--force")
    assert target.read_text() == "precious"


@pytest.mark.parametrize("args,words", [
    (["--model", "nope", "--dataset", "flowoct/monk1", "--depth", "1"], ["Unknown model 'nope'", "flowoct"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--solver", "cplexx"],
     ["Unknown solver 'cplexx'", "highs"]),
    (["--model", "flowoct", "--dataset", "no-such-set", "--depth", "1"], ["Unknown dataset", "odtk datasets"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "-1"], ["depth"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1"], ["needs a tree depth"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--lambda", "2"], ["lam"]),
    (["--model", "flowoct", "--depth", "1"], ["--dataset", "--csv"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--skeleton", "1-3"], ["1-3", "1-2-4-8"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--skeleton", "1-2-3"], ["double"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--skeleton", "1-2", "--depth", "3"],
     ["contradicts"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--gap", "2"],
     ["--gap", "relative gap below 1", "0.01"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--threads", "10000"],
     ["--threads", "from 0 to 1024"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--seed", str(2**40)],
     ["--seed", "2147483647"]),
    (["--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1", "--time-limit", "1e300"],
     ["--time-limit", "at most 1e+07", "--time-limit none"]),
    (["--model", "odd", "--dataset", "uci/iris", "--skeleton", "1-2", "--heuristic-time", "nan"],
     ["--heuristic-time", "nan"]),
    (["--model", "odd", "--dataset", "uci/iris", "--skeleton", "1-2", "--heuristic-time", "-1"],
     ["--heuristic-time", "above 0"]),
])
def test_bad_solve_arguments(args, words):
    assert_one_line_error(odtk("solve", *args), *words)


def test_bad_csv_inputs(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,target\n1,0,1\n1,0,1,5,6\n0,1,0\n")
    assert_one_line_error(odtk("solve", "--model", "flowoct", "--csv", str(ragged), "--target", "target",
                               "--depth", "1"), "ragged.csv")
    good = tmp_path / "good.csv"
    good.write_text("a,b,target\n1,0,1\n0,1,0\n1,1,0\n")
    assert_one_line_error(odtk("solve", "--model", "flowoct", "--csv", str(good), "--target", "label",
                               "--depth", "1"), "label")
    assert_one_line_error(odtk("solve", "--model", "flowoct", "--csv", str(tmp_path / "none.csv"),
                               "--target", "target", "--depth", "1"), "none.csv")


def test_solver_not_installed(tmp_path):
    registry = Path(__file__).parents[1] / "solvers.yaml"
    text = registry.read_text().replace("package: cbcbox", "package: odtk_no_such_cbc_package")
    custom = tmp_path / "solvers.yaml"
    custom.write_text(text)
    run = odtk("solve", "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1",
               "--solver", "cbc", env={"ODTK_SOLVERS": str(custom)})
    assert_one_line_error(run, "not available", 'pip install "odtk[cbc]"',
                          'in a clone of odtk: pip install -e ".[cbc]"')


def test_registry_settings_reach_the_solver_and_a_misspelt_one_is_one_line(tmp_path):
    """Native parameters a registry sets for one model are passed to the solver (and shown with
    its options); a parameter HiGHS does not know stops the run with one line naming it."""
    registry = Path(__file__).parents[1] / "solvers.yaml"
    anchor = "  pyomo: {oneshot: appsi_highs, persistent: appsi_highs}\n"
    for name, native in (("good", "mip_lp_solver"), ("bad", "mip_lp_solvr")):
        (tmp_path / f"{name}.yaml").write_text(
            registry.read_text().replace(anchor, anchor + f"  settings: {{flowoct: {{{native}: ipm}}}}\n", 1))
    args = ("solve", "--model", "flowoct", "--dataset", "flowoct/monk1", "--depth", "1")
    run = odtk(*args, env={"ODTK_SOLVERS": str(tmp_path / "good.yaml")})
    assert run.returncode == 0 and "'mip_lp_solver': 'ipm'" in run.stdout, run.stderr
    run = odtk(*args, "--model", "oct", env={"ODTK_SOLVERS": str(tmp_path / "good.yaml")})
    assert run.returncode == 0 and "mip_lp_solver" not in run.stdout, run.stderr  # another model: not set
    assert_one_line_error(odtk(*args, env={"ODTK_SOLVERS": str(tmp_path / "bad.yaml")}), "mip_lp_solvr", "solvers.yaml")


@pytest.mark.parametrize("model", ["sat-depth", "sat-size"])
def test_registry_settings_of_the_sat_models_reach_their_milp_solver(tmp_path, model):
    """Settings under the model's --model name reach the MILP solver answering its queries: a value
    HiGHS refuses stops the run with one line naming it."""
    registry = Path(__file__).parents[1] / "solvers.yaml"
    anchor = "  pyomo: {oneshot: appsi_highs, persistent: appsi_highs}\n"
    (tmp_path / "r.yaml").write_text(
        registry.read_text().replace(anchor, anchor + f"  settings: {{{model}: {{mip_lp_solver: nonsense}}}}\n", 1))
    (tmp_path / "xor.csv").write_text("a,b,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n")
    run = odtk("solve", "--model", model, "--csv", str(tmp_path / "xor.csv"), "--target", "y", "--depth", "2",
               "--solver", "highs", "--output", str(tmp_path / "m.json"),
               env={"ODTK_SOLVERS": str(tmp_path / "r.yaml")})
    assert_one_line_error(run, "highs refuses the parameter mip_lp_solver='nonsense'", "(from its settings)",
                          "correct it in the solver registry")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r.yaml", "xor.csv"]


@pytest.mark.parametrize("content,words", [
    ('{"format": "odtk-model", "vers', ["not valid JSON"]),
    ('{"format": "other"}', ["not an odtk model file"]),
    ('{"format": "odtk-model", "version": 99}', ["version 99"]),
    ('{"format": "odtk-model", "version": 1, "graph": {}}', ["damaged"]),
])
def test_bad_model_files(tmp_path, monk_csv, content, words):
    path = tmp_path / "m.json"
    path.write_text(content)
    assert_one_line_error(odtk("predict", "--model-file", str(path), "--csv", str(monk_csv)), *words)


def test_datasets_and_solvers_listings():
    runner = CliRunner()
    listing = runner.invoke(main, ["datasets"])
    assert listing.exit_code == 0
    assert any(line.split()[:2] == ["flowoct/monk1", "124"] for line in listing.output.splitlines())
    solvers = runner.invoke(main, ["solvers"])
    assert solvers.exit_code == 0
    highs = next(line for line in solvers.output.splitlines() if line.startswith("highs"))
    assert "available" in highs


@pytest.mark.parametrize("start", ["import odtk", "from odtk.cli import main; main(['--help'])",
                                   "from odtk.cli import main; main(['datasets'])"])
def test_a_light_start_imports_no_solver_stack(start):
    """``import odtk``, ``odtk --help`` and ``odtk datasets`` load Pyomo, scikit-learn, SciPy and
    pandas only when something needs them."""
    code = f"import sys\ntry:\n    {start}\nexcept SystemExit:\n    pass\n" \
           "print('loaded:', *sorted(m for m in ('pyomo', 'sklearn', 'scipy', 'pandas') if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "loaded:"


def test_lazy_public_names_resolve():
    import odtk
    import odtk.datasets
    import odtk.experiments

    for package in (odtk, odtk.datasets, odtk.experiments):
        assert set(package.__all__) <= set(dir(package))
        for name in package.__all__:
            assert getattr(package, name).__name__ == name
    with pytest.raises(AttributeError):
        odtk.no_such_name  # noqa: B018
    help_text = CliRunner().invoke(main, ["solve", "--help"]).output  # lists the models on demand
    assert "Formulation: benders, binoct," in help_text and "flowoct" in help_text


def test_solve_prints_leaf_class_mix_and_the_objectives_meaning_and_saves_a_png(tmp_path):
    png = tmp_path / "tree.png"
    run = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "uci/iris", "--depth", "2",
                                    "--thresholds", "auto", "--png", str(png)])
    assert run.exit_code == 0, run.output
    leaves = [line for line in run.output.splitlines() if "predict" in line]
    assert 2 <= len(leaves) <= 4  # a depth-2 tree; a split that would not lower the error is not made
    misclassified = sum(int(re.search(r"; (\d+) misclassified; by class setosa: \d+, versicolor: \d+, "
                                      r"virginica: \d+\)$", line)[1])
                        for line in leaves)
    objective = next(line for line in run.output.splitlines() if line.startswith("objective"))
    assert int(objective.split()[1]) == misclassified  # the leaves' errors add up to the objective
    assert "= misclassified training rows, minimised" in run.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "uci/iris", "--depth", "1",
                                      "--png", str(png)])
    assert again.exit_code == 1 and "already exists" in again.output  # never overwritten silently


def test_png_without_matplotlib_is_refused_before_solving(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # an import of it fails
    output = tmp_path / "m.json"
    run = CliRunner().invoke(main, ["solve", "--model", "cp", "--dataset", "uci/iris", "--depth", "1",
                                    "--png", str(tmp_path / "t.png"), "--output", str(output)])
    assert run.exit_code == 1 and "needs matplotlib" in run.output and install_hint("experiments") in run.output
    assert list(tmp_path.iterdir()) == []  # nothing solved, nothing written
