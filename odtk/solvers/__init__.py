"""The solver registry and the one place where odtk hands models to solvers.

``solvers.yaml`` (data) says how each solver is reached; this package probes availability,
translates odtk's normalised options (``time_limit``, ``mip_gap``, ``threads``, ``seed``,
``log``) to native names, and solves a Pyomo instance. Modules:

* ``registry``: the registry's entries, the backends they name, availability, licence limits;
* ``options``: odtk's solver options, a solve's outcome and the test of a claimed optimum;
* ``standard_form``: the matrices every native backend receives, and checks on a solution;
* one module per backend (``highs``, ``cbc``, ``gurobi``, ``cplex``, ``scip``; ``sat`` for the
  SAT solvers), each declaring ``BACKEND`` (its name in ``solvers.yaml``) and ``solve``;
* ``pyomo_handoff``: the solver's own Pyomo interface instead of the native hand-off;
* ``solve``: :func:`solve_instance`, the entry point.

Two hand-offs exist:

* ``"native"`` (default, fastest): Pyomo's ``LinearStandardFormCompiler`` turns the instance
  into sparse matrices that go straight into the solver's matrix API; CBC reads an MPS file
  written by HiGHS.
* ``"pyomo"``: the solver's own Pyomo interface (``pyomo.oneshot`` in the registry).

Both load the solution back into the instance's variables, so formulations can decode it the
same way.
"""
from odtk.solvers.highs import highs_lp, new_highs
from odtk.solvers.options import (OPTIMALITY_TOLERANCE, OPTION_NAMES, TERMINATIONS, SolverOptions,
                                  SolverOutcome, verified_termination)
from odtk.solvers.registry import (CAPABILITIES, SolverSpec, SolverStatus, available_solvers, backends,
                                   check_licence, get_spec, load_registry, model_settings, parse_yaml,
                                   registry, require_solver, solver_status)
from odtk.solvers.solve import HANDOFFS, solve_instance
from odtk.solvers.standard_form import (FEASIBILITY_TOLERANCE, ModelSize, StandardForm, model_violation,
                                        to_standard_form)

__all__ = ["CAPABILITIES", "FEASIBILITY_TOLERANCE", "HANDOFFS", "OPTIMALITY_TOLERANCE", "OPTION_NAMES",
           "TERMINATIONS", "ModelSize", "SolverOptions", "SolverOutcome", "SolverSpec", "SolverStatus", "StandardForm",
           "available_solvers", "backends", "check_licence", "get_spec", "highs_lp", "load_registry",
           "model_settings", "model_violation", "new_highs", "parse_yaml", "registry", "require_solver",
           "solve_instance", "solver_status", "to_standard_form", "verified_termination"]
