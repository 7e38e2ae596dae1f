"""Package faces that load their names on first use (PEP 562), so importing a package is cheap:
``%load_ext gth_jupyter`` must not import the agent stack, nor the CLI Jupyter's server."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, **modules: tuple[str, ...]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports a name from the submodule that
    holds it (``modules``: each submodule's names) when the name is first asked for."""
    home = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
