"""``%gth`` and ``%%gth``: talk to the agent from a cell.

``%gth <prompt>`` shows a chat widget and sends the prompt verbatim; ``%gth`` alone opens the
chat; ``%%gth`` sends the cell body, with ``{name}`` replaced by ``str(name)`` from the user
namespace. Options: ``--thread NAME``, ``--new`` (a fresh thread from here on), ``--agent NAME``,
``--transport http|comm``, ``--log`` (the AG-UI event log panel).

IPython reads a line that ends in ``?`` as a help request before any magic sees it, so
``%gth What can you do?`` would look up ``do``. :func:`gth_prompt_lines`, registered with the
extension, rewrites such ``%gth`` lines into the magic's call first; ``obj?`` elsewhere, and
``%gth?`` itself, keep their help.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ..contract.names import DEFAULT_AGENT
from .threads import new_thread_id, notebook_thread_id
from .widget import GthChat, chat

_OPTION = re.compile(r"^\s*--(thread|agent|transport)(?:=|\s+)(\S+)|^\s*--(new|log)\b")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# `%gth prompt?`, optionally assigned (`w = %gth prompt?`), at any indentation.
_HELP_LIKE = re.compile(
    r"^(?P<indent>\s*)(?P<assign>[A-Za-z_][A-Za-z0-9_]*\s*=\s*)?%gth\s(?P<args>.*\?)\s*$"
)


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

    @no_var_expand  # the prompt is sent as typed: `$` and `{}` are the person's text
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


def gth_prompt_lines(lines: list[str]) -> list[str]:
    """An IPython cleanup transform: ``%gth <prompt>?`` lines become the magic's call, so the
    trailing ``?`` reaches the agent instead of asking for help. ``%%gth`` cells are left alone
    (their body is the prompt already)."""
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("%%"):
        return lines
    out: list[str] = []
    for line in lines:
        match = _HELP_LIKE.match(line)
        if match is None or not match.group("args").strip(" ?"):
            out.append(line)
            continue
        args = match.group("args")
        call = f"get_ipython().run_line_magic('gth', {args!r})"
        out.append(f"{match.group('indent')}{match.group('assign') or ''}{call}\n")
    return out


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(GthMagics)
    transforms = ipython.input_transformer_manager.cleanup_transforms
    if gth_prompt_lines not in transforms:
        transforms.append(gth_prompt_lines)


def unload_ipython_extension(ipython: Any) -> None:
    transforms = ipython.input_transformer_manager.cleanup_transforms
    if gth_prompt_lines in transforms:
        transforms.remove(gth_prompt_lines)
