"""Which thread a notebook talks on: one per notebook, kept across kernel restarts."""

from __future__ import annotations

import hashlib
import os
import sys
import uuid

from ._host import kernel_host


def notebook_thread_id() -> str:
    """A stable id for this notebook: Jupyter names the notebook in ``JPY_SESSION_NAME``."""
    path = os.environ.get("JPY_SESSION_NAME") or os.environ.get("__vsc_ipynb_file__")
    if path:
        return "nb-" + hashlib.sha1(path.encode()).hexdigest()[:16]
    # No notebook identity (a console, a script): one thread for this kernel's life.
    return kernel_host().own_thread("kernel", digits=16)


def new_thread_id() -> str:
    return f"{notebook_thread_id()}-{uuid.uuid4().hex[:8]}"


def in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (a notebook, or a console attached to one),
    whose agent, widgets and server share the notebook's thread and the SQLite store."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None
