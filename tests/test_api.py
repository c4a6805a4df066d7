"""``odtk.solve`` raises clear, typed exceptions for bad input."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import odtk
from odtk.exceptions import (ConfigError, DataError, OdtkError, SkeletonError,
                             SolverUnavailableError)


@pytest.mark.parametrize("kwargs,error,words", [
    ({"model": "nope"}, ConfigError, "Unknown model 'nope'"),
    ({"solver": "cplexx"}, ConfigError, "Known solvers"),
    ({"data": "no-such-set"}, DataError, "Unknown dataset"),
    ({"depth": 14}, SkeletonError, "depth"),
    ({"depth": None, "skeleton": "1-5"}, SkeletonError, "1-2-4-8"),
    ({"depth": None, "skeleton": "1-2-3"}, ConfigError, "double"),
    ({"lam": 1.5}, ConfigError, "lam"),
    ({"alpha": 0.1}, ConfigError, "no option"),
    ({"handoff": "fax"}, ConfigError, "hand-off"),
    ({"data": pd.DataFrame({"a": [0, 1], "b": [1, 0]}), "target": "c"}, DataError, "'c' not found"),
    ({"data": pd.DataFrame({"a": [0, 1], "b": [1, 1]}), "target": "b"}, DataError, "single class"),
    ({"data": pd.DataFrame({"a": [0, None], "b": [1, 0]}), "target": "b"}, DataError, "missing values"),
    ({"data": ([[0, 1], [1, 0]], [0, 1, 1])}, DataError, "must match"),
    ({"data": 42}, DataError, "Cannot use data"),
    ({"gap": 0.1}, ConfigError, "odtk.solve has no option 'gap'; write mip_gap=… (the CLI's --gap)."),
    ({"log": True}, ConfigError, "odtk.solve has no option 'log'; write verbose=… (the CLI's --verbose)."),
    ({"random_state": 0}, ConfigError, "write seed=…"),
    ({"n_jobs": 2}, ConfigError, "write threads=…"),
    ({"max_depth": 2}, ConfigError, "write depth=…"),
])
def test_bad_input_raises_a_typed_one_line_error(kwargs, error, words):
    call = {"model": "flowoct", "data": "flowoct/monk1", "depth": 1, **kwargs}
    with pytest.raises(error) as raised:
        odtk.solve(call.pop("model"), call.pop("data"), **call)
    assert isinstance(raised.value, OdtkError) and isinstance(raised.value, (ValueError, RuntimeError))
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_missing_solver_says_how_to_install(monkeypatch, tmp_path):
    import odtk.solvers as solvers

    bundled = (Path(__file__).parents[1] / "solvers.yaml").read_text()
    custom = tmp_path / "solvers.yaml"
    custom.write_text(bundled.replace("package: cbcbox", "package: odtk_missing_cbcbox"))
    monkeypatch.setenv("ODTK_SOLVERS", str(custom))
    solvers.registry.cache_clear()
    solvers.solver_status.cache_clear()
    try:
        with pytest.raises(SolverUnavailableError, match=r'not available.*pip install "odtk\[cbc\]"'):
            odtk.solve("flowoct", "flowoct/monk1", depth=1, solver="cbc")
        assert "cbc" not in odtk.available_solvers()
    finally:
        monkeypatch.delenv("ODTK_SOLVERS")
        solvers.registry.cache_clear()
        solvers.solver_status.cache_clear()


def test_verbose_prints_the_steps_and_the_solvers_log(capfd):
    odtk.solve("flowoct", "flowoct/monk1", depth=1, verbose=True)
    shown = capfd.readouterr()
    assert "odtk: " in shown.err and "rows encoded as" in shown.err
    assert "HiGHS" in shown.out + shown.err
    odtk.solve("flowoct", "flowoct/monk1", depth=1)
    quiet = capfd.readouterr()
    assert quiet.out == quiet.err == ""
