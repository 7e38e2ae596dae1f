"""The code that runs inside the kernel to list and describe the user's variables.

This module's **source text** is sent to the kernel and executed in a fresh, private dict (it is
never imported there), so it uses the standard library only and reaches pandas and numpy through
``sys.modules``: a DataFrame in the namespace means pandas is already loaded, and nothing is
imported on the user's behalf. :func:`run` is the entry point; it takes the user namespace and
a JSON string of arguments, and returns a JSON string. Every value it returns is bounded.
"""

from __future__ import annotations

import json
import keyword
import reprlib
import sys
import types
from typing import Any

HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
MAX_LIMIT = 200
MAX_TEXT = 200
MAX_REPR = {"schema": 0, "sample": 2000, "full": 10000}
ROWS = {"schema": 0, "sample": 5, "full": 50}
MAX_JSON = 100_000
SKIPPED = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)


def _pandas() -> Any:
    return sys.modules.get("pandas")


def _numpy() -> Any:
    return sys.modules.get("numpy")


def _kind(value: Any) -> str:
    pd, np = _pandas(), _numpy()
    if pd is not None and isinstance(value, pd.DataFrame):
        return "dataframe"
    if pd is not None and isinstance(value, pd.Series):
        return "series"
    if np is not None and isinstance(value, np.ndarray):
        return "ndarray"
    return "object"


def _type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _size(value: Any, kind: str) -> int | None:
    try:
        if kind == "dataframe":
            return int(value.memory_usage(deep=True).sum())
        if kind == "series":
            return int(value.memory_usage(deep=True))
        if kind == "ndarray":
            return int(value.nbytes)
        return int(sys.getsizeof(value))
    except Exception:
        return None


def _shape(value: Any) -> dict[str, Any]:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return {"shape": list(shape)}
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset, range)):
        return {"length": len(value)}
    return {}


def _text(value: Any) -> Any:
    """Bounds strings (recursively) so one cell cannot flood the answer."""
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…"
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _text(v) for k, v in value.items()}
    return value


def _columns(frame: Any) -> list[dict[str, Any]]:
    return [{"name": _text(str(c)), "dtype": str(t)} for c, t in frame.dtypes.items()]


def _visible(ns: dict[str, Any]) -> list[str]:
    names = []
    for name, value in ns.items():
        if not isinstance(name, str) or name.startswith("_") or name in HIDDEN:
            continue
        if isinstance(value, SKIPPED):
            continue
        names.append(name)
    return sorted(names)


def list_variables(ns: dict[str, Any], offset: int, limit: int) -> dict[str, Any]:
    """One page of the user's variables, sorted by name."""
    names = _visible(ns)
    offset = max(0, offset)
    limit = max(1, min(limit, MAX_LIMIT))
    page = []
    for name in names[offset : offset + limit]:
        value = ns.get(name)
        item: dict[str, Any] = {"name": name, "type": _type_name(value)}
        try:  # a user's property or __sizeof__ may raise: that variable says so, the page stays
            kind = _kind(value)
            item.update(_shape(value))
            item["size_bytes"] = _size(value, kind)
            if kind == "dataframe":
                item["columns"] = _columns(value)[:MAX_LIMIT]
        except Exception as error:
            item["error"] = _text(f"{type(error).__name__}: {error}")
        page.append(item)
    end = offset + len(page)
    return {
        "variables": page,
        "total": len(names),
        "offset": offset,
        "limit": limit,
        "next_offset": end if end < len(names) else None,
    }


def _table(frame: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        frame.to_json(orient="split", date_format="iso", default_handler=str)
    )
    return _text(data)  # type: ignore[no-any-return]


def _describe_frame(value: Any, context: str, kind: str) -> dict[str, Any]:
    frame = value if kind == "dataframe" else value.to_frame()
    out: dict[str, Any] = {"shape": list(value.shape)}
    if kind == "dataframe":
        out["columns"] = _columns(value)
        out["null_counts"] = {str(k): int(v) for k, v in value.isna().sum().items()}
    else:
        out["dtype"] = str(value.dtype)
        out["null_count"] = int(value.isna().sum())
    if context != "schema":
        try:
            out["describe"] = _table(frame.describe())
        except Exception as error:
            out["describe_error"] = _text(repr(error))
        out["head"] = _table(frame.head(ROWS[context]))
    return out


def _describe_array(value: Any, context: str) -> dict[str, Any]:
    out: dict[str, Any] = {"shape": list(value.shape), "dtype": str(value.dtype)}
    out["size"] = int(value.size)
    if context != "schema":
        if value.size and value.dtype.kind in "biuf":
            out["stats"] = {
                "min": float(value.min()),
                "max": float(value.max()),
                "mean": float(value.mean()),
                "std": float(value.std()),
            }
        out["head"] = _text([repr(v) for v in value.ravel()[: ROWS[context] * 4].tolist()])
    return out


def _bounded_repr(value: Any, context: str) -> str:
    limit = MAX_REPR[context]
    shortener = reprlib.Repr()
    shortener.maxstring = shortener.maxother = limit
    shortener.maxlist = shortener.maxdict = shortener.maxtuple = shortener.maxset = 50
    text = shortener.repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def describe_variable(ns: dict[str, Any], name: str, context: str) -> dict[str, Any]:
    """A description of one variable, looked up by name (never evaluated)."""
    if context not in ROWS:
        return {"error": "invalid_data_context", "message": f"unknown data_context {context!r}"}
    if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
        return {"error": "invalid_name", "message": "give a plain variable name"}
    if name not in ns:
        return {"error": "variable_not_found", "message": f"no variable named {name!r}"}
    value = ns[name]
    kind = _kind(value)
    out: dict[str, Any] = {"name": name, "type": _type_name(value), "data_context": context}
    out["size_bytes"] = _size(value, kind)
    if kind in ("dataframe", "series"):
        out.update(_describe_frame(value, context, kind))
    elif kind == "ndarray":
        out.update(_describe_array(value, context))
    else:
        try:
            out.update(_shape(value))
        except Exception as error:
            out["shape_error"] = _text(f"{type(error).__name__}: {error}")
        if context != "schema":
            try:
                out["repr"] = _bounded_repr(value, context)
            except Exception as error:
                out["repr_error"] = _text(f"{type(error).__name__}: {error}")
    return out


def run(ns: dict[str, Any], arguments: str) -> str:
    """The entry point: ``{"op": "list"|"describe", ...}`` in, a bounded JSON string out."""
    args = json.loads(arguments)
    try:
        if args["op"] == "list":
            result = list_variables(ns, int(args["offset"]), int(args["limit"]))
        else:
            result = describe_variable(ns, args["name"], args["data_context"])
    except Exception as error:
        result = {"error": "inspection_failed", "message": _text(repr(error))}
    text = json.dumps(result, default=str)
    while len(text) > MAX_JSON and result.get("head", {}).get("data"):
        result["head"]["data"] = result["head"]["data"][: len(result["head"]["data"]) // 2]
        result["truncated"] = True
        text = json.dumps(result, default=str)
    if len(text) > MAX_JSON:
        text = json.dumps({"error": "too_large", "message": f"the answer exceeds {MAX_JSON} chars"})
    return text
