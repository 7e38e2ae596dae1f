"""``gth_status_update``: a one-line progress note for the person watching."""

from __future__ import annotations

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field


class StatusArgs(BaseModel):
    message: str = Field(min_length=1, description="A short status line.")


def make_status_tool() -> BaseTool:
    def gth_status_update(message: str) -> str:
        return message

    return StructuredTool.from_function(
        func=gth_status_update,
        name="gth_status_update",
        description="Show the user a short status line about what you are doing.",
        args_schema=StatusArgs,
    )
