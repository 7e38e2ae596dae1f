"""The answers a headless ``%gth`` turn gives to what only a browser or a person could answer.

A run with no page attached must never hang on an interrupt, so each pending one is answered at
once, the way a client answers (``resume[]`` entries), with a note for the cell's output:

- a browser tool's call gets an error result the model reads (:data:`NO_BROWSER`);
- an approval that would ask a person is refused (:data:`NO_PERSON`), and the note says how to
  allow the call in the configuration (:func:`allow_hint`);
- anything else is cancelled.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import ag_ui.core as agui

from ...contract.pending import PendingInterrupt

__all__ = ["NO_BROWSER", "NO_PERSON", "allow_hint", "answer_pending"]

NO_BROWSER = (
    "no browser is attached to this notebook run (it runs headless: nbconvert --execute, "
    "papermill, nbclient or GTH_JUPYTER_HEADLESS=1), so the browser tool {name} cannot run. "
    "Tell the user; it works when the notebook runs in JupyterLab, Notebook 7 or VS Code."
)
NO_PERSON = (
    "nobody can approve tool calls in a headless notebook run, so this call was refused "
    "without asking"
)


def allow_hint(value: Mapping[str, Any]) -> str:
    """How to let a refused call run next time, in the configuration's own words."""
    name = str(value.get("toolName") or "the tool")
    command = value.get("command")
    if isinstance(command, str) and command and "code" not in value:
        entry = {"type": "shell", "matcher": "exact", "pattern": command}
    else:
        entry = {"type": "tool", "matcher": "exact", "pattern": name}
    return (
        f"To let `{name}` run in a headless run, add `{json.dumps(entry)}` to `approvals.allow` "
        'in `.gsloth.config.json` (or set the approvals mode to `"bypass"`).'
    )


def answer_pending(pending: Sequence[PendingInterrupt]) -> tuple[list[agui.ResumeEntry], list[str]]:
    """The answers nobody could give in person: an error for each browser tool, a rejection for
    each approval; and the note each leaves in the output."""
    entries: list[agui.ResumeEntry] = []
    notes: list[str] = []
    for item in pending:
        value = item.value if isinstance(item.value, Mapping) else {}
        if item.client_tool:
            name = item.tool_name or "a browser tool"
            payload: Any = json.dumps({"error": NO_BROWSER.format(name=name)})
            notes.append(
                f"`{name}` runs in the browser, and no browser is attached to this notebook run, "
                "so the call got an error. Run the cell in JupyterLab, Notebook 7 or VS Code to "
                "use it."
            )
        elif item.kind == "approval":
            payload = {"approved": False, "message": NO_PERSON}
            why = _reason(str(value.get("message") or ""), item.tool_name or "")
            said = f" ({why})" if why else ""
            notes.append(
                f"Refused without asking: `{item.tool_name or 'a tool'}` needs approval{said}, "
                f"and nobody can approve in a headless run. {allow_hint(value)}"
            )
        else:
            payload = None
            notes.append("An interrupt nobody can answer in a headless run was cancelled.")
        if payload is None:
            entries.append(agui.ResumeEntry(interrupt_id=item.id, status="cancelled"))
        else:
            entries.append(
                agui.ResumeEntry(interrupt_id=item.id, status="resolved", payload=payload)
            )
    return entries, notes


def _reason(message: str, name: str) -> str:
    """Why the gate asked, without the "The agent wants to …" the approval card leads with."""
    for marker in (f"({name}): ", f"call {name}: "):
        if marker in message:
            message = message.split(marker, 1)[1]
            break
    return message.strip().rstrip(".")
