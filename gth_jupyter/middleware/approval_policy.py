"""What an approvals mode does with a call, before anyone (rater or person) is asked.

The modes, as Gaunt Sloth 2 defines them (docs "Shell tool & approvals"):

============  ==========================================================================
``manual``    Reads run (the read-only file tools, ``gth_grep``). Everything else asks the
              person: shell commands, file changes, custom and dev tools, web fetches, MCP
              (kind ``mcp``) and Python-config tools. No rater.
``write``     As ``manual``, but the built-in file tools that change files run too.
``assisted``  Only ``run_shell_command`` is gated: the rater rates each command; "safe"
              runs, anything else asks the person. Every other tool runs. (The default.)
``auto``      As ``assisted``, but a command rated "destructive" goes back to the agent as
              an error to narrow or justify, a few times, before the person is asked;
              "catastrophic" and "attack" ratings, and commands naming a host, ask at once.
``bypass``    Nothing is gated or rated; only ``deny`` entries still refuse.
============  ==========================================================================

``run_python`` (kind ``code``: code run in the notebook's live kernel) is a code-execution
request: ``manual``, ``write`` and ``assisted`` ask the person; ``auto`` has the rater rate the
code as it rates a shell command (same verdicts, same outcomes); ``bypass`` runs it. Its
``tool`` entries (``{"type": "tool", "matcher": "exact", "pattern": "run_python"}``) apply at
every mode (``deny``, ``escalate``, ``allow``), and ``deny`` at ``bypass`` too. Code that will
run in the kernel later is code too, gated the same way under its own tool's name: a code cell
``insert_cell`` or ``edit_cell`` writes (run or not: the next Run All runs it), and a file the
file tools write under the name of an installed module (``pandas.py``). A ``deny`` or
``escalate`` entry written for ``run_python`` reaches them as well (the code runs in the same
kernel); an ``allow`` entry must name the tool itself.

The lists come before the mode: a ``deny`` entry of any type (``shell``, ``tool``, ``mcpTool``)
refuses what it matches at every mode, ``bypass`` included, and an ``escalate`` entry asks the
person without a rating at every mode but ``bypass``, whatever the tool's kind. Only then does a
tool the mode does not gate run: the read-only tools, those that change nothing outside the
conversation (checklist, status line, UI surface), and at ``assisted``/``auto`` every tool but
the shell and ``run_python``. ``allow`` runs a gated call (a ``rate``-d allow entry is still
shown to the rater at ``assisted``/``auto``: only "catastrophic" or "attack" then asks).
Client-run tools never reach the gate, except the notebook tools (``read_notebook``, a read;
``insert_cell`` and ``edit_cell``, writes of a markdown cell and code otherwise): the gate
decides on them before the browser gets the call, with the kind our code gives them by name.

A tool's kind comes from the code that built it, never from what a tool source declares (see
``tools/_base.py``): an MCP tool is ``mcp`` whatever its annotations say, and its hints are
read only by the ``hint`` matcher of ``mcpTool`` entries.

Choices where the reference is silent, taken in the safe direction:

- a tool the gate knows nothing about (no kind) counts as "other": gated at ``manual``/``write``;
- a ``deny`` entry of any type refuses at ``bypass`` (Gaunt Sloth keeps only ``shell`` ones
  there), and ``tool``/``mcpTool`` entries are compared at every mode, not only where the mode
  gates the tool: a rule written for a tool always reaches it;
- a failing custom-tool validation asks the person at *every* mode, ``bypass`` included (Gaunt
  Sloth's tool asks independently of the mode); with nobody to ask it is refused;
- an "attack" rating asks the person (with the rater's warning) rather than ending the run, and
  is refused where nobody can answer;
- an answer the gate cannot read is a rejection.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from gth_jupyter.config.schema import ApprovalEntry, ApprovalMode, ApprovalsConfig
from gth_jupyter.middleware.approval_rules import ListName, RuleHit, Subject, match_rules

__all__ = ["Action", "Verdict", "decide", "gate_reason", "is_gated"]

Action = Literal["run", "deny", "ask", "rate", "rate_allowed"]

_FREE_KINDS = frozenset({"inert", "read"})
RUN_PYTHON = "run_python"
#: The tools whose writes change a notebook rather than a file, for the approval message.
_NOTEBOOK_WRITES = frozenset({"insert_cell", "edit_cell"})
_MODULE_WRITES = frozenset({"write_file", "edit_file", "move_file"})
_ALL_LISTS: tuple[ListName, ...] = ("deny", "escalate", "allow")
_ASKING: tuple[ListName, ...] = ("deny", "escalate")
_RANK: dict[ListName, int] = {name: rank for rank, name in enumerate(_ALL_LISTS)}


@dataclass(frozen=True)
class Verdict:
    """The gate's first answer: ``action``, and the rule that decided it, if one did."""

    action: Action
    hit: RuleHit | None = None


def is_gated(mode: ApprovalMode, kind: str) -> bool:
    """Whether ``mode`` stops a tool of ``kind`` (see the module docstring)."""
    if kind in _FREE_KINDS or mode == "bypass":
        return False
    if kind in ("shell", "code"):
        return True
    if mode == "manual":
        return True
    if mode == "write":
        return kind != "write"
    return False


def _default_rate(entry: ApprovalEntry) -> bool:
    if entry.rate is not None:
        return entry.rate
    return not (entry.type == "shell" and entry.matcher == "exact")


def decide(approvals: ApprovalsConfig, subject: Subject, kind: str) -> Verdict:
    """The lists' and the mode's answer for one call; ``rate`` means "ask the rater"."""
    mode: ApprovalMode = approvals.mode or "assisted"
    if kind == "code":
        return _decide_code(approvals, subject, mode)
    # The lists first, so no kind (a tool's own claim, or a mode that does not gate it) can
    # put a call past a deny or escalate entry the user wrote for it.
    hit = match_rules(approvals, subject, ("deny",) if mode == "bypass" else _ALL_LISTS)
    if hit is not None and hit.list == "deny":
        return Verdict("deny", hit)
    if hit is not None and hit.list == "escalate":
        return Verdict("ask", hit)
    if not is_gated(mode, kind):
        return Verdict("run")
    shell = subject.kind == "shell"
    rated_mode = mode in ("assisted", "auto")
    if hit is not None:  # allow
        if shell and rated_mode and _default_rate(hit.entry):
            return Verdict("rate_allowed", hit)
        return Verdict("run", hit)
    return Verdict("rate" if shell and rated_mode else "ask")


def _decide_code(approvals: ApprovalsConfig, subject: Subject, mode: ApprovalMode) -> Verdict:
    """``run_python``: its entries at every mode, then ask (the rater first at ``auto``)."""
    lists: tuple[ListName, ...] = ("deny",) if mode == "bypass" else _ALL_LISTS
    hit = match_rules(approvals, subject, lists)
    if subject.name != RUN_PYTHON:
        # Code run another way (a code cell, a module file) is still code the kernel runs: what
        # the person refused or wants asked for run_python holds for it too.
        restrictive: tuple[ListName, ...] = ("deny",) if mode == "bypass" else _ASKING
        alias = match_rules(approvals, replace(subject, name=RUN_PYTHON), restrictive)
        if alias is not None and (hit is None or _RANK[alias.list] < _RANK[hit.list]):
            hit = alias
    if hit is not None and hit.list == "deny":
        return Verdict("deny", hit)
    if mode == "bypass":
        return Verdict("run")
    if hit is not None and hit.list == "escalate":
        return Verdict("ask", hit)
    if hit is not None:  # allow: runs, unless the entry asks to be rated and a rater is there
        rated = mode == "auto" and hit.entry.rate is True
        return Verdict("rate_allowed" if rated else "run", hit)
    return Verdict("rate" if mode == "auto" else "ask")


def gate_reason(mode: ApprovalMode, kind: str, tool: str = "") -> str:
    """Why ``mode`` asks about a call of ``tool``, of ``kind``, for the approval message."""
    if kind == "shell":
        return f"approvals mode '{mode}' asks you before every shell command"
    if kind == "write" and tool in _NOTEBOOK_WRITES:
        return f"approvals mode '{mode}' asks you before the notebook is changed"
    if kind == "write":
        return f"approvals mode '{mode}' asks you before any file is changed"
    if kind == "code" and tool in _NOTEBOOK_WRITES:
        return f"approvals mode '{mode}' asks you before code is put in the notebook"
    if kind == "code" and tool in _MODULE_WRITES:
        return f"approvals mode '{mode}' asks you before code the kernel imports is written"
    if kind == "code":
        return f"approvals mode '{mode}' asks you before code runs in the notebook's kernel"
    if kind == "mcp":
        return f"approvals mode '{mode}' asks you before MCP tools run"
    return f"approvals mode '{mode}' asks you before tools that run commands or reach out"
