"""Who owns a server's threads when no one else is named."""

from __future__ import annotations

import getpass
import os

__all__ = ["server_owner"]


def server_owner() -> str:
    """The user this server runs for: the Hub user under JupyterHub, else the OS account."""
    try:
        return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()
    except Exception:  # no name for this uid (a container): one owner all the same
        return "owner"
