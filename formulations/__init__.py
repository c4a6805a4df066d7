"""MILP formulations, one paper per module (shipped as ``odtk.formulations``).

Each module exposes ``KEY``, ``CITATION``, ``SENSE``, ``FEATURES`` (binary | scaled),
``SKELETON`` (tree | diagram), ``HYPERPARAMETERS``, ``CHOICES``, ``SIDE_CONSTRAINTS`` (options a
start built without them may violate), ``build_model()``,
``make_data(...)``, ``decode(instance)`` and ``objective_of(...)`` and imports
nothing from the rest of odtk.
"""
