"""The ``odtk`` command line: solve, predict, datasets, solvers.

Every error odtk raises on purpose becomes one line on stderr and exit code 1;
``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import json
import logging
import sys
import warnings
from pathlib import Path

import click
import numpy as np

from odtk import api
from odtk.datasets import from_csv, list_datasets, read_csv
from odtk.exceptions import DataError, OdtkError
from odtk.models import TrainedModel, write_text_atomic
from odtk.solvers import registry, solver_status


class OdtkGroup(click.Group):
    """Turns odtk's errors into one-line messages."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OdtkError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"odtk: error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("odtk: interrupted", err=True)
            sys.exit(130)


@click.group(cls=OdtkGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Optimal decision trees and diagrams by mathematical programming."""
    ctx.obj = {"debug": debug}
    if not debug:
        warnings.simplefilter("ignore")


@main.command()
@click.option("--model", "model", required=True, help=f"Formulation: {', '.join(api.available_models())}.")
@click.option("--dataset", help="Bundled dataset name (see `odtk datasets`).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Training data as CSV.")
@click.option("--target", help="Class column of --csv (name, or position such as -1).")
@click.option("--depth", type=int, help="Tree depth.")
@click.option("--skeleton", help="Widths of the internal layers, e.g. 1-2-4 (a tree of depth 3).")
@click.option("--solver", default="highs", show_default=True, help="Solver from `odtk solvers`.")
@click.option("--time-limit", type=float, help="Solver time limit in seconds.")
@click.option("--gap", type=float, help="Relative MIP gap at which to stop.")
@click.option("--threads", type=int, help="Solver threads.")
@click.option("--seed", type=int, help="Solver random seed.")
@click.option("--lambda", "lam", type=float, default=0.0, show_default=True,
              help="Regularisation weight λ in [0, 1] (FlowOCT: penalty per split).")
@click.option("--max-thresholds", type=int, help="Cap on thresholds per numeric feature (quantiles).")
@click.option("--handoff", type=click.Choice(["native", "pyomo"]), default="native", show_default=True,
              help="Pass the model through the native matrix API or Pyomo's solver interface.")
@click.option("--log", is_flag=True, help="Show the solver's log.")
@click.option("--output", type=click.Path(dir_okay=False), help="Save the trained model as JSON.")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
def solve(model, dataset, csv_path, target, depth, skeleton, solver, time_limit, gap, threads, seed, lam,
          max_thresholds, handoff, log, output, force) -> None:
    """Learn an optimal tree and print it with its certificate."""
    if log:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    data = _training_data(dataset, csv_path, target)
    if output and Path(output).exists() and not force:
        raise DataError(f"{output} already exists; choose another name or pass --force to overwrite it.")
    result = api.solve(
        model, data, depth=depth, skeleton=skeleton, solver=solver, time_limit=time_limit, mip_gap=gap,
        threads=threads, seed=seed, log=log, handoff=handoff,
        thresholds="quantiles" if max_thresholds else "midpoints", max_thresholds=max_thresholds,
        lam=lam)
    click.echo(result.model.graph.to_text())
    click.echo("")
    click.echo(result.summary())
    if output:
        result.model.save(output, force=force)
        click.echo(f"saved       {output}")


def _training_data(dataset: str | None, csv_path: str | None, target: str | None):
    if bool(dataset) == bool(csv_path):
        raise DataError("Give exactly one of --dataset NAME or --csv PATH --target COLUMN.")
    if dataset:
        return dataset
    if target is None:
        raise DataError("--csv needs --target COLUMN naming the class column.")
    return from_csv(csv_path, _column(target))


def _column(target: str) -> str | int:
    """A target given as a number on the command line is a position unless it is a name."""
    try:
        return int(target)
    except ValueError:
        return target


@main.command()
@click.option("--model-file", required=True, type=click.Path(dir_okay=False), help="Saved model JSON.")
@click.option("--csv", "csv_path", required=True, type=click.Path(dir_okay=False), help="Rows to classify.")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the CSV with a `prediction` column.")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
def predict(model_file: str, csv_path: str, output: str | None, force: bool) -> None:
    """Classify the rows of a CSV with a saved model."""
    trained = TrainedModel.load(model_file)
    frame = read_csv(csv_path)
    labels = trained.predict(frame)
    if output:
        write_text_atomic(output, frame.assign(prediction=labels).to_csv(index=False), force=force)
    else:
        click.echo("\n".join(str(label) for label in labels))
    if trained.target in frame.columns:
        truth = frame[trained.target].astype(str).to_numpy()
        accuracy = float(np.mean(truth == np.asarray([str(v) for v in labels])))
        click.echo(f"accuracy {accuracy:.4f} on {len(frame)} rows (column {trained.target!r})", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def datasets(as_json: bool) -> None:
    """List the bundled datasets."""
    infos = list_datasets()
    if as_json:
        click.echo(json.dumps([info.__dict__ for info in infos], indent=1))
        return
    click.echo(f"{'name':34} {'rows':>6} {'features':>8} {'classes':>7}  kind")
    for info in infos:
        click.echo(f"{info.name:34} {info.n_rows:>6} {info.n_features:>8} {info.n_classes:>7}  {info.kind}")


@main.command()
def solvers() -> None:
    """List the registered solvers and whether odtk can reach them."""
    click.echo(f"{'solver':8} {'status':10} {'licence':13} {'version':20} detail")
    for name in registry():
        status = solver_status(name)
        state = "available" if status.available else "missing"
        click.echo(f"{name:8} {state:10} {status.licence:13} {status.version or '-':20} {status.detail}")
