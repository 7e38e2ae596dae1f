"""gth-jupyter: a tool-using AI agent inside Jupyter notebooks.

The package holds a LangGraph agent runtime configured like Gaunt Sloth, an AG-UI 1.0 endpoint
hosted by a Jupyter server extension (and by ``gth-jupyter serve``), and the notebook front end.
Heavy modules load on first use, so importing the package stays cheap.
"""

from __future__ import annotations

from typing import Any

from ._lazy import lazy_names

__version__ = "0.1.0"

__all__ = ["GthChat", "Session", "__version__", "chat", "client_tool"]

# The notebook side's face names them (loading each on first use in turn).
__getattr__ = lazy_names(__name__, notebook=("Session", "GthChat", "chat", "client_tool"))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext gth_jupyter``: registers the ``%gth`` magics."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext gth_jupyter``: stops rewriting ``%gth`` lines (the magics stay)."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .server.app import GthJupyterApp

    return [{"module": "gth_jupyter", "app": GthJupyterApp}]
