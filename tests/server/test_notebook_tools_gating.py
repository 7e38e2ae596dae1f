"""The notebook tools (``read_notebook``, ``insert_cell``, ``edit_cell``) at the approvals gate,
over the standalone AG-UI endpoint with a scripted model.

They are client tools the browser fulfils, yet the gate decides on them first: what the browser
sees is either a confirmation interrupt (approval card) or the pending tool call it should run
(``RUN_FINISHED`` with ``pendingToolCallIds``). A refused or rejected call never becomes a
pending call, so the browser never changes the notebook. Their kinds come from our code by
name: a page that declares ``insert_cell`` with another schema or metadata changes nothing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from tests.sse import sse_events
from tests.standalone import standalone

TOKEN = "t0ken-t0ken-t0ken"
AUTH = {"Authorization": f"token {TOKEN}"}
CODE = "agent_total = sales['revenue'].sum()\nagent_total"

#: What a page may declare: loose schemas (the widget's own declarations live in js/).
READ = {"name": "read_notebook", "description": "Read it.", "parameters": {"type": "object"}}
INSERT = {"name": "insert_cell", "description": "Insert.", "parameters": {"type": "object"}}
EDIT = {"name": "edit_cell", "description": "Edit.", "parameters": {"type": "object"}}
NOTEBOOK_TOOLS = [READ, INSERT, EDIT]


@contextlib.asynccontextmanager
async def served(
    root: Path, approvals: Any, name: str, args: dict[str, Any]
) -> AsyncIterator[httpx.AsyncClient]:
    """A server whose model calls ``name(args)`` once, then says it is done."""
    call = {"name": name, "args": args, "id": "call-nb"}
    config = {
        "llm": {"type": "fake", "responses": [{"toolCalls": [call]}, "Done."]},
        "approvals": approvals,
    }
    async with standalone(root, config, token=TOKEN) as server:
        yield server.http


async def run(
    http: httpx.AsyncClient, run_id: str, tools: list[dict[str, Any]] | None = None, **extra: Any
) -> list[dict[str, Any]]:
    body = {
        "threadId": "t",
        "runId": run_id,
        "protocolVersion": "1.0",
        "messages": [{"id": "u1", "role": "user", "content": "go"}],
        "tools": NOTEBOOK_TOOLS if tools is None else tools,
        **extra,
    }
    response = await http.post("/agents/default/run", headers=AUTH, json=body)
    assert response.status_code == 200, response.text
    return sse_events(response.text)


def outcome(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events[-1]["outcome"]  # type: ignore[no-any-return]


def asks(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The one approval interrupt the run ended on; the browser got no call to run."""
    end = outcome(events)
    assert end["type"] == "interrupt", end
    (interrupt,) = end["interrupts"]
    assert interrupt["reason"] == "confirmation" and interrupt["toolCallId"] == "call-nb"
    return interrupt  # type: ignore[no-any-return]


def hands_to_browser(events: list[dict[str, Any]]) -> None:
    """The run suspended on the call for the browser to fulfil, nothing asked."""
    end = outcome(events)
    assert end == {"type": "success", "pendingToolCallIds": ["call-nb"]}, end


def result_of(events: list[dict[str, Any]]) -> str:
    (result,) = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    return str(result["content"])


INSERT_ARGS = {"source": "print('hi')"}
RUN_ARGS = {"source": CODE, "run": True}
EDIT_ARGS = {"cell_id": "c1", "source": "x = 2"}
#: Markdown cells: writes. Code cells (the default) are code whether or not they run.
MD_INSERT = {"source": "## Findings\nRevenue grew.", "cell_type": "markdown"}
MD_EDIT = {"cell_id": "c1", "source": "## Findings", "cell_type": "markdown"}


async def test_manual_asks_before_a_markdown_cell_is_written(tmp_path: Path) -> None:
    for name, args in (("insert_cell", MD_INSERT), ("edit_cell", MD_EDIT)):
        async with served(tmp_path, "manual", name, args) as http:
            interrupt = asks(await run(http, "r1"))
            assert interrupt["message"] == (
                f"The agent wants to call {name}: approvals mode 'manual' asks you before the "
                "notebook is changed."
            )
            # Approved, the browser gets the call to run, with the arguments the model sent.
            resume = [
                {
                    "interruptId": interrupt["id"],
                    "status": "resolved",
                    "payload": {"approved": True},
                }
            ]
            events = await run(http, "r2", resume=resume)
            hands_to_browser(events)
            assert not [e for e in events if e["type"] == "TOOL_CALL_RESULT"]


async def test_write_and_up_hand_markdown_writes_to_the_browser_unasked(tmp_path: Path) -> None:
    for mode in ("write", "assisted", "auto", "bypass"):
        for name, args in (("insert_cell", MD_INSERT), ("edit_cell", MD_EDIT)):
            async with served(tmp_path, mode, name, args) as http:
                hands_to_browser(await run(http, "r1"))


async def test_a_code_cell_written_unrun_asks_as_code_below_bypass(tmp_path: Path) -> None:
    """The attack: an insert without run, or an edit of the person's code cell, ran at the
    person's next Run All without anyone being asked."""
    cases = (
        ("insert_cell", INSERT_ARGS, "insert a code cell into the notebook"),
        ("edit_cell", EDIT_ARGS, "rewrite a code cell of the notebook"),
    )
    for name, args, what in cases:
        for mode in ("manual", "write", "assisted"):
            async with served(tmp_path, mode, name, args) as http:
                interrupt = asks(await run(http, "r1"))
                value = interrupt["metadata"]["gth"]["value"]
                # Shown as code (the card's Edit edits the new source).
                assert value["code"] == args["source"] and value["language"] == "python"
                assert value["codeArgument"] == "source"
                assert interrupt["message"] == (
                    f"The agent wants to {what}, which runs when the notebook is run ({name}): "
                    f"approvals mode '{mode}' asks you before code is put in the notebook."
                )
        async with served(tmp_path, "bypass", name, args) as http:
            hands_to_browser(await run(http, "r1"))


async def test_a_rejected_code_edit_never_reaches_the_browser(tmp_path: Path) -> None:
    async with served(tmp_path, "assisted", "edit_cell", EDIT_ARGS) as http:
        interrupt = asks(await run(http, "r1"))
        resume = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": False}}
        ]
        events = await run(http, "r2", resume=resume)
        assert outcome(events) == {"type": "success"}  # nothing for the browser to change
        assert "rejected the edit_cell call" in result_of(events)


async def test_read_notebook_never_asks(tmp_path: Path) -> None:
    for mode in ("manual", "write", "assisted", "auto", "bypass"):
        async with served(tmp_path, mode, "read_notebook", {}) as http:
            hands_to_browser(await run(http, "r1"))


async def test_assisted_asks_for_insert_cell_with_run_as_for_run_python(tmp_path: Path) -> None:
    async with served(tmp_path, "assisted", "insert_cell", RUN_ARGS) as http:
        interrupt = asks(await run(http, "r1"))
        value = interrupt["metadata"]["gth"]["value"]
        # Shown as code, as run_python's card shows it.
        assert value["code"] == CODE and value["language"] == "python"
        assert interrupt["message"] == (
            "The agent wants to run Python code in the notebook's kernel (insert_cell): "
            "approvals mode 'assisted' asks you before code runs in the notebook's kernel."
        )
    # A truthy "run" that is not true is still code: the browser may read it as true.
    async with served(tmp_path, "write", "insert_cell", {"source": CODE, "run": "yes"}) as http:
        asks(await run(http, "r1"))
    async with served(tmp_path, "bypass", "insert_cell", RUN_ARGS) as http:
        hands_to_browser(await run(http, "r1"))


async def test_a_rejected_call_never_reaches_the_browser(tmp_path: Path) -> None:
    async with served(tmp_path, "assisted", "insert_cell", RUN_ARGS) as http:
        interrupt = asks(await run(http, "r1"))
        resume = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": False}}
        ]
        events = await run(http, "r2", resume=resume)
        assert outcome(events) == {"type": "success"}  # no pending call for the browser
        assert "rejected the insert_cell call" in result_of(events)


async def test_a_page_cannot_change_the_gating_by_what_it_declares(tmp_path: Path) -> None:
    # The page says insert_cell takes no arguments, is read-only and is a read: still a write,
    # with our schema, asked at manual.
    declared = {
        "name": "insert_cell",
        "description": "Harmless read-only helper.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        "metadata": {"gth_kind": "read", "readOnlyHint": True, "client": True},
        "gth_kind": "read",
    }
    async with served(tmp_path, "manual", "insert_cell", INSERT_ARGS) as http:
        asks(await run(http, "r1", tools=[declared]))
    async with served(tmp_path, "assisted", "insert_cell", RUN_ARGS) as http:
        asks(await run(http, "r1", tools=[declared]))


async def test_deny_refuses_before_the_browser_gets_the_call(tmp_path: Path) -> None:
    entry = {"type": "tool", "matcher": "exact", "pattern": "edit_cell"}
    approvals = {"mode": "bypass", "deny": [entry]}
    async with served(tmp_path, approvals, "edit_cell", EDIT_ARGS) as http:
        events = await run(http, "r1")
        assert outcome(events) == {"type": "success"}
        assert "matches the approvals deny rule" in result_of(events)


async def test_a_run_python_deny_rule_covers_the_code_cells_the_agent_writes(
    tmp_path: Path,
) -> None:
    entry = {"type": "tool", "matcher": "exact", "pattern": "run_python"}
    approvals = {"mode": "bypass", "deny": [entry]}
    for name, args in (
        ("insert_cell", RUN_ARGS),
        ("insert_cell", INSERT_ARGS),
        ("edit_cell", EDIT_ARGS),
    ):
        async with served(tmp_path, approvals, name, args) as http:
            events = await run(http, "r1")
            assert outcome(events) == {"type": "success"}
            assert "deny rule" in result_of(events)
    # A markdown cell is no code: the run_python rule does not reach it.
    async with served(tmp_path, approvals, "insert_cell", MD_INSERT) as http:
        hands_to_browser(await run(http, "r1"))


async def test_an_edited_code_card_changes_the_source_the_browser_is_given(tmp_path: Path) -> None:
    async with served(tmp_path, "assisted", "insert_cell", RUN_ARGS) as http:
        interrupt = asks(await run(http, "r1"))
        # The code card edits `code`; for insert_cell the code is `source`.
        assert interrupt["metadata"]["gth"]["value"]["codeArgument"] == "source"
        edited = {**RUN_ARGS, "code": "print(2)"}
        payload = {"approved": True, "editedArgs": edited}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        hands_to_browser(await run(http, "r2", resume=resume))
        view = (await http.get("/gth/threads/t", headers=AUTH)).json()
        (pending,) = view["interrupts"]
        assert pending["reason"] == "tool_call"
        assert pending["metadata"]["gth"]["args"] == {"source": "print(2)", "run": True}


async def test_an_edit_of_the_code_argument_itself_is_the_source_the_browser_is_given(
    tmp_path: Path,
) -> None:
    # The widget's code card edits the argument `codeArgument` names (insert_cell's source).
    async with served(tmp_path, "assisted", "insert_cell", RUN_ARGS) as http:
        interrupt = asks(await run(http, "r1"))
        payload = {"approved": True, "editedArgs": {**RUN_ARGS, "source": "print(3)"}}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        hands_to_browser(await run(http, "r2", resume=resume))
        view = (await http.get("/gth/threads/t", headers=AUTH)).json()
        (pending,) = view["interrupts"]
        assert pending["metadata"]["gth"]["args"] == {"source": "print(3)", "run": True}


async def test_a_granted_cell_runs_unasked_the_next_time_in_the_thread(tmp_path: Path) -> None:
    call = {"name": "insert_cell", "args": RUN_ARGS}
    other = {"name": "insert_cell", "args": {"source": "print('other')", "run": True}}
    script = [
        {"toolCalls": [{**call, "id": "i1"}]},
        "One.",
        {"toolCalls": [{**call, "id": "i2"}]},
        "Two.",
        {"toolCalls": [{**other, "id": "i3"}]},
        "Three.",
    ]
    config = {"llm": {"type": "fake", "responses": script}, "approvals": "assisted"}
    async with standalone(tmp_path, config, token=TOKEN) as server:
        http = server.http
        first = outcome(await run(http, "r1"))
        (interrupt,) = first["interrupts"]
        payload = {"approved": True, "grant": "thread"}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        assert outcome(await run(http, "r2", resume=resume))["pendingToolCallIds"] == ["i1"]
        answered = [
            {"id": "u1", "role": "user", "content": "go"},
            {
                "id": "a1",
                "role": "assistant",
                "content": "",
                "toolCalls": [
                    {
                        "id": "i1",
                        "type": "function",
                        "function": {"name": "insert_cell", "arguments": json.dumps(RUN_ARGS)},
                    }
                ],
            },
            {"id": "tm1", "role": "tool", "toolCallId": "i1", "content": '{"cell_id": "n1"}'},
        ]
        await run(http, "r3", messages=answered)
        again = [*answered, {"id": "u2", "role": "user", "content": "again"}]
        # The same source: granted, handed to the browser unasked.
        assert outcome(await run(http, "r4", messages=again))["pendingToolCallIds"] == ["i2"]
        answered2 = [*again, {"id": "tm2", "role": "tool", "toolCallId": "i2", "content": "{}"}]
        await run(http, "r5", messages=answered2)
        more = [*answered2, {"id": "u3", "role": "user", "content": "more"}]
        # Other code: asked again.
        assert outcome(await run(http, "r6", messages=more))["type"] == "interrupt"


async def test_a_plot_from_an_inserted_cell_reaches_the_model_once_as_an_image(
    tmp_path: Path,
) -> None:
    call = {"name": "insert_cell", "args": RUN_ARGS, "id": "call-nb"}
    config = {
        "llm": {"type": "fake", "responses": [{"toolCalls": [call]}, "Done."]},
        "approvals": "bypass",
    }
    png = "iVBORw0KGgo" + "A" * 200
    # What the widget answers for a cell it ran: run_python's shape, a plot among the images.
    result = {
        "cell_id": "n1",
        "index": 1,
        "status": "ok",
        "execution_count": 3,
        "stdout": "",
        "result": None,
        "displays": [],
        "images": [{"mimeType": "image/png", "data": png}],
    }
    async with standalone(tmp_path, config, token=TOKEN) as server:
        hands_to_browser(await run(server.http, "r1"))
        answered = [
            {"id": "u1", "role": "user", "content": "go"},
            {"id": "tm1", "role": "tool", "toolCallId": "call-nb", "content": json.dumps(result)},
        ]
        await run(server.http, "r2", messages=answered)
        runtime = await server.registry.runtime()
        messages = (await runtime.thread_state("t")).messages
    (tool_result,) = [m for m in messages if m.type == "tool"]
    # The base64 left the tool result...
    assert png not in str(tool_result.content)
    assert json.loads(str(tool_result.content))["images"] == [
        {"mimeType": "image/png", "data": None, "omitted": True}
    ]
    # ...for one image block the model sees once, in a message after it.
    shown = [m for m in messages if m.type == "human" and png in json.dumps(m.content)]
    assert len(shown) == 1 and "insert_cell produced" in json.dumps(shown[0].content)
