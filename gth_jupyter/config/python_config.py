"""``.gsloth.config.py``: a configuration computed by Python, as Gaunt Sloth's ``.mjs`` configs are.

The file defines ``configure()`` (plain or ``async``), which returns the configuration as a dict
with the keys a JSON file has, or as a :class:`~gth_jupyter.config.GthConfig`. Unlike JSON it may
hold live objects: a chat model as ``llm``, LangChain tools in ``tools`` (beside provider server
tool dicts), middleware instances in ``middleware`` (beside names), a model as a middleware's
``model`` setting or as ``approvals.rater``. Those are replaced by markers (see ``live.py``) so the
rest of loading treats the layer exactly like a JSON one. Example::

    from langchain_anthropic import ChatAnthropic

    def configure():
        return {
            "llm": ChatAnthropic(model="claude-sonnet-4-5"),
            "tools": [my_tool, {"type": "web_search_20250305", "name": "web_search"}],
            "middleware": ["summarization", MyLoggingMiddleware()],
        }

Loading such a file runs its code, with the user's rights, like any Python they keep in the
project; it is only ever looked up where a JSON config would be.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import importlib.util
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gth_jupyter.config.errors import ConfigError
from gth_jupyter.config.live import MARKER_KEY, LiveObjects

__all__ = ["read_python_layer"]

_PLAIN = (str, int, float, bool, type(None))


def read_python_layer(file: Path, live: LiveObjects) -> dict[str, Any]:
    """Run ``file``'s ``configure()`` and return its data, live objects moved into ``live``."""
    result = _call_configure(file)
    if isinstance(result, BaseModel):
        data = result.model_dump(by_alias=True, exclude_unset=True)
        attached = getattr(result, "live", None)
        if isinstance(attached, LiveObjects) and attached.llm is not None:
            data["llm"] = attached.llm
    elif isinstance(result, Mapping):
        data = dict(result)
    else:
        kind = type(result).__name__
        raise ConfigError(f"configure() must return a dict or a GthConfig, not {kind}", file=file)
    return _extract(data, live)


def _call_configure(file: Path) -> Any:
    digest = hashlib.sha1(str(file).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"_gsloth_config_{digest}", file)
    if spec is None or spec.loader is None:
        raise ConfigError("cannot be imported as a Python module", file=file)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        configure = getattr(module, "configure", None)
        if not callable(configure):
            raise ConfigError("defines no configure() function", file=file)
        result = configure()
        if inspect.isawaitable(result):
            result = _await(result)
    except ConfigError:
        raise
    except Exception as exc:
        detail = f"configure() failed: {type(exc).__name__}: {exc}"
        raise ConfigError(detail, code="config_python_error", file=file) from exc
    return result


def _await(awaitable: Any) -> Any:
    """Await ``awaitable`` from synchronous code, also under a running loop (a Jupyter kernel)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wait()).result()


def _extract(data: dict[str, Any], live: LiveObjects) -> dict[str, Any]:
    """Replace the live objects in ``data`` by markers (the loader takes ``llm`` out after
    merging, so a later layer's ``llm`` still replaces an earlier one)."""
    return {str(key): _swap(value, live, (str(key),)) for key, value in data.items()}


def _swap(value: Any, live: LiveObjects, path: tuple[str, ...]) -> Any:
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, Mapping):
        return {str(k): _swap(v, live, (*path, str(k))) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_swap_item(v, live, path) for v in value]
    if isinstance(value, BaseModel) and not _is_live_model(value):
        return _swap(value.model_dump(by_alias=True, exclude_unset=True), live, path)
    index = live.add(value)
    if path[-2:] == ("approvals", "rater") or path[-1:] == ("rater",):
        return f"{MARKER_KEY}:{index}"
    return {MARKER_KEY: index}


def _swap_item(value: Any, live: LiveObjects, path: tuple[str, ...]) -> Any:
    swapped = _swap(value, live, path)
    if path[-1:] == ("middleware",) and isinstance(swapped, dict) and MARKER_KEY in swapped:
        name = getattr(value, "name", None) or type(value).__name__
        return {"name": str(name), **swapped}
    return swapped


def _is_live_model(value: BaseModel) -> bool:
    """LangChain models, tools and the like are pydantic models too, but they are objects."""
    from langchain_core.runnables import Runnable

    return isinstance(value, Runnable)
