"""``%gth`` and ``%%gth``: talk to the agent from a cell.

``%gth <prompt>`` shows a chat widget and sends the prompt verbatim; ``%gth`` alone opens the
chat; ``%%gth`` sends the cell body, with ``{name}`` replaced by ``str(name)`` from the user
namespace. Options: ``--thread NAME``, ``--new`` (a fresh thread from here on), ``--agent NAME``,
``--transport http|comm``, ``--log`` (the AG-UI event log panel), ``--headless`` (run the turn
in the kernel even where a front end would show the widget), ``--explain`` (ask why the cell
above failed), ``--usage`` (the thread's account: each turn's tokens and cost).

Where no front end renders a widget (``front_end.is_headless``: nbconvert, papermill, nbclient,
``GTH_JUPYTER_HEADLESS=1``) the turn runs in the kernel and the cell keeps its static copy
(``headless/``); no widget is made.

IPython reads a line that ends in ``?`` as a help request before any magic sees it, so
``%gth What can you do?`` would look up ``do``. :func:`gth_prompt_lines`, registered with the
extension, rewrites such ``%gth`` lines into the magic's call first; ``obj?`` elsewhere, and
``%gth?`` itself, keep their help.
"""

from __future__ import annotations

import re
import sys
import traceback
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ...contract.names import DEFAULT_AGENT
from ..host.threads import new_thread_id, notebook_thread_id
from . import front_end
from .widget import GthChat, chat

_OPTION = re.compile(
    r"^\s*--(thread|agent|transport)(?:=|\s+)(\S+)|^\s*--(new|log|headless|explain|usage)\b"
)
#: What ``--explain`` asks.
EXPLAIN_PROMPT = "Why did the cell above fail?"
#: How much of the failing cell and its traceback an explanation carries.
_EXPLAIN_CHARS = 6000
HEADLESS_CHAT_NOTE = (
    "gth: no chat widget in a headless run (nothing here renders one). "
    "`%gth <prompt>` or `%%gth` runs a turn and keeps its answer in the cell."
)
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
    headless: bool = False
    explain: bool = False
    usage: bool = False


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
    def gth(self, line: str, cell: str | None = None) -> GthChat | None:
        options = parse_line(line)
        if cell is not None:
            extra = interpolate(cell, self.shell.user_ns if self.shell else {}).strip()
            options.prompt = f"{options.prompt}\n{extra}".strip() if options.prompt else extra
        headless = front_end.is_headless(options.headless)
        if options.usage:
            self._usage(options, headless)
            return None
        if options.explain:
            # Where no notebook front end can read the cells, the kernel's own record says
            # what failed.
            context = "" if front_end.asking_cell_id() and not headless else last_failure()
            options.prompt = explain_prompt(options.prompt, context)
        if headless:
            self._headless(options)
            return None
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

    def _usage(self, options: Options, headless: bool) -> None:
        """The thread's account as a table: per turn its prompt, model, tokens and cost."""
        from IPython.display import display

        from ..host.account import thread_account

        if options.thread:
            thread = options.thread
        elif headless:
            from ..headless.run import headless_thread_id

            thread = headless_thread_id()
        else:
            thread = self.current_thread or notebook_thread_id()
        display(thread_account(thread, options.agent), raw=True)  # type: ignore[no-untyped-call]

    def _headless(self, options: Options) -> None:
        """The turn in the kernel, its static copy as the cell's output; no widget."""
        from ..headless.run import new_headless_thread, run_headless

        if options.new:
            new_headless_thread()
        if not options.prompt:
            from IPython.display import display

            note = {"text/plain": HEADLESS_CHAT_NOTE, "text/markdown": HEADLESS_CHAT_NOTE}
            display(note, raw=True)  # type: ignore[no-untyped-call]
            return
        run_headless(options.prompt, thread=options.thread, agent=options.agent)


def explain_prompt(prompt: str, context: str) -> str:
    """``--explain``'s question, the person's own words after it, then what failed."""
    text = f"{EXPLAIN_PROMPT} {prompt}".strip()
    return f"{text}\n\n{context}" if context else text


def last_failure() -> str:
    """The kernel's last exception and the cell run before this one, for ``--explain`` where
    no notebook front end can show the agent the cells ("" when the kernel saw no error)."""
    from ...contract.text import strip_ansi  # loaded when --explain asks, not by %load_ext

    shell = _shell()
    value = getattr(sys, "last_value", None)
    if not isinstance(value, BaseException):
        return ""
    lines = traceback.format_exception(type(value), value, getattr(sys, "last_traceback", None))
    trace = strip_ansi("".join(lines)).strip()
    parts = []
    history = shell.user_ns.get("In") if shell is not None else None
    if isinstance(history, list) and len(history) >= 2 and str(history[-2]).strip():
        parts.append(f"The cell run before this one:\n```python\n{_cap(str(history[-2]))}\n```")
    parts.append(f"The kernel's last error:\n```\n{_cap(trace)}\n```")
    return "\n\n".join(parts)


def _cap(text: str) -> str:
    from ...contract.text import cap

    return cap(text, _EXPLAIN_CHARS).strip()


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


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
