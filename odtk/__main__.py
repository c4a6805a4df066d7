"""``python -m odtk`` runs the command line."""
from odtk.cli import run

run()
