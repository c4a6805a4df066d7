"""COIN-OR CBC (the binary shipped by cbcbox) on an MPS file written by HiGHS."""
from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from odtk.solvers.highs import highs_lp, new_highs
from odtk.solvers.options import SolverOptions
from odtk.solvers.registry import SolverSpec
from odtk.solvers.standard_form import FEASIBILITY_TOLERANCE, StandardForm, model_violation

BACKEND = "cbc"
log = logging.getLogger(__name__)


def cbc_binary(spec: SolverSpec) -> str:
    """The CBC binary: the registry's ``executable``, else the one cbcbox ships."""
    if spec.executable:
        path = shutil.which(spec.executable)
        if path is None:
            raise FileNotFoundError(f"the CBC binary {spec.executable} is missing or not executable")
        return path
    cbcbox = importlib.import_module("cbcbox")
    path = cbcbox.cbc_bin_path()
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError("the cbcbox package has no runnable CBC binary")
    return path


def version(spec: SolverSpec) -> str:
    """The version CBC's banner gives (else the cbcbox package's)."""
    out = subprocess.run([cbc_binary(spec), "-quit"], capture_output=True, text=True, timeout=30)
    first = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
    match = re.search(r"CBC\s+(.*?)\s+[—-]", first)
    return match.group(1) if match else importlib.metadata.version("cbcbox")


_CBC_STATUS = {"Optimal": "optimal", "Stopped on time": "time_limit", "Infeasible": "infeasible",
               "Integer infeasible": "infeasible", "Stopped on ctrl-c": "interrupted"}


def solve(form: StandardForm, spec: SolverSpec, options: SolverOptions) -> dict:
    """CBC on an MPS file. Its preprocessing now and then returns a solution that violates the
    model ("possible tolerance issue" in its log): CBC then solves again without it."""
    raw = _run_cbc(form, spec, options, preprocess=True)
    if raw["values"] is not None and model_violation(form, raw["values"]) > FEASIBILITY_TOLERANCE:
        log.info("CBC's solution violates the model; solving again without preprocessing")
        raw = _run_cbc(form, spec, options, preprocess=False)
    return raw


def _run_cbc(form: StandardForm, spec: SolverSpec, options: SolverOptions, preprocess: bool) -> dict:
    binary = cbc_binary(spec)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="odtk-cbc-") as tmp:
        mps, sol = Path(tmp, "model.mps"), Path(tmp, "model.sol")
        writer = new_highs()
        writer.passModel(highs_lp(form, minimize_only=True))  # CBC reads MPS as minimisation
        writer.writeModel(str(mps))
        handoff = time.perf_counter() - start
        args = [binary, str(mps)]
        # CBC reports its bound and node count only with its log on: keep it on, show it with options.log
        for key, value in {**options.native(spec), "log": 1}.items():
            args += [f"-{key}", str(value)]
        args += _cbc_start_and_cutoff(form, Path(tmp))
        args += [] if preprocess else ["-preprocess", "off"]
        args += ["-solve", "-solu", str(sol)]
        run = subprocess.run(args, capture_output=True, text=True)
        if options.log:
            log.info(run.stdout)
        if run.returncode != 0 or not sol.exists():
            return dict(termination="error", values=None, bound=None, handoff=handoff,
                        message=_cbc_failure(run))
        return _cbc_outcome(sol.read_text(errors="replace"), run.stdout, form, handoff)


def _cbc_failure(run: subprocess.CompletedProcess) -> str:
    """Why CBC left no solution file: the signal that killed it, or its exit code and last words."""
    if run.returncode < 0:
        try:
            cause = signal.Signals(-run.returncode).name
        except ValueError:
            cause = f"signal {-run.returncode}"
        return f"the CBC process was killed by {cause}"
    tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"CBC exited with code {run.returncode}: {tail[0]}"


def _cbc_start_and_cutoff(form: StandardForm, folder: Path) -> list[str]:
    """CBC arguments for a warm start (a solution file) and a cutoff, in its minimisation terms."""
    args = []
    sign = -1.0 if form.maximize else 1.0
    if form.start is not None:
        known = np.flatnonzero(~np.isnan(form.start))
        lines = [f"{j} c{j} {form.start[j]:.12g}" for j in known]
        start = folder / "start.sol"
        start.write_text("Stopped on iterations - objective value 0\n" + "\n".join(lines) + "\n")
        args += ["-mipStart", str(start)]
    if form.cutoff is not None:
        args += ["-cutoff", repr(sign * form.cutoff)]
    return args


def _cbc_outcome(solution: str, stdout: str, form: StandardForm, handoff: float) -> dict:
    lines = solution.splitlines()
    if not lines:
        return dict(termination="error", values=None, bound=None, handoff=handoff,
                    message="CBC wrote an empty solution file")
    head = lines[0]
    state = head.split(" - ")[0].strip()
    termination = next((v for k, v in _CBC_STATUS.items() if state.startswith(k)), "error")
    sign = -1.0 if form.maximize else 1.0
    values = None
    # "Stopped on time (... no integer solution ...)": the values are a relaxation, not a solution
    if ("objective value" in head and "no integer solution" not in head
            and termination in ("optimal", "time_limit", "interrupted")):
        values = _cbc_values(lines, form)
        if values is None:
            return dict(termination="error", values=None, bound=None, handoff=handoff,
                        message=f"CBC's solution file is damaged: its values do not give the "
                                f"objective of its first line {head[:80]!r}")
    bound_match = re.search(r"Lower bound:\s*(\S+)", stdout)
    bound = None
    if bound_match:  # printed when CBC stops early (and by some builds at an optimum)
        bound = sign * float(bound_match.group(1))  # CBC's objective includes the MPS offset
    elif termination == "optimal" and values is not None:
        bound = float(form.c @ values + form.offset)
    nodes = re.search(r"Enumerated nodes:\s*(\d+)", stdout)
    message = head if termination != "error" else f"CBC's solution file reads {head[:80]!r}"
    return dict(termination=termination, values=values, bound=bound, handoff=handoff, message=message,
                nodes=int(nodes.group(1)) if nodes else None)


def _cbc_values(lines: list[str], form: StandardForm) -> np.ndarray | None:
    """The values of a CBC solution file (nonzero columns as ``index name value``), or None when
    a line does not parse or the values do not give the objective its first line reports."""
    values = np.zeros(len(form.c))
    try:
        reported = float(lines[0].split()[-1])
        for line in lines[1:]:
            parts = line.split()
            if len(parts) >= 3 and parts[0].isdigit():
                values[int(parts[0])] = float(parts[2])
    except (ValueError, IndexError):
        return None
    sign = -1.0 if form.maximize else 1.0  # CBC minimises; its objective includes the MPS offset
    scale = 1.0 + float(np.abs(form.c) @ np.abs(values))  # the file rounds values to 8 digits
    return values if abs(sign * reported - float(form.c @ values + form.offset)) <= 1e-6 * scale else None

