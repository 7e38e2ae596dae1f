"""The offline demo model's notebook phrases: the browser's notebook tools, by simple rules.

- "why did this fail?" (also ``%gth --explain``'s "Why did the cell above fail?") calls
  ``read_notebook`` when the widget offers it, then explains the failing cell's error from the
  result: a ``KeyError`` names the missing key, where the code looks it up, a close spelling the
  notebook holds, and the fix. Without the tool it explains the error the prompt carries (what
  ``--explain`` appends where there is no notebook front end: the cell's code and the kernel's
  last traceback), else says where the tool exists;
- "put that in a cell" calls ``insert_cell`` with ``run: true`` and the code ``run_python``
  last ran in this conversation (as the person approved or edited it), or a small example, then
  says what happened from the result (the cell's id, its output or its error).

The demo only ever reads tool results and the prompt as text; it never raises for odd input
(``_rules`` falls back to its introduction).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from gth_jupyter.contract.names import NOTEBOOK_TOOLS
from gth_jupyter.models._reply import PlannedToolCall, Reply
from gth_jupyter.models.demo._data import RUN_PYTHON, tool_json

READ_NOTEBOOK, INSERT_CELL, EDIT_CELL = NOTEBOOK_TOOLS

_WHY = re.compile(
    r"\bwhy\b[^.?!\n]{0,60}?\b(?:fail|fails|failed|failing|break|breaks|broke|broken|crash"
    r"|crashed|error|errors|raise|raised)\b"
    r"|\bexplain\b[^.?!\n]{0,40}?\b(?:error|failure|traceback|exception)\b"
    r"|\bwhat\s+went\s+wrong\b",
    re.IGNORECASE,
)
_PUT_IN_CELL = re.compile(
    r"\b(?:put|insert|add|turn|make|write|save|keep|paste)\b[^.?!\n]{0,40}?\bcell\b",
    re.IGNORECASE,
)
_ERROR_LINE = re.compile(
    r"^\s*(?P<ename>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))"
    r"(?::[ \t]*(?P<evalue>.*))?$",
    re.MULTILINE,
)
_FENCED = re.compile(r"```(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.DOTALL)
_WORD = re.compile(r"\b[A-Za-z_]\w{0,59}\b")
_QUOTED = re.compile(r"""['"]([^'"\n]{1,60})['"]""")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXAMPLE = "agent_squares = [n * n for n in range(10)]\nprint(agent_squares)"
_MAX_SHOWN = 600
#: How the approvals gate's answers begin (a rejection, a refusal, the auto-rater's bounce).
_GATE_REFUSALS = ("The user rejected", "Refused:", "Not run:")

NO_NOTEBOOK_TOOLS = (
    "I can't see your notebook from here: the notebook tools (`read_notebook`, `insert_cell`) "
    "are offered by the chat widget when it finds its notebook open in JupyterLab or "
    "Notebook 7. Run `%gth --explain` below the failing cell (it sends me the kernel's last "
    "error where there is no notebook front end), or paste the traceback here."
)


@dataclass(frozen=True)
class Failure:
    """One error as the demo reads it: its name and value, and the code that raised it."""

    ename: str
    evalue: str
    source: str = ""
    where: str = ""  # "cell 3 (`id`)", when a notebook cell is known


# -- the requests ---------------------------------------------------------------------------


def notebook_request(text: str, tools: set[str], messages: Sequence[BaseMessage]) -> Reply | None:
    """The answer a notebook phrase in ``text`` asks for, or ``None`` when there is none."""
    if _WHY.search(text):
        if READ_NOTEBOOK in tools:
            return Reply(
                text="Let me read the notebook and find the failing cell.",
                tool_calls=[PlannedToolCall(READ_NOTEBOOK, {"include_outputs": True})],
            )
        failure = failure_in_prompt(text)
        if failure is not None:
            return Reply(text=explain(failure, context=text))
        return Reply(text=NO_NOTEBOOK_TOOLS)
    if _PUT_IN_CELL.search(text):
        code = last_run_python_code(messages)
        if INSERT_CELL not in tools:
            shown = code or _EXAMPLE
            return Reply(
                text="I'd insert it as a cell, but the `insert_cell` tool is only offered when "
                "the chat widget finds its notebook open in JupyterLab or Notebook 7. Here is "
                f"the code to paste into a cell yourself:\n\n```python\n{shown}\n```"
            )
        if code is None:
            return Reply(
                text="Nothing has run in this conversation yet, so here is a small example "
                "cell, inserted below this one and run.",
                tool_calls=[PlannedToolCall(INSERT_CELL, {"source": _EXAMPLE, "run": True})],
            )
        return Reply(
            text="I'll put the code I last ran into a new cell below this one and run it there.",
            tool_calls=[PlannedToolCall(INSERT_CELL, {"source": code, "run": True})],
        )
    return None


def last_run_python_code(messages: Sequence[BaseMessage]) -> str | None:
    """The code ``run_python`` last ran here (the edited code, if the person edited it): the
    last run that succeeded, else the last one asked for; ``None`` when there is none."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    ran: list[str] = []
    asked: list[str] = []
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            code = call.get("args", {}).get("code") if call.get("name") == RUN_PYTHON else None
            if not isinstance(code, str) or not code.strip():
                continue
            result = results.get(call.get("id") or "")
            text = _text(result.content) if result is not None else ""
            code = _edited_code(text) or code
            asked.append(code)
            if result is not None and result.status != "error":
                ran.append(code)
    found = ran or asked
    return found[-1] if found else None


def _edited_code(text: str) -> str | None:
    """The code the person edited the call to, from the gate's note in the result."""
    data = tool_json(text)
    note = data.get("userEdited") if data is not None else text
    if not isinstance(note, str):
        return None
    marker = "it ran with the arguments "
    at = note.find(marker)
    if at < 0:
        return None
    try:
        edited, _ = json.JSONDecoder().raw_decode(note[at + len(marker) :])
    except ValueError:
        return None
    code = edited.get("code") if isinstance(edited, dict) else None
    return code if isinstance(code, str) and code.strip() else None


# -- the follow-ups -------------------------------------------------------------------------


def notebook_follow_up(name: str, text: str, *, failed: bool) -> Reply:
    """The answer to the result ``text`` of the notebook tool ``name``."""
    if failed and text.startswith(_GATE_REFUSALS):
        return _refused(name, text)
    if name == READ_NOTEBOOK:
        return _read(text, failed)
    if name == INSERT_CELL:
        return _inserted(text, failed)
    data = tool_json(text)
    if failed:
        return Reply(text=f"The notebook could not change the cell: {_message(data, text)}")
    cell = _cell_id(data) if data is not None else None
    which = f" `{cell}`" if cell else ""
    return Reply(text=f"Done: I changed cell{which}. Undo in the notebook restores it.")


def _refused(name: str, text: str) -> Reply:
    if text.startswith("The user rejected"):
        return Reply(
            text=f"All right, I didn't call `{name}`; your notebook is unchanged. Tell me what "
            "you'd like instead."
        )
    return Reply(
        text=f"The approvals settings refuse `{name}` here, so your notebook is unchanged. The "
        "`approvals` block of `.gsloth.config.json` decides that."
    )


def _read(text: str, failed: bool) -> Reply:
    data = tool_json(text)
    if failed:
        return Reply(text=f"I couldn't read the notebook: {_message(data, text)}")
    failure = failure_in_notebook(data) if data is not None else failure_in_prompt(text)
    context = " ".join(_strings(data)) if data is not None else text
    if failure is None:
        cells = data.get("cells") if data is not None else None
        count = f" ({len(cells)} cells)" if isinstance(cells, list) else ""
        return Reply(
            text=f"I read the notebook{count} and found no cell with an error output. Run the "
            "failing cell again and ask me once its traceback shows."
        )
    return Reply(text=explain(failure, context=context))


def _inserted(text: str, failed: bool) -> Reply:
    data = tool_json(text)
    if data is None:
        if failed:
            return Reply(text=f"The notebook could not insert the cell: {_capped(text)}")
        return Reply(text=f"The cell is in the notebook. The notebook answered:\n\n{_capped(text)}")
    cell = _cell_id(data)
    where = f"cell `{cell}`" if cell else "a new cell"
    index = data.get("index")
    if isinstance(index, int):
        where += f" (index {index})"
    error = next(_errors(data), None)
    if failed and error is None and "status" not in data:
        return Reply(text=f"The notebook could not insert the cell: {_message(data, text)}")
    if error is not None or data.get("status") == "error":
        what = f"**{error[0]}: {error[1]}**" if error else "an error"
        return Reply(
            text=f"I inserted {where} below and ran it, but it failed with {what}. Ask me "
            "**why did this fail?** and I'll read the notebook."
        )
    count = data.get("execution_count", data.get("executionCount"))
    ran = f" as `[{count}]`" if isinstance(count, int) else ""
    output = _output_text(data)
    shown = f"\n\nIt printed:\n\n```\n{_capped(output)}\n```\n\n" if output else " "
    edited = " (with your edits)" if "userEdited" in data else ""
    return Reply(
        text=f"Done: {where} is in your notebook{edited}, and it ran{ran}.{shown}It stays "
        "there for you to rerun or change; undo in the notebook removes it."
    )


# -- reading errors -------------------------------------------------------------------------


def failure_in_notebook(data: Mapping[str, Any]) -> Failure | None:
    """The failing cell of a ``read_notebook`` result: the last cell with an error output above
    the asking cell (when the result says which that is), else the last one."""
    cells = [c for c in data.get("cells") or [] if isinstance(c, Mapping)]
    asking = _asking_index(data, cells)
    found: Failure | None = None
    for position, cell in enumerate(cells):
        given = cell.get("index")
        index = given if isinstance(given, int) else position
        if asking is not None and index >= asking:
            break
        error = next(_errors(cell), None)
        if error is None:
            continue
        cell_id = _cell_id(cell)
        where = f"the cell at index {index}" + (f" (`{cell_id}`)" if cell_id else "")
        found = Failure(error[0], error[1], _source(cell.get("source")), where)
    return found


def _asking_index(data: Mapping[str, Any], cells: list[Mapping[str, Any]]) -> int | None:
    """Where the asking ``%gth`` cell is: the widget gives ``asking_cell: {id, index}`` and marks
    the cell ``asking: true``."""
    asking = data.get("asking_cell")
    if isinstance(asking, Mapping) and isinstance(asking.get("index"), int):
        return int(asking["index"])
    asking_id = asking.get("id") if isinstance(asking, Mapping) else data.get("askingCellId")
    for position, cell in enumerate(cells):
        mine = cell.get("asking") is True or cell.get("isAsking") is True
        if mine or (isinstance(asking_id, str) and asking_id and _cell_id(cell) == asking_id):
            index = cell.get("index")
            return index if isinstance(index, int) else position
    if isinstance(asking_id, int):
        return asking_id
    return None


def failure_in_prompt(text: str) -> Failure | None:
    """The error a prompt (or a result that is not JSON) carries: the last ``Name: value`` line
    of a traceback, and the first fenced Python block as the code."""
    text = _ANSI.sub("", text)
    matches = list(_ERROR_LINE.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    block = _FENCED.search(text)
    source = block.group("code").strip() if block else ""
    return Failure(last.group("ename"), (last.group("evalue") or "").strip(), source)


def _errors(value: Any) -> Iterator[tuple[str, str]]:
    """``(ename, evalue)`` of every error output in ``value``, however the result nests them."""
    if isinstance(value, Mapping):
        ename = value.get("ename")
        if isinstance(ename, str) and ename:
            yield ename, _ANSI.sub("", str(value.get("evalue") or ""))
            return
        for key, item in value.items():
            if key != "source":
                yield from _errors(item)
    elif isinstance(value, list):
        for item in value:
            yield from _errors(item)


# -- explaining -----------------------------------------------------------------------------


def explain(failure: Failure, *, context: str = "") -> str:
    """What went wrong and how to fix it, in a few sentences."""
    where = f"{failure.where[:1].upper()}{failure.where[1:]}" if failure.where else "The cell"
    head = (
        f"{where} failed with **{failure.ename}: {failure.evalue}**."
        if failure.evalue
        else (f"{where} failed with **{failure.ename}**.")
    )
    if failure.ename.endswith("KeyError"):
        return f"{head} {_key_error(failure, context)}"
    if failure.ename.endswith("NameError"):
        name = _quoted(failure.evalue)
        what = f"`{name}`" if name else "a name it uses"
        return (
            f"{head} The code uses {what} before anything defined it in this kernel: run the "
            "cell that defines it first (a restarted kernel forgets everything), or fix the "
            "spelling."
        )
    if failure.ename.endswith(("ModuleNotFoundError", "ImportError")):
        module = _quoted(failure.evalue)
        fix = f"`%pip install {module.split('.')[0]}`" if module else "`%pip install <package>`"
        return (
            f"{head} The package is not installed in this kernel's environment: run {fix} in a "
            "cell, then run the failing cell again."
        )
    return (
        f"{head} The last line of the traceback names the error; the frame above it shows the "
        "line that raised it. I'm the offline demo, so I only explain a few common errors "
        "(`KeyError`, `NameError`, `ModuleNotFoundError`) in detail; a real model reads the "
        "whole traceback."
    )


def _key_error(failure: Failure, context: str) -> str:
    key = _quoted(failure.evalue) or failure.evalue.strip() or "?"
    holder = _holder(failure.source, key)
    where = f" in `{holder}`" if holder else ""
    sentences = [f"The code looks up the key `'{key}'`{where}, and it is not there."]
    near = _close_spelling(key, context, failure)
    if near is not None:
        sentences.append(f"The notebook mentions `'{near}'`: the key may be spelled that way.")
    target = holder or "data"
    fixed = f"`{target}['{near}']`" if near is not None else "the exact key"
    sentences.append(
        f"To fix it, use {fixed}, check which keys exist (`{target}.columns` for a DataFrame, "
        f"`{target}.keys()` for a dict), or use `{target}.get('{key}')` where the key may be "
        "missing."
    )
    return " ".join(sentences)


def _holder(source: str, key: str) -> str | None:
    """The expression ``key`` is looked up in (``sales`` in ``sales['revenue']``)."""
    pattern = rf"([A-Za-z_][\w.]*)\s*\[\s*(?:['\"]){re.escape(key)}['\"]"
    match = re.search(pattern, source)
    return match.group(1) if match else None


def _close_spelling(key: str, context: str, failure: Failure) -> str | None:
    """A string the notebook holds that is nearly ``key`` (another case, a typo)."""
    text = context.replace(failure.evalue, " ")
    found: set[str] = {w.strip() for w in _QUOTED.findall(text)} | set(_WORD.findall(text))
    words = {w for w in found if w and w != key and len(w) <= 60}
    lowered = {w.lower(): w for w in words}
    if key.lower() in lowered:
        return lowered[key.lower()]
    near = difflib.get_close_matches(key, sorted(words), n=1, cutoff=0.8)
    return near[0] if near else None


# -- small helpers --------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (the notebook's sources and outputs), keys left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _quoted(value: str) -> str | None:
    match = re.search(r"""['"]([^'"]+)['"]""", value)
    return match.group(1) if match else None


def _cell_id(data: Mapping[str, Any] | None) -> str | None:
    if data is None:
        return None
    for key in ("cell_id", "cellId", "id"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _source(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def _output_text(data: Mapping[str, Any]) -> str:
    """What the ran cell printed or returned, as the result gives it."""
    displays = data.get("displays")
    parts = [data.get("stdout"), data.get("result")]
    parts += displays if isinstance(displays, list) else []
    texts = [p for p in parts if isinstance(p, str) and p.strip()]
    for output in data.get("outputs") or []:
        if not isinstance(output, Mapping):
            continue
        text = output.get("text")
        if text is None and isinstance(output.get("data"), Mapping):
            text = output["data"].get("text/plain")
        text = _source(text)
        if text.strip():
            texts.append(text)
    return "\n".join(t.rstrip() for t in texts)


def _message(data: Mapping[str, Any] | None, text: str) -> str:
    if data is not None:
        for key in ("message", "error"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value
    return _capped(text)


def _capped(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) if isinstance(b, Mapping) else ""
            for b in content
        )
    return ""
