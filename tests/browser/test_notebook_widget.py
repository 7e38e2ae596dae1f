"""The chat widget end to end: a real JupyterLab 4 and Notebook 7, headless Chromium, the
scripted model. Each test writes its own notebook, runs its cells through the UI and checks
what the page shows and what the model received (the fake model's record file).

Screenshots of every step go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    human_messages,
    image_blocks,
    read_records,
    transcript,
    write_config,
    write_notebook,
)
from playwright.sync_api import Route, expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(150),
]

HELLO = "Hello from the **scripted** model: this answer streamed token by token."
HELLO_TEXT = "Hello from the scripted model: this answer streamed token by token."
AFTER_PHOTO = "I can see the fake camera's test pattern."
NAME = "Ada Lovelace"
SLOW_WORDS = [f"w{i}" for i in range(1, 201)]
AFTER_STOP = "Still here after the stop."
DRAFT_WORDS = [f"d{i}" for i in range(1, 41)]  # ~2 s: time to start typing
AFTER_DRAFT = "Your whole thought arrived."
RELOAD_ANSWERS = ["First answer, before the reload.", "Second answer, also before it."]
#: What a notebook folder's own configuration would answer (the kernel's agent ignores it).
COMM_ANSWER = "Hello over the comm, from the notebook folder's configuration."

# A2UI v0.8: a TextField bound to /name and a Button (its label a Text child) whose action
# sends the name back.
FORM_JSONL = "\n".join(
    json.dumps(m)
    for m in [
        {
            "surfaceUpdate": {
                "surfaceId": "hello_form",
                "components": [
                    {
                        "id": "root",
                        "component": {
                            "Column": {"children": {"explicitList": ["title", "name", "send"]}}
                        },
                    },
                    {
                        "id": "title",
                        "component": {
                            "Text": {"text": {"literalString": "Who are you?"}, "usageHint": "h3"}
                        },
                    },
                    {
                        "id": "name",
                        "component": {
                            "TextField": {
                                "label": {"literalString": "Name"},
                                "text": {"path": "/name"},
                            }
                        },
                    },
                    {
                        "id": "send_label",
                        "component": {"Text": {"text": {"literalString": "Send"}}},
                    },
                    {
                        "id": "send",
                        "component": {
                            "Button": {
                                "child": "send_label",
                                "primary": True,
                                "action": {
                                    "name": "submit",
                                    "context": [{"key": "name", "value": {"path": "/name"}}],
                                },
                            }
                        },
                    },
                ],
            }
        },
        {"beginRendering": {"surfaceId": "hello_form", "root": "root"}},
    ]
)

# The server's model: one block per test, in this order (see JupyterServer.use_script).
SCRIPTS: dict[str, list[Any]] = {
    "hello": [HELLO],
    "capture": [
        {"content": "Say cheese!", "toolCalls": [{"name": "capture_image", "args": {}}]},
        AFTER_PHOTO,
    ],
    "a2ui": [
        {
            "content": "Please tell me your name.",
            "toolCalls": [{"name": "show_a2ui_surface", "args": {"surfaceJsonl": FORM_JSONL}}],
        },
        "Fill in the form and press Send.",
        f"Nice to meet you, {NAME}!",
    ],
    "stop": [{"content": " ".join(SLOW_WORDS), "delayMs": 50}, AFTER_STOP],
    "draft": [{"content": " ".join(DRAFT_WORDS), "delayMs": 50}, AFTER_DRAFT],
    "reload": RELOAD_ANSWERS,
}


def open_chat(nb: NotebookPage, name: str, cells: list[str], folder: str = "") -> None:
    """Write a notebook, open it, and run its cells one by one through the UI."""
    rel = f"{folder}/{name}.ipynb" if folder else f"{name}.ipynb"
    write_notebook(nb.server.root / rel, [*cells, ""])
    nb.open(rel)
    nb.shot("opened")
    nb.run_cells(*range(len(cells)))


def assistant(root: Any) -> Any:
    return root.locator(".gth-msg-assistant .gth-msg-content")


def test_hello_streams_the_answer(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    script = jupyter.use_script("hello")
    open_chat(notebook, f"hello-{jupyter.app}", ["%load_ext gth_jupyter", "%gth --log hello"])
    root = notebook.ready_widget()
    expect(root).to_have_attribute("data-transport", "http")
    expect(root.locator(".gth-msg-user")).to_have_text("hello")
    expect(assistant(root)).to_have_text(HELLO_TEXT, timeout=STEP_MS)
    expect(assistant(root).locator("strong")).to_have_text("scripted")  # Markdown rendered
    expect(root).to_have_attribute("data-state", "idle")
    # --log shows the AG-UI event log: the text arrived as one event per token.
    expect(root.locator(".gth-eventlog")).to_be_visible()
    row = root.locator(".gth-event[data-type=TEXT_MESSAGE_CONTENT]").first
    assert int(row.get_attribute("data-count") or 0) == len(HELLO.split())
    notebook.shot("answered")

    [call] = script.records()
    assert human_messages(call)[-1]["content"] == "hello"
    assert "capture_image" in call["tools"]  # the widget declared its browser tools
    assert not root.locator(".gth-error").count()


def test_capture_image_takes_a_photo_and_resumes(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("capture")
    open_chat(notebook, f"capture-{jupyter.app}", ["%load_ext gth_jupyter", "%gth take a photo"])
    root = notebook.ready_widget()
    card = root.locator(".gth-tool[data-tool-name=capture_image]")
    thumb = card.locator("img.gth-thumb")
    expect(thumb).to_be_visible(timeout=STEP_MS)
    assert (thumb.get_attribute("src") or "").startswith("data:image/jpeg;base64,")
    assert thumb.evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    notebook.shot("photo")
    # The run resumed by itself with the photo, and the follow-up arrived.
    expect(assistant(root).last).to_have_text(AFTER_PHOTO, timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    expect(card).to_have_attribute("data-status", "done")
    notebook.shot("answered")

    records = script.wait_records(2)
    assert len(records) == 2
    assert not image_blocks(records[0])
    [block] = image_blocks(records[1])
    # LangChain's standard block ({"type": "image", "base64", "mime_type"}), or a provider's.
    data = str(
        block.get("base64")
        or block.get("data")
        or block.get("source", {}).get("data")
        or block.get("image_url")
    )
    assert "/9j/" in data[:64]  # base64 of a JPEG (FF D8 FF)
    tool_results = [m for m in records[1]["messages"] if m.get("type") == "tool"]
    # The middleware swapped the base64 in the tool result for a short placeholder.
    assert "image captured" in str(tool_results[-1]["content"])
    assert not root.locator(".gth-error").count()


def test_a2ui_form_sends_its_action(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    script = jupyter.use_script("a2ui")
    open_chat(notebook, f"a2ui-{jupyter.app}", ["%load_ext gth_jupyter", "%gth ask my name"])
    root = notebook.ready_widget()
    surface = root.locator(".gth-a2ui-surface[data-surface-id=hello_form]")
    expect(surface).to_be_visible(timeout=STEP_MS)
    expect(assistant(root).last).to_have_text(SCRIPTS["a2ui"][1], timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    field = surface.locator("label.gth-a2ui-textfield input.gth-a2ui-input")
    expect(field).to_be_visible()
    notebook.shot("form")

    field.click()
    field.press_sequentially(NAME)
    button = surface.locator("button.gth-a2ui-button")
    expect(button).to_have_text("Send")
    notebook.shot("filled")
    button.click()
    expect(root.locator(".gth-msg-user.gth-msg-action")).to_contain_text("submit", timeout=STEP_MS)
    expect(assistant(root).last).to_have_text(f"Nice to meet you, {NAME}!", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    notebook.shot("answered")

    records = script.wait_records(3)
    assert len(records) == 3
    action = json.loads(human_messages(records[2])[-1]["content"])
    assert action["actionName"] == "submit"
    assert action["context"]["name"] == NAME
    assert action.get("surfaceId") == "hello_form"
    assert not root.locator(".gth-error").count()


def test_stop_ends_the_run_and_the_thread_goes_on(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("stop")
    open_chat(notebook, f"stop-{jupyter.app}", ["%load_ext gth_jupyter", "%gth talk slowly"])
    root = notebook.ready_widget()
    text = assistant(root).first
    expect(text).to_contain_text("w3", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "running")
    root.locator("button.gth-stop").click()
    expect(root).to_have_attribute("data-state", "idle", timeout=5_000)
    expect(root.locator(".gth-note-stopped")).to_be_visible()
    stopped_at = text.inner_text()
    time.sleep(1.0)  # 20 more tokens would have arrived by now
    assert text.inner_text() == stopped_at
    words = stopped_at.split()
    assert 3 <= len(words) < len(SLOW_WORDS), words
    assert words == SLOW_WORDS[: len(words)]
    # The server let go of the thread (a Stop cancels the run, it does not leave it busy).
    assert jupyter.thread(str(root.get_attribute("data-thread-id")))["busy"] is False
    notebook.shot("stopped")

    box = root.locator("textarea.gth-input")
    box.fill("are you there?")
    box.press("Enter")
    expect(assistant(root).last).to_have_text(AFTER_STOP, timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    notebook.shot("next-prompt")

    records = script.wait_records(2)
    assert len(records) == 2
    assert human_messages(records[1])[-1]["content"] == "are you there?"
    assert not root.locator(".gth-error").count()


def copy_written(notebook: NotebookPage, cell: int, text: str) -> None:
    """Wait until the cell's saved copy (its output's text/html, written through the notebook
    extension when the turn ends) holds ``text``."""
    notebook.page.wait_for_function(
        """([cell, text]) => {
            const read = globalThis.__gth_jupyter_notebook__?.current()?.read();
            const outputs = read?.cells?.[cell]?.outputs ?? [];
            return outputs.some((o) => String(o?.data?.["text/html"] ?? "").includes(text));
        }""",
        arg=[cell, text],
        timeout=STEP_MS,
    )


def test_typing_as_the_turn_ends_keeps_the_draft_and_the_caret(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """The turn's end writes its copy into the cell's output, which makes the notebook draw the
    widget again: the new view takes the old one over, and a person typing meanwhile keeps what
    they typed, the focus and the caret."""
    jupyter.use_script("draft")
    open_chat(notebook, f"draft-{jupyter.app}", ["%load_ext gth_jupyter", "%gth talk a while"])
    root = notebook.ready_widget()
    expect(assistant(root).first).to_contain_text("d3", timeout=STEP_MS)
    box = root.locator("textarea.gth-input")
    box.click()
    box.press_sequentially("half a tho")
    root.evaluate("r => { r.parentElement.dataset.firstView = 'yes'; }")
    expect(assistant(root).first).to_have_text(" ".join(DRAFT_WORDS), timeout=STEP_MS)
    copy_written(notebook, 1, DRAFT_WORDS[-1])
    # The notebook drew the widget again: the chat now sits in the new view's element.
    notebook.page.wait_for_function(
        "() => { const r = document.querySelector('.gth-root');"
        " return r && r.isConnected && !r.parentElement.dataset.firstView; }",
        timeout=STEP_MS,
    )
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    expect(box).to_be_focused()
    notebook.page.keyboard.type("ught")  # where the focus is: no click first
    expect(box).to_have_value("half a thought")
    notebook.page.keyboard.press("Enter")
    expect(root.locator(".gth-msg-user").last).to_have_text("half a thought", timeout=STEP_MS)
    expect(assistant(root).last).to_have_text(AFTER_DRAFT, timeout=STEP_MS)
    assert notebook.page.locator(".gth-root").count() == 1  # the view taken over, not a second


def test_reload_rehydrates_the_transcript(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    jupyter.use_script("reload")
    open_chat(notebook, f"reload-{jupyter.app}", ["%load_ext gth_jupyter", "%gth first question"])
    root = notebook.ready_widget()
    expect(assistant(root).last).to_have_text(RELOAD_ANSWERS[0], timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    box = root.locator("textarea.gth-input")
    box.fill("second question")
    box.press("Enter")
    expect(assistant(root).last).to_have_text(RELOAD_ANSWERS[1], timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    before = transcript(root)
    thread_id = root.get_attribute("data-thread-id")
    assert before == [
        ("user", "first question"),
        ("assistant", RELOAD_ANSWERS[0]),
        ("user", "second question"),
        ("assistant", RELOAD_ANSWERS[1]),
    ]
    notebook.shot("before-reload")
    notebook.save()

    notebook.page.reload()
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    root = notebook.ready_widget()  # the widget restored from the live kernel
    expect(assistant(root)).to_have_count(2, timeout=STEP_MS)
    assert root.get_attribute("data-thread-id") == thread_id
    assert transcript(root) == before
    notebook.shot("after-reload")

    # The server's copy of the thread is what the widget showed.
    messages = jupyter.thread(str(thread_id))["messages"]
    assert [(m["role"], m["content"]) for m in messages if m["role"] in ("user", "assistant")] == [
        (role, text) for role, text in before
    ]


def comm_chat(jupyter: JupyterServer, notebook: NotebookPage, *, block_bundle: bool) -> Any:
    """Block the extension's routes (and optionally its static bundle) in the page, then run
    ``%gth hello`` in a notebook whose folder holds a configuration of its own, which the
    kernel's agent must not use: a kernel the server started runs the server's configuration
    (``config/handover.py``), so the answer is the first of the server's script, from the
    kernel's own copy of the scripted model."""
    folder = f"comm-{'kernel' if block_bundle else 'static'}-{jupyter.app}"
    records = jupyter.home / f"{folder}-calls.jsonl"
    write_config(jupyter.root / folder, [COMM_ANSWER], records)
    jupyter.ensure_started("hello")
    server_config = json.loads((jupyter.root / ".gsloth.config.json").read_text())
    if server_config["llm"]["responses"][0] != HELLO:  # restarted from a later block
        jupyter.restart("hello")
    calls_before = len(read_records(jupyter.record_path))
    blocked: list[str] = []

    def block(route: Route) -> None:
        blocked.append(route.request.url)
        route.abort()

    notebook.page.route(re.compile(r"/gth/"), block)
    if block_bundle:
        notebook.page.route(re.compile(r"/static/gth_jupyter/"), block)
    open_chat(notebook, "comm", ["%load_ext gth_jupyter", "%gth hello"], folder=folder)
    root = notebook.ready_widget()
    expect(root).to_have_attribute("data-transport", "comm")
    expect(assistant(root)).to_have_text(HELLO_TEXT, timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    notebook.shot("answered")

    assert any("/gth/health" in url for url in blocked)
    if block_bundle:
        assert any("/static/gth_jupyter/widget.js" in url for url in blocked)
    assert not records.exists()  # the folder's own configuration never ran
    [call] = read_records(jupyter.record_path)[calls_before:]
    assert human_messages(call)[-1]["content"] == "hello"
    assert not root.locator(".gth-error").count()
    return root


def test_comm_transport_when_the_server_routes_are_unreachable(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """The extension's routes fail: the widget falls back to the comm and the kernel's agent
    answers; after a reload the transcript comes back from the kernel's copy of the thread."""
    root = comm_chat(jupyter, notebook, block_bundle=False)
    before = transcript(root)
    notebook.save()
    notebook.page.reload()
    root = notebook.ready_widget()
    expect(root).to_have_attribute("data-transport", "comm")
    expect(assistant(root)).to_have_count(1, timeout=STEP_MS)
    assert transcript(root) == before == [("user", "hello"), ("assistant", HELLO_TEXT)]
    notebook.shot("after-reload")


@pytest.mark.parametrize("jupyter", ["lab"], indirect=True)
def test_comm_transport_with_the_bundle_from_the_kernel(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """The static bundle is unreachable too: the loader asks the kernel for the widget code."""
    comm_chat(jupyter, notebook, block_bundle=True)
