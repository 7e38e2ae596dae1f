"""``gth_status_update``: a one-line progress note for the person watching.

Gaunt Sloth's tool takes a bare string, which LangChain shows the model as ``{"input": text}``;
``message`` is accepted too. The line is the tool's result, which the chat shows.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool
from pydantic import AliasChoices, BaseModel, Field

from gth_jupyter.tools._base import make_tool


class StatusArgs(BaseModel):
    input: str = Field(
        min_length=1,
        description="A short status line.",
        validation_alias=AliasChoices("input", "message"),
    )


def make_status_tool() -> BaseTool:
    async def gth_status_update(input: str) -> str:
        return input

    return make_tool(
        "gth_status_update",
        "Show the user a short status line about what you are doing.",
        StatusArgs,
        gth_status_update,
        "inert",
    )
