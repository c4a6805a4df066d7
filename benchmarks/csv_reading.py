"""odtk's CSV reader against ``pandas.read_csv`` on the same files, in CPU time.

Four files of 100,000 rows, about 7 MB each: ten float columns written with four decimals and a
``yes`` / ``no`` label (``floats``), the same with Windows line ends (``crlf``) and with every
value in double quotes (``quoted``), and ten integer columns below 10^6 with the label
(``integers``). For each, the least of ``--repeat`` runs (``time.process_time``) of
:func:`odtk.datasets.read_table` (what ``odtk predict`` reads), :func:`odtk.datasets.read_csv`
(what ``odtk solve`` and :func:`odtk.datasets.from_csv` read) and ``pandas.read_csv(path)``, and
the ratios odtk / pandas. odtk does more than pandas here: it reads every value as text to keep
class labels such as ``01`` and ``1`` apart, and checks quoting, ragged rows and each row's line.

    python benchmarks/csv_reading.py [--repeat 3] [--rows 100000]
"""
from __future__ import annotations

import argparse
import functools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from odtk.datasets import read_csv, read_table


def least_cpu(read: Callable[[], object], repeat: int) -> float:
    """The least CPU time of ``repeat`` calls of ``read``."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        read()
        times.append(time.process_time() - start)
    return min(times)


def write_files(folder: Path, rows: int) -> dict[str, Path]:
    """The four files described in the module docstring, in ``folder``."""
    rng = np.random.default_rng(0)
    label = np.where(rng.random(rows) < 0.5, "yes", "no")
    floats = pd.DataFrame(rng.random((rows, 10)).round(4), columns=[f"x{j}" for j in range(10)]).assign(label=label)
    integers = pd.DataFrame(rng.integers(0, 10**6, (rows, 10)), columns=[f"n{j}" for j in range(10)])
    files = {name: folder / f"{name}.csv" for name in ("floats", "crlf", "quoted", "integers")}
    floats.to_csv(files["floats"], index=False)
    floats.to_csv(files["crlf"], index=False, lineterminator="\r\n")
    floats.to_csv(files["quoted"], index=False, quoting=1)
    integers.assign(label=label).to_csv(files["integers"], index=False)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        files = write_files(Path(folder), args.rows)
        print(f"{'file':9} {'MB':>5} {'read_table':>10} {'read_csv':>9} {'pandas':>7} {'ratio':>6} {'ratio':>6}")
        print(f"{'':9} {'':>5} {'CPU s':>10} {'CPU s':>9} {'CPU s':>7} {'table':>6} {'csv':>6}")
        for name, path in files.items():
            pandas = least_cpu(functools.partial(pd.read_csv, path), args.repeat)
            table = least_cpu(functools.partial(read_table, path), args.repeat)
            frame = least_cpu(functools.partial(read_csv, path), args.repeat)
            print(f"{name:9} {path.stat().st_size / 2**20:5.1f} {table:10.3f} {frame:9.3f} {pandas:7.3f} "
                  f"{table / pandas:6.1f} {frame / pandas:6.1f}")


if __name__ == "__main__":
    main()
