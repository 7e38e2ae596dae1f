"""Whether a live notebook front end runs this cell, and which cell it is.

A comm message from the page to a cell that is still executing is handled only after the cell
ends, so a cell cannot wait for a widget to say it rendered. What the kernel can read at once is
the execute request's metadata: JupyterLab and Notebook 7 send the cell's ``cellId``; nbclient,
papermill and ``jupyter execute`` send ``{}``. ``GTH_JUPYTER_HEADLESS=1`` (or ``%gth --headless``)
forces a headless run, ``GTH_JUPYTER_HEADLESS=0`` a widget.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["asking_cell_id", "execute_metadata", "is_headless"]

#: The environment override: ``1`` always headless, ``0`` never.
HEADLESS_ENV = "GTH_JUPYTER_HEADLESS"
#: VS Code's kernels carry this; its execute requests are not known to name a cell, and it
#: renders widgets, so it counts as a live front end.
_VSCODE_ENV = "VSCODE_PID"


def execute_metadata() -> dict[str, Any]:
    """The metadata of the execute request the kernel is running (``{}`` outside a kernel)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent()
    except Exception:  # an older kernel without get_parent: no metadata to read
        return {}
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def asking_cell_id() -> str:
    """The id of the cell being executed, as its front end sent it (``""``: none sent)."""
    cell = execute_metadata().get("cellId")
    return cell if isinstance(cell, str) and len(cell) <= 200 else ""


def is_headless(forced: bool = False) -> bool:
    """Whether no front end will render a widget for the running cell."""
    if forced:
        return True
    override = os.environ.get(HEADLESS_ENV, "").strip().lower()
    if override in ("1", "true", "yes"):
        return True
    if override in ("0", "false", "no"):
        return False
    if asking_cell_id():
        return False
    if os.environ.get(_VSCODE_ENV) or os.environ.get("__vsc_ipynb_file__"):
        return False
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    # A terminal IPython (no kernel) cannot show a widget either.
    return True if getattr(shell, "kernel", None) is None else not _has_cell_identity()


def _has_cell_identity() -> bool:
    """Front ends that send no ``cellId`` but do render widgets still start their kernels with
    a session name; a kernel started by nbclient or papermill has none."""
    return bool(os.environ.get("JPY_SESSION_NAME")) and bool(execute_metadata())
