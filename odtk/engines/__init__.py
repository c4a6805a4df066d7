"""Engines that learn trees without a MILP solver, one paper per module.

Each module exposes, like a formulation, ``KEY``, ``CITATION``, ``SENSE``, ``FEATURES``,
``SKELETON``, ``HYPERPARAMETERS``, ``CHOICES``, ``SIDE_CONSTRAINTS`` and ``objective_of``, plus
``SOLVER`` (the name results report), ``search(X, y, n_classes, depth, time_limit=None,
**options)`` returning the tree, its error, a proven lower bound, a status and search
statistics, and ``to_graph(tree)``. Engines import nothing from the rest of odtk.
"""
