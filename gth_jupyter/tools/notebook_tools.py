"""The notebook tools: client tools the browser fulfils, whose schema and kind are ours.

The chat widget declares ``read_notebook``, ``insert_cell`` and ``edit_cell`` when it finds its
notebook on the page (``js/src/tools/notebook.js``) and runs them there, like ``capture_image``.
Unlike other client tools they change the person's notebook, so the approvals gate decides on
them before the browser ever gets the call, and what they are (schema, description, kind) comes
from this module by name, never from the page's declaration (``agent/client_tools.py``):

- ``read_notebook``: a read, never asked;
- ``insert_cell`` / ``edit_cell`` of a markdown cell: writes, asked where the file-writing tools
  are (``manual``); the browser makes what they write load nothing remote;
- ``insert_cell`` / ``edit_cell`` of a code cell: code, gated exactly as ``run_python`` (kind
  ``code``, its ``source`` is the code the rules, the rater and grants read), whether or not the
  call runs it: a code cell the agent wrote runs at the person's next Run All. ``edit_cell``
  says which kind of cell it edits (``cell_type``, default ``code``); the browser refuses an
  edit that calls a code cell markdown, and a rewrite of a ``%gth`` cell below ``bypass``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from gth_jupyter.contract.names import NOTEBOOK_TOOLS
from gth_jupyter.contract.run import ClientToolSpec
from gth_jupyter.tools.kinds import CODE_WHEN_KEY, ToolKind

__all__ = [
    "EDIT_CELL",
    "INSERT_CELL",
    "NOTEBOOK_TOOLS",
    "READ_NOTEBOOK",
    "is_notebook_tool",
    "notebook_kind",
    "notebook_metadata",
    "notebook_spec",
    "own_specs",
]

READ_NOTEBOOK, INSERT_CELL, EDIT_CELL = NOTEBOOK_TOOLS

READ_DESCRIPTION = (
    "Read the notebook this chat is in, as it is on screen (unsaved edits included): each "
    "cell's index, id, type, source and execution count, its outputs summarised (errors with "
    "their name, value and traceback), and which cell is the %gth cell asking. Large notebooks "
    "come in pages: pass next_offset as offset. Read-only."
)
INSERT_DESCRIPTION = (
    "Insert a new cell into the notebook this chat is in, by default right below the asking "
    "%gth cell (after the cells you inserted before), and return its id. With run: true the "
    "cell also runs in the notebook's kernel as if the user ran it, and you get its outputs "
    "as run_python returns them; the user may have to approve it first and can edit it. Name "
    "every variable the code creates with the prefix agent_ (agent_fig, agent_summary) so you "
    "never replace the user's names by accident, and copy a DataFrame before changing it."
)
EDIT_DESCRIPTION = (
    "Replace the source of one cell of the notebook this chat is in (by its id, from "
    'read_notebook or insert_cell). Give cell_type "markdown" when the cell is a markdown '
    "cell (read_notebook shows each cell's type). The change is one undoable step; the cell is "
    "not run. The user may have to approve it first; %gth cells cannot be rewritten."
)


class ReadNotebookArgs(BaseModel):
    include_outputs: bool = Field(default=True, description="Include the cells' outputs.")
    offset: int = Field(default=0, ge=0, description="The first cell's index (next_offset).")
    limit: int | None = Field(default=None, ge=1, description="How many cells at most.")


class InsertCellArgs(BaseModel):
    source: str = Field(description="The new cell's source.")
    cell_type: Literal["code", "markdown"] = Field(default="code", description="The cell type.")
    after: str | None = Field(
        default=None,
        description="The id of the cell to insert after; default: below the asking cell.",
    )
    run: bool = Field(default=False, description="Run the new code cell in the notebook's kernel.")
    justification: str | None = Field(
        default=None, description="Why this cell is needed (shown to whoever approves it)."
    )


class EditCellArgs(BaseModel):
    cell_id: str = Field(min_length=1, description="The id of the cell to change.")
    source: str = Field(description="The cell's new source, in full.")
    cell_type: Literal["code", "markdown"] = Field(
        default="code", description="The type of the cell edited, as read_notebook shows it."
    )


_SPECS: dict[str, tuple[str, type[BaseModel], ToolKind]] = {
    READ_NOTEBOOK: (READ_DESCRIPTION, ReadNotebookArgs, "read"),
    INSERT_CELL: (INSERT_DESCRIPTION, InsertCellArgs, "write"),
    EDIT_CELL: (EDIT_DESCRIPTION, EditCellArgs, "write"),
}


def notebook_spec(name: str) -> ClientToolSpec:
    """What the model is told of the notebook tool ``name``: our description and schema."""
    description, args, _ = _SPECS[name]
    schema = args.model_json_schema()
    schema.pop("title", None)
    return ClientToolSpec(name, description, schema)


def notebook_kind(name: str) -> ToolKind:
    return _SPECS[name][2]


def notebook_metadata(name: str) -> dict[str, Any]:
    """Our metadata keys for ``name`` beyond its kind: a code cell ``insert_cell`` or
    ``edit_cell`` writes is code."""
    if name in (INSERT_CELL, EDIT_CELL):
        return {CODE_WHEN_KEY: {"unless": ["cell_type", "markdown"], "code": "source"}}
    return {}


def own_specs(specs: Sequence[ClientToolSpec]) -> list[ClientToolSpec]:
    """``specs`` with each notebook tool's declaration replaced by ours (same order)."""
    return [notebook_spec(s.name) if s.name in _SPECS else s for s in specs]


def is_notebook_tool(name: object) -> bool:
    return isinstance(name, str) and name in _SPECS
