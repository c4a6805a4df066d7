"""ODD: tree mode against FlowOCT, decoding, extensions and warm starts."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest

from odtk.formulations import flowoct, odd
from odtk.models import DecisionGraph
from odtk.skeletons import diagram_skeleton, tree_skeleton
from odtk.solvers import SolverOptions, solve_instance

from brute_force import all_trees
from feasibility import assert_feasible


def _binary(seed: int, n: int = 16, p: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """0/1 features; the label is an XOR of two features with some flipped labels."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p)).astype(float)
    y = ((X[:, 0] != X[:, 1]) ^ (rng.random(n) < 0.2)).astype(int)
    return X, y


def _scaled(seed: int, n: int = 14, p: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Features on a grid in [0, 1]; the label is a noisy oblique rule."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, (n, p)) / 4
    y = ((X[:, 0] + X[:, 1] > 1) ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


def _instance(X, y, skeleton: str, **hyper):
    hyper = {"alpha": 0.0, **hyper}
    return odd.build_model().create_instance(
        odd.make_data(X, y, diagram_skeleton(skeleton), int(y.max()) + 1, **hyper))


def _solve(X, y, skeleton: str, solver: str = "highs", **hyper):
    instance = _instance(X, y, skeleton, **hyper)
    outcome = solve_instance(instance, solver, SolverOptions(time_limit=60))
    return instance, outcome


def _predict(graph: nx.DiGraph, X) -> np.ndarray:
    names = [f"x{j}" for j in range(X.shape[1])]
    classes = sorted({a["label"] for _, a in graph.nodes(data=True) if "label" in a} | {0, 1})
    return DecisionGraph(graph, names, [str(c) for c in classes]).predict_index(X)


def _errors(outcome, n: int) -> int:
    return round(outcome.objective * n)


@pytest.mark.parametrize("seed", [0, 1])
def test_univariate_tree_mode_equals_flowoct_at_depth_2(seed):
    X, y = _binary(seed)
    _, outcome = _solve(X, y, "1-2", univariate=True, tree=True)
    tree = flowoct.build_model().create_instance(flowoct.make_data(X, y, tree_skeleton(2), 2))
    reference = solve_instance(tree, "highs", SolverOptions())
    assert outcome.termination == reference.termination == "optimal"
    assert _errors(outcome, len(y)) == len(y) - round(reference.objective)


def test_univariate_tree_mode_equals_flowoct_at_depth_3():
    X, y = _binary(3, n=12, p=3)
    _, outcome = _solve(X, y, "1-2-4", univariate=True, tree=True)
    tree = flowoct.build_model().create_instance(flowoct.make_data(X, y, tree_skeleton(3), 2))
    reference = solve_instance(tree, "highs", SolverOptions())
    assert _errors(outcome, len(y)) == len(y) - round(reference.objective)


def _parity() -> tuple[np.ndarray, np.ndarray]:
    """The parity of three bits: a 1-2-2 diagram computes it, no depth-2 tree does."""
    X = np.array([[(k >> b) & 1 for b in range(3)] for k in range(8)], dtype=float)
    return X, X.sum(axis=1).astype(int) % 2


@pytest.mark.parametrize("data, exact", [(_binary(4, n=12, p=3), False), (_parity(), True)],
                         ids=["noisy-xor", "parity"])
def test_deeper_narrow_diagram_is_never_worse_than_the_shallower_tree(data, exact):
    X, y = data
    _, tree = _solve(X, y, "1-2", univariate=True, tree=True)
    _, diagram = _solve(X, y, "1-2-2", univariate=True)
    assert diagram.termination == tree.termination == "optimal"
    assert diagram.objective <= tree.objective + 1e-9
    if exact:
        assert diagram.objective == pytest.approx(0, abs=1e-9) and tree.objective > 0.2


@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_tree_sibling_order_keeps_the_optimum(alpha):
    X, y = _binary(3, n=12, p=3)  # optima with a lone internal child exist at both α
    instance, ordered = _solve(X, y, "1-2", univariate=True, tree=True, alpha=alpha)
    assert list(instance.SIBLINGS) == [(1, 2)]
    assert pyo.value(instance.d[2]) <= pyo.value(instance.d[1]) + 1e-6
    free = _instance(X, y, "1-2", univariate=True, tree=True, alpha=alpha)
    free.sibling_order.deactivate()
    unordered = solve_instance(free, "highs", SolverOptions(time_limit=60))
    assert ordered.termination == unordered.termination == "optimal"
    assert ordered.objective == pytest.approx(unordered.objective, abs=1e-6)
    assert sorted(_instance(X, y, "1-2-4", tree=True).SIBLINGS) == [(1, 2), (3, 4), (5, 6)]


def test_tree_mode_needs_a_doubling_skeleton():
    X, y = _binary(0)
    with pytest.raises(ValueError, match="doubles"):
        odd.make_data(X, y, diagram_skeleton("1-2-2"), 2, tree=True)


def _route_matches_flows(instance, graph: nx.DiGraph, X) -> None:
    """Each sample follows, under the decoded rules, the arcs its flow variables use."""
    for i, row in enumerate(X):
        node = pyo.value(instance.root)
        while "label" not in graph.nodes[node]:
            attrs = graph.nodes[node]
            goes_true = float(np.dot(attrs["weights"], row)) >= attrs["threshold"]
            assert pyo.value(instance.w_pos[i, node] if goes_true else instance.w_neg[i, node]) > 0.5
            node = next(v for _, v, o in graph.out_edges(node, data="outcome") if o == goes_true)
        assert pyo.value(instance.w_term[i, node]) > 0.5


@pytest.mark.parametrize("univariate", [False, True])
def test_decoded_diagram_reproduces_the_objective_and_the_flows(univariate):
    X, y = _scaled(6)
    instance, outcome = _solve(X, y, "1-2-2", alpha=0.2, univariate=univariate)
    graph = odd.decode(instance)
    predicted = _predict(graph, X)
    skeleton = diagram_skeleton("1-2-2")
    assert odd.objective_of(graph, predicted, y, skeleton, alpha=0.2) == pytest.approx(
        outcome.objective, abs=1e-6)
    _route_matches_flows(instance, graph, X)
    if univariate:
        assert all(np.count_nonzero(a["weights"]) <= 1 for _, a in graph.nodes(data=True) if "weights" in a)


def test_every_solver_finds_the_same_optimum(solver):
    X, y = _binary(7, n=12, p=3)
    instance, outcome = _solve(X, y, "1-2", solver=solver, alpha=0.1, univariate=True)
    assert outcome.size.variables <= 1000 and outcome.size.constraints <= 1000  # free licences
    assert outcome.termination == "optimal"
    _, reference = _solve(X, y, "1-2", alpha=0.1, univariate=True)
    assert outcome.objective == pytest.approx(reference.objective, abs=1e-6)
    graph = odd.decode(instance)
    assert odd.objective_of(graph, _predict(graph, X), y, diagram_skeleton("1-2"),
                            alpha=0.1) == pytest.approx(outcome.objective, abs=1e-6)


# --------------------------------------------------------------------------- extensions
def _fair_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group membership follows feature 0, which the accurate splits use."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, (16, 2)) / 4
    y = ((X[:, 0] + X[:, 1] > 1) ^ (rng.random(16) < 0.25)).astype(int)
    return X, y, (X[:, 0] >= 0.5).astype(int)


def _rates(predicted, y, group, fairness: str) -> list[float]:
    population = {"demographic_parity": np.ones(len(y), bool), "equal_opportunity": y == 1,
                  "predictive_equality": y == 0}[fairness]
    return [float(np.mean(predicted[population & (group == g)] == 1)) for g in (0, 1)]


@pytest.mark.parametrize("fairness", ["demographic_parity", "equal_opportunity", "predictive_equality"])
def test_binding_fairness_holds_on_the_training_data(fairness):
    X, y, group = _fair_data()
    _, free = _solve(X, y, "1-2", univariate=True)
    instance, fair = _solve(X, y, "1-2", univariate=True, fairness=fairness, xi=0.9, group=group)
    assert fair.objective > free.objective + 1e-6  # the constraint binds
    low, high = sorted(_rates(_predict(odd.decode(instance), X), y, group, fairness))
    assert low >= 0.9 * high - 1e-9


def _groups_3_and_9() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """12 rows on a line, subgroup g₁ of 3 (1 positive) and g₂ of 9 (6 positives).

    Rates: g₁'s 1/3 is below 0.8 × g₂'s 2/3; moving the threshold past g₁'s top negative
    fixes it at one error. Counts: (19) caps g₂'s predicted positives at g₁'s / 0.8 ≤ 3.
    """
    order = "B- B- B- A- A- B+ B+ B+ B+ B+ A+ B+".split()
    X = (np.arange(12) / 11)[:, None]
    y = np.array([tag[1] == "+" for tag in order], dtype=int)
    return X, y, np.array([tag[0] == "A" for tag in order], dtype=int)


def _fewest_errors(y: np.ndarray, members: np.ndarray, xi: float, form: str) -> int:
    """Brute force over all 2^n labelings: the fewest errors of one meeting (19) in ``form``
    (a lower bound for any diagram; demographic parity, subgroups as n × 2 memberships)."""
    labels = np.array(np.meshgrid(*[[0, 1]] * len(y), indexing="ij")).reshape(len(y), -1).T
    positives = [labels[:, members[:, g]].sum(axis=1) for g in (0, 1)]
    sizes = members.sum(axis=0)
    if form == "counts":
        fair = positives[0] >= xi * positives[1] - 1e-9
    else:
        fair = ((sizes[1] * positives[0] >= xi * sizes[0] * positives[1] - 1e-9)
                & (sizes[0] * positives[1] >= xi * sizes[1] * positives[0] - 1e-9))
    return int((labels != y)[fair].sum(axis=1).min())


@pytest.mark.parametrize("form, value", [("rates", 1 / 12), ("counts", 5 / 12)])
def test_fairness_counts_as_in_the_paper_or_rates_match_brute_force(solver, form, value):
    X, y, group = _groups_3_and_9()
    members = np.column_stack([group == 1, group == 0])
    instance, outcome = _solve(X, y, "1-2", solver=solver, fairness="demographic_parity",
                               fairness_form=form, xi=0.8, group=group)
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(_fewest_errors(y, members, 0.8, form) / 12, abs=1e-9)
    assert outcome.objective == pytest.approx(value, abs=1e-9)
    predicted = _predict(odd.decode(instance), X)
    assert _fewest_errors(predicted, members, 0.8, form) == 0  # the diagram itself is fair


def test_counts_fairness_takes_overlapping_subgroups():
    X, y, group = _groups_3_and_9()
    members = np.column_stack([group == 1, np.ones(len(y), bool)])  # g₁ ⊂ g₂ = everyone
    _, outcome = _solve(X, y, "1-2", fairness="demographic_parity", fairness_form="counts",
                        xi=0.8, group=members.astype(int))
    assert outcome.objective == pytest.approx(_fewest_errors(y, members, 0.8, "counts") / 12, abs=1e-9)


def test_fairness_needs_binary_classes_and_groups():
    X, y = _scaled(0)
    with pytest.raises(ValueError, match="two classes"):
        odd.make_data(X, np.arange(len(y)) % 3, diagram_skeleton("1-2"), 3,
                      fairness="demographic_parity", xi=0.8, group=y)
    with pytest.raises(ValueError, match="group"):
        odd.make_data(X, y, diagram_skeleton("1-2"), 2, fairness="demographic_parity", xi=0.8)


def _checkerboard() -> tuple[np.ndarray, np.ndarray]:
    """A noisy 2×2 checkerboard: its error-free diagram needs a node with 5 of the 14 samples."""
    rng = np.random.default_rng(21)
    X = rng.integers(0, 5, (14, 2)) / 4
    y = ((X[:, 0] > 0.4) ^ (X[:, 1] > 0.6) ^ (rng.random(14) < 0.1)).astype(int)
    return X, y


def _internal_counts(graph: nx.DiGraph, X) -> dict:
    counts = DecisionGraph(graph, ["x0", "x1"], ["0", "1"]).sample_counts(X)
    return {n: counts[n] for n, a in graph.nodes(data=True) if "label" not in a}


def test_binding_stability_keeps_enough_samples_at_every_node():
    X, y = _checkerboard()
    _, free = _solve(X, y, "1-2", univariate=True)
    instance, stable = _solve(X, y, "1-2", univariate=True, min_samples=6)
    assert stable.termination == "optimal" and stable.objective > free.objective + 1e-6
    assert min(_internal_counts(odd.decode(instance), X).values()) >= 6


def test_stability_as_a_share_of_n_binds_like_the_count_it_rounds_up_to():
    X, y = _checkerboard()
    instance, share = _solve(X, y, "1-2", univariate=True, min_share=0.4)  # S = 5.6
    assert pyo.value(instance.min_samples) == pytest.approx(0.4 * len(y))
    _, count = _solve(X, y, "1-2", univariate=True, min_samples=6)
    _, free = _solve(X, y, "1-2", univariate=True)
    assert share.objective == pytest.approx(count.objective) and share.objective > free.objective + 1e-6
    assert min(_internal_counts(odd.decode(instance), X).values()) >= 6
    with pytest.raises(ValueError, match="once"):
        odd.make_data(X, y, diagram_skeleton("1-2"), 2, min_samples=6, min_share=0.4)


def test_binding_parsimony_caps_the_active_nodes():
    X, y = _checkerboard()
    free, _ = _solve(X, y, "1-2", univariate=True)
    assert len(_internal_counts(odd.decode(free), X)) == 3
    instance, outcome = _solve(X, y, "1-2", univariate=True, max_nodes=2)
    assert outcome.termination == "optimal"
    assert len(_internal_counts(odd.decode(instance), X)) == 2


def test_more_samples_per_node_than_samples_is_infeasible(solver):
    X, y = _scaled(11, n=8)
    _, outcome = _solve(X, y, "1-2", solver=solver, min_samples=len(y) + 1)
    assert outcome.termination == "infeasible" and not outcome.has_solution


@pytest.mark.parametrize("hyper, reach", [
    ({}, 1.25),  # box: max |a·x| = ‖x‖₁
    ({"domain": "l1"}, 1.0),  # ‖a‖₁ ≤ 1: ‖x‖_∞
    ({"univariate": True}, 1.0),  # one feature: ‖x‖_∞
], ids=["box", "l1", "box-univariate"])
def test_big_m_values_follow_from_the_bounds(hyper, reach):
    X, y = _scaled(12)
    X[0], X[1] = [0.0, 0.0], [1.0, 0.25]
    instance = _instance(X, y, "1-2", epsilon=1e-3, **hyper)
    assert [pyo.value(instance.big_m_neg[i]) for i in (0, 1)] == pytest.approx([1.001, reach + 1.001])
    assert [pyo.value(instance.big_m_pos[i]) for i in (0, 1)] == pytest.approx([1.0, reach + 1.0])


def _close_pair() -> tuple[np.ndarray, np.ndarray]:
    """Two opposite-class rows 6e-5 apart per feature: a = (1, 1) separates them by 1.2e-4 ≥ ε,
    but no ‖a‖₁ ≤ 1 does (at most 6e-5 < ε)."""
    X = np.array([[0.0, 0.0], [0.3, 0.3], [0.30006, 0.30006], [1.0, 1.0]])
    return X, np.array([0, 0, 1, 1])


@pytest.mark.parametrize("domain, errors", [("box", 0), ("l1", 1)])
def test_the_box_domain_separates_closer_rows_than_the_l1_ball(solver, domain, errors):
    X, y = _close_pair()
    assert odd.HYPERPARAMETERS["epsilon"][2] == 1e-4  # the default ε the instance is built for
    instance, outcome = _solve(X, y, "1-2", solver=solver, domain=domain)
    assert outcome.termination == "optimal"
    assert outcome.objective == pytest.approx(errors / len(y), abs=1e-9)
    graph = odd.decode(instance)
    assert np.sum(_predict(graph, X) != y) == errors
    _route_matches_flows(instance, graph, X)
    norms = [np.abs(a["weights"]).sum() for _, a in graph.nodes(data=True) if "weights" in a]
    assert max(norms) <= 1 + 1e-9 or domain == "box"


def test_a_box_split_warm_starts_at_the_widest_margin():
    X, y = _close_pair()
    graph = nx.DiGraph()
    graph.add_node("r", weights=[2.0, 2.0], threshold=1.20014, layer=0)
    graph.add_node("no", label=0)
    graph.add_node("yes", label=1)
    graph.add_edges_from([("r", "no", {"outcome": False}), ("r", "yes", {"outcome": True})])
    instance = _instance(X, y, "1")
    odd.warm_start(instance, graph, X)  # scaled to a = (1, 1), b = 0.60012
    assert_feasible(instance)
    assert pyo.value(instance.objective) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="less than ε"):
        odd.warm_start(_instance(X, y, "1", domain="l1"), graph, X)


# --------------------------------------------------------------------------- warm start
def _hand_built() -> nx.DiGraph:
    """A 1-2-2 diagram on two features with a merge, a long arc and a mirrored split."""
    g = nx.DiGraph()
    g.add_node("root", weights=[1.0, 0.0], threshold=0.5, layer=0)
    g.add_node("A", weights=[0.0, 1.0], threshold=0.5, layer=1)
    g.add_node("B", weights=[0.0, 2.0], threshold=1.0, layer=1)
    g.add_node("C", weights=[1.0, -1.0], threshold=0.0, layer=2)
    g.add_node("no", label=0)
    g.add_node("yes", label=1)
    g.add_edges_from([("root", "A", {"outcome": False}), ("root", "B", {"outcome": True}),
                      ("A", "C", {"outcome": False}), ("A", "yes", {"outcome": True}),
                      ("B", "no", {"outcome": False}), ("B", "C", {"outcome": True}),
                      ("C", "no", {"outcome": False}), ("C", "yes", {"outcome": True})])
    return g



def test_warm_start_from_a_hand_built_diagram_is_feasible():
    X, y = _scaled(13)
    graph = _hand_built()
    instance = _instance(X, y, "1-2-2", alpha=0.3)
    odd.warm_start(instance, graph, X)
    assert_feasible(instance)
    expected = odd.objective_of(graph, _predict(graph, X), y, diagram_skeleton("1-2-2"), alpha=0.3)
    assert pyo.value(instance.objective) == pytest.approx(expected)


def test_warm_start_from_an_optimal_diagram_reproduces_its_objective():
    X, y = _scaled(14)
    solved, outcome = _solve(X, y, "1-2-2", alpha=0.1, univariate=True)
    instance = _instance(X, y, "1-2-2", alpha=0.1, univariate=True)
    odd.warm_start(instance, odd.decode(solved), X)
    assert_feasible(instance)
    assert pyo.value(instance.objective) == pytest.approx(outcome.objective, abs=1e-6)


def test_warm_start_rejects_a_diagram_that_does_not_fit():
    X, y = _scaled(15)
    graph = _hand_built()
    with pytest.raises(ValueError, match="Layer 1 .* 2 nodes; the skeleton has 1"):
        odd.warm_start(_instance(X, y, "1-1-2"), graph, X)
    graph.nodes["C"]["layer"] = 3
    with pytest.raises(ValueError, match="layer"):
        odd.warm_start(_instance(X, y, "1-2-2"), graph, X)
    with pytest.raises(ValueError, match="several features"):
        odd.warm_start(_instance(X, y, "1-2-2-2", univariate=True), _hand_built(), X)


def test_tree_mode_takes_a_heuristic_tree_at_its_tree_positions():
    from odtk.heuristics import construct_diagram

    X, y = _binary(16, n=16, p=4)
    found = construct_diagram(X, y, [1, 2, 4], 2, alpha=0.0, time_budget=0.2, seed=0)
    instance = _instance(X, y, "1-2-4", tree=True, univariate=True)
    odd.warm_start(instance, found.graph, X)
    assert_feasible(instance)
    assert pyo.value(instance.objective) == pytest.approx(found.objective)
    tree_arcs = {(u, v) for u, v in instance.A if v in instance.V}
    assert tree_arcs == {(u, c) for u in (0, 1, 2) for c in (2 * u + 1, 2 * u + 2)}


def test_tree_mode_refuses_a_diagram_with_a_merge():
    X, y = _scaled(13)
    with pytest.raises(ValueError, match="tree mode needs a tree"):
        odd.warm_start(_instance(X, y, "1-2-4", tree=True), _hand_built(), X)


# --------------------------------------------------------------------------- strengthening
def _fewest_penalised_errors(X, y, alpha: float) -> float:
    """Independent oracle for a univariate 1-2 diagram on 0/1 features (a depth-2 tree, as (8)
    forbids both root arcs into one node): the best error rate plus α · (splits − 1) / 2 over
    every tree that brute force enumerates (a single leaf is a root sending all one way)."""
    return min(float(np.mean(predicted != y)) + alpha * max(splits - 1, 0) / 2
               for predicted, splits, _ in all_trees(X, 2, 2))


@pytest.mark.parametrize("alpha", [0.0, 0.1])
def test_both_forms_reach_the_brute_force_optimum(solver, alpha):
    X, y = _binary(8, n=12, p=3)
    expected = _fewest_penalised_errors(X, y, alpha)
    for strengthening in ("on", "off"):
        _, outcome = _solve(X, y, "1-2", solver=solver, alpha=alpha, univariate=True,
                            strengthening=strengthening)
        assert outcome.termination == "optimal", strengthening
        assert outcome.objective == pytest.approx(expected, abs=1e-6), strengthening


@pytest.mark.parametrize("univariate, alpha", [(True, 0.0), (False, 0.2)])
def test_the_strengthened_diagram_keeps_the_papers_optimum(solver, univariate, alpha):
    X, y = _scaled(17, n=7)
    optima = {}
    for strengthening in ("on", "off"):
        instance, outcome = _solve(X, y, "1-2-2", solver=solver, alpha=alpha, univariate=univariate,
                                   strengthening=strengthening)
        assert outcome.termination == "optimal", strengthening
        graph = odd.decode(instance)
        assert odd.objective_of(graph, _predict(graph, X), y, diagram_skeleton("1-2-2"),
                                alpha=alpha) == pytest.approx(outcome.objective, abs=1e-6)
        optima[strengthening] = outcome.objective
    assert optima["on"] == pytest.approx(optima["off"], abs=1e-6)


def test_strengthening_off_builds_the_papers_model():
    X, y = _scaled(18, n=8)
    off = _instance(X, y, "1-2-2", univariate=True, strengthening="off")
    on = _instance(X, y, "1-2-2", univariate=True)
    assert pyo.value(on.strengthening) == odd.CHOICES["strengthening"][0] == "on"
    for name in ("flow_at_active", "inactive_weight", "inactive_intercept"):
        assert len(getattr(off, name)) == 0
    assert len(on.flow_at_active) == len(on.I) * len(on.V) and len(on.inactive_intercept) == 2 * len(on.V)
    assert all(not c.equality for c in off.side_pos.values()) and all(c.equality for c in on.side_pos.values())
    assert not any(v.is_integer() for v in [*off.d.values(), *off.w_term.values()])
    assert all(v.is_binary() for v in [*on.d.values(), *on.w_term.values()])
    with pytest.raises(ValueError, match="strengthening"):
        odd.make_data(X, y, diagram_skeleton("1-2"), 2, strengthening="yes")


def test_a_heuristic_start_is_feasible_in_the_strengthened_model():
    from odtk.heuristics import construct_diagram

    X, y = _scaled(19, n=14)
    found = construct_diagram(X, y, [1, 2, 4], 2, alpha=0.1, max_starts=3, seed=0)
    instance = _instance(X, y, "1-2-4", alpha=0.1, univariate=True)
    odd.warm_start(instance, found.graph, X)
    assert_feasible(instance)
    assert pyo.value(instance.objective) == pytest.approx(found.objective)
    inactive = [u for u in instance.V if pyo.value(instance.d[u]) < 0.5]
    assert all(pyo.value(instance.e[u, j]) == 0 for u in inactive for j in instance.J)


# --------------------------------------------------------------------------- sample weights
@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_tree_mode_reaches_the_weighted_error_of_every_depth_2_tree(seed):
    """At α = 0 the univariate tree-mode optimum is the least weighted error rate of the
    depth-2 trees on 0/1 features, found by enumeration."""
    X, y = _binary(seed, n=14)
    weight = np.random.default_rng(seed).uniform(0, 3, len(y))
    instance, outcome = _solve(X, y, "1-2", univariate=True, tree=True, sample_weight=weight)
    assert outcome.termination == "optimal"
    best = min(float(weight @ (predicted != y)) for predicted, _, _ in all_trees(X.astype(int), 2, 2))
    assert outcome.objective == pytest.approx(best / weight.sum(), abs=1e-6)
    graph = odd.decode(instance)
    assert odd.objective_of(graph, _predict(graph, X), y, diagram_skeleton("1-2"),
                            alpha=0.0, sample_weight=weight) == pytest.approx(outcome.objective, abs=1e-6)


def test_weighted_objective_scales_alpha_as_the_unweighted_one():
    """Unit weights give the paper's (18); weights scaled by a constant give the same optimum."""
    X, y = _scaled(6, n=10)
    _, plain = _solve(X, y, "1-2", alpha=0.2, univariate=True)
    _, ones = _solve(X, y, "1-2", alpha=0.2, univariate=True, sample_weight=np.ones(len(y)))
    _, scaled = _solve(X, y, "1-2", alpha=0.2, univariate=True, sample_weight=np.full(len(y), 7.5))
    assert plain.objective == pytest.approx(ones.objective, abs=1e-9)
    assert plain.objective == pytest.approx(scaled.objective, abs=1e-6)
    with pytest.raises(ValueError, match="positive weight"):
        odd.make_data(X, y, diagram_skeleton("1-2"), 2, sample_weight=np.zeros(len(y)))


def test_side_constraints_count_rows_whatever_the_weights():
    """Fairness (19) and stability (20) build the same rows with and without sample weights."""
    X, y, group = _fair_data()
    weight = np.random.default_rng(0).uniform(0.5, 3, len(y))
    side = {"fairness": "demographic_parity", "xi": 0.8, "group": group, "min_samples": 4}
    plain, weighted = (_instance(X, y, "1-2", **side, **extra) for extra in ({}, {"sample_weight": weight}))
    for name in ("fairness", "stability"):
        rows = [str(getattr(model, name)[index].expr) for model in (plain, weighted)
                for index in getattr(model, name)]
        assert rows[:len(rows) // 2] == rows[len(rows) // 2:], name
    assert str(plain.objective.expr) != str(weighted.objective.expr)


def test_stability_counts_rows_not_weight():
    """The middle row (weight 5) needs a second node holding 2 rows, of weight 6: S = 3 rows forbids it."""
    X, y, weight = np.array([[0.0], [0.5], [1.0]]), np.array([0, 1, 0]), np.array([1.0, 5.0, 1.0])
    _, free = _solve(X, y, "1-2", alpha=0.01, univariate=True, sample_weight=weight)
    assert free.objective == pytest.approx(0.01 / 2)  # no error, one non-root node
    instance, stable = _solve(X, y, "1-2", alpha=0.01, univariate=True, sample_weight=weight, min_samples=3)
    assert stable.objective == pytest.approx(1 / 7)  # the root alone misclassifies a row of weight 1
    assert [v for v, a in odd.decode(instance).nodes(data=True) if "label" not in a] == [0]


# --------------------------------------------------------------------------- leaf size (odtk's)
def _fewest_split_errors(X: np.ndarray, y: np.ndarray, rows: np.ndarray, layers: int, min_leaf: int) -> float:
    """Independent oracle: the fewest errors on ``rows`` of a tree-mode diagram with ``layers``
    layers of univariate tests on 0/1 features, each test leaving ≥ ``min_leaf`` rows per side.

    A side goes to a class or (above the last layer) to a node of its own; both sides of a
    node go to different places, so never to one class."""
    best = float("inf")
    for f in range(X.shape[1]):
        sides = [rows & (X[:, f] == 0), rows & (X[:, f] == 1)]
        if min(side.sum() for side in sides) < min_leaf:
            continue
        places = [{("class", k): float(np.sum(y[side] != k)) for k in (0, 1)} for side in sides]
        if layers > 1:
            for side, place in zip(sides, places):
                place["node"] = _fewest_split_errors(X, y, side, layers - 1, min_leaf)
        best = min([best, *(places[0][a] + places[1][b] for a in places[0] for b in places[1]
                            if a != b or a == "node")])
    return best


def _arc_counts(graph: nx.DiGraph, X: np.ndarray) -> dict:
    """Training rows on each arc out of each internal node, routed by the decoded diagram."""
    names = [f"x{j}" for j in range(X.shape[1])]
    rows = DecisionGraph(graph, names, ["0", "1"]).arc_rows(X)
    return {u: sorted(len(rows[u, v]) for v in graph.successors(u))
            for u, a in graph.nodes(data=True) if "label" not in a}


def test_min_leaf_one_builds_nothing_and_keeps_the_optimum():
    X, y = _checkerboard()
    plain, free = _solve(X, y, "1-2", univariate=True)
    instance, one = _solve(X, y, "1-2", univariate=True, min_leaf=1)
    assert len(instance.leaf_size) == 0 and pyo.value(plain.min_leaf) == 1
    assert one.objective == pytest.approx(free.objective, abs=1e-9)
    assert "min_leaf" in odd.SIDE_CONSTRAINTS and odd.HYPERPARAMETERS["min_leaf"][2] == 1


@pytest.mark.parametrize("min_leaf", [3, 4])
def test_binding_min_leaf_leaves_enough_rows_on_each_side(min_leaf):
    X, y = _checkerboard()
    _, free = _solve(X, y, "1-2", univariate=True)
    instance, bound = _solve(X, y, "1-2", univariate=True, min_leaf=min_leaf)
    assert bound.termination == "optimal" and bound.objective >= free.objective - 1e-9
    assert len(instance.leaf_size) == 2 * len(instance.V)
    counts = _arc_counts(odd.decode(instance), X)
    assert counts and min(min(sides) for sides in counts.values()) >= min_leaf, counts
    _, infeasible = _solve(X, y, "1-2", univariate=True, min_leaf=len(y) // 2 + 1)
    assert infeasible.termination == "infeasible"


@pytest.mark.parametrize("seed, min_leaf", [(9, 2), (0, 3), (5, 4), (8, 5)])
def test_min_leaf_reaches_the_brute_force_optimum(seed, min_leaf):
    X, y = _binary(seed, n=14, p=3)
    everything = np.ones(len(y), bool)
    expected = _fewest_split_errors(X, y, everything, 2, min_leaf)
    assert expected > _fewest_split_errors(X, y, everything, 2, 0)  # the bound binds
    instance, outcome = _solve(X, y, "1-2", univariate=True, tree=True, min_leaf=min_leaf)
    assert outcome.termination == "optimal"
    assert _errors(outcome, len(y)) == expected
    counts = _arc_counts(odd.decode(instance), X)
    assert min(min(sides) for sides in counts.values()) >= min_leaf, counts
