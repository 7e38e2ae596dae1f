"""``gth_checklist``: a planning checklist the model replaces whole on every call.

Arguments ``{items: [{content, status: pending | in_progress | completed}]}``; more than one
``in_progress`` item is rejected and the list left unchanged. The list lives in the tool object,
one per agent, as in Gaunt Sloth.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from gth_jupyter.tools.kinds import KIND_KEY

Status = Literal["pending", "in_progress", "completed"]
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class ChecklistItem(BaseModel):
    content: str = Field(min_length=1, description="What to do.")
    status: Status = Field(description="pending, in_progress (at most one) or completed.")


class ChecklistArgs(BaseModel):
    items: list[ChecklistItem] = Field(description="The whole checklist; replaces the last one.")


def render(items: list[ChecklistItem]) -> str:
    if not items:
        return "Checklist cleared (no items)."
    done = sum(1 for i in items if i.status == "completed")
    lines = [f"Checklist ({done}/{len(items)} completed):"]
    lines += [f"{_MARKS[i.status]} {i.content}" for i in items]
    return "\n".join(lines)


def make_checklist_tool() -> BaseTool:
    state: list[ChecklistItem] = []

    def gth_checklist(items: list[ChecklistItem]) -> str:
        active = sum(1 for i in items if i.status == "in_progress")
        if active > 1:
            return (
                f'Rejected: {active} items are "in_progress" but only one may be in progress '
                "at a time. The checklist was not changed."
            )
        state[:] = [ChecklistItem.model_validate(i) for i in items]
        return render(state)

    tool = StructuredTool.from_function(
        func=gth_checklist,
        name="gth_checklist",
        description=(
            "Keep a checklist for multi-step work. Send the whole list each time; it replaces "
            "the previous one. Mark at most one item in_progress."
        ),
        args_schema=ChecklistArgs,
    )
    tool.metadata = {KIND_KEY: "inert"}
    return tool
