"""odtk's version, read from the installed package's metadata: the ``version`` of
``pyproject.toml`` is the one place it is written (imported on first read of
``odtk.__version__``, so that ``import odtk`` does not pay for :mod:`importlib.metadata`)."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("odtk")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
