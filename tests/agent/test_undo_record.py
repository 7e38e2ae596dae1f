"""What a notebook write replaced (issue 20): the page answers ``edit_cell`` with ``undo``
(the cell's whole source before), which is kept with the call in the thread, given back on
that tool message by the thread view, and never sent to the model."""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage, ToolMessage

from gth_jupyter.agui.history import thread_view
from gth_jupyter.contract.resume import ClientToolAnswer, Resume
from gth_jupyter.contract.run import ClientToolSpec, RunEnd, RunPlan
from gth_jupyter.contract.undo import split_undo
from gth_jupyter.models import FakeChatModel
from tests.agent.test_runtime import collect

EDIT = ClientToolSpec("edit_cell", "edit a cell")
BEFORE = "df = load('2025.csv')  # the person's whole cell, " + "x" * 2000


async def test_an_edits_before_is_kept_with_the_thread_and_never_sent_to_the_model(
    make_runtime,
) -> None:
    runtime = make_runtime(
        [
            {"toolCalls": [{"name": "edit_cell", "args": {"cell_id": "c3", "source": "df = 1"}}]},
            "Done.",
        ]
    )
    end = (
        await collect(runtime, RunPlan("t", messages=[HumanMessage("fix it")], client_tools=[EDIT]))
    )[-1]
    assert isinstance(end, RunEnd)
    (pending,) = end.pending
    result = {"cell_id": "c3", "index": 3, "added": 1, "removed": 1, "diff": ["- a", "+ b"]}
    answer = ClientToolAnswer(payload=json.dumps({**result, "undo": {"before": BEFORE}}))
    resume = Resume({pending.id: answer.to_resume_value()})
    assert (await collect(runtime, RunPlan("t", resume=resume, client_tools=[EDIT])))[-1] == RunEnd(
        []
    )

    model = runtime.model
    assert isinstance(model, FakeChatModel)
    sent = json.dumps([m.content for m in model.received[-1]])
    assert "2025.csv" not in sent and "undo" not in sent  # the model got the diff alone
    (tool,) = [m for m in model.received[-1] if isinstance(m, ToolMessage)]
    assert json.loads(str(tool.content)) == result

    view = await thread_view(runtime, "t")
    (kept,) = [m for m in view["messages"] if m["role"] == "tool"]
    assert kept["undo"] == {"before": BEFORE}
    assert json.loads(kept["content"]) == result


def test_only_a_write_with_a_readable_undo_is_split() -> None:
    plain = json.dumps({"cell_id": "c", "undo": {"before": "x"}})
    assert split_undo("run_python", plain) == (plain, None)  # not a notebook write
    assert split_undo("edit_cell", "not json") == ("not json", None)
    rest, undo = split_undo("edit_cell", plain)
    assert (json.loads(rest), undo) == ({"cell_id": "c"}, {"before": "x"})
    # An undo nobody can use is dropped, not passed on to the model.
    rest, undo = split_undo("edit_cell", json.dumps({"cell_id": "c", "undo": {"before": 3}}))
    assert (json.loads(rest), undo) == ({"cell_id": "c"}, None)
    assert split_undo("insert_cell", json.dumps({"undo": "x", "before": 1}))[1] is None


def test_a_client_that_answers_in_its_messages_keeps_the_undo_off_the_models_view() -> None:
    import ag_ui.core as agui

    from gth_jupyter.agui.messages import convert_history

    call = agui.ToolCall(
        id="e1", function=agui.FunctionCall(name="edit_cell", arguments='{"cell_id": "c3"}')
    )
    content = json.dumps({"cell_id": "c3", "diff": [], "undo": {"before": BEFORE}})
    converted = convert_history(
        [
            agui.UserMessage(id="u1", content="fix it"),
            agui.AssistantMessage(id="a1", tool_calls=[call]),
            agui.ToolMessage(id="t1", tool_call_id="e1", content=content),
        ]
    )
    tool = converted[-1]
    assert isinstance(tool, ToolMessage)
    assert json.loads(str(tool.content)) == {"cell_id": "c3", "diff": []}
    assert tool.artifact == {"undo": {"before": BEFORE}}
