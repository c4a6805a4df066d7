"""scikit-learn estimators over ``odtk.solve``: an optimal tree, an optimal decision diagram and
an optimal categorical tree.

They take scikit-learn's names (``max_depth``, ``min_samples_leaf``, ``class_weight``,
``random_state``, ``n_jobs``, ``verbose``) and offer its tree surface (``predict_proba``,
``apply``, ``decision_path``, ``feature_importances_``, ``get_depth``, ``get_n_leaves``; see
:mod:`odtk.estimator_base`); :func:`odtk.export_text` prints them in scikit-learn's text format.
All three pass scikit-learn's ``check_estimator``; the two tree estimators fail
``check_sample_weight_equivalence_on_dense_data`` (and ``_on_sparse_data``: sparse ``X`` is made
dense) by design: integer weights and repeated rows give the same optimal objective, but equally
optimal trees tie and the solver may return another one (and quantile thresholds or bins are
fitted on the rows, unweighted, so repeated rows can move them).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import Tags
from sklearn.utils.multiclass import type_of_target

from odtk import api
from odtk.budget import DEFAULT_TIME_LIMIT
from odtk.datasets import inputs
from odtk.estimator_base import SolvedClassifier
from odtk.exceptions import ConfigError
from odtk.results import SolveResult

LEAF_OPTION = {"cp": "min_support", "oct": "min_leaf"}  # the models that bound a leaf's samples
DEFAULT_SKELETON = "1-2-4-8"


def _whole(name: str, value: Any, low: int) -> None:
    """A ConfigError unless ``value`` is a whole number of at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ConfigError(f"{name} must be a whole number of at least {low}, got {value!r}.")


class OptimalTreeClassifier(SolvedClassifier):
    """An optimal decision tree learned by a MILP formulation or by the CP paper's search
    (``model="cp"``).

    ``model="auto"`` (the default) is FlowOCT, the strongest of the tree MILPs, or OCT when
    ``min_samples_leaf`` is above 1 (FlowOCT cannot count a leaf's rows; OCT can).

    ``max_depth`` (default 2) is the tree's depth (``depth`` in :func:`odtk.solve`). ``time_limit``
    (60 s unless told; None for no limit) covers the whole fit, which returns the best model found
    at the limit or on Ctrl-C; ``verbose=True`` prints odtk's training steps and the solver's log
    (incumbent, bound, gap, elapsed time), silent by default. Numeric features are binarised at
    thresholds fitted on the training data — by default (``thresholds="auto"``) about ten
    quantile midpoints per feature plus every threshold of scikit-learn's CART of the same
    depth, so the optimum is at least as accurate on the training data as that CART
    (``"midpoints"``: every midpoint, exact but often too large to solve); categorical
    (non-numeric) columns are one-hot encoded. The MILP models start from the better of CART's
    tree and the CP search's (``initial_tree="best"``; ``"cart"``, or ``None`` for no start), so a
    fit stopped by ``time_limit`` returns at least that tree; the searches (``"cp"``,
    ``"sat-*"``) take no start and ignore it.

    ``min_samples_leaf`` (default 1): every leaf holds at least this many training rows; the
    models that can count a leaf's rows take it (``"cp"``: its ``min_support``, in weighted rows;
    ``"oct"``: its ``min_leaf``, in rows); FlowOCT and BendersOCT route only the rows they
    classify correctly and BinOCT none of its leaves' sizes, so they refuse a value above 1.
    ``class_weight`` (None, ``"balanced"`` or ``{label: weight}``, as in scikit-learn) multiplies
    each row's weight in the objective by its class's weight, like ``sample_weight`` in ``fit``
    (a weight per sample in the objective): the MILP models (``"flowoct"``, ``"benders"``,
    ``"binoct"``, ``"oct"``; OCT's leaf bound still counts rows) take any weights, ``"cp"``
    whole-number weights (a row of weight w counts as w rows, in ``min_samples_leaf`` too), and
    the SAT models none (ConfigError). ``random_state``, ``n_jobs``: see :mod:`odtk.estimator_base`.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``feature_names_in_`` (for DataFrames
    with string column names), ``feature_importances_``, ``result_`` (:class:`odtk.SolveResult`),
    ``model_`` (:class:`odtk.models.TrainedModel`: encoder, labels, ``to_text``, ``save``) and
    ``graph_`` (its :class:`odtk.models.DecisionGraph`). ``max_depth`` ≤ 1 sets the ``poor_score``
    tag (two leaves).
    """

    def __init__(self, model: str = "auto", max_depth: int | None = 2, solver: str | None = None,
                 lam: float = 0.0, min_samples_leaf: int = 1, class_weight: dict | str | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, mip_gap: float | None = None,
                 n_jobs: int | None = None, random_state: Any = None, verbose: bool = False,
                 thresholds: str = "auto", max_thresholds: int | None = None,
                 initial_tree: str | None = "best"):
        self.model = model
        self.max_depth = max_depth
        self.solver = solver
        self.lam = lam
        self.min_samples_leaf = min_samples_leaf
        self.class_weight = class_weight
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.thresholds = thresholds
        self.max_thresholds = max_thresholds
        self.initial_tree = initial_tree

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = self.max_depth is not None and self.max_depth < 2  # ≤ 2 leaves
        return tags

    def _model(self) -> str:
        """The model fitted: ``model``, with ``"auto"`` resolved (see the class docstring)."""
        _whole("min_samples_leaf", self.min_samples_leaf, 1)
        if self.model == "auto":
            return "flowoct" if self.min_samples_leaf == 1 else "oct"
        return self.model

    def _options(self, model: str) -> dict[str, Any]:
        """``model``'s own options for ``lam`` and ``min_samples_leaf``."""
        options = {}
        if "lam" in api.model_options(model) or self.lam != 0.0:  # unknown and set: odtk.solve says why
            options["lam"] = self.lam
        if model in LEAF_OPTION:
            options[LEAF_OPTION[model]] = int(self.min_samples_leaf)
        elif self.min_samples_leaf != 1:
            raise ConfigError(f"Model {model!r} cannot bound a leaf's samples; min_samples_leaf="
                              f"{self.min_samples_leaf} needs model='cp', 'oct' or 'auto' (or min_samples_leaf=1).")
        return options

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None) -> SolveResult:
        model = self._model()
        return api.solve(
            model, (frame, y), depth=self.max_depth, solver=self.solver, **self._settings(),
            thresholds=self.thresholds, max_thresholds=self.max_thresholds,
            warm_start=self.initial_tree if api.takes_warm_start(model) else None,
            sample_weight=sample_weight, **self._options(model))


class OptimalDiagramClassifier(SolvedClassifier):
    """An optimal decision diagram (Florio et al.) on a layered skeleton such as ``1-2-4-8``.

    ``skeleton`` gives the widths of the internal layers; without it, ``max_depth=d`` takes the
    skeleton 1-2-…-2^(d-1) (d layers of tests, the widths of a complete tree, whose nodes the
    diagram may still merge), and neither takes ``1-2-4-8``. Numeric features are min-max scaled
    to [0, 1] on the training data; splits are hyperplanes ``a·x >= b`` (one feature each with
    ``univariate=True``). ``strategy`` chooses the heuristic, the MILP, or both (heuristic warm
    start and cutoff); ``verbose=True`` prints the steps and the solver's log. ``groups`` names
    the column of ``X`` holding two protected groups for ``fairness``. ``min_samples_split``:
    at least this many training rows through every decision node (the paper's stability bound
    S). ``min_samples_leaf`` (default 1): a split is only made if it leaves at least this many
    training rows on each of its two sides (the model's ``min_leaf``; a diagram's class
    terminals gather the rows of many paths, so it bounds the branches, not the terminals).
    ``class_weight`` and ``sample_weight`` weigh the rows: the heuristic and the
    MILP minimise the weighted error rate (fairness, stability and ``min_samples_leaf`` still
    count rows).
    ``random_state``, ``n_jobs``: see :mod:`odtk.estimator_base`.
    Fitted attributes as for :class:`OptimalTreeClassifier`; ``graph_`` is the diagram, whose
    class terminals each predict one class: ``predict_proba`` takes the class frequencies of
    the training samples entering the terminal through the same arc.
    """

    def __init__(self, skeleton: str | None = None, max_depth: int | None = None, solver: str | None = None,
                 alpha: float = 0.01, epsilon: float = 1e-4, univariate: bool = False, strategy: str = "both",
                 heuristic_time: float = 5.0, class_weight: dict | str | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, mip_gap: float | None = None,
                 n_jobs: int | None = None, random_state: Any = None, verbose: bool = False,
                 fairness: str | None = None, xi: float | None = None, groups: str | None = None,
                 max_nodes: int | None = None, min_samples_split: int | None = None,
                 min_samples_leaf: int = 1):
        self.skeleton = skeleton
        self.max_depth = max_depth
        self.solver = solver
        self.alpha = alpha
        self.epsilon = epsilon
        self.univariate = univariate
        self.strategy = strategy
        self.heuristic_time = heuristic_time
        self.class_weight = class_weight
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.fairness = fairness
        self.xi = xi
        self.groups = groups
        self.max_nodes = max_nodes
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf

    def _skeleton(self) -> str:
        """The skeleton: given, or that of ``max_depth``, or the default."""
        if self.skeleton is not None or self.max_depth is None:
            return DEFAULT_SKELETON if self.skeleton is None else self.skeleton
        _whole("max_depth", self.max_depth, 1)
        return "-".join(str(2**layer) for layer in range(self.max_depth))

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None) -> SolveResult:
        _whole("min_samples_leaf", self.min_samples_leaf, 1)
        return api.solve(
            "odd", (frame, y), skeleton=self._skeleton(), depth=self.max_depth if self.skeleton is not None else None,
            solver=self.solver, **self._settings(),
            strategy=self.strategy, heuristic_time=self.heuristic_time, groups=self.groups,
            alpha=self.alpha, epsilon=self.epsilon, univariate=self.univariate,
            fairness=self.fairness, xi=self.xi, max_nodes=self.max_nodes,
            min_samples=self.min_samples_split, min_leaf=int(self.min_samples_leaf),
            sample_weight=sample_weight)


class CategoricalTreeClassifier(SolvedClassifier):
    """An optimal binary classification tree whose tests are "feature in a subset of its
    values" (Günlük et al.), on a fixed ``topology``: ``depth-2``, ``depth-2.5``,
    ``depth-3``, ``imbalanced`` or a ``networkx.DiGraph``; without one, ``max_depth=d`` takes
    the complete tree of depth d, and neither takes ``depth-2``. ``verbose=True`` prints the
    solver's log.

    Non-numeric columns and the columns named in ``categorical`` are categorical; numeric
    columns are cut into ``bins`` quantile bins, kept ordered unless ``numeric="categorical"``.
    ``class_weight`` follows scikit-learn (``None``, ``"balanced"`` or ``{label: weight}``);
    the objective counts correct positives plus C times correct negatives, with C the
    negative class's weight over the positive class's. ``fit`` takes ``sample_weight``, which
    multiplies each row's term in the objective (with ``class_weight``, as in scikit-learn).
    ``rate`` ("sensitivity" or "specificity") with ``min_rate`` maximises one training rate
    subject to a minimum of the other. ``min_samples_leaf`` (default 1): every leaf receives at
    least this many training rows (the model's ``min_leaf``, odtk's own constraint; rows, not
    weights). ``improvements`` passes further model options: the
    paper's switches (``{"anchors": "off"}``), one of its named configurations
    (``{"configuration": "no-relax"}``: ``"all"``, ``"nothing"``, ``"no-anchor"``,
    ``"no-relax"``, ``"no-strength"``), ``max_card_ordinal``, and ``min_groups`` and
    ``selection_share`` of ``feature_selection="cart"``. Binary targets only.
    ``random_state``, ``n_jobs``: see :mod:`odtk.estimator_base`.
    Fitted attributes as for :class:`OptimalTreeClassifier`.
    """

    def __init__(self, topology: Any = None, max_depth: int | None = None, solver: str | None = None,
                 positive_class: Any = None, class_weight: dict | str | None = None,
                 max_card: int | None = None, rate: str = "accuracy", min_rate: float | None = None,
                 min_samples_leaf: int = 1, numeric: str = "ordinal", bins: int = 10,
                 categorical: list[str] | None = None, feature_selection: str = "all",
                 improvements: dict[str, str] | None = None,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, mip_gap: float | None = None,
                 n_jobs: int | None = None, random_state: Any = None, verbose: bool = False):
        self.topology = topology
        self.max_depth = max_depth
        self.solver = solver
        self.positive_class = positive_class
        self.class_weight = class_weight
        self.max_card = max_card
        self.rate = rate
        self.min_rate = min_rate
        self.min_samples_leaf = min_samples_leaf
        self.numeric = numeric
        self.bins = bins
        self.categorical = categorical
        self.feature_selection = feature_selection
        self.improvements = improvements
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _class_weight(self, y: np.ndarray) -> np.ndarray:
        target = type_of_target(y, input_name="y", raise_unknown=True)
        if target != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {target}.")
        return super()._class_weight(y)

    def _row_weight(self, class_weight: np.ndarray, y_index: np.ndarray,
                    sample_weight: np.ndarray | None) -> np.ndarray | None:
        """The rows' own weights: the class weights enter the objective as its C."""
        return sample_weight

    def _negative_weight(self, y: np.ndarray, sample_weight: np.ndarray | None) -> float:
        """The objective's C: the negative class's weight over the positive class's."""
        class_weight = self._class_weight(y)
        positive = next((k for k, c in enumerate(self.classes_) if self.positive_class is not None
                         and str(c) == str(self.positive_class)), 1)  # else odtk.solve says why
        if class_weight[positive] <= 0:
            raise ConfigError("class_weight must give the positive class a positive weight.")
        ratio = class_weight[1 - positive] / class_weight[positive]
        return float(min(ratio, _lexicographic_bound(y == self.classes_[positive], sample_weight)))

    def _solve(self, frame: pd.DataFrame, y: np.ndarray, sample_weight: np.ndarray | None) -> SolveResult:
        _whole("bins", self.bins, 2)
        _whole("min_samples_leaf", self.min_samples_leaf, 1)
        data = inputs.from_arrays(frame, y, categorical=self.categorical)
        topology = "depth-2" if self.topology is None and self.max_depth is None else self.topology
        options = dict(
            skeleton=topology, depth=self.max_depth, solver=self.solver, **self._settings(),
            max_thresholds=self.bins - 1, positive_class=self.positive_class,
            class_weight=self._negative_weight(y, sample_weight), sample_weight=sample_weight,
            max_card=self.max_card, rate=self.rate, min_rate=self.min_rate, numeric=self.numeric,
            min_leaf=int(self.min_samples_leaf), feature_selection=self.feature_selection)
        return api.solve("categorical", data, **options, **_further_options(self.improvements, options))


def _further_options(improvements: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``improvements`` checked: a dict of model options the estimator does not set itself."""
    if improvements is None:
        return {}
    if not isinstance(improvements, dict):
        raise ConfigError(f"improvements must be a dict of model options (e.g. {{'anchors': 'off'}}), "
                          f"got {type(improvements).__name__}.")
    taken = sorted(set(improvements) & set(options))
    if taken:
        raise ConfigError(f"improvements sets {', '.join(taken)}, which the estimator sets from its own "
                          "parameters (min_leaf: min_samples_leaf, depth: max_depth, ...); set those instead.")
    return improvements


def _lexicographic_bound(positive: np.ndarray, sample_weight: np.ndarray | None) -> float:
    """A C beyond which every C ranks trees alike (correct negatives first): the weight of the
    positives over the least positive weight of a negative, plus 1 (unweighted: positives + 1)."""
    mass = np.ones(len(positive)) if sample_weight is None else sample_weight
    negatives = mass[~positive & (mass > 0)]
    return float(mass[positive].sum() / (negatives.min() if len(negatives) else 1.0) + 1)
