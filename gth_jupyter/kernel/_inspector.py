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
from itertools import islice
from typing import Any

HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
MAX_LIMIT = 200
MAX_TEXT = 200
MAX_REPR = {"schema": 0, "sample": 2000, "full": 10000}
ROWS = {"schema": 0, "sample": 5, "full": 50}
MAX_JSON = 100_000
SKIPPED = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
#: Builtin types whose ``len`` is their own C code (a subclass may override it: not these).
SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range, memoryview)
SIZED_COLLECTIONS = ("deque", "OrderedDict", "defaultdict", "Counter")
#: The library types whose shape and size are read, by the library's own code: a value's class
#: must be one of these or a subclass defined inside the same library (``np.memmap``,
#: ``pd.RangeIndex``), never a user's subclass, whose ``shape`` may be any code.
LIBRARY_KINDS = (
    ("pandas", "DataFrame", "dataframe"),
    ("pandas", "Series", "series"),
    ("pandas", "Index", "index"),
    ("numpy", "ndarray", "ndarray"),
    ("polars", "DataFrame", "polars"),
    ("polars", "Series", "polars"),
    ("pyarrow", "Table", "arrow"),
    ("pyarrow", "RecordBatch", "arrow"),
    ("pyarrow", "ChunkedArray", "arrow_array"),
    ("pyarrow", "Array", "arrow_array"),
)
_C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType)
FILL = "..."  # reprlib's


def hidden(name: str) -> bool:
    """IPython's own names and every name starting with ``_`` (``_ih``, ``_i3``, ``__``): they
    hold the cell history and past outputs, so they are neither listed nor described."""
    return name.startswith("_") or name in HIDDEN


def refusal(name: Any) -> dict[str, str] | None:
    """Why ``name`` is not described, or None: it must be a plain identifier that is not hidden."""
    if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
        return {"error": "invalid_name", "message": "give a plain variable name"}
    if hidden(name):
        message = (
            f"{name!r} is hidden: names starting with '_' and IPython's own names "
            f"({', '.join(sorted(HIDDEN))}) hold the kernel's history, not the user's data"
        )
        return {"error": "hidden_name", "message": message}
    return None


def _module_of(cls: type) -> str:
    # type's own getter: a metaclass may override ``__module__`` with code of its own
    module = vars(type)["__module__"].__get__(cls)
    return module if type(module) is str else "?"


def _module_root(cls: type) -> str:
    return _module_of(cls).partition(".")[0]


def _kind(value: Any) -> str:
    """What the value is, from its exact class (``type``, never ``isinstance``: that reads a
    user's ``__class__``): a library kind, ``sized`` for builtins with a length, or ``object``."""
    cls = type(value)
    if cls in SIZED:
        return "sized"
    collections = sys.modules.get("collections")
    if any(cls is getattr(collections, name, None) for name in SIZED_COLLECTIONS):
        return "sized"
    for module, name, kind in LIBRARY_KINDS:
        base = getattr(sys.modules.get(module), name, None)
        if type(base) is type and issubclass(cls, base) and _module_root(cls) == module:
            return kind
    return "object"


def _type_name(value: Any) -> str:
    cls = type(value)
    module = _module_of(cls)
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _c_level(cls: type, method: str) -> bool:
    """Whether ``method`` of ``cls`` is C code (a builtin's), not a function a user wrote."""
    for klass in cls.__mro__:
        if method in klass.__dict__:
            return type(klass.__dict__[method]) in _C_METHODS
    return False


def _size(value: Any, kind: str) -> int | None:
    try:
        if kind in ("dataframe", "index"):
            total = value.memory_usage(deep=True)
            return int(total.sum() if kind == "dataframe" else total)
        if kind == "series":
            return int(value.memory_usage(deep=True))
        if kind == "ndarray" or kind.startswith("arrow"):
            return int(value.nbytes)
        if kind == "polars":
            return int(value.estimated_size())
        if _c_level(type(value), "__sizeof__"):
            return int(sys.getsizeof(value))
        return int(object.__sizeof__(value))  # a user's __sizeof__ is code: not run
    except Exception:
        return None


def _shape(value: Any, kind: str) -> dict[str, Any]:
    """Shape or length, read only for known kinds: any other ``shape`` or ``__len__`` is code."""
    if kind in ("dataframe", "series", "index", "ndarray", "polars"):
        shape = value.shape
    elif kind == "arrow":
        shape = (value.num_rows, value.num_columns)
    elif kind in ("arrow_array", "sized"):
        return {"length": len(value)}
    else:
        return {}
    if type(shape) is tuple and all(type(n) is int for n in shape):
        return {"shape": list(shape)}
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
        if type(name) is not str or hidden(name) or issubclass(type(value), SKIPPED):
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
            item.update(_shape(value, kind))
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


class _Shortener(reprlib.Repr):
    """reprlib, bounded in the work done as well as in the length of the answer.

    reprlib builds the whole ``repr`` of a ``bytes`` (a 50 MB value cost 200 MB) and of any
    container subclass, and sorts a set's or dict's keys (a copy of them all, and their
    comparisons run). Here strings and bytes are sliced before ``repr``; the builtin containers
    and their subclasses are walked with the builtin's own iteration, a few items each, unsorted;
    and once ``budget`` characters of leaves (and items visited) are spent, the rest is ``...``.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = self.budget = limit
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 50
        self.maxfrozenset = self.maxdeque = self.maxarray = 50

    def repr1(self, x: Any, level: int) -> str:
        if self.budget <= 0:
            return FILL
        self.budget -= 1  # every call counts, so a wide, deep nest costs at most the budget
        cls = type(x)
        for text_type in (str, bytes, bytearray):
            if issubclass(cls, text_type):
                # a string inside a container gets a tenth, so the first cannot take it all
                width = self.maxstring if level == self.maxlevel else self.maxstring // 10
                return self._spend(self._sliced(x, text_type, width))
        fields = vars(cls).get("_fields") if issubclass(cls, tuple) else None
        if type(fields) is tuple and level > 0:  # a namedtuple: Point(x=1, y=2)
            pairs = islice(zip(fields, tuple.__iter__(x), strict=False), self.maxtuple)
            inner = ", ".join(f"{f}={self.repr1(v, level - 1)}" for f, v in pairs)
            return f"{cls.__name__}({inner})"
        brackets: tuple[tuple[Any, str, str], ...] = (
            (list, "[", "]"),
            (tuple, "(", ")"),
            (dict, "{", "}"),
            (set, "{", "}"),
            (frozenset, "{", "}"),
        )
        for base, left, right in brackets:
            if issubclass(cls, base):
                return self._wrapped(cls, base, self._items(x, base, level, left, right))
        if cls is int:
            bits = x.bit_length()
            return self._spend(
                self.repr_int(x, level) if bits < 3 * self.maxlong else f"<int of {bits} bits>"
            )
        if (_module_of(cls), cls.__name__) in (("collections", "deque"), ("array", "array")):
            return self._spend(super().repr1(x, level))  # reprlib walks these a few items each
        return self._spend(self.repr_instance(x, level))

    def _spend(self, text: str) -> str:
        self.budget -= len(text)
        return text

    def _sliced(self, x: Any, base: Any, width: int) -> str:
        head = base.__getitem__(x, slice(0, width))  # a plain str/bytes, never all of x
        text: str = repr(head)
        if len(text) > width or base.__len__(x) > width:
            text = text[:width] + FILL
        return text

    def _items(self, x: Any, base: Any, level: int, left: str, right: str) -> str:
        count = base.__len__(x)
        if count == 0:
            return "set()" if base is set else "" if base is frozenset else left + right
        if level <= 0:
            return left + FILL + right
        if base is dict:
            pieces = [
                f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
                for k, v in islice(dict.items(x), self.maxdict)
            ]
        else:
            pieces = [self.repr1(v, level - 1) for v in islice(base.__iter__(x), self.maxlist)]
        if count > len(pieces):
            pieces.append(FILL)
        trail = "," if base is tuple and count == 1 else ""
        return left + ", ".join(pieces) + trail + right

    def _wrapped(self, cls: type, base: type, inner: str) -> str:
        if cls is base:
            return inner if base is not frozenset else f"frozenset({inner})"
        return f"{cls.__name__}({inner})"  # a subclass: its own __repr__ may be any code

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except Exception:
            return f"<{type(x).__name__} instance at {id(x):#x}>"
        return text if len(text) <= self.maxother else text[: self.maxother] + FILL


def _bounded_repr(value: Any, context: str) -> str:
    limit = MAX_REPR[context]
    text = _Shortener(limit).repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def describe_variable(ns: dict[str, Any], name: str, context: str) -> dict[str, Any]:
    """A description of one variable, looked up by name (never evaluated)."""
    if context not in ROWS:
        return {"error": "invalid_data_context", "message": f"unknown data_context {context!r}"}
    refused = refusal(name)
    if refused is not None:
        return refused
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
            out.update(_shape(value, kind))
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
