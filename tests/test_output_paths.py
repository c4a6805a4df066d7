"""What odtk writes never replaces what it reads, and what it draws cannot be reordered by a label.

An output (``--output``, ``--dot``, ``--png`` of ``odtk solve``; ``--output`` of ``odtk predict``)
naming a file the same command reads (``--csv``, ``--model-file``, a ``--warm-start`` model, the
registry ``$ODTK_SOLVERS`` names) or another of its outputs is refused, ``--force`` or not, however
the path is spelt: the same text, ``./``, ``..``, a symbolic or a hard link. Class labels, feature
names and category values holding bidirectional controls (a right-to-left override, U+202E) or
right-to-left letters leave the numbers beside them in order on the terminal, in DOT and in the
picture matplotlib draws.
"""
from __future__ import annotations

import os
import re
import shutil
import unicodedata
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.font_manager import findfont, get_font
from matplotlib.textpath import TextToPath
from test_hostile_inputs import assert_refused, odtk, snapshot

import odtk as odtk_api
from odtk import api
from odtk.exceptions import DataError
from odtk.files import check_apart
from odtk.graph_text import FSI, PDI

matplotlib.use("Agg")  # no display needed

RLO = "\u202e"  # right-to-left override
SOLVE = ["solve", "--model", "cp", "--depth", "1"]
DATA = "a,b,y\n" + "".join(f"{i % 2},{i // 2 % 2},{'yes' if i % 2 else 'no'}\n" for i in range(12))
SPELLINGS = ["same", "dot-slash", "parent", "symlink", "hardlink"]


@pytest.fixture(scope="module")
def model_json(tmp_path_factory) -> bytes:
    """A model file saved from ``DATA``."""
    folder = tmp_path_factory.mktemp("model")
    (folder / "d.csv").write_text(DATA)
    assert odtk(*SOLVE, "--csv", folder / "d.csv", "--target", "y", "--output", folder / "m.json").exit_code == 0
    return (folder / "m.json").read_bytes()


@pytest.fixture
def folder(tmp_path, monkeypatch, model_json) -> Path:
    """The working folder, holding the data ``d.csv``, the model ``m.json`` and a registry
    ``solvers.yaml``; no solve may start in it."""
    (tmp_path / "d.csv").write_text(DATA)
    (tmp_path / "m.json").write_bytes(model_json)
    shutil.copy(Path(api.__file__).parent / "solvers.yaml", tmp_path / "solvers.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(api, "solve", lambda *args, **kwargs: pytest.fail("the solver ran"))
    return tmp_path


def spelt(folder: Path, name: str, how: str) -> str:
    """Another path to the file ``name`` of ``folder`` (made as a link for the links)."""
    if how in ("symlink", "hardlink"):
        (os.symlink if how == "symlink" else os.link)(folder / name, folder / f"{how}-{name}")
        return f"{how}-{name}"
    return {"same": name, "dot-slash": f"./{name}", "parent": f"../{folder.name}/{name}"}[how]


def assert_refused_untouched(folder: Path, args: list, *words: str, env: dict | None = None) -> None:
    """``odtk args`` is refused with ``words`` in its line and leaves ``folder`` as it was."""
    before = snapshot(folder)
    assert_refused(odtk(*args, env=env), *words)
    assert snapshot(folder) == before


# --------------------------------------------------------------------------- the cases seen
def test_predict_never_replaces_the_model_file_it_reads(folder):
    assert_refused_untouched(folder, ["predict", "--model-file", "m.json", "--csv", "d.csv", "--output", "m.json",
                                      "--force"], "--output and --model-file", "m.json", "even with --force")


def test_solve_never_replaces_the_training_data_it_reads(folder):
    assert_refused_untouched(folder, [*SOLVE, "--csv", "d.csv", "--target", "y", "--output", "d.csv", "--force"],
                             "--output and --csv", "d.csv", "even with --force")


# --------------------------------------------------------------------------- every output, every input
@pytest.mark.parametrize("force", [[], ["--force"]], ids=["", "force"])
@pytest.mark.parametrize("output", ["--output", "--dot", "--png"])
@pytest.mark.parametrize("given, name", [("--csv", "d.csv"), ("--warm-start", "m.json"),
                                         ("$ODTK_SOLVERS", "solvers.yaml")])
def test_no_solve_output_is_a_file_it_reads(folder, output, given, name, force):
    args = [*SOLVE, "--csv", "d.csv", "--target", "y", *force, output, name]
    env = {"ODTK_SOLVERS": name} if given == "$ODTK_SOLVERS" else None
    if given == "--warm-start":
        args += ["--warm-start", name]
    assert_refused_untouched(folder, args, f"{output} and {given} name the same file ({name})", env=env)


@pytest.mark.parametrize("how", SPELLINGS)
@pytest.mark.parametrize("given, name", [("--model-file", "m.json"), ("--csv", "d.csv")])
def test_predict_output_is_no_file_it_reads_however_spelt(folder, given, name, how):
    path = spelt(folder, name, how)
    assert_refused_untouched(folder, ["predict", "--model-file", "m.json", "--csv", "d.csv", "--output", path,
                                      "--force"], f"--output and {given} name the same file", path)


@pytest.mark.parametrize("how", SPELLINGS)
def test_solve_output_is_no_file_it_reads_however_spelt(folder, how):
    path = spelt(folder, "d.csv", how)
    assert_refused_untouched(folder, [*SOLVE, "--csv", "d.csv", "--target", "y", "--output", path, "--force"],
                             "--output and --csv name the same file", path)


@pytest.mark.parametrize("how", ["same", "dot-slash", "parent", "dangling-symlink"])
@pytest.mark.parametrize("first, second", [("--output", "--dot"), ("--output", "--png"), ("--dot", "--png")])
def test_two_outputs_of_a_solve_are_two_files(folder, first, second, how):
    """Neither file exists yet: the paths are compared once links and relative parts are resolved."""
    if how == "dangling-symlink":
        os.symlink(folder / "out", folder / "link")
    path = "link" if how == "dangling-symlink" else spelt(folder, "out", how)
    assert_refused_untouched(folder, [*SOLVE, "--csv", "d.csv", "--target", "y", first, "out", second, path],
                             f"{first} and {second} name the same file", "different file names")


def test_two_outputs_hard_linked_are_refused_with_force(folder):
    (folder / "out.dot").write_text("kept")
    os.link(folder / "out.dot", folder / "out.png")
    assert_refused_untouched(folder, [*SOLVE, "--csv", "d.csv", "--target", "y", "--dot", "out.dot",
                                      "--png", "out.png", "--force"], "--dot and --png name the same file",
                             "out.dot is out.png")


def test_check_apart_for_other_commands(tmp_path):
    """The check a command (as a campaign's ``--db`` beside its grid) calls before writing."""
    grid = tmp_path / "grid.yaml"
    grid.write_text("name: g\n")
    with pytest.raises(DataError, match=r"^--db and GRID name the same file .*even with --force"):
        check_apart({"--db": grid}, {"GRID": str(grid)})
    check_apart({"--db": tmp_path / "grid.sqlite", "--out": None}, {"GRID": grid, "--csv": None})  # apart: no error


# --------------------------------------------------------------------------- bidirectional text
def reordering(line: str) -> list[str]:
    """The characters of ``line`` that can reorder text beyond them (Unicode bidi, UAX #9):
    embeddings, overrides and right-to-left letters outside every isolate, and isolates left open."""
    depth, found = 0, []
    for char in line:
        kind = unicodedata.bidirectional(char)
        if kind in ("LRI", "RLI", "FSI"):
            depth += 1
        elif kind == "PDI" and depth:
            depth -= 1
        elif depth == 0 and kind in ("LRE", "RLE", "LRO", "RLO", "PDF", "PDI", "R", "AL", "AN"):
            found.append(char)
    return found + [FSI] * depth


def drawn(text: matplotlib.text.Text, line: str) -> str:
    """The visible characters of ``line`` in ``text``'s font, left to right as matplotlib lays them
    out (its layout applies the Unicode bidi algorithm)."""
    font = get_font(findfont(text.get_fontproperties()))
    glyphs = TextToPath().get_glyphs_with_font(font, line)[0]
    char_of = {TextToPath().get_glyphs_with_font(font, char)[0][0][0]: char
               for char in set(line) if char.isprintable() and not char.isspace()}
    return "".join(char_of.get(glyph[0], "") for glyph in sorted(glyphs, key=lambda glyph: glyph[1]))


def readable(line: str) -> str:
    """``line`` as it should read left to right: each isolated (right-to-left) label reversed,
    spaces and invisible characters left out."""
    line = re.sub(f"{FSI}(.*?){PDI}", lambda match: match[1][::-1], line)
    return "".join(char for char in line if char.isprintable() and not char.isspace())


@pytest.fixture(scope="module")
def hostile_labels() -> tuple[pd.DataFrame, np.ndarray]:
    """Feature ``a`` + RLO splits class ``A`` + RLO (17 rows) from class ``ב`` (3 rows); the
    categorical ``c`` + RLO is noise with values ``p`` + RLO and ``שם``."""
    a = np.arange(20)
    X = pd.DataFrame({f"a{RLO}": a, f"c{RLO}": np.where(a % 2, f"p{RLO}", "שם")})
    return X, np.where(a >= 3, f"A{RLO}", "ב")


def test_labels_cannot_reorder_the_counts_on_the_terminal_or_in_dot(tmp_path, hostile_labels):
    X, y = hostile_labels
    X.assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    run = odtk(*SOLVE, "--csv", tmp_path / "d.csv", "--target", "y", "--dot", tmp_path / "m.dot",
               "--png", tmp_path / "m.png")
    assert run.exit_code == 0, run.output
    tree = run.stdout.split("\n\n")[0]
    assert "a\\u202e<=2.5 ?" in tree and "predict A\\u202e" in tree and f"{FSI}ב{PDI}: 3" in tree, tree
    dot = (tmp_path / "m.dot").read_text()
    assert "17 samples" in dot and f"predict {FSI}ב{PDI}" in dot, dot
    assert [line for line in [*tree.splitlines(), *dot.splitlines()] if reordering(line)] == []


def test_labels_cannot_reorder_the_counts_drawn(hostile_labels):
    """What ``--png`` draws: every line of every box reads left to right as written, 17 as 17."""
    X, y = hostile_labels
    result = odtk_api.solve("cp", (X, y), depth=1)
    ax = odtk_api.plot_tree(result, X=X, y=y)
    lines = [(text, line) for text in ax.texts for line in text.get_text().split("\n") if line]
    assert any("17" in line for _, line in lines), lines
    assert [(line, drawn(text, line)) for text, line in lines if drawn(text, line) != readable(line)] == []
