"""Live Python objects handed over by a ``.gsloth.config.py``, kept beside the validated config.

A Python config may put objects where a JSON file can only put data: a chat model as ``llm``,
LangChain tools in ``tools``, middleware instances in ``middleware``, a model as a middleware's
``model`` or as ``approvals.rater``. The loader swaps each object for a *marker* before the
layers are merged and validated, so the schema, the merge rules and the error reports stay the
ones JSON files get, and keeps the objects here:

- ``llm`` itself is taken out of the data: :attr:`LiveObjects.llm` (``GthConfig.llm`` is then
  ``None``, so a host must check ``config.live.llm`` first);
- anywhere else an object becomes ``{"$python": i}`` (in a ``middleware`` list
  ``{"name": <its name>, "$python": i}``; as ``approvals.rater`` the string ``"$python:i"``),
  and :meth:`LiveObjects.get` turns a marker back into the object.

A marker that a later layer overrode is simply never looked up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MARKER_KEY", "LiveObjects", "is_marker"]

MARKER_KEY = "$python"
_STRING_PREFIX = "$python:"


def is_marker(value: object) -> bool:
    """True for ``{"$python": i}`` (with or without other keys) and ``"$python:i"``."""
    if isinstance(value, dict):
        return isinstance(value.get(MARKER_KEY), int)
    return isinstance(value, str) and value.startswith(_STRING_PREFIX)


@dataclass
class LiveObjects:
    """The objects of every Python config layer; markers index :attr:`objects`."""

    llm: Any = None
    objects: list[Any] = field(default_factory=list)

    def add(self, obj: Any) -> int:
        """Keep ``obj`` and return its marker index."""
        self.objects.append(obj)
        return len(self.objects) - 1

    def get(self, marker: object) -> Any:
        """The object a marker names, or ``None`` when ``marker`` is not one."""
        index: object = None
        if isinstance(marker, dict):
            index = marker.get(MARKER_KEY)
        elif isinstance(marker, str) and marker.startswith(_STRING_PREFIX):
            text = marker[len(_STRING_PREFIX) :]
            index = int(text) if text.isdigit() else None
        if isinstance(index, int) and 0 <= index < len(self.objects):
            return self.objects[index]
        return None
