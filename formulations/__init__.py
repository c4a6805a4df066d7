"""MILP formulations, one paper per module (shipped as ``odtk.formulations``).

Each module exposes ``KEY``, ``CITATION``, ``SENSE``, ``FEATURES`` (binary | scaled | onehot),
``SKELETON`` (tree | diagram | topology), ``HYPERPARAMETERS``, ``CHOICES``, ``SIDE_CONSTRAINTS``
(options a start built without them may violate), ``build_model()``,
``make_data(...)``, ``decode(instance)`` and ``objective_of(...)`` and imports
nothing from the rest of odtk. ``odd`` and ``categorical`` are packages that expose the same:
the paper's model, its departures and the constants in ``__init__``, then ``model`` (the Pyomo
model), ``data`` (``make_data``), ``decoding`` and ``start`` (the warm start). ``sat_clauses``
is no ``--model`` of its own: it states the SAT inference engine's clauses as a 0/1 model so
that any MILP solver can answer its queries.
"""
