"""Errors raised by odtk.

Every error a user can cause derives from :class:`OdtkError` and also from the
matching built-in exception, so generic ``except ValueError`` handlers work.
Messages say what was received, what is allowed, and how to fix it.
"""


class OdtkError(Exception):
    """Base class of every error odtk raises on purpose."""


class DataError(OdtkError, ValueError):
    """The data (CSV, DataFrame, dataset name, target column) cannot be used."""


class SkeletonError(OdtkError, ValueError):
    """A tree depth or diagram skeleton is malformed."""


class ConfigError(OdtkError, ValueError):
    """An unknown model, option, solver name or a malformed registry file."""


class SolverUnavailableError(OdtkError, RuntimeError):
    """The requested solver is not installed or cannot be started."""


class LicenceLimitError(OdtkError, RuntimeError):
    """The model exceeds the size limit of the solver's licence."""


class SolveError(OdtkError, RuntimeError):
    """The solver finished without a usable solution (infeasible, no incumbent, crash)."""


class SelfCheckError(OdtkError, RuntimeError):
    """The decoded model does not reproduce the objective the solver reported."""


class ModelFileError(OdtkError, ValueError):
    """A saved model file is missing, truncated, edited or from another format version."""


class OdtkWarning(UserWarning):
    """A result to read with care: not proven optimal, or stopped at a limit."""


def install_hint(extra: str) -> str:
    """How to install odtk's optional dependencies ``extra``, from an index and in a clone.

    Examples
    --------
    >>> install_hint("cbc")
    'pip install "odtk[cbc]", or in a clone of odtk: pip install -e ".[cbc]"'
    """
    return f'pip install "odtk[{extra}]", or in a clone of odtk: pip install -e ".[{extra}]"'
