"""Names every host and the notebook share, in a module that imports nothing: the kernel's
``%gth`` needs them without loading the agent stack."""

from __future__ import annotations

__all__ = ["DEFAULT_AGENT"]

#: The agent a host serves when a request names none.
DEFAULT_AGENT = "default"
