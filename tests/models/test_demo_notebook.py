"""The offline demo model's notebook phrases, rule by rule (the flows over a real server are in
``tests/server/test_notebook_tools_demo.py``)."""

from __future__ import annotations

import base64
import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from gth_jupyter.models._reply import Reply
from gth_jupyter.models.demo._rules import INTRODUCTION, plan_demo_reply

TOOLS = ["read_notebook", "insert_cell", "edit_cell", "run_python"]


def plan(*messages: BaseMessage, tools: list[str] = TOOLS) -> Reply:
    return plan_demo_reply(list(messages), tools)


def calls(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.args)) for c in reply.tool_calls]


def ran(code: str, result: dict[str, Any], *, call_id: str, status: str = "success") -> list[Any]:
    call = {"name": "run_python", "args": {"code": code}, "id": call_id}
    return [
        AIMessage("", tool_calls=[call]),
        ToolMessage(json.dumps(result), tool_call_id=call_id, name="run_python", status=status),
    ]


def read_result(*cells: dict[str, Any], **extra: Any) -> list[BaseMessage]:
    call = {"name": "read_notebook", "args": {}, "id": "r1"}
    content = json.dumps({"cells": list(cells), **extra})
    return [
        HumanMessage("why did this fail?"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(content, tool_call_id="r1", name="read_notebook"),
    ]


def error_cell(index: int, source: str, ename: str, evalue: str) -> dict[str, Any]:
    output = {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": []}
    return {"index": index, "id": f"c{index}", "source": source, "outputs": [output]}


def test_the_phrases_call_the_tools_only_when_offered() -> None:
    for text in ("why did this fail?", "Why did the cell above fail?", "what went wrong?"):
        assert calls(plan(HumanMessage(text))) == [("read_notebook", {"include_outputs": True})]
        without = plan(HumanMessage(text), tools=["run_python"])
        assert not without.tool_calls and "read_notebook" in without.text
    assert plan(HumanMessage("hello")).text == INTRODUCTION
    assert "why did this fail?" in INTRODUCTION and "put that in a cell" in INTRODUCTION


def test_put_in_a_cell_takes_the_code_as_the_person_edited_it() -> None:
    edited = {
        "userEdited": "the user edited this call before it ran; it ran with the arguments "
        '{"code": "print(2)"}, not the ones you sent. Do not re-issue your original call.',
        "status": "ok",
    }
    history = [
        *ran("print(1)", edited, call_id="p1"),
        *ran("1/0", {"status": "error"}, call_id="p2", status="error"),  # failed: not kept
        HumanMessage("put that in a cell"),
    ]
    assert calls(plan(*history)) == [("insert_cell", {"source": "print(2)", "run": True})]


def test_put_in_a_cell_with_nothing_run_inserts_a_small_example() -> None:
    ((name, args),) = calls(plan(HumanMessage("Insert it as a new cell please")))
    assert name == "insert_cell" and args["run"] is True and "agent_" in args["source"]
    compile(args["source"], "<example>", "exec")  # real Python


def test_without_insert_cell_the_code_is_shown_to_paste() -> None:
    history = [*ran("print(1)", {"status": "ok"}, call_id="p1"), HumanMessage("put that in a cell")]
    reply = plan(*history, tools=["run_python"])
    assert not reply.tool_calls and "```python\nprint(1)\n```" in reply.text


def test_the_failing_cell_is_the_last_one_above_the_asking_cell() -> None:
    reply = plan(
        *read_result(
            error_cell(0, "import missing_pkg", "ModuleNotFoundError", "No module named 'nope'"),
            error_cell(1, "print(x)", "NameError", "name 'x' is not defined"),
            {"index": 2, "id": "c2", "source": "%gth why?", "asking": True},
            error_cell(3, "1/0", "ZeroDivisionError", "division by zero"),
        )
    )
    assert "index 1 (`c1`) failed with **NameError" in reply.text and "`x`" in reply.text


def test_a_missing_module_is_explained_with_the_install_command() -> None:
    cell = error_cell(0, "import nope", "ModuleNotFoundError", "No module named 'nope.sub'")
    assert "`%pip install nope`" in plan(*read_result(cell)).text


def test_a_notebook_without_errors_is_said_so() -> None:
    reply = plan(*read_result({"index": 0, "id": "c0", "source": "1 + 1", "outputs": []}))
    assert "found no cell with an error output" in reply.text and "(1 cells)" in reply.text


def test_a_rejected_or_failed_insert_says_the_notebook_is_unchanged() -> None:
    call = {"name": "insert_cell", "args": {"source": "x", "run": True}, "id": "i1"}
    rejected = ToolMessage(
        "The user rejected the insert_cell call; it did not run.",
        tool_call_id="i1",
        name="insert_cell",
        status="error",
    )
    reply = plan(HumanMessage("put that in a cell"), AIMessage("", tool_calls=[call]), rejected)
    assert "unchanged" in reply.text
    failed = ToolMessage(
        json.dumps(
            {"cellId": "n1", "status": "error", "error": {"ename": "ValueError", "evalue": "bad"}}
        ),
        tool_call_id="i1",
        name="insert_cell",
    )
    reply = plan(HumanMessage("put that in a cell"), AIMessage("", tool_calls=[call]), failed)
    assert "failed with **ValueError: bad**" in reply.text


def test_the_plot_of_an_inserted_cell_gets_the_inserts_follow_up_not_a_photos() -> None:
    # The image middleware shows the model an inserted cell's plot as a user message after the
    # insert_cell result; the demo answers for the cell (as for run_python's plot).
    call = {"name": "insert_cell", "args": {"source": "plt.show()", "run": True}, "id": "i1"}
    result = {"cell_id": "n1", "index": 4, "status": "ok", "execution_count": 9, "images": []}
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
    plot = HumanMessage(
        [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}]
    )
    reply = plan(
        HumanMessage("put that in a cell"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(json.dumps(result), tool_call_id="i1", name="insert_cell"),
        plot,
    )
    assert not reply.tool_calls
    assert "Done: cell `n1` (index 4) is in your notebook" in reply.text, reply.text
    assert "ran as `[9]`" in reply.text and "Its plot is in the cell's output" in reply.text
    assert "photo" not in reply.text
