"""Engines that learn trees by their own search rather than one MILP, one paper per module.

Each module exposes, like a formulation, ``KEY``, ``CITATION``, ``SENSE``, ``FEATURES``,
``SKELETON`` (``tree``: the depth is given; ``search``: the engine finds it),
``HYPERPARAMETERS``, ``CHOICES``, ``SIDE_CONSTRAINTS`` and ``objective_of``, plus ``VARIANTS``
(the ``--model`` keys it answers, with their fixed settings), ``SOLVER`` (the name results
report for an engine of its own; ``None`` when a registered solver answers its queries, then
``DEFAULT_SOLVER``) and ``search(X, y, n_classes, depth, time_limit=None, **options)``
returning the tree as nested tuples (``("leaf", class)`` or ``(feature, tree for x_f = 0,
tree for x_f = 1)``), its ``objective``, a proven ``lower_bound``, a ``status`` and search
statistics; options that leave nothing to search raise its ``InvalidOptions`` (a ValueError).
Engines import nothing from the rest of odtk.
"""
