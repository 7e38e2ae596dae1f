"""Agent middleware: the approvals gate and Gaunt Sloth's named middleware.

:func:`build_middleware` turns a command's :class:`~gth_jupyter.config.EffectiveConfig` into the
middleware list an agent runs with (``registry.py``); ``approvals.py`` is the gate.
"""

from gth_jupyter.middleware.approvals import APPROVAL_INTERRUPT, ApprovalsMiddleware
from gth_jupyter.middleware.registry import build_middleware

__all__ = ["APPROVAL_INTERRUPT", "ApprovalsMiddleware", "build_middleware"]
