"""Experiment campaigns: grid files, a results database, local or Dask execution, reports.

``odtk experiment run GRID.yaml`` expands a grid (:mod:`odtk.experiments.grid`) into runs,
executes each in its own process (:mod:`odtk.experiments.runner`), records every finished
run in an SQLite file (:mod:`odtk.experiments.store`), and ``odtk experiment report DB``
writes tables and plots from that file alone (:mod:`odtk.experiments.report`). The names
below are imported on first use, so that a run's worker process loads none of the campaign's
machinery.
"""
from typing import TYPE_CHECKING

from odtk import _lazy

if TYPE_CHECKING:
    from odtk.experiments.grid import Grid, load_grid, parse_grid
    from odtk.experiments.runner import CampaignReport, run_campaign, select
    from odtk.experiments.store import ResultStore

__all__ = ["CampaignReport", "Grid", "ResultStore", "load_grid", "parse_grid", "run_campaign", "select"]
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "odtk.experiments.grid": ("Grid", "load_grid", "parse_grid"),
    "odtk.experiments.runner": ("CampaignReport", "run_campaign", "select"),
    "odtk.experiments.store": ("ResultStore",),
})
