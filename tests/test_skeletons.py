"""Tree and diagram skeletons."""
from __future__ import annotations

import pytest

from odtk.exceptions import SkeletonError
from odtk.skeletons import diagram_skeleton, parse_widths, tree_skeleton


@pytest.mark.parametrize("depth", [0, 1, 2, 4])
def test_tree_skeleton_is_a_complete_heap_ordered_tree(depth):
    tree = tree_skeleton(depth)
    assert sorted(tree) == list(range(1, 2 ** (depth + 1)))
    leaves = [n for n in tree if tree.out_degree(n) == 0]
    assert len(leaves) == 2**depth
    assert all(tree.nodes[n]["layer"] == depth for n in leaves)
    for n in tree:
        if tree.out_degree(n):
            assert tree.edges[n, 2 * n]["side"] == "left"
            assert tree.edges[n, 2 * n + 1]["side"] == "right"


@pytest.mark.parametrize("depth", [-1, 1.5, "2", True, 13])
def test_bad_depth_is_refused(depth):
    with pytest.raises(SkeletonError, match="depth"):
        tree_skeleton(depth)


def test_diagram_skeleton_layers_and_arcs():
    graph = diagram_skeleton("1-2-3")
    assert [graph.nodes[n]["layer"] for n in sorted(graph)] == [0, 1, 1, 2, 2, 2]
    assert graph.number_of_edges() == 1 * 2 + 2 * 3
    assert diagram_skeleton([1, 2, 4]).number_of_nodes() == 7


@pytest.mark.parametrize("text,problem", [
    ("2-4", "single root"), ("1-3", "at most 2"), ("1-0-1", "below 1"),
    ("1-x", "whole numbers"), ("", "whole numbers"), ("1--2", "whole numbers"),
])
def test_bad_skeleton_strings_name_the_problem_and_an_example(text, problem):
    with pytest.raises(SkeletonError) as error:
        parse_widths(text)
    assert problem in str(error.value) and "1-2-4-8" in str(error.value)
