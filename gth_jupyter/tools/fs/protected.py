"""Paths no write tool may change, and paths it may change only as code.

The file tools are confined to the working directory and ``.aiignore``, but some files inside
that tree are not data: they decide what the agent may do next time, or Python, IPython and
Jupyter run them by themselves. A write to one is an escalation, whatever the approval mode
says about writes:

- **the agent's own settings**, refused at any depth: ``.aiignore`` (what the tools may not see)
  and every Gaunt Sloth name (``.gsloth.config.*``, ``.gsloth/``, ``.gsloth-settings/``, the
  ``.gsloth.*.md`` prompts). The kernel's agent loads the nearest configuration up from a
  notebook's folder, and a ``.py`` configuration runs on load, so ``sub/.gsloth.config.py`` is
  as much the agent's settings as the root's;
- **what runs by itself**, refused at any depth: IPython's and Jupyter's directories
  (``.ipython/profile_*/startup/*.py``, ``ipython_config.py``, ``.jupyter/*.py``, kernelspecs
  under ``share/jupyter``, ``etc/jupyter``), ``site-packages``, ``*.pth``, ``sitecustomize.py``
  and ``usercustomize.py``;
- **a module's name**, written only as code: ``pandas.py`` (or ``pandas/__init__.py``) in a
  kernel's working directory is what the next ``import pandas`` runs, so a call that writes a
  Python module under the name of one installed (or of the standard library) is gated as
  ``run_python`` is (see ``kinds.py``).

Names are compared case-folded (NFC, ``casefold``) with trailing dots and spaces dropped, as a
case-insensitive disk (macOS, Windows) resolves them, on the path the tools reach after
symlinks and ``..`` are resolved (:class:`~gth_jupyter.tools.workspace.Workspace`).
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import pkgutil
import sys
import unicodedata
from collections.abc import Sequence
from importlib import metadata

__all__ = ["names_module", "protected_reason"]

#: Components that are configuration or code wherever they appear.
_DIRECTORIES = frozenset({".ipython", ".jupyter", "site-packages", "dist-packages"})
#: Two components in a row that hold Jupyter's data (kernelspecs run their ``argv``) or
#: configuration, wherever a prefix puts them (``~/.local/share/jupyter``, ``.venv/etc/jupyter``).
_PAIRS = frozenset({("share", "jupyter"), ("etc", "jupyter"), (".config", "jupyter")})
_PAIRS |= {(".config", "ipython")}
_STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})


def fold(name: str) -> str:
    """``name`` as a case-insensitive disk compares it."""
    return unicodedata.normalize("NFC", name).casefold().rstrip(" .") or name


def _parts(relative: str) -> list[str]:
    return [fold(p) for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]


def protected_reason(relative: str) -> str | None:
    """Why no write tool may change ``relative`` (a path inside the working directory), or
    ``None`` when a write tool may."""
    parts = _parts(relative)
    for index, part in enumerate(parts):
        if part == ".aiignore" or part.startswith(".gsloth"):
            return "holds the agent's own settings"
        if part in _DIRECTORIES or tuple(parts[index : index + 2]) in _PAIRS:
            return "holds configuration or code that Python, IPython or Jupyter run by themselves"
    if parts and (parts[-1] in _STARTUP_FILES or parts[-1].endswith(".pth")):
        return "is a file Python runs by itself at start-up"
    return None


def names_module(path: str) -> bool:
    """Whether ``path`` (as written) names a Python module of an installed package or of the
    standard library: ``pandas.py``, ``pandas/__init__.py``, ``json.pyc``."""
    parts = _parts(path)
    if not parts:
        return False
    name = _module_of(parts[-1])
    if name == "__init__":
        name = parts[-2] if len(parts) > 1 else None
    return name is not None and name in _module_names()


def _module_of(filename: str) -> str | None:
    for suffix in _suffixes():
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return None


@functools.cache
def _suffixes() -> Sequence[str]:
    # Longest first: ``x.cpython-311-x86_64-linux-gnu.so`` before ``x.so``.
    found = {fold(s) for s in importlib.machinery.all_suffixes()}
    return sorted(found, key=len, reverse=True)


@functools.cache
def _module_names() -> frozenset[str]:
    """Top-level module names importable here: the standard library's, every installed
    distribution's, and whatever else is on ``sys.path`` but the working directory (read once
    per process)."""
    names = {fold(n) for n in getattr(sys, "stdlib_module_names", ())}
    names |= {fold(n) for n in sys.builtin_module_names}
    try:
        names |= {fold(n) for n in metadata.packages_distributions()}
    except Exception:  # a broken distribution's metadata must not disable the check
        pass
    # sys.path but the working directory: a person's own ``analysis.py`` is theirs to edit.
    here = {"", os.getcwd()}
    paths = [p for p in sys.path if isinstance(p, str) and p not in here]
    names |= {fold(m.name) for m in pkgutil.iter_modules(paths)}
    return frozenset(n for n in names if n)
