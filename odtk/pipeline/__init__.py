"""The stages of one solve, a module each, in the order ``odtk.solve`` runs them.

``methods`` (which model, its options, its skeleton) → ``encode`` (data → arrays and
thresholds) → ``aggregate`` (the MILPs: rows alike merged into weighted rows) → ``start`` (an incumbent: CART / the CP
search / ODD's heuristic / a consistent tree) → ``milp`` (build, hand-off, solve, decode) or ``search`` (odtk's own
engines) → ``check`` (the model re-scored against what the solver reported, bounds kept honest).
``diagram_bounds`` gives ODD two lower bounds of its own beside the MILP's: the optimum on a subset of
the rows, and for univariate splits the fewest errors of trees as deep as the diagram.

One :class:`~odtk.budget.Budget` travels through every stage: it holds the deadline (every
stage asks it for its share), the stop rule (a signal marks it; the stage that holds a model
returns it) and the progress reporter.
"""
