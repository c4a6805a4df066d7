"""odtk: optimal decision trees and diagrams by mathematical programming, on any MILP solver.

Entry points: :func:`odtk.solve`, the estimators :class:`odtk.OptimalTreeClassifier`,
:class:`odtk.CategoricalTreeClassifier` and :class:`odtk.OptimalDiagramClassifier`, and the
``odtk`` command line; :func:`odtk.plot_tree` draws a learned model with matplotlib and
:func:`odtk.export_text` prints a fitted estimator in scikit-learn's text format.
``odtk.__version__`` is the installed version (``odtk --version``). An invalid thread count in
the environment (``OMP_NUM_THREADS=abc``) is set aside on import, with a warning
(:mod:`odtk._environment`).
"""
from typing import TYPE_CHECKING

from odtk import _environment, _lazy

_environment.set_aside_invalid_thread_counts()  # before numpy, pandas or numexpr read them

if TYPE_CHECKING:
    from odtk._version import __version__ as __version__
    from odtk.api import available_models, solve
    from odtk.estimators import CategoricalTreeClassifier, OptimalDiagramClassifier, OptimalTreeClassifier
    from odtk.export import export_text
    from odtk.plotting import plot_tree
    from odtk.results import SolveResult
    from odtk.solvers import available_solvers

__all__ = ["CategoricalTreeClassifier", "OptimalDiagramClassifier", "OptimalTreeClassifier", "SolveResult",
           "available_models", "available_solvers", "export_text", "plot_tree", "solve"]
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "odtk._version": ("__version__",),
    "odtk.api": ("available_models", "solve"),
    "odtk.estimators": ("CategoricalTreeClassifier", "OptimalDiagramClassifier", "OptimalTreeClassifier"),
    "odtk.export": ("export_text",),
    "odtk.plotting": ("plot_tree",),
    "odtk.results": ("SolveResult",),
    "odtk.solvers": ("available_solvers",),
})
