"""``list_variables`` and ``describe_variable``: read-only looks at the kernel's live namespace.

The work is done by :mod:`gth_jupyter.kernel._inspector`, whose source is sent as a string,
compiled once per kernel into a private module (kept in ``sys.modules``, never in the user's
namespace) and called from one ``user_expressions`` entry of a silent, empty
``execute_request``. So nothing is shown to the user, the execution count and history are left
alone, no name is added to the user's namespace, and no output stream is involved (output from
subshell threads can be routed wrongly). Arguments travel as a JSON literal: a variable name is
data, looked up in the namespace dict, never evaluated; dotted names, subscripts and the names
hidden from the listing (the cell history among them) are refused here and again in the kernel.
Shapes and lengths are read only for known types, so listing runs none of the user's code.

Introspection goes to a kernel subshell where the kernel has them, so it answers while a cell
runs; elsewhere it queues on the main shell and :attr:`Introspection.shell` says so.
"""

from __future__ import annotations

import ast
import hashlib
import json
import keyword
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gth_jupyter.kernel._inspector import refusal
from gth_jupyter.kernel.client import KernelClient, Shell

DataContext = Literal["schema", "sample", "full"]
DATA_CONTEXTS: tuple[DataContext, ...] = ("schema", "sample", "full")
DEFAULT_LIMIT = 50
_SOURCE = (Path(__file__).parent / "_inspector.py").read_text(encoding="utf-8")
_KEY = "gth"
_MODULE = "gth_jupyter_inspector_" + hashlib.sha256(_SOURCE.encode()).hexdigest()[:12]


@dataclass
class Introspection:
    """A JSON answer from the kernel, where it ran, and what went wrong if anything did."""

    data: dict[str, Any]
    shell: Shell
    elapsed: float
    note: str = ""

    @property
    def error(self) -> str | None:
        """The stable error code, when the answer is an error."""
        code = self.data.get("error")
        return str(code) if code is not None else None


def valid_name(name: str) -> bool:
    """A plain identifier: no dots, subscripts, calls or keywords."""
    return name.isidentifier() and not keyword.iskeyword(name)


def expression(arguments: dict[str, Any]) -> str:
    """The one expression evaluated in the user namespace; it leaves no names behind.

    The inspector is compiled once per kernel process and kept as a module in ``sys.modules``
    under a key that carries a hash of its source (never in the user's namespace).
    """
    build = (
        f"(lambda __t: (exec(compile({_SOURCE!r}, '<gth-inspector>', 'exec'), __t.__dict__),"
        f" __import__('sys').modules.setdefault({_MODULE!r}, __t))[1])"
        f"(__import__('types').ModuleType({_MODULE!r}))"
    )
    return (
        f"(__import__('sys').modules.get({_MODULE!r}) or {build})"
        f".run(globals(), {json.dumps(arguments)!r})"
    )


async def _inspect(
    client: KernelClient, arguments: dict[str, Any], *, shell: Shell, timeout: float
) -> Introspection:
    execution = await client.execute(
        "",
        shell=shell,
        silent=True,
        user_expressions={_KEY: expression(arguments)},
        timeout=timeout,
        interrupt_on_timeout=False,
    )
    note = execution.note
    if execution.timed_out:
        data: dict[str, Any] = {"error": "kernel_busy", "message": note}
    elif execution.reply.get("status") != "ok":
        reply = execution.reply
        data = {"error": "kernel_error", "message": f"{reply.get('ename')}: {reply.get('evalue')}"}
    else:
        answer = execution.reply.get("user_expressions", {}).get(_KEY, {})
        if answer.get("status") != "ok":
            message = f"{answer.get('ename')}: {answer.get('evalue')}"
            data = {"error": "inspection_failed", "message": message}
        else:
            data = json.loads(ast.literal_eval(answer["data"]["text/plain"]))
    return Introspection(data=data, shell=execution.shell, elapsed=execution.elapsed, note=note)


async def list_variables(
    client: KernelClient,
    *,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
    shell: Shell = "subshell",
    timeout: float = 10.0,
) -> Introspection:
    """One page of the user's variables: name, type, shape or length, size, DataFrame columns.

    Modules, functions, classes, names starting with ``_`` and IPython's own names are left out.
    The answer has ``variables``, ``total``, ``offset``, ``limit`` and ``next_offset``.
    """
    arguments = {"op": "list", "offset": offset, "limit": limit}
    return await _inspect(client, arguments, shell=shell, timeout=timeout)


async def describe_variable(
    client: KernelClient,
    name: str,
    *,
    data_context: DataContext = "sample",
    shell: Shell = "subshell",
    timeout: float = 10.0,
) -> Introspection:
    """A description of one variable; ``data_context`` bounds how many values leave the kernel.

    ``schema``: types, shapes and null counts, no values. ``sample``: plus statistics and a few
    rows. ``full``: plus more rows, up to a cap. A name that is not a plain identifier is refused
    with ``invalid_name``, and a name :func:`list_variables` hides (``In``, ``Out``, ``_ih``,
    anything starting with ``_``) with ``hidden_name``, before anything is sent (and again in
    the kernel, by the same rule).
    """
    refused = refusal(name)
    if refused is not None:
        return Introspection(data=dict(refused), shell=shell, elapsed=0.0)
    if data_context not in DATA_CONTEXTS:
        data = {"error": "invalid_data_context", "message": f"unknown {data_context!r}"}
        return Introspection(data=data, shell=shell, elapsed=0.0)
    arguments = {"op": "describe", "name": name, "data_context": data_context}
    return await _inspect(client, arguments, shell=shell, timeout=timeout)
