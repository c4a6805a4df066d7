"""The ``odtk`` command line: solve, predict, datasets, solvers, experiment.

Every error odtk raises on purpose becomes one line on stderr and exit code 1;
``--debug`` shows the traceback instead.
"""
from __future__ import annotations

import gc
import json
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click

from odtk import _environment, standard_streams
from odtk.budget import DEFAULT_TIME_LIMIT, STOP_SIGNALS, Stopped
from odtk.exceptions import ConfigError, DataError, OdtkError, OdtkWarning


class OdtkGroup(click.Group):
    """Turns odtk's errors and the commands' usage errors into one-line messages."""

    def invoke(self, ctx: click.Context):
        with _signals_raise():
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OdtkError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            _fail(f"odtk: error: {exc}", 1)
        except click.UsageError as exc:  # a bad option of a command: one line too, click's exit code
            if ctx.obj and ctx.obj.get("debug"):
                raise
            where = exc.ctx.command_path if exc.ctx else ctx.command_path
            _fail(f"odtk: error: {exc.format_message()} (see '{where} --help')", exc.exit_code)
        except MemoryError:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            _fail("odtk: error: out of memory; make the problem smaller (fewer rows, columns, thresholds "
                  "or nodes) or run it on a machine with more memory.", 1)
        except KeyboardInterrupt:
            _fail("odtk: interrupted by SIGINT", 128 + signal.SIGINT)
        except Stopped as stop:
            _fail(f"odtk: interrupted by {signal.Signals(stop.signum).name}", stop.exit_code)
        except OSError as exc:  # writing the output failed (a pipe its reader closed: click's quiet exit)
            reason = None if ctx.obj and ctx.obj.get("debug") else standard_streams.failed_output(exc)
            if reason is None:
                raise
            _fail(f"odtk: error: cannot write to standard output ({reason}), so the output is incomplete; "
                  "free some space, or send it elsewhere (> FILE).", 1)


def _fail(message: str, code: int) -> None:
    from odtk.progress import write_line

    write_line(message)
    sys.exit(code)


def _raise_stopped(signum: int, frame) -> None:
    raise Stopped(signum)


@contextmanager
def _signals_raise() -> Iterator[None]:
    """While a command runs (in the main thread), SIGTERM and SIGHUP raise :class:`Stopped`, so
    that solver processes are stopped and temporary files removed on the way out (their default
    action would end odtk and leave them); an ignored signal stays ignored (``nohup``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in STOP_SIGNALS:
        if signum != signal.SIGINT and signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _raise_stopped)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@click.group(cls=OdtkGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="odtk", prog_name="odtk", message="%(prog)s %(version)s")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Optimal decision trees and diagrams by mathematical programming."""
    ctx.obj = {"debug": debug}
    if not debug:  # odtk's own warnings as one line each; other libraries' stay quiet
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", OdtkWarning)
        warnings.showwarning = _show_warning
    _environment.warn_set_aside()


def run() -> None:
    """The ``odtk`` command: :func:`main`, then the objects left are frozen (:func:`gc.freeze`) on
    the way out, so that the interpreter's exit does not spend seconds collecting a large MILP's
    model once the answer is printed and saved. Started with standard output closed, it is
    refused: its answer could not be shown (:mod:`odtk.standard_streams`)."""
    standard_streams.open_closed_descriptors()
    if standard_streams.stdout_closed():
        _fail("odtk: error: standard output is closed, so odtk could not show its answer; run it with "
              "standard output open (> FILE to keep the output, > /dev/null to discard it).", 1)
    try:
        main()
    finally:
        gc.freeze()


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    from odtk.progress import write_line

    write_line(f"odtk: warning: {message}")


class _Seconds(click.ParamType):
    """A number of seconds above 0, or ``none`` for no limit."""

    name = "SECONDS|none"

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, float):
            return value
        if str(value).strip().lower() == "none":
            return None
        try:
            seconds = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number of seconds or 'none'", param, ctx)
        if not seconds > 0 or seconds == float("inf"):
            self.fail(f"{value!r} must be a number of seconds above 0, or 'none' for no limit", param, ctx)
        return seconds


class _ModelOption(click.Option):
    """``--model``, whose help lists the models: they are imported only when it is shown."""

    def get_help_record(self, ctx: click.Context):
        from odtk import api

        self.help = f"Formulation: {', '.join(api.available_models())}."
        return super().get_help_record(ctx)


@main.command()
@click.option("--model", "model", cls=_ModelOption, required=True)
@click.option("--dataset", help="Bundled dataset name (see `odtk datasets`).")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Training data as CSV.")
@click.option("--target", help="Class column of --csv (name, or position such as -1).")
@click.option("--categorical", "categorical_columns", multiple=True,
              help="A --csv column to treat as categorical although its values are numbers (repeatable).")
@click.option("--depth", type=int, help="Tree depth (sat-depth / sat-size: the largest depth tried).")
@click.option("--skeleton", help="Widths of the internal layers, e.g. 1-2-4-8 (a tree: 1-2-4); "
              "categorical: a topology, depth-2, depth-2.5, depth-3 or imbalanced.")
@click.option("--solver", help="Solver from `odtk solvers` (default highs; sat-depth / sat-size: "
              "minisat22, or any SAT or MILP solver; cp runs its own search).")
@click.option("--time-limit", type=_Seconds(), default=str(int(DEFAULT_TIME_LIMIT)), show_default=True,
              help="Seconds for the whole run: reading, encoding, starting models, build, solve and checks "
              "('none': no limit). At the limit the best model found is shown, with its bound and gap.")
@click.option("--gap", type=float, help="Relative MIP gap at which to stop.")
@click.option("--threads", type=int, help="Solver threads.")
@click.option("--seed", type=int, help="Solver (and heuristic) random seed.")
@click.option("--lambda", "lam", type=float, help="FlowOCT, BendersOCT, OCT: penalty λ in [0, 1] per split.")
@click.option("--alpha", type=float, help="ODD: regulariser α on active nodes.")
@click.option("--epsilon", type=float, help="ODD: split strictness ε (default 1e-4).")
@click.option("--univariate", is_flag=True, default=None, help="ODD: one feature per split.")
@click.option("--tree", is_flag=True, default=None, help="ODD: fix the topology to the tree skeleton (ODT).")
@click.option("--fairness", type=click.Choice(["demographic_parity", "equal_opportunity",
                                               "predictive_equality"]), help="ODD: fairness constraint.")
@click.option("--xi", type=float, help="ODD: fairness ratio ξ in (0, 1].")
@click.option("--groups", help="ODD: column holding the two protected groups.")
@click.option("--max-nodes", type=int, help="ODD: at most this many active nodes (parsimony).")
@click.option("--min-samples", type=int, help="ODD: at least S samples through every active node.")
@click.option("--min-support", type=int, help="CP search: at least N_min samples in every leaf.")
@click.option("--counting-depth", type=click.IntRange(0, 2),
              help="CP search: levels solved by bulk counting at the bottom (default 2).")
@click.option("--cache/--no-cache", default=None,
              help="CP search: reuse solved sub-trees (default on; --no-cache: the paper's ablation).")
@click.option("--bounds/--no-bounds", default=None,
              help="CP search: prune by budgets and lower bounds (default on; --no-bounds: the paper's ablation).")
@click.option("--paper-search", "search", flag_value="paper", default=None,
              help="CP search: exactly the paper's search (its cache and bounds, nothing odtk adds; slower).")
@click.option("--encoding", type=click.Choice(["incremental", "all-at-once"]),
              help="sat-depth / sat-size: add examples as the tree misclassifies them "
              "(incremental, default) or all from the start.")
@click.option("--positive-class", help="categorical: the class counted as positive (default: the "
              "second in sorted order).")
@click.option("--class-weight", type=float, help="categorical: weight C of the negative class's rows.")
@click.option("--max-card", type=int, help="categorical: at most this many values on one side of a "
              "test of a categorical feature (numeric bins: see -o max_card_ordinal=on).")
@click.option("--rate", type=click.Choice(["sensitivity", "specificity"]),
              help="categorical: maximise this training rate subject to --min-rate for the other.")
@click.option("--min-rate", type=float, help="categorical: the other rate's minimum, in [0, 1].")
@click.option("--numeric", type=click.Choice(["ordinal", "categorical"]),
              help="categorical: numeric bins as ordered (default) or unordered values.")
@click.option("--feature-selection", type=click.Choice(["all", "cart"]),
              help="categorical: all features, or only those an unrestricted CART on 90% of the "
              "rows splits on (at least 4: -o min_groups=N, -o selection_share=S).")
@click.option("--option", "-o", "extra_options", multiple=True, metavar="NAME=VALUE",
              help="Any other model option, e.g. -o anchors=off (see the model's docs).")
@click.option("--strategy", type=click.Choice(["both", "heuristic", "milp"]),
              help="ODD: heuristic then warm-started MILP (both, default), or one step alone.")
@click.option("--heuristic-time", type=float, help="ODD: heuristic time budget in seconds (default 5).")
@click.option("--warm-start", help="Trees on binary features: start from 'best' (default: CART or the CP "
              "search's tree, whichever is better), 'cart', 'none' or a saved model JSON learned on the same data.")
@click.option("--max-thresholds", type=int, help="Cap on thresholds per numeric feature (quantiles).")
@click.option("--thresholds", type=click.Choice(["auto", "midpoints", "quantiles", "values"]),
              help="Numeric thresholds: auto (default: about 10 quantiles plus CART's thresholds; for cp every "
              "midpoint when it can afford them, fewer quantiles on large data; every midpoint for sat-depth / "
              "sat-size), midpoints (every one), quantiles, "
              "or values (x > v per distinct value but the largest; number-coded categorical columns as ordered).")
@click.option("--handoff", type=click.Choice(["native", "pyomo"]), default="native", show_default=True,
              help="Pass the model through the native matrix API or Pyomo's solver interface.")
@click.option("--log", "--verbose", "-v", "log", is_flag=True,
              help="A line per training step and the solver's own log (incumbent, bound, gap, time).")
@click.option("--quiet", "-q", is_flag=True, help="No status line.")
@click.option("--progress", "force_progress", is_flag=True,
              help="A status line even when standard error is not a terminal (it is by default on a terminal).")
@click.option("--output", type=click.Path(dir_okay=False), help="Save the trained model as JSON.")
@click.option("--dot", type=click.Path(dir_okay=False), help="Save the tree/diagram as Graphviz DOT.")
@click.option("--png", type=click.Path(dir_okay=False),
              help="Save a picture of the tree/diagram with training rows per class (needs matplotlib).")
@click.option("--force", is_flag=True, help="Overwrite --output / --dot / --png if they exist (never a file "
              "this command reads).")
def solve(model, dataset, csv_path, target, categorical_columns, depth, skeleton, solver, time_limit,
          gap, threads, seed, warm_start, max_thresholds, thresholds, handoff, log, quiet, force_progress, output,
          dot, png, force, positive_class, extra_options, **model_options) -> None:
    """Learn an optimal tree or diagram and print it with its certificate.

    Every run ends: within --time-limit (60 s unless told), or on Ctrl-C, SIGTERM or SIGHUP,
    with the best model found so far (status interrupted, exit code 130, 143 or 129)."""
    from odtk.budget import Budget, stop_on_signals
    from odtk.progress import Progress

    if log:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    mode = "lines" if log else "off" if quiet else "bar" if force_progress else "auto"
    budget = Budget(time_limit, Progress(mode))
    try:
        with stop_on_signals(budget):
            _solve_and_show(budget, model, dataset, csv_path, target, categorical_columns, depth, skeleton,
                            solver, gap, threads, seed, warm_start, max_thresholds, thresholds, handoff, log,
                            output, dot, png, force, positive_class, extra_options, model_options)
    finally:
        budget.progress.close()
    if budget.signal is not None:
        _fail(f"odtk: interrupted by {signal.Signals(budget.signal).name}: the best model found so far is shown",
              128 + budget.signal)


def _solve_and_show(budget, model, dataset, csv_path, target, categorical_columns, depth, skeleton, solver, gap,
                    threads, seed, warm_start, max_thresholds, thresholds, handoff, log, output, dot, png, force,
                    positive_class, extra_options, model_options) -> None:
    """Read the data, solve within ``budget``, print the model and save the files asked for."""
    budget.progress.phase("reading")
    from odtk import api
    from odtk.files import check_apart, check_writable, write_atomic

    files = {"--output": output, "--dot": dot, "--png": png}
    check_apart(files, _solve_inputs(csv_path, warm_start, api.WARM_STARTS))
    for path in filter(None, files.values()):
        check_writable(path, force)
    if png:  # before solving: a missing matplotlib is a one-line error, not a lost solve
        from odtk.plotting import pyplot
        pyplot()
    with budget.stage("reading"):
        data = _training_data(dataset, csv_path, target, categorical_columns)
    given = {name: value for name, value in model_options.items() if value is not None}
    given.update(_extra_options(extra_options))
    result = api.solve(
        model, data, depth=depth, skeleton=skeleton, solver=solver, budget=budget,
        mip_gap=gap, threads=threads, seed=seed, verbose=log, handoff=handoff,
        thresholds=thresholds or "auto", max_thresholds=max_thresholds,
        warm_start=_warm_start(warm_start, api.WARM_STARTS), positive_class=positive_class, **given)
    budget.progress.close()
    trained = result.model
    training = api.as_dataset(data, target)
    features = training.features
    click.echo(trained.to_text(features, training.target))
    click.echo("")
    click.echo(result.summary())
    if output:
        trained.save(output, force=force)
        click.echo(f"saved       {output}")
    if dot:
        counts = trained.graph.sample_counts(trained.encoder.transform(features))
        write_atomic(dot, trained.graph.to_dot(counts, trained.encoder), force=force)
        click.echo(f"saved       {dot}")
    if png:
        write_atomic(png, _picture(trained, training), force=force)
        click.echo(f"saved       {png}")


def _solve_inputs(csv_path: str | None, warm_start: str | None, named: tuple[str, ...]) -> dict[str, str | None]:
    """The files ``odtk solve`` reads, by the option or variable naming them."""
    saved = None if warm_start is None or warm_start.lower() == "none" or warm_start in named else warm_start
    return {"--csv": csv_path, "--warm-start": saved, "$ODTK_SOLVERS": os.environ.get("ODTK_SOLVERS")}


def _warm_start(given: str | None, named: tuple[str, ...]):
    """``--warm-start``: the default start (none given), none, a named start or a saved model."""
    from odtk.models import TrainedModel

    if given is None:
        return "auto"
    if given.lower() == "none":
        return None
    return given if given in named else TrainedModel.load(given)


def _picture(trained, training) -> bytes:
    """The PNG image of a trained model, with its training rows per class at each node."""
    import io

    from odtk.plotting import plot_tree

    from matplotlib.figure import Figure

    axes = plot_tree(trained, X=training.features, y=training.target)
    figure = axes.figure
    assert isinstance(figure, Figure), "plot_tree draws on a figure of its own"
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=150, bbox_inches="tight")
    figure.clear()
    return image.getvalue()


def _training_data(dataset: str | None, csv_path: str | None, target: str | None,
                   categorical: tuple[str, ...] = ()):
    if bool(dataset) == bool(csv_path):
        raise DataError("Give exactly one of --dataset NAME or --csv PATH --target COLUMN.")
    if dataset:
        if categorical:
            raise DataError("--categorical applies to --csv data; bundled datasets declare their own kinds.")
        return dataset
    if target is None:
        raise DataError("--csv needs --target COLUMN naming the class column.")
    from odtk.datasets import from_csv

    assert csv_path, "exactly one of dataset and csv_path, checked above"
    return from_csv(csv_path, _column(target), categorical=categorical)


def _extra_options(pairs: tuple[str, ...]) -> dict[str, object]:
    """``NAME=VALUE`` pairs as model options; numbers become int or float."""
    options: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--option {pair!r} is not NAME=VALUE, e.g. -o anchors=off.")
        for convert in (int, float, str):
            try:
                options[name.strip().replace("-", "_")] = convert(value.strip())
                break
            except ValueError:
                continue
    return options


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
@click.option("--force", is_flag=True, help="Overwrite --output if it exists (never --model-file or --csv).")
def predict(model_file: str, csv_path: str, output: str | None, force: bool) -> None:
    """Classify the rows of a CSV with a saved model."""
    import numpy as np

    from odtk.datasets import read_table
    from odtk.files import check_apart, check_writable, write_atomic
    from odtk.models import TrainedModel

    check_apart({"--output": output}, {"--model-file": model_file, "--csv": csv_path})
    if output:
        check_writable(output, force)
    trained = TrainedModel.load(model_file)
    rows = read_table(csv_path)
    if len(rows) == 0:
        raise DataError(f"CSV file '{csv_path}' has no rows to predict, only its header; add the rows to classify "
                        "under it.")
    labels = trained.predict(rows)
    if output:
        write_atomic(output, rows.to_csv(prediction=labels), force=force)
    else:
        click.echo("\n".join(str(label) for label in labels))
    if trained.target in rows.columns:
        truth = rows.text(trained.target)
        accuracy = float(np.mean(truth == np.asarray([str(v) for v in labels])))
        click.echo(f"accuracy {accuracy:.4f} on {len(rows)} rows (column {trained.target!r})", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def datasets(as_json: bool) -> None:
    """List the bundled datasets."""
    from odtk.datasets import list_datasets

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
    from odtk.solvers import registry, solver_status

    specs = registry()
    click.echo(f"{'solver':11} {'kind':5} {'status':10} {'licence':13} {'version':20} detail")
    for name, spec in specs.items():
        status = solver_status(name)
        state = "available" if status.available else "missing"
        click.echo(f"{name:11} {spec.kind:5} {state:10} {status.licence:13} {status.version or '-':20} "
                   f"{status.detail}")


from odtk.experiments.commands import experiment  # noqa: E402  (its own module: odtk/experiments/)

main.add_command(experiment)
