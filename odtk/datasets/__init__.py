"""Datasets for odtk: bundled benchmarks, DataFrame/CSV adapters, feature encoding and splits.

See ``DATASETS.md`` next to this module for the provenance of the bundled files. The names
below are imported on first use: listing the catalog needs neither pandas nor scikit-learn, and
reading a CSV as a :class:`Table` and encoding it need only numpy.
"""
from typing import TYPE_CHECKING

from odtk import _lazy

if TYPE_CHECKING:
    from odtk.datasets.adapters import Dataset, Table, from_dataframe
    from odtk.datasets.catalog import DatasetInfo, list_datasets, load_dataset
    from odtk.datasets.csv_files import from_csv, read_csv, read_table
    from odtk.datasets.encoders import FeatureEncoder
    from odtk.datasets.splits import train_val_test_split

__all__ = ["Dataset", "DatasetInfo", "FeatureEncoder", "Table", "from_csv", "from_dataframe", "list_datasets",
           "load_dataset", "read_csv", "read_table", "train_val_test_split"]
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "odtk.datasets.adapters": ("Dataset", "Table", "from_dataframe"),
    "odtk.datasets.catalog": ("DatasetInfo", "list_datasets", "load_dataset"),
    "odtk.datasets.csv_files": ("from_csv", "read_csv", "read_table"),
    "odtk.datasets.encoders": ("FeatureEncoder",),
    "odtk.datasets.splits": ("train_val_test_split",),
})
