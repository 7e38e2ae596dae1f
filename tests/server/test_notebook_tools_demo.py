"""The offline demo model's notebook flows, run end to end over the standalone AG-UI endpoint:
the widget's side (declaring the notebook tools, fulfilling their calls) is played by the test.

- "why did this fail?" calls ``read_notebook``, and from the notebook the browser returns it
  explains the failing cell's ``KeyError``: the missing key, where it is looked up, the fix;
- "put that in a cell" calls ``insert_cell`` with ``run: true`` and the code ``run_python`` last
  ran (asked first at ``assisted``, as code), then reports the new cell from the result;
- ``%gth --explain``'s prompt is answered from ``read_notebook`` when offered, else from the
  kernel's last error the magic appends.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from tests.server.test_notebook_tools_gating import AUTH, NOTEBOOK_TOOLS, TOKEN
from tests.sse import sse_events
from tests.standalone import standalone

EXPLAIN = "Why did the cell above fail?"
#: A read_notebook result as the widget summarises the notebook (js/src/tools/notebook_summary.js).
NOTEBOOK = {
    "path": "analysis.ipynb",
    "cell_count": 3,
    "offset": 0,
    "asking_cell": {"id": "c3", "index": 2},
    "cells": [
        {
            "index": 0,
            "id": "c1",
            "type": "code",
            "source": "sales = pd.read_csv('sales.csv')\nsales.head()",
            "execution_count": 1,
            "outputs": [{"type": "execute_result", "text": "  month  Revenue\n0   Jan       10"}],
        },
        {
            "index": 1,
            "id": "c2",
            "type": "code",
            "source": "sales['revenue'].sum()",
            "execution_count": 2,
            "outputs": [
                {
                    "type": "error",
                    "ename": "KeyError",
                    "evalue": "'revenue'",
                    "traceback": "KeyError                                  Traceback (most "
                    "recent call last)\nCell In[2], line 1\n----> 1 sales['revenue'].sum()\n"
                    "KeyError: 'revenue'",
                }
            ],
        },
        {
            "index": 2,
            "id": "c3",
            "type": "code",
            "source": "%gth why did this fail?",
            "execution_count": 3,
            "asking": True,
            "outputs": [],
        },
    ],
    "next_offset": None,
}


@pytest_asyncio.fixture
async def http(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    config = {"llm": {"type": "demo", "tokenDelayMs": 0}, "approvals": "assisted"}
    async with standalone(tmp_path, config, token=TOKEN) as server:
        yield server.http


class Thread:
    """One conversation as the widget keeps it: the messages it resends with every run."""

    def __init__(self, http: httpx.AsyncClient, tools: list[dict[str, Any]]) -> None:
        self.http = http
        self.tools = tools
        self.messages: list[dict[str, Any]] = []
        self.runs = 0

    async def run(self, **extra: Any) -> list[dict[str, Any]]:
        self.runs += 1
        body = {
            "threadId": "t",
            "runId": f"r{self.runs}",
            "protocolVersion": "1.0",
            "messages": self.messages,
            "tools": self.tools,
            **extra,
        }
        response = await self.http.post("/agents/default/run", headers=AUTH, json=body)
        assert response.status_code == 200, response.text
        events = sse_events(response.text)
        self._keep(events)
        return events

    def _keep(self, events: list[dict[str, Any]]) -> None:
        """The assistant's text and tool calls, as the widget's agent records them."""
        for event in events:
            if event["type"] == "TEXT_MESSAGE_START":
                self.messages.append({"id": event["messageId"], "role": "assistant", "content": ""})
            elif event["type"] == "TEXT_MESSAGE_CONTENT":
                self.messages[-1]["content"] += event["delta"]
            elif event["type"] == "TOOL_CALL_START":
                call = {
                    "id": event["toolCallId"],
                    "type": "function",
                    "function": {"name": event["toolCallName"], "arguments": ""},
                }
                parent = event.get("parentMessageId")
                owner = next((m for m in self.messages if m["id"] == parent), None)
                if owner is None:
                    owner = {"id": parent or call["id"], "role": "assistant", "content": ""}
                    self.messages.append(owner)
                owner.setdefault("toolCalls", []).append(call)
            elif event["type"] == "TOOL_CALL_ARGS":
                call = self._call(event["toolCallId"])
                call["function"]["arguments"] += event["delta"]

    def _call(self, call_id: str) -> dict[str, Any]:
        for message in self.messages:
            for call in message.get("toolCalls", []):
                if call["id"] == call_id:
                    return call  # type: ignore[no-any-return]
        raise AssertionError(call_id)

    def say(self, text: str) -> None:
        self.messages.append({"id": f"u{len(self.messages)}", "role": "user", "content": text})

    def answer(self, call_id: str, content: Any) -> None:
        text = content if isinstance(content, str) else json.dumps(content)
        self.messages.append(
            {
                "id": f"tm{len(self.messages)}",
                "role": "tool",
                "toolCallId": call_id,
                "content": text,
            }
        )

    def args(self, call_id: str) -> dict[str, Any]:
        return json.loads(self._call(call_id)["function"]["arguments"])  # type: ignore[no-any-return]


def pending_call(events: list[dict[str, Any]]) -> str:
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "success", outcome
    (call_id,) = outcome["pendingToolCallIds"]
    return call_id  # type: ignore[no-any-return]


def called(events: list[dict[str, Any]]) -> str:
    (start,) = [e for e in events if e["type"] == "TOOL_CALL_START"]
    return str(start["toolCallName"])


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


async def test_why_did_this_fail_reads_the_notebook_and_explains_the_key_error(http) -> None:
    thread = Thread(http, NOTEBOOK_TOOLS)
    thread.say("why did this fail?")
    events = await thread.run()
    call_id = pending_call(events)  # read_notebook is a read: handed to the browser unasked
    assert called(events) == "read_notebook"
    assert thread.args(call_id) == {"include_outputs": True}

    thread.answer(call_id, NOTEBOOK)
    answer = text_of(await thread.run())
    assert "The cell at index 1 (`c2`) failed with **KeyError: 'revenue'**" in answer
    assert "`'revenue'` in `sales`" in answer  # where the key is looked up
    assert "`sales['Revenue']`" in answer  # the spelling the notebook's output shows


async def test_put_that_in_a_cell_inserts_and_runs_the_last_run_python_code(http) -> None:
    code = "agent_total = sales['Revenue'].sum()\nprint(agent_total)"
    thread = Thread(http, NOTEBOOK_TOOLS)
    thread.say("what is the total revenue?")
    thread.messages.append(
        {
            "id": "a1",
            "role": "assistant",
            "content": "",
            "toolCalls": [
                {
                    "id": "p1",
                    "type": "function",
                    "function": {"name": "run_python", "arguments": json.dumps({"code": code})},
                }
            ],
        }
    )
    thread.answer("p1", {"status": "ok", "stdout": "10\n", "result": None, "images": []})
    thread.say("put that in a cell")
    events = await thread.run()
    # Code in the kernel: asked at assisted, with the code on the card, before the browser runs it.
    (interrupt,) = events[-1]["outcome"]["interrupts"]
    assert interrupt["reason"] == "confirmation"
    assert interrupt["metadata"]["gth"]["value"]["code"] == code
    call_id = interrupt["toolCallId"]
    assert called(events) == "insert_cell"
    assert thread.args(call_id) == {"source": code, "run": True}

    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    assert pending_call(await thread.run(resume=resume)) == call_id

    # insert_cell's result as the widget gives it: the new cell, and run_python's shape.
    result = {
        "cell_id": "new-1",
        "index": 3,
        "status": "ok",
        "execution_count": 4,
        "stdout": "10\n",
        "stderr": "",
        "result": None,
        "displays": [],
        "images": [],
    }
    thread.answer(call_id, result)
    answer = text_of(await thread.run())
    assert "cell `new-1` (index 3) is in your notebook, and it ran as `[4]`" in answer
    assert "10" in answer


async def test_explain_uses_read_notebook_when_the_widget_offers_it(http) -> None:
    thread = Thread(http, NOTEBOOK_TOOLS)
    thread.say(EXPLAIN)
    events = await thread.run()
    pending_call(events)
    assert called(events) == "read_notebook"


async def test_explain_without_a_notebook_reads_the_error_the_magic_appended(http) -> None:
    # What `%gth --explain` sends where no notebook front end is there (magics.explain_prompt).
    prompt = (
        f"{EXPLAIN}\n\nThe cell run before this one:\n```python\nsales['revenue'].sum()\n```\n\n"
        "The kernel's last error:\n```\nTraceback (most recent call last):\n"
        "  File \"<ipython-input-2>\", line 1, in <module>\n    sales['revenue'].sum()\n"
        "KeyError: 'revenue'\n```"
    )
    thread = Thread(http, [])
    thread.say(prompt)
    events = await thread.run()
    assert not [e for e in events if e["type"] == "TOOL_CALL_START"]
    answer = text_of(events)
    assert "**KeyError: 'revenue'**" in answer and "`'revenue'` in `sales`" in answer
    assert "sales.columns" in answer
