"""The offline demo model's data phrases: the notebook kernel's tools, by simple rules.

- "what data do I have?", "which variables…", "show my data", "list variables" call
  ``list_variables`` (``offset=N`` / ``limit=N`` in the text are passed on);
- "describe sales" (a plain identifier) calls ``describe_variable(name="sales")``;
- "plot revenue by month" calls ``run_python`` with short matplotlib code on a DataFrame picked
  from the conversation (the demo cannot see the data): one named in the message ("… from
  sales"), else the most recent listed or described DataFrame holding both columns, else one the
  message names, else ``sales`` when the conversation mentions it, else the first DataFrame seen;
- after each tool's result: a short summary of the variables, of the description, of the run
  (the plot is shown, or what it printed, or its error), or a polite word after a rejection.

Names only reach the generated code as Python string literals (columns) or checked identifiers
(the DataFrame), and the names the code creates start with ``agent_``. These functions work on
plain text and never raise for odd input; ``_rules`` calls them.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gth_jupyter.models._reply import PlannedToolCall, Reply

LIST_VARIABLES = "list_variables"
DESCRIBE_VARIABLE = "describe_variable"
RUN_PYTHON = "run_python"
DATA_TOOLS = frozenset({LIST_VARIABLES, DESCRIBE_VARIABLE, RUN_PYTHON})

_DATA_WORD = r"(?:data|variables?|dataframes?|data\s+frames?)"
_LIST = re.compile(
    rf"\b(?:what|which)\s+{_DATA_WORD}\b"
    rf"|\b(?:show|list)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?(?:my\s+|the\s+|our\s+)?{_DATA_WORD}\b",
    re.IGNORECASE,
)
_PAGE = re.compile(r"\b(offset|limit)\s*=\s*(\d{1,6})\b")
_IDENT = r"[^\W\d]\w*"
_DESCRIBE = re.compile(
    r"\bdescribe\s+(?:the\s+|my\s+)?"
    r"(?:(?:variable|dataframe|data\s+frame|table|array|series)\s+)?"
    rf"(?P<q>[`'\"]?)(?P<name>{_IDENT})(?P=q)",
    re.IGNORECASE,
)
_COLUMN = rf"`[^`\n]+`|\"[^\"\n]+\"|{_IDENT}"
_PLOT = re.compile(
    r"\b(?:plot|chart|graph)\s+(?:of\s+)?(?:the\s+|total\s+|my\s+)*"
    rf"(?P<y>{_COLUMN})\s+(?:by|per|over|across|for\s+each)\s+(?:the\s+|each\s+)?"
    rf"(?P<x>{_COLUMN})",
    re.IGNORECASE,
)
_SOURCE = re.compile(
    r"\b(?:from|in|of|using)\s+(?:the\s+|my\s+)?"
    r"(?:(?:dataframe|data\s+frame|table|variable)\s+)?"
    rf"[`'\"]?(?P<name>{_IDENT})",
    re.IGNORECASE,
)
# Words after "describe" or "from" that are English, not a variable's name.
_NOT_NAMES = frozenset(
    "a an the my your our this that these those it them me you yourself what how why who which "
    "all each every some any data variable variables dataframe table array series "
    "photo picture image camera form survey notebook kernel chart plot here there".split()
)
_NUMERIC = re.compile(r"^(u?int|float|Int|UInt|Float|complex)\d*")
_MAX_LISTED = 20
_MAX_COLUMNS = 6
_MAX_OUTPUT = 800
_TIMES = "\N{MULTIPLICATION SIGN}"

NO_KERNEL_TOOLS = (
    "I'd look at your data, but the kernel tools (`list_variables`, `describe_variable`, "
    "`run_python`) aren't available to this agent: they work in a `%gth` chat in a notebook, "
    "where I can reach your kernel. Open the chat there and ask again."
)


@dataclass(frozen=True)
class Frame:
    """A DataFrame a tool result named, with its columns."""

    name: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Seen:
    """What the conversation holds so far: earlier tool results and the user's texts."""

    results: Sequence[tuple[str, str]] = ()
    """(tool name, result text) of earlier tool results, oldest first."""
    user_texts: Sequence[str] = ()


def valid_name(name: object) -> bool:
    """A plain Python identifier: no dots, subscripts, calls or keywords."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


# -- the user's phrases ---------------------------------------------------------------------


def data_request(text: str, tools: set[str], seen: Seen) -> Reply | None:
    """The call a data phrase in ``text`` asks for, or ``None`` when there is none."""
    plot = _PLOT.search(text)
    if plot is not None:
        if RUN_PYTHON not in tools:
            return Reply(text=NO_KERNEL_TOOLS)
        return _plot_request(text, plot, seen)
    describe = _DESCRIBE.search(text)
    if describe is not None and _is_variable(describe.group("name"), seen):
        if DESCRIBE_VARIABLE not in tools:
            return Reply(text=NO_KERNEL_TOOLS)
        name = describe.group("name")
        return Reply(
            text=f"Let me describe `{name}`.",
            tool_calls=[PlannedToolCall(DESCRIBE_VARIABLE, {"name": name})],
        )
    if _LIST.search(text):
        if LIST_VARIABLES not in tools:
            return Reply(text=NO_KERNEL_TOOLS)
        page = {key.lower(): int(value) for key, value in _PAGE.findall(text)}
        return Reply(
            text="Let me look at the variables in your kernel.",
            tool_calls=[PlannedToolCall(LIST_VARIABLES, page)],
        )
    return None


def _is_variable(name: str, seen: Seen) -> bool:
    if not valid_name(name):
        return False
    known = {n for n, _ in _variables(seen)}
    return name in known or name.lower() not in _NOT_NAMES


def _plot_request(text: str, match: re.Match[str], seen: Seen) -> Reply:
    y, x = _unquote(match.group("y")), _unquote(match.group("x"))
    explicit = _explicit_source(text, match)
    frame = pick_frame(y, x, _frames(seen), explicit, text, seen.user_texts)
    if frame is None:
        return Reply(
            text=f"I'd plot {_code(y)} by {_code(x)}, but I don't know which DataFrame holds "
            "them. Ask **what data do I have?** first, or name it: "
            f"**plot {y} by {x} from sales**."
        )
    y, x = _column(y, frame.columns), _column(x, frame.columns)
    code = plot_code(frame.name, x, y)
    return Reply(
        text=f"I'll plot {_code(y)} by {_code(x)} from `{frame.name}`. The code runs in your "
        "kernel once you approve it.",
        tool_calls=[
            PlannedToolCall(
                RUN_PYTHON,
                {
                    "code": code,
                    "justification": f"Draw a bar chart of {y} by {x} from {frame.name}.",
                },
            )
        ],
    )


def _explicit_source(text: str, match: re.Match[str]) -> str | None:
    for part in (text[match.end() :], text[: match.start()]):
        for source in _SOURCE.finditer(part):
            name = source.group("name")
            if valid_name(name) and name.lower() not in _NOT_NAMES:
                return name
    return None


def pick_frame(
    y: str,
    x: str,
    frames: Sequence[Frame],
    explicit: str | None = None,
    message: str = "",
    user_texts: Iterable[str] = (),
) -> Frame | None:
    """The DataFrame to plot from (``frames`` oldest first), by the rules in the module doc."""
    if explicit is not None and valid_name(explicit):
        known = [f for f in frames if f.name == explicit]
        return known[-1] if known else Frame(explicit, ())
    for frame in reversed(frames):
        if _has(frame.columns, y) and _has(frame.columns, x):
            return frame
    words = set(re.findall(r"\w+", message))
    for frame in reversed(frames):
        if frame.name in words:
            return frame
    if any(re.search(r"\bsales\b", t) for t in [message, *user_texts]):
        known = [f for f in frames if f.name == "sales"]
        return known[-1] if known else Frame("sales", ())
    return frames[0] if frames else None


def _has(columns: Sequence[str], name: str) -> bool:
    return name in columns or name.casefold() in {c.casefold() for c in columns}


def _column(name: str, columns: Sequence[str]) -> str:
    """The frame's own spelling of ``name`` (case aside), else ``name`` as the user wrote it."""
    if name in columns:
        return name
    matches = [c for c in columns if c.casefold() == name.casefold()]
    return matches[0] if len(matches) == 1 else name


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "`\"'":
        return token[1:-1]
    return token


def literal(text: str) -> str:
    """``text`` as a Python string literal (double quotes when that needs no escape)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return repr(text)


def plot_code(frame: str, x: str, y: str) -> str:
    """Matplotlib code for a bar of ``y`` summed per ``x`` in DataFrame ``frame``.

    ``frame`` must be a plain identifier (``ValueError`` otherwise); ``x`` and ``y`` only appear
    as string literals. Summing per ``x`` (in order of appearance) gives one bar per value, also
    when ``x`` repeats; when it does not, the sums are the values themselves.
    """
    if not valid_name(frame):
        raise ValueError(f"not a plain variable name: {frame!r}")
    title = f"{y} by {x}".replace("$", r"\$")  # no mathtext from a name holding $
    return "\n".join(
        [
            "import matplotlib.pyplot as plt",
            "",
            "# one bar per value of the x column, summing the rows that share it",
            f"agent_totals = {frame}.groupby({literal(x)}, sort=False)[{literal(y)}].sum()",
            "agent_fig, agent_ax = plt.subplots(figsize=(6, 3.5))",
            "agent_ax.bar(agent_totals.index.astype(str), agent_totals.to_numpy())",
            f"agent_ax.set_title({literal(title)})",
            f"agent_ax.set_xlabel({literal(x.replace('$', chr(92) + '$'))})",
            f"agent_ax.set_ylabel({literal(y.replace('$', chr(92) + '$'))})",
            'agent_ax.tick_params(axis="x", labelrotation=45)',
            "agent_fig.tight_layout()",
            "plt.show()",
        ]
    )


# -- what the conversation holds ------------------------------------------------------------


def tool_json(text: str) -> dict[str, Any] | None:
    """The JSON object of a tool result; a note before it (an edited call's) is skipped."""
    candidates = [text.strip()]
    if "\n\n" in text:
        candidates.append(text.split("\n\n", 1)[1].strip())
    for candidate in candidates:
        if not candidate.startswith("{"):
            continue
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _variables(seen: Seen) -> list[tuple[str, dict[str, Any]]]:
    """(name, entry) of every variable the listed or described results named, oldest first."""
    found: list[tuple[str, dict[str, Any]]] = []
    for name, text in seen.results:
        data = tool_json(text) if name in (LIST_VARIABLES, DESCRIBE_VARIABLE) else None
        if data is None or isinstance(data.get("error"), str):
            continue
        entries = data.get("variables") if name == LIST_VARIABLES else [data]
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and valid_name(entry.get("name")):
                found.append((entry["name"], entry))
    return found


def _frames(seen: Seen) -> list[Frame]:
    frames = []
    for name, entry in _variables(seen):
        columns = _column_names(entry.get("columns"))
        if columns is not None and (columns or _short_type(entry.get("type")) == "DataFrame"):
            frames.append(Frame(name, tuple(columns)))
    return frames


def _column_names(columns: object) -> list[str] | None:
    if not isinstance(columns, list):
        return None
    names = [c.get("name") if isinstance(c, Mapping) else c for c in columns]
    return [n for n in names if isinstance(n, str)]


# -- the follow-ups -------------------------------------------------------------------------


def data_follow_up(name: str, text: str, *, failed: bool, tools: set[str]) -> Reply:
    """The answer to the result ``text`` of the data tool ``name``."""
    data = tool_json(text)
    if data is None and failed:
        return _refused(name, text)
    if data is None:
        if name == RUN_PYTHON and "image" in text.lower():
            return plot_shown()
        return Reply(text=f"The `{name}` tool answered:\n\n{_fenced(_capped(text))}")
    if isinstance(data.get("error"), str) and "status" not in data:
        return _tool_error(name, data)
    if name == LIST_VARIABLES:
        return _listed(data, tools)
    if name == DESCRIBE_VARIABLE:
        return _described(data, tools)
    return _ran(data, edited=text.startswith("Note:") or "userEdited" in data)


def plot_shown() -> Reply:
    return Reply(
        text="Done: the plot is shown above, in the `run_python` card. What I create in your "
        "kernel starts with `agent_` (here `agent_fig`, `agent_ax` and `agent_totals`), so "
        "your own names are left alone."
    )


def _refused(name: str, text: str) -> Reply:
    what = "the code" if name == RUN_PYTHON else f"`{name}`"
    if "rejected" in text:
        return Reply(
            text=f"All right, I didn't run {what}. Tell me what you'd like changed, or ask "
            "for something else."
        )
    if text.startswith("Refused"):
        return Reply(
            text=f"The approvals settings refuse {what} here, so it did not run. The `approvals` "
            "block of `.gsloth.config.json` decides that."
        )
    return Reply(text=f"The `{name}` tool failed:\n\n{_fenced(_capped(text))}")


def _tool_error(name: str, data: Mapping[str, Any]) -> Reply:
    code = str(data.get("error"))
    message = str(data.get("message") or "").rstrip(".")
    if code == "variable_not_found":
        return Reply(
            text=f"I couldn't find that variable ({message}). Ask **what data do I have?** to "
            "see the names in your kernel."
        )
    if code == "no_kernel":
        return Reply(text=NO_KERNEL_TOOLS)
    why = f": {message}" if message else ""
    return Reply(text=f"The `{name}` tool could not answer (`{code}`){why}.")


def _listed(data: Mapping[str, Any], tools: set[str]) -> Reply:
    variables = [v for v in data.get("variables") or [] if isinstance(v, Mapping)]
    if not variables:
        return Reply(
            text="Your kernel has no variables of its own yet (modules, functions and names "
            "starting with `_` are left out). Run a cell that makes some data, then ask again."
        )
    total = data.get("total")
    count = total if isinstance(total, int) and total >= len(variables) else len(variables)
    noun = "variable" if count == 1 else "variables"
    lines = [f"Your kernel holds {count} {noun}:", ""]
    lines += [f"- {_variable_line(v)}" for v in variables[:_MAX_LISTED]]
    hidden = count - min(len(variables), _MAX_LISTED)
    if hidden > 0:
        lines.append(f"- … and {hidden} more")
    hint = _try_next(variables, tools)
    return Reply(text="\n".join(lines) + (f"\n\n{hint}" if hint else ""))


def _variable_line(v: Mapping[str, Any]) -> str:
    parts = [_short_type(v.get("type")) or "object"]
    shape = _shape(v.get("shape"))
    if shape:
        parts.append(shape)
    elif isinstance(v.get("length"), int):
        parts.append(f"length {v['length']}")
    columns = _column_names(v.get("columns"))
    if columns:
        shown = ", ".join(_code(c) for c in columns[:_MAX_COLUMNS])
        more = ", …" if len(columns) > _MAX_COLUMNS else ""
        parts.append(f"columns {shown}{more}")
    return f"{_code(str(v.get('name', '?')))}: {', '.join(parts)}"


def _try_next(variables: Sequence[Mapping[str, Any]], tools: set[str]) -> str:
    """A next step to try with the first DataFrame listed, in phrases the demo knows."""
    frame = next((v for v in variables if valid_name(v.get("name")) and v.get("columns")), None)
    if frame is None:
        return ""
    ideas = []
    if DESCRIBE_VARIABLE in tools:
        ideas.append(f"**describe {frame['name']}**")
    columns = [c for c in frame["columns"] if isinstance(c, Mapping)]
    plot = _plot_columns(columns) if RUN_PYTHON in tools else None
    if plot is not None:
        ideas.append(f"**plot {plot[0]} by {plot[1]}**")
    return f"Try {' or '.join(ideas)}." if ideas else ""


def _described(data: Mapping[str, Any], tools: set[str]) -> Reply:
    name = _code(str(data.get("name", "the variable")))
    kind = _short_type(data.get("type")) or "object"
    columns = [c for c in data.get("columns") or [] if isinstance(c, Mapping)]
    lines: list[str] = []
    if kind == "DataFrame" or columns:
        shape = data.get("shape")
        size = (
            f" of {shape[0]} rows {_TIMES} {shape[1]} columns"
            if isinstance(shape, list) and len(shape) == 2
            else ""
        )
        lines.append(f"{name} is a DataFrame{size}:")
        lines.append("")
        stats = _stats(data.get("describe"))
        for column in columns[:_MAX_LISTED]:
            column_name = str(column.get("name"))
            line = f"- {_code(column_name)} ({column.get('dtype', '?')})"
            if column_name in stats:
                line += f": {stats[column_name]}"
            lines.append(line)
        if len(columns) > _MAX_LISTED:
            lines.append(f"- … and {len(columns) - _MAX_LISTED} more")
        lines.append("")
        lines.append(_nulls(data.get("null_counts")))
    else:
        shape = _shape(data.get("shape"))
        what = f"{name} is a {kind}"
        if shape:
            what += f" of shape {shape}"
        elif isinstance(data.get("length"), int):
            what += f" of length {data['length']}"
        if data.get("dtype"):
            what += f" ({data['dtype']})"
        lines.append(what + ".")
        if isinstance(data.get("null_count"), int) and data["null_count"]:
            lines.append(f"It has {data['null_count']} missing values.")
    if data.get("data_context") == "schema":
        lines.append(
            '\nOnly the schema left your kernel (`dataContext: "schema"`), so I saw no values.'
        )
    if columns and RUN_PYTHON in tools:
        idea = _plot_columns(columns)
        if idea is not None:
            lines.append(f"\nTry **plot {idea[0]} by {idea[1]}**.")
    return Reply(text="\n".join(lines).strip())


def _plot_columns(columns: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(y, x): the first numeric column, and the first other non-float column, both plain."""
    typed = [(str(c.get("name")), str(c.get("dtype", ""))) for c in columns]
    numbers = [n for n, t in typed if _NUMERIC.match(t) and valid_name(n)]
    if not numbers:
        return None
    y = next((n for n, t in typed if n in numbers and t.startswith("float")), numbers[0])
    others = [n for n, t in typed if n != y and valid_name(n) and not t.startswith("float")]
    return (y, others[0]) if others else None


def _stats(table: object) -> dict[str, str]:
    """``mean 1.5, min 0, max 3`` per column of a ``describe()`` table in split form."""
    if not isinstance(table, Mapping):
        return {}
    columns, index, rows = table.get("columns"), table.get("index"), table.get("data")
    if not (isinstance(columns, list) and isinstance(index, list) and isinstance(rows, list)):
        return {}
    out: dict[str, str] = {}
    for position, column in enumerate(columns):
        bits = []
        for stat in ("mean", "min", "max"):
            if stat in index:
                row = rows[index.index(stat)]
                value = row[position] if isinstance(row, list) and position < len(row) else None
                if isinstance(value, int | float) and not isinstance(value, bool):
                    bits.append(f"{stat} {_number(value)}")
        if bits:
            out[str(column)] = ", ".join(bits)
    return out


def _nulls(counts: object) -> str:
    if not isinstance(counts, Mapping):
        return ""
    missing = {k: v for k, v in counts.items() if isinstance(v, int) and v > 0}
    if not missing:
        return "No missing values."
    return "Missing values: " + ", ".join(f"{_code(str(k))} {v}" for k, v in missing.items()) + "."


def _ran(data: Mapping[str, Any], *, edited: bool) -> Reply:
    note = "You edited the code before it ran. " if edited else ""
    images = data.get("images")
    status = data.get("status")
    if status == "timeout":
        return Reply(
            text=f"{note}The code ran too long and was stopped (the kernel was interrupted). "
            "Try something smaller, or raise `builtInTools.run_python.timeout`."
        )
    error = data.get("error")
    if status == "error" or isinstance(error, Mapping):
        return Reply(text=note + _failure(error, str(data.get("stderr") or "")))
    if isinstance(images, list) and images:
        shown = plot_shown()
        return Reply(text=note + shown.text)
    outputs = [
        ("printed", data.get("stdout")),
        ("returned", data.get("result")),
        ("wrote to stderr", data.get("stderr")),
    ]
    said = [f"It {verb}:\n\n{_fenced(_capped(str(out)))}" for verb, out in outputs if out]
    if not said:
        return Reply(text=f"{note}The code ran, with no output.")
    return Reply(text=f"{note}The code ran. " + "\n\n".join(said))


def _failure(error: object, stderr: str) -> str:
    if isinstance(error, Mapping):
        ename, evalue = str(error.get("ename") or "Error"), str(error.get("evalue") or "")
        what = f"{ename}: {evalue}" if evalue else ename
    else:
        what = str(error or stderr or "an error")
    text = f"The code failed with {_code(_one_line(what, 300))}."
    if "KeyError" in what:
        text += " A column name may be wrong: **describe** the DataFrame to see its columns."
    return text + " You can edit the code in the approval card when I try again."


# -- small text helpers ---------------------------------------------------------------------


def _short_type(value: object) -> str:
    return value.rsplit(".", 1)[-1] if isinstance(value, str) and value else ""


def _shape(value: object) -> str:
    if isinstance(value, list) and value and all(isinstance(n, int) for n in value):
        if len(value) == 2:
            return f"{value[0]} rows {_TIMES} {value[1]} columns"
        return f" {_TIMES} ".join(str(n) for n in value)
    return ""


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else format(value, ".6g")


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


def _code(text: str) -> str:
    """``text`` as an inline code span that no backtick or newline in it can break."""
    return "`" + _one_line(text.replace("`", "'"), 80) + "`"


def _capped(text: str) -> str:
    return text if len(text) <= _MAX_OUTPUT else text[:_MAX_OUTPUT] + "\n…"


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"
