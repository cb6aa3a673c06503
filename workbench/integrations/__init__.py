"""Grade inside other tools with the workbench's grader.

* :mod:`workbench.integrations.hf` - a ``compute_metrics`` for a Hugging Face
  ``Seq2SeqTrainer`` (extra ``hf``: ``pip install 'workbench[hf]'``);
* :mod:`workbench.integrations.lm_eval` - an lm-evaluation-harness task directory,
  ``workbench_gsm8k``, whose ``process_results`` grades with the workbench (extra
  ``lmeval``: ``pip install 'workbench[lmeval]'``).

Neither ``transformers`` nor ``lm_eval`` is a dependency of the workbench: importing this
package and its modules never imports them, and the functions that need them say which
extra to install when they are missing.

Examples
--------
>>> import workbench.integrations
>>> workbench.integrations.require("json", extra="hf").__name__
'json'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from workbench.errors import WorkbenchError

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(WorkbenchError, ImportError):
    """An optional dependency of an integration is not installed.

    It is an :class:`ImportError` too, so ``except ImportError`` catches it.
    """


def require(module: str, *, extra: str) -> ModuleType:
    """Import an optional dependency, or say which extra of the workbench installs it.

    Parameters
    ----------
    module
        The module to import (``"transformers"``).
    extra
        The workbench extra that installs it (``"hf"``, ``"lmeval"``).

    Returns
    -------
    ModuleType
        The imported module.

    Raises
    ------
    MissingExtraError
        When the module cannot be imported; the message names the ``pip install`` command.

    Examples
    --------
    >>> require("no_such_module_here", extra="hf")
    Traceback (most recent call last):
    ...
    workbench.integrations.MissingExtraError: this needs 'no_such_module_here', which is not installed (No module named 'no_such_module_here'). Fix: pip install 'workbench[hf]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"this needs {module!r}, which is not installed ({exc}). Fix: pip install 'workbench[{extra}]'",
            name=module,
        ) from exc
