"""``%gth`` and ``%%gth``: talk to the agent from a cell.

``%gth <prompt>`` shows a chat widget and sends the prompt; ``%gth`` alone opens the chat;
``%%gth`` sends the cell body, with ``{name}`` replaced by ``str(name)`` from the user
namespace. Options: ``--thread NAME``, ``--new`` (a fresh thread from here on), ``--agent NAME``,
``--transport http|comm``, ``--log`` (the AG-UI event log panel).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..agent.contract import DEFAULT_AGENT
from .threads import new_thread_id, notebook_thread_id
from .widget import GthChat, chat

_OPTION = re.compile(r"^\s*--(thread|agent|transport)(?:=|\s+)(\S+)|^\s*--(new|log)\b")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Options:
    prompt: str
    thread: str | None = None
    agent: str = DEFAULT_AGENT
    transport: str = "auto"
    new: bool = False
    log: bool = False


def parse_line(line: str) -> Options:
    """Leading ``--options``, then the prompt verbatim (quotes and dashes included)."""
    options = Options(prompt="")
    rest = line
    while True:
        match = _OPTION.match(rest)
        if not match:
            break
        key, value, flag = match.group(1), match.group(2), match.group(3)
        if flag:
            setattr(options, flag, True)
        elif key == "transport" and value not in ("auto", "http", "comm"):
            raise UsageError("--transport must be auto, http or comm")
        else:
            setattr(options, key, value)
        rest = rest[match.end() :]
    options.prompt = rest.strip()
    return options


def interpolate(text: str, namespace: dict[str, Any]) -> str:
    """``{name}`` → ``str(namespace[name])``; an unknown name is an error, not a silent gap."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in namespace:
            raise UsageError(f"%%gth: name '{name}' is not defined in the notebook.")
        return str(namespace[name])

    return _PLACEHOLDER.sub(value, text)


@magics_class
class GthMagics(Magics):
    """The ``gth`` line and cell magic."""

    current_thread: str | None = None

    @line_cell_magic
    def gth(self, line: str, cell: str | None = None) -> GthChat:
        options = parse_line(line)
        if cell is not None:
            extra = interpolate(cell, self.shell.user_ns if self.shell else {}).strip()
            options.prompt = f"{options.prompt}\n{extra}".strip() if options.prompt else extra
        if options.new:
            self.current_thread = new_thread_id()
        thread = options.thread or self.current_thread or notebook_thread_id()
        return chat(
            options.prompt or None,
            thread=thread,
            agent=options.agent,
            transport=options.transport,
            event_log=options.log,
        )


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(GthMagics)
