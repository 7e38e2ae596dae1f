"""A ``%gth`` cell's output, in a real kernel: one display with a display id holding the widget's
view and a static copy, which the kernel refreshes when the page says the turn ended."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from gth_jupyter.notebook.host.cell_output import WIDGET_VIEW
from tests.notebook.conftest import iopub_of

CELL = "cell-0f1e"
OUTPUTS = ("display_data", "update_display_data", "execute_result", "stream", "error")


def run_cell(client: Any, code: str, cell_id: str = CELL) -> tuple[dict[str, Any], list[Any]]:
    """Runs ``code`` as JupyterLab does (the execute request names its cell); returns the
    reply's content and the cell's outputs (iopub messages; widget comms left out)."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    message = client.session.msg("execute_request", content, metadata={"cellId": cell_id})
    client.shell_channel.send(message)
    msg_id = message["header"]["msg_id"]
    outputs = [m for m in iopub_of(client, msg_id, timeout=180) if m["msg_type"] in OUTPUTS]
    while True:
        reply = client.get_shell_msg(timeout=180)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"], outputs


def printed(outputs: list[Any]) -> str:
    return "".join(o["content"]["text"] for o in outputs if o["msg_type"] == "stream")


def ok(client: Any, code: str) -> list[Any]:
    reply, outputs = run_cell(client, code)
    assert reply["status"] == "ok", (reply, outputs)
    return outputs


def comm_widget(client: Any, prompt: str) -> tuple[list[Any], list[str]]:
    """A ``%gth`` widget on the comm transport asking ``prompt``: its cell's outputs, and its
    comm id, thread and turn."""
    ok(client, "%load_ext gth_jupyter")
    outputs = ok(client, f"w = %gth --transport comm {prompt}\nw")
    ids = ok(client, "import json\nprint(json.dumps([w.comm.comm_id, w.thread_id, w.turn_id]))")
    return outputs, json.loads(printed(ids))


def test_a_prompt_cell_shows_one_output_with_a_display_id_and_no_cell_value(
    kernel: Any,
) -> None:
    ok(kernel, "%load_ext gth_jupyter")
    outputs = ok(kernel, "%gth Hello")
    assert [o["msg_type"] for o in outputs] == ["display_data"]  # no execute_result
    (shown,) = outputs
    data, metadata = shown["content"]["data"], shown["content"]["metadata"]
    display_id = shown["content"]["transient"]["display_id"]
    assert display_id.startswith("gth-")
    assert set(data) >= {WIDGET_VIEW, "text/plain", "text/html"}
    assert data[WIDGET_VIEW]["model_id"]
    assert "waiting for the agent" in data["text/plain"]
    assert "GthChat object" not in json.dumps(data)  # never an object repr
    assert "Hello" in data["text/html"]  # the prompt, until the turn has it
    assert metadata["gth_jupyter"] == {"display": display_id}
    # The cell's value is still the widget (`_`), which knows its output and the asking cell.
    report = ok(kernel, "w = _\nprint(w.display_id, w.cell_id, type(w).__name__)")
    assert printed(report).split() == [display_id, CELL, "GthChat"]


def test_an_assigned_prompt_shows_nothing_and_display_shows_it_once(kernel: Any) -> None:
    ok(kernel, "%load_ext gth_jupyter")
    assert ok(kernel, "w = %gth hi") == []
    outputs = ok(kernel, "print(type(w).__name__, w.cell_id, w.display_id, w.pending_prompt)")
    name, cell, display_id, prompt = printed(outputs).split()
    assert (name, cell, prompt) == ("GthChat", CELL, "hi")
    shown = ok(kernel, "display(w)")
    assert [o["msg_type"] for o in shown] == ["display_data"]
    assert shown[0]["content"]["transient"] == {"display_id": display_id}
    assert shown[0]["content"]["metadata"]["gth_jupyter"] == {"display": display_id}


def send_to_widget(client: Any, comm_id: str, content: dict[str, Any]) -> None:
    """A custom message from the page, on the widget's comm."""
    data = {"method": "custom", "content": content}
    client.shell_channel.send(client.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))


def from_widget(message: dict[str, Any]) -> dict[str, Any] | None:
    """The custom content of a comm message from the kernel's widget, if it is one."""
    if message["msg_type"] != "comm_msg":
        return None
    data = message["content"].get("data", {})
    return data.get("content") if data.get("method") == "custom" else None


def wait_for(client: Any, match: Any, what: str, timeout: float = 180) -> Any:
    """The first iopub message for which ``match`` returns something truthy (which is returned);
    the first import of the agent stack takes long on a loaded machine."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {what} within {timeout} s"
        try:
            message = client.get_iopub_msg(timeout=remaining)
        except Exception as error:  # queue.Empty
            raise AssertionError(f"no {what} within {timeout} s") from error
        found = match(message)
        if found:
            return found


def test_the_turns_end_over_the_comm_transport_updates_the_display(
    kernel: Any, tmp_path: Path
) -> None:
    """No Jupyter server page (as in VS Code): the run goes over the widget's comm, then the
    page's ``turn_end`` makes the kernel rewrite the output; a page with a bridge gets the copy
    to write instead (``pageWrites``), and the output is not updated too."""
    (tmp_path / ".gsloth.config.json").write_text(
        json.dumps({"llm": {"type": "fake", "responses": ["The **answer** is 42."]}})
    )
    outputs, (comm_id, thread_id, turn_id) = comm_widget(kernel, "What is it?")
    display_id = outputs[0]["content"]["transient"]["display_id"]
    body = {
        "threadId": thread_id,
        "runId": "r-1",
        "messages": [{"id": "u-1", "role": "user", "content": "What is it?"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {"gth": {"turnId": turn_id}},
    }
    send_to_widget(kernel, comm_id, {"type": "run", "requestId": "q1", "body": body})

    def run_end(message: dict[str, Any]) -> bool:
        content = from_widget(message)
        return bool(content and content.get("type") == "end" and content["requestId"] == "q1")

    wait_for(kernel, run_end, "end of the run")

    send_to_widget(kernel, comm_id, {"type": "turn_end", "turnIds": [turn_id]})
    seen: dict[str, Any] = {}

    def update(message: dict[str, Any]) -> bool:
        if from_widget(message):
            seen.setdefault("replies", []).append(from_widget(message))
        if message["msg_type"] == "update_display_data":
            seen["update"] = message["content"]
        return "update" in seen

    wait_for(kernel, update, "display update")
    update = seen["update"]
    assert update["transient"] == {"display_id": display_id}
    assert update["metadata"]["gth_jupyter"] == {"display": display_id}
    assert WIDGET_VIEW in update["data"]  # the live widget stays
    assert "answer" in update["data"]["text/plain"] and "42" in update["data"]["text/plain"]
    assert "waiting for the agent" not in update["data"]["text/plain"]
    assert "42" in update["data"]["text/html"]
    assert "replies" not in seen  # written once, by the kernel: nothing for the page to write

    # Asked again by a page with a bridge (a view mounted on the answered turn): the page gets
    # the copy to write, and the kernel does not update the output too.
    end = {"type": "turn_end", "turnIds": [turn_id], "pageWrites": True}
    send_to_widget(kernel, comm_id, end)
    updates: list[Any] = []

    def static(message: dict[str, Any]) -> dict[str, Any] | None:
        if message["msg_type"] == "update_display_data":
            updates.append(message)
        content = from_widget(message)
        return content if content and content.get("type") == "static" else None

    reply = wait_for(kernel, static, "static reply")
    assert reply["displayId"] == display_id
    assert reply["data"] == {k: v for k, v in update["data"].items() if k != WIDGET_VIEW}
    assert updates == []


def test_a_malformed_turn_end_gets_an_error_reply(kernel: Any) -> None:
    ok(kernel, "%load_ext gth_jupyter")
    ids = ok(kernel, "w = %gth hi\nprint(w.comm.comm_id)")
    comm_id = printed(ids).strip()
    not_text = {"text/html": "<p>", "text/markdown": ["a"], "text/plain": "a"}
    too_big = {"text/html": "x" * 600_000, "text/markdown": "x", "text/plain": "x"}
    send_to_widget(kernel, comm_id, {"type": "turn_end", "requestId": "x", "turnIds": "all"})
    send_to_widget(kernel, comm_id, {"type": "turn_end", "requestId": "y", "copy": not_text})
    send_to_widget(kernel, comm_id, {"type": "turn_end", "requestId": "z", "copy": too_big})

    def error(message: dict[str, Any]) -> dict[str, Any] | None:
        content = from_widget(message)
        return content if content and content.get("type") == "error" else None

    for request_id, field in (("x", "turnIds"), ("y", "copy"), ("z", "KiB")):
        reply = wait_for(kernel, error, "error reply")
        assert reply["requestId"] == request_id
        assert reply["status"] == 400 and reply["body"]["code"] == "invalid_message"
        assert field in reply["body"]["message"]


def test_the_servers_copy_is_written_as_it_came(kernel: Any, tmp_path: Path) -> None:
    """Over HTTP the server renders the copy from the thread it holds (whatever its store: the
    kernel reads none); a page with no bridge hands it to the kernel, which writes it beside the
    widget's view, once, as it came, and answers nothing."""
    (tmp_path / ".gsloth.config.json").write_text(json.dumps({"llm": {"type": "fake"}}))
    ok(kernel, "%load_ext gth_jupyter")
    outputs = ok(kernel, "w = %gth Where is it?\nw")
    display_id = outputs[0]["content"]["transient"]["display_id"]
    comm_id = printed(ok(kernel, "print(w.comm.comm_id)")).strip()
    html = '<div class="gth-static-copy"><p>It is in the <strong>server</strong></p></div>'
    copy = {"text/html": html, "text/markdown": "It is in the **server**", "text/plain": "It is"}
    send_to_widget(kernel, comm_id, {"type": "turn_end", "turnIds": [], "copy": copy})
    replies: list[Any] = []

    def update(message: dict[str, Any]) -> dict[str, Any] | None:
        if from_widget(message):
            replies.append(from_widget(message))
        if message["msg_type"] != "update_display_data":
            return None
        content: dict[str, Any] = message["content"]
        return content

    content = wait_for(kernel, update, "display update")
    assert content["transient"] == {"display_id": display_id}
    assert content["metadata"]["gth_jupyter"] == {"display": display_id}
    assert {k: v for k, v in content["data"].items() if k != WIDGET_VIEW} == copy
    assert WIDGET_VIEW in content["data"]
    # The same copy again changes nothing (the notebook would draw the widget again): the next
    # update is the next copy's.
    send_to_widget(kernel, comm_id, {"type": "turn_end", "turnIds": [], "copy": copy})
    later = {**copy, "text/plain": "It is, still"}
    send_to_widget(kernel, comm_id, {"type": "turn_end", "turnIds": [], "copy": later})
    assert wait_for(kernel, update, "second display update")["data"]["text/plain"] == "It is, still"
    assert replies == []


def test_a_turn_the_server_ran_builds_no_agent_in_the_kernel(kernel: Any, tmp_path: Path) -> None:
    """Over HTTP the agent runs in the server: the kernel writes the copy the page hands it and
    builds nothing of its own agent, so it neither runs a ``.py`` configuration (the review
    planted one beside a notebook) nor starts the configured MCP servers, and imports nothing
    of the agent (LangChain, LangGraph, the protocol layer). A turn the server holds nothing
    of (its run was refused) shows the cell's prompt, which only the kernel knows."""
    ran = tmp_path / "configuration-ran"
    (tmp_path / ".gsloth.config.py").write_text(
        f"import pathlib\npathlib.Path({str(ran)!r}).write_text('ran')\n"
        "def configure(config):\n    return config\n"
    )
    ok(kernel, "%load_ext gth_jupyter")
    outputs = ok(kernel, "w = %gth Hello there\nw")
    display_id = outputs[0]["content"]["transient"]["display_id"]
    comm_id = printed(ok(kernel, "print(w.comm.comm_id)")).strip()
    # Refused before it reached the thread; then the page writes (its bridge), the kernel answers.
    refused = {"type": "turn_end", "requestId": "a", "turnIds": [], "copy": None}
    send_to_widget(kernel, comm_id, refused)

    def update(message: dict[str, Any]) -> dict[str, Any] | None:
        if message["msg_type"] != "update_display_data":
            return None
        content: dict[str, Any] = message["content"]
        return content

    shown = wait_for(kernel, update, "display update")["data"]
    assert (
        "Hello there" in shown["text/html"] and "The agent gave no answer." in shown["text/plain"]
    )
    send_to_widget(kernel, comm_id, {**refused, "requestId": "b", "pageWrites": True})

    def static(message: dict[str, Any]) -> dict[str, Any] | None:
        content = from_widget(message)
        return content if content and content.get("type") == "static" else None

    reply = wait_for(kernel, static, "static reply")
    assert reply["displayId"] == display_id
    assert reply["data"] == {k: v for k, v in shown.items() if k != WIDGET_VIEW}
    copy = {"text/html": "<p>General Kenobi.</p>", "text/markdown": "x", "text/plain": "x"}
    send_to_widget(kernel, comm_id, {"type": "turn_end", "requestId": "c", "copy": copy})
    assert wait_for(kernel, update, "display update")["data"]["text/html"] == copy["text/html"]
    agent = ("langchain", "langchain_core", "langgraph", "gth_jupyter.agent", "gth_jupyter.agui")
    loaded = ok(
        kernel, f"import sys\nprint(sorted(m for m in sys.modules if m.startswith({agent!r})))"
    )
    assert printed(loaded).strip() == "[]", "the kernel imported the agent to write a copy"
    assert not ran.exists(), "the kernel ran its folder's configuration to refresh a copy"


def test_no_refresh_while_a_run_of_the_turn_is_in_flight(kernel: Any, tmp_path: Path) -> None:
    """Refreshing the output draws the widget again, and the view that goes stops the run it
    shows: while a run of the widget's turn is in flight (a follow-up, an approval answered), a
    ``turn_end`` changes nothing; the run's end asks again."""
    slow = {"content": " ".join(f"w{i}" for i in range(400)), "delayMs": 20}
    config = {"llm": {"type": "fake", "responses": [slow]}}
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(config))
    _, (comm_id, thread_id, turn_id) = comm_widget(kernel, "Go slowly.")
    body = {
        "threadId": thread_id,
        "runId": "r-slow",
        "messages": [{"id": "u-1", "role": "user", "content": "Go slowly."}],
        "forwardedProps": {"gth": {"turnId": turn_id}},
    }
    send_to_widget(kernel, comm_id, {"type": "run", "requestId": "q", "body": body})

    def streaming(message: dict[str, Any]) -> bool:
        content = from_widget(message)
        return bool(content and content.get("type") == "chunk" and "w1 " in content["data"])

    wait_for(kernel, streaming, "the run's first words")
    send_to_widget(kernel, comm_id, {"type": "turn_end", "turnIds": [turn_id]})
    early: list[str] = []

    def run_end(message: dict[str, Any]) -> bool:
        content = from_widget(message)
        if message["msg_type"] == "update_display_data" or (content or {}).get("type") == "static":
            early.append(message["msg_type"])
        return bool(content and content.get("type") == "end")

    wait_for(kernel, run_end, "end of the run")
    assert early == []

    send_to_widget(kernel, comm_id, {"type": "turn_end", "turnIds": [turn_id]})

    def update(message: dict[str, Any]) -> dict[str, Any] | None:
        if message["msg_type"] != "update_display_data":
            return None
        content: dict[str, Any] = message["content"]
        return content

    assert "w399" in wait_for(kernel, update, "display update")["data"]["text/plain"]
