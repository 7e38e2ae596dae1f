"""The hosts of the AG-UI endpoint: the Jupyter server extension and the standalone server.

Both serve one route table (``routes.py``) through thin handlers that authenticate, parse and
delegate to the protocol layer (:mod:`gth_jupyter.agui`), each owning one
:class:`~gth_jupyter.agent.AgentRegistry`:

- :class:`GthJupyterApp` (``app.py``, handlers in ``handlers.py``): ``{base_url}gth/…`` behind
  Jupyter's auth, running the ``notebook`` command;
- :func:`make_app` (``standalone.py``) and ``gth-jupyter serve`` (``cli.py``): the same routes
  and Gaunt Sloth's own paths, behind a token, running the ``api`` command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .app import GthJupyterApp
    from .cli import main
    from .standalone import make_app

__all__ = ["GthJupyterApp", "main", "make_app"]

# Loaded on first use: the standalone server need not import Jupyter's server, nor the
# extension the CLI.
__getattr__ = lazy_names(__name__, app=("GthJupyterApp",), cli=("main",), standalone=("make_app",))
