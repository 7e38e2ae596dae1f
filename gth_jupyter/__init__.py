"""gth-jupyter: a tool-using AI agent inside Jupyter notebooks.

The package holds a LangGraph agent runtime configured like Gaunt Sloth, an AG-UI 1.0 endpoint
hosted by a Jupyter server extension (and by ``gth-jupyter serve``), and the notebook front end.
Heavy modules load on first use, so importing the package stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["Session", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Session":
        from .notebook.session import Session

        return Session
    raise AttributeError(f"module 'gth_jupyter' has no attribute {name!r}")


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .server.app import GthJupyterApp

    return [{"module": "gth_jupyter", "app": GthJupyterApp}]
