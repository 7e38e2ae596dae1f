"""The %gth / %%gth magics and the chat() API, in a real IPython shell."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import get_ipython

from gth_jupyter import client_tool
from gth_jupyter.notebook.entry.front_end import HEADLESS_ENV
from gth_jupyter.notebook.entry.magics import explain_prompt, interpolate, parse_line
from gth_jupyter.notebook.entry.widget import GthChat
from gth_jupyter.notebook.host import client_tools


@pytest.fixture(scope="module")
def ip() -> Iterator[Any]:
    shell = get_ipython()
    shell.run_line_magic("load_ext", "gth_jupyter")
    # A terminal shell renders no widget, so %gth would run headless: these tests are about
    # the widget a live front end gets.
    saved = os.environ.get(HEADLESS_ENV)
    os.environ[HEADLESS_ENV] = "0"
    yield shell
    if saved is None:
        os.environ.pop(HEADLESS_ENV, None)
    else:
        os.environ[HEADLESS_ENV] = saved


def test_options_come_first_and_the_prompt_is_verbatim() -> None:
    options = parse_line("--thread demo --agent default what's -- up?")
    assert (options.thread, options.agent, options.prompt) == ("demo", "default", "what's -- up?")
    assert parse_line("--new --log hi").new and parse_line("--log hi").log
    with pytest.raises(UsageError):
        parse_line("--transport pigeon hi")


def test_headless_and_explain_are_options_and_explain_asks_about_the_cell_above() -> None:
    options = parse_line("--headless --explain --thread t and the units?")
    assert (options.headless, options.explain, options.thread) == (True, True, "t")
    assert options.prompt == "and the units?"
    assert explain_prompt("", "") == "Why did the cell above fail?"
    asked = explain_prompt("and the units?", "The kernel's last error: KeyError")
    assert (
        asked == "Why did the cell above fail? and the units?\n\nThe kernel's last error: KeyError"
    )


def test_interpolation_uses_the_namespace_and_rejects_unknown_names() -> None:
    assert interpolate("rows: {n}", {"n": 3}) == "rows: 3"
    assert interpolate('{"json": true}', {}) == '{"json": true}'
    with pytest.raises(UsageError, match="'missing'"):
        interpolate("{missing}", {})


def test_line_magic_returns_a_widget_that_sends_the_prompt(ip) -> None:
    widget = ip.run_line_magic("gth", "--thread t1 hello there")
    assert isinstance(widget, GthChat)
    assert (widget.thread_id, widget.pending_prompt) == ("t1", "hello there")
    assert widget.model_label  # the header names the model


def test_bare_magic_opens_the_chat_on_the_notebook_thread(ip, monkeypatch) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/analysis.ipynb")
    first = ip.run_line_magic("gth", "")
    second = ip.run_line_magic("gth", "")
    assert first.pending_prompt == "" and first.thread_id == second.thread_id
    assert first.thread_id.startswith("nb-")


def test_cell_magic_interpolates_and_new_starts_a_fresh_thread(ip, monkeypatch) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/other.ipynb")
    ip.user_ns["topic"] = "penguins"
    before = ip.run_line_magic("gth", "")
    widget = ip.run_cell_magic("gth", "--new", "Tell me about {topic}.")
    assert widget.pending_prompt == "Tell me about penguins."
    assert widget.thread_id != before.thread_id and widget.thread_id.startswith(before.thread_id)


def test_client_tool_registration_reaches_live_widgets(ip) -> None:
    widget = ip.run_line_magic("gth", "--thread t2")
    spec = client_tool(
        "roll_dice", "Roll dice", {"type": "object", "properties": {}}, js="async () => 4"
    )
    try:
        assert spec in widget.client_tools
        with pytest.raises(ValueError):
            client_tool("capture_image", "x", js="async () => 1")
        with pytest.raises(ValueError):
            client_tool("bad name!", "x", js="async () => 1")
    finally:
        client_tools.remove_client_tool("roll_dice")
    assert widget.client_tools == []


def test_client_tool_shows_one_line_not_its_javascript(ip) -> None:
    js = "async ({ n = 2 }) => Array.from({ length: n }, () => 6)"
    spec = client_tool("roll_dice", "Roll dice", js=js)
    try:
        data, _ = ip.display_formatter.format(spec)
        shown = data["text/plain"]
        assert "\n" not in shown and js not in shown and "'roll_dice'" in shown, shown
        assert spec["js"] == js and spec["name"] == "roll_dice"  # still the spec
    finally:
        client_tools.remove_client_tool("roll_dice")


def test_widget_state_is_small() -> None:
    widget = GthChat(thread_id="t")
    assert len(widget._esm) < 20_000  # a loader, not the bundle
    state = widget.get_state()
    assert "messages" not in state and "transcript" not in state


@pytest.mark.parametrize(
    ("source", "prompt"),
    [
        ("%gth Hello! What can you do?", "Hello! What can you do?"),
        ("%gth really??", "really??"),
        ("%gth --thread q1 what's {x} and $y?", "what's {x} and $y?"),
        ("w = %gth is 'quoted' \"text\" fine?", "is 'quoted' \"text\" fine?"),
    ],
)
def test_a_prompt_ending_in_a_question_mark_reaches_the_magic_verbatim(
    ip, source: str, prompt: str
) -> None:
    ip.user_ns.update({"x": 1, "y": 2})
    result = ip.run_cell(source)
    assert result.success, result.error_in_exec
    widget = result.result if result.result is not None else ip.user_ns["w"]
    assert isinstance(widget, GthChat) and widget.pending_prompt == prompt


def test_help_still_works_elsewhere_and_cell_bodies_are_untouched(ip) -> None:
    from gth_jupyter.notebook.entry.magics import gth_prompt_lines

    assert gth_prompt_lines(["x?\n"]) == ["x?\n"]
    assert gth_prompt_lines(["%gth?\n"]) == ["%gth?\n"]
    assert gth_prompt_lines(["%%gth\n", "%gth inside a body?\n"]) == [
        "%%gth\n",
        "%gth inside a body?\n",
    ]
    assert gth_prompt_lines(["if True:\n", "    %gth indented?\n"]) == [
        "if True:\n",
        "    get_ipython().run_line_magic('gth', 'indented?')\n",
    ]
    ip.user_ns["thing"] = 42
    shown: list[object] = []
    ip.set_hook("show_in_pager", lambda _shell, data, *a, **k: shown.append(data))
    assert ip.run_cell("thing?").success
    assert shown and "int" in str(shown[0])


def test_prompt_cells_are_turns_in_kernel_order_and_the_bare_chat_shows_all(ip) -> None:
    first = ip.run_line_magic("gth", "--thread order one")
    second = ip.run_line_magic("gth", "--thread order two")
    other = ip.run_line_magic("gth", "--thread elsewhere three")
    bare = ip.run_line_magic("gth", "--thread order")
    assert first.turn_id and second.turn_id and first.turn_id != second.turn_id
    assert (first.after_turn, second.after_turn) == ("", first.turn_id)
    assert other.after_turn == ""  # another thread has its own order
    assert (bare.turn_id, bare.after_turn, bare.pending_prompt) == ("", "", "")
    again = ip.run_line_magic("gth", "--thread order one")  # re-running a cell: a new turn
    assert again.turn_id not in (first.turn_id, second.turn_id)
    assert again.after_turn == second.turn_id


def test_a_widget_carries_ids_and_a_small_loader_never_the_transcript(ip) -> None:
    """What a saved notebook keeps of each %gth cell: at most 10 KB, whatever the conversation."""
    import json

    widget = ip.run_line_magic("gth", "--thread weight " + "a long prompt " * 50)
    state = widget.get_state()
    assert len(json.dumps(state, default=str)) <= 10_000
    assert not {"messages", "transcript", "history"} & set(state)
    assert state["turn_id"] and state["thread_id"] == "weight"


def test_explain_reads_the_last_error_without_colours_and_the_cell_before_it_capped(
    ip, monkeypatch
) -> None:
    """``--explain`` headless: IPython colours tracebacks; the model gets them plain, and a long
    cell keeps its head and tail."""
    from gth_jupyter.notebook.entry.magics import last_failure

    try:
        raise LookupError("\x1b[0;31mno revenue\x1b[0m column")
    except LookupError as exc:
        monkeypatch.setattr(sys, "last_value", exc, raising=False)
        monkeypatch.setattr(sys, "last_traceback", exc.__traceback__, raising=False)
    long_cell = "x = 1\n" * 2000 + "sales['revenue']"
    monkeypatch.setitem(ip.user_ns, "In", ["", long_cell, "%gth --explain"])
    said = last_failure()
    assert "\x1b" not in said
    assert "LookupError: no revenue column" in said
    assert "characters cut] …\n" in said and said.count("sales['revenue']") == 1
