"""The offline demo model's data phrases: the kernel tools, the plot code it writes, and the
follow-ups after each tool's result."""

from __future__ import annotations

import ast
import base64
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from gth_jupyter.models import DemoChatModel
from gth_jupyter.models._reply import Reply
from gth_jupyter.models.demo._data import Frame, pick_frame, plot_code
from gth_jupyter.models.demo._rules import INTRODUCTION, plan_demo_reply

DATA_TOOLS = ["list_variables", "describe_variable", "run_python", "capture_image"]
HOSTILE = 'a"); import os; ("'
TIMES = "\N{MULTIPLICATION SIGN}"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 3000).decode()

SALES_COLUMNS = [
    {"name": "month", "dtype": "object"},
    {"name": "region", "dtype": "object"},
    {"name": "revenue", "dtype": "float64"},
    {"name": "units", "dtype": "int64"},
]


def plan(*messages: BaseMessage, tools: list[str] = DATA_TOOLS) -> Reply:
    return plan_demo_reply(list(messages), tools)


def calls(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.args)) for c in reply.tool_calls]


def frame_entry(name: str, columns: list[dict[str, str]], rows: int = 36) -> dict[str, Any]:
    return {
        "name": name,
        "type": "pandas.core.frame.DataFrame",
        "shape": [rows, len(columns)],
        "size_bytes": 4096,
        "columns": columns,
    }


def listed(*variables: dict[str, Any], call_id: str = "call_list") -> list[BaseMessage]:
    """A user's question, the demo's list_variables call and its result."""
    result = {
        "variables": list(variables),
        "total": len(variables),
        "offset": 0,
        "limit": 50,
        "next_offset": None,
        "ranOn": "subshell",
    }
    return [
        HumanMessage("what data do I have?"),
        AIMessage("", tool_calls=[{"name": "list_variables", "args": {}, "id": call_id}]),
        ToolMessage(json.dumps(result), tool_call_id=call_id, name="list_variables"),
        AIMessage("Your kernel holds ..."),
    ]


def plot_args(reply: Reply) -> dict[str, Any]:
    [(name, args)] = calls(reply)
    assert name == "run_python"
    return args


# -- the phrases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "what data do I have?",
        "What data do I have",
        '"what data do I have?"',
        "Which variables are defined?",
        "what variables exist",
        "Show my data",
        "show me the variables",
        "list variables",
        "please list all my dataframes.",
    ],
)
def test_asking_for_the_data_lists_the_variables(text: str) -> None:
    reply = plan(HumanMessage(text))

    assert calls(reply) == [("list_variables", {})]
    assert reply.text


def test_a_page_of_variables_can_be_asked_for() -> None:
    reply = plan(HumanMessage("list variables offset=50 limit=10"))

    assert calls(reply) == [("list_variables", {"offset": 50, "limit": 10})]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("describe sales", "sales"),
        ("Describe sales.", "sales"),
        ("Can you describe `sales`?", "sales"),
        ("describe the dataframe df_2024", "df_2024"),
        ('describe "prices"', "prices"),
    ],
)
def test_describe_calls_describe_variable_with_the_name(text: str, name: str) -> None:
    reply = plan(HumanMessage(text))

    assert calls(reply) == [("describe_variable", {"name": name})]


@pytest.mark.parametrize(
    "text", ["describe yourself", "describe what you can do", "describe the photo", "describe"]
)
def test_describe_of_an_english_word_is_not_a_variable(text: str) -> None:
    reply = plan(HumanMessage(text))

    assert not [c for c in reply.tool_calls if c.name == "describe_variable"]


def test_describe_of_a_listed_variable_is_taken_even_if_it_reads_like_english() -> None:
    history = listed({"name": "data", "type": "list", "length": 3, "size_bytes": 80})

    reply = plan(*history, HumanMessage("describe data"))

    assert calls(reply) == [("describe_variable", {"name": "data"})]


@pytest.mark.parametrize(
    "text", ["what data do I have?", "describe sales", "plot revenue by month"]
)
def test_without_the_kernel_tools_the_demo_explains_where_they_are(text: str) -> None:
    reply = plan(HumanMessage(text), tools=["capture_image"])

    assert not reply.tool_calls
    assert "%gth" in reply.text and "kernel" in reply.text


def test_other_phrases_keep_their_rules_with_the_data_tools_bound() -> None:
    assert calls(plan(HumanMessage("take a photo"))) == [("capture_image", {})]
    assert plan(HumanMessage("hello")).text == INTRODUCTION
    named = plan(HumanMessage("What is my page_title?"), tools=[*DATA_TOOLS, "page_title"])
    assert calls(named) == [("page_title", {})]


def test_the_introduction_mentions_the_data_phrases() -> None:
    for phrase in ("what data do I have?", "describe sales", "plot revenue by month"):
        assert phrase in INTRODUCTION
    assert "run_python" in INTRODUCTION and "approve" in INTRODUCTION


# -- which DataFrame a plot uses ---------------------------------------------------------------


def test_a_plot_uses_the_listed_dataframe_that_has_both_columns() -> None:
    history = listed(
        frame_entry("sales", SALES_COLUMNS),
        frame_entry("costs", [{"name": "month", "dtype": "object"}]),
    )

    reply = plan(*history, HumanMessage("plot revenue by month"))

    code = plot_args(reply)["code"]
    assert 'sales.groupby("month", sort=False)["revenue"].sum()' in code
    assert "sales" in reply.text and "approve" in reply.text


def test_the_most_recent_result_wins_and_its_column_spelling_is_used() -> None:
    old = listed(frame_entry("sales", SALES_COLUMNS), call_id="c1")
    described = {
        "name": "q3",
        "type": "pandas.core.frame.DataFrame",
        "data_context": "sample",
        "shape": [3, 2],
        "columns": [{"name": "Month", "dtype": "object"}, {"name": "Revenue", "dtype": "int64"}],
        "null_counts": {"Month": 0, "Revenue": 0},
    }
    newer: list[BaseMessage] = [
        HumanMessage("describe q3"),
        AIMessage("", tool_calls=[{"name": "describe_variable", "args": {}, "id": "c2"}]),
        ToolMessage(json.dumps(described), tool_call_id="c2"),  # named through the call
        AIMessage("q3 is ..."),
    ]

    reply = plan(*old, *newer, HumanMessage("plot revenue by month"))

    assert 'q3.groupby("Month", sort=False)["Revenue"]' in plot_args(reply)["code"]


def test_a_dataframe_named_in_the_message_is_used() -> None:
    history = listed(frame_entry("sales", SALES_COLUMNS))

    reply = plan(*history, HumanMessage("plot profit by quarter from report"))

    assert plot_args(reply)["code"].count("report.groupby(") == 1


def test_sales_is_used_when_the_conversation_mentions_it() -> None:
    reply = plan(
        HumanMessage("I made a sales table"),
        AIMessage("Nice."),
        HumanMessage("plot revenue by month"),
    )

    assert "sales.groupby(" in plot_args(reply)["code"]


def test_the_first_dataframe_seen_is_the_last_resort() -> None:
    history = listed(
        frame_entry("first", [{"name": "a", "dtype": "int64"}]),
        frame_entry("second", [{"name": "b", "dtype": "int64"}]),
    )

    reply = plan(*history, HumanMessage("plot revenue by month"))

    assert "first.groupby(" in plot_args(reply)["code"]


def test_with_no_dataframe_known_the_demo_asks_instead_of_guessing() -> None:
    reply = plan(HumanMessage("plot revenue by month"))

    assert not reply.tool_calls
    assert "what data do I have?" in reply.text and "from sales" in reply.text


def test_pick_frame_prefers_an_explicit_name_then_both_columns() -> None:
    frames = [Frame("a", ("x", "y")), Frame("b", ("x",))]

    assert pick_frame("y", "x", frames, explicit="b") == Frame("b", ("x",))
    assert pick_frame("Y", "X", frames) == Frame("a", ("x", "y"))
    assert pick_frame("y", "x", []) is None


# -- the plot code -----------------------------------------------------------------------------

ALLOWED_CALLS = {
    "subplots",
    "show",
    "groupby",
    "sum",
    "astype",
    "to_numpy",
    "bar",
    "set_title",
    "set_xlabel",
    "set_ylabel",
    "tick_params",
    "tight_layout",
}


def check_code(code: str, frame: str) -> set[str]:
    """Parses ``code``, checks it only calls the expected methods on the expected names,
    imports only pyplot and creates only ``agent_`` names; returns its string constants."""
    tree = ast.parse(code)
    roots = {"plt", frame, "agent_totals", "agent_fig", "agent_ax"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            assert isinstance(func, ast.Attribute), ast.dump(func)
            assert func.attr in ALLOWED_CALLS, func.attr
            base: ast.expr = func.value
            while isinstance(base, ast.Attribute | ast.Call | ast.Subscript):
                base = base.func if isinstance(base, ast.Call) else base.value
            assert isinstance(base, ast.Name) and base.id in roots, ast.dump(base)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            assert isinstance(node, ast.Import)
            assert [(a.name, a.asname) for a in node.names] == [("matplotlib.pyplot", "plt")]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assert node.id.startswith("agent_"), node.id
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Lambda | ast.JoinedStr)]
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def test_the_plot_code_is_short_correct_matplotlib() -> None:
    code = plot_code("sales", "month", "revenue")

    strings = check_code(code, "sales")
    assert {"month", "revenue", "revenue by month"} <= strings
    assert code.startswith("import matplotlib.pyplot as plt")
    assert "agent_fig, agent_ax = plt.subplots(figsize=(6, 3.5))" in code
    assert code.rstrip().endswith("plt.show()")
    assert len(code.splitlines()) <= 12


@pytest.mark.parametrize(
    "column",
    [HOSTILE, "a'); import os; ('", "x\\", 'multi\nline"""', "revenue $ (k$)", "tab\there", "ü"],
)
def test_hostile_column_names_stay_inside_string_literals(column: str) -> None:
    code = plot_code("sales", column, "revenue")

    strings = check_code(code, "sales")
    assert column in strings  # the exact name, as a literal
    assert "os" not in {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}


def test_a_hostile_column_typed_in_the_message_is_quoted() -> None:
    history = listed(frame_entry("sales", SALES_COLUMNS))

    reply = plan(*history, HumanMessage(f"plot `{HOSTILE}` by month"))

    strings = check_code(plot_args(reply)["code"], "sales")
    assert HOSTILE in strings


def test_a_hostile_column_from_the_kernel_is_quoted() -> None:
    columns = [{"name": HOSTILE, "dtype": "float64"}, {"name": "Month", "dtype": "object"}]
    history = listed(frame_entry("frame", columns))

    reply = plan(*history, HumanMessage(f"plot `{HOSTILE.upper()}` by month"))

    strings = check_code(plot_args(reply)["code"], "frame")
    assert HOSTILE in strings and "Month" in strings


def test_only_identifiers_become_the_dataframe_in_the_code() -> None:
    bad = frame_entry("x = 1; import os; y", SALES_COLUMNS)
    history = listed(bad, frame_entry("sales", SALES_COLUMNS))

    reply = plan(*history, HumanMessage("plot revenue by month"))

    check_code(plot_args(reply)["code"], "sales")
    for name in ("os.system", "sales.x", "1sales", "class", ""):
        with pytest.raises(ValueError):
            plot_code(name, "a", "b")


def test_the_plot_code_draws_totals_per_value_on_a_real_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sales = pd.DataFrame(
        {
            "month": ["2024-01", "2024-01", "2024-02", "2024-02", "2024-03"],
            "region": ["N", "S", "N", "S", "N"],
            "revenue": [1.0, 2.0, 3.0, 4.0, 5.0],
            HOSTILE: [1, 2, 3, 4, 5],
        }
    )
    namespace: dict[str, Any] = {"sales": sales}
    try:
        exec(plot_code("sales", "month", "revenue"), namespace)
        exec(plot_code("sales", "region", HOSTILE), namespace)
        assert list(namespace["agent_totals"]) == [9, 6]
        bars = namespace["agent_ax"].patches
        assert [b.get_height() for b in bars] == [9, 6]
        assert namespace["agent_ax"].get_title() == f"{HOSTILE} by region"
    finally:
        plt.close("all")
    assert {k for k in namespace if k not in ("sales", "__builtins__")} == {
        "plt",
        "agent_totals",
        "agent_fig",
        "agent_ax",
    }


# -- the follow-ups ----------------------------------------------------------------------------


def after(name: str, content: str, *, status: str = "success", **extra: Any) -> Reply:
    call = AIMessage("", tool_calls=[{"name": name, "args": extra, "id": "call_x"}])
    result = ToolMessage(content, tool_call_id="call_x", name=name, status=status)
    return plan(HumanMessage("go"), call, result)


def test_the_variables_found_are_summarised_as_a_list() -> None:
    result = {
        "variables": [
            {"name": "n", "type": "int", "size_bytes": 28},
            frame_entry("sales", SALES_COLUMNS),
            {"name": "words", "type": "list", "length": 3, "size_bytes": 80},
            {"name": "grid", "type": "numpy.ndarray", "shape": [3, 4, 5], "size_bytes": 480},
        ],
        "total": 4,
        "offset": 0,
        "limit": 50,
        "next_offset": None,
    }

    reply = after("list_variables", json.dumps(result))

    assert not reply.tool_calls
    lines = reply.text.splitlines()
    assert lines[0] == "Your kernel holds 4 variables:"
    assert "- `n`: int" in lines
    assert (
        f"- `sales`: DataFrame, 36 rows {TIMES} 4 columns, columns `month`, `region`, `revenue`, "
        "`units`" in lines
    )
    assert "- `words`: list, length 3" in lines
    assert f"- `grid`: ndarray, 3 {TIMES} 4 {TIMES} 5" in lines
    assert lines[-1] == "Try **describe sales** or **plot revenue by month**."


def test_a_long_list_says_how_many_more() -> None:
    page = [{"name": f"v{i}", "type": "int", "size_bytes": 28} for i in range(50)]
    result = {"variables": page, "total": 120, "offset": 0, "limit": 50, "next_offset": 50}

    reply = after("list_variables", json.dumps(result))

    assert reply.text.startswith("Your kernel holds 120 variables:")
    assert "- … and 100 more" in reply.text


def test_an_empty_kernel_is_said_so() -> None:
    result = {"variables": [], "total": 0, "offset": 0, "limit": 50, "next_offset": None}

    reply = after("list_variables", json.dumps(result))

    assert "no variables" in reply.text and not reply.tool_calls


def test_a_description_is_summarised_with_shape_columns_and_nulls() -> None:
    described = {
        "name": "sales",
        "type": "pandas.core.frame.DataFrame",
        "data_context": "sample",
        "size_bytes": 9000,
        "shape": [36, 4],
        "columns": SALES_COLUMNS,
        "null_counts": {"month": 0, "region": 0, "revenue": 2, "units": 0},
        "describe": {
            "columns": ["revenue", "units"],
            "index": ["count", "mean", "std", "min", "25%", "50%", "75%", "max"],
            "data": [
                [34.0, 36.0],
                [1234.5678, 12.5],
                [1.0, 1.0],
                [800.0, 3.0],
                [1.0, 1.0],
                [1.0, 1.0],
                [1.0, 1.0],
                [2000.25, 30.0],
            ],
        },
        "head": {"columns": ["month"], "index": [0], "data": [["2024-01"]]},
    }

    reply = after("describe_variable", json.dumps(described))

    text = reply.text
    assert text.startswith(f"`sales` is a DataFrame of 36 rows {TIMES} 4 columns:")
    assert "- `month` (object)" in text
    assert "- `revenue` (float64): mean 1234.57, min 800, max 2000.25" in text
    assert "- `units` (int64): mean 12.5, min 3, max 30" in text
    assert "Missing values: `revenue` 2." in text
    assert text.endswith("Try **plot revenue by month**.")


def test_a_schema_only_description_says_no_values_were_shared() -> None:
    described = {
        "name": "sales",
        "type": "pandas.core.frame.DataFrame",
        "data_context": "schema",
        "shape": [36, 4],
        "columns": SALES_COLUMNS,
        "null_counts": {"month": 0, "region": 0, "revenue": 0, "units": 0},
    }

    reply = after("describe_variable", json.dumps(described))

    assert "No missing values." in reply.text
    assert '"schema"' in reply.text and "no values" in reply.text


def test_other_descriptions_are_one_line() -> None:
    series = {"name": "s", "type": "pandas.core.series.Series", "shape": [10], "dtype": "int64"}
    plain = {"name": "xs", "type": "list", "length": 3, "repr": "[1, 2, 3]"}

    assert after("describe_variable", json.dumps(series)).text == (
        "`s` is a Series of shape 10 (int64)."
    )
    assert after("describe_variable", json.dumps(plain)).text == "`xs` is a list of length 3."


def test_a_missing_variable_points_to_the_list() -> None:
    error = {"error": "variable_not_found", "message": "no variable named 'nope'"}

    reply = after("describe_variable", json.dumps(error), status="error")

    assert "no variable named 'nope'" in reply.text and "what data do I have?" in reply.text


def test_a_tool_error_is_reported_with_its_code() -> None:
    error = {"error": "kernel_busy", "message": "the kernel did not answer in 10 s."}

    reply = after("list_variables", json.dumps(error), status="error")

    assert reply.text == (
        "The `list_variables` tool could not answer (`kernel_busy`): the kernel did not "
        "answer in 10 s."
    )


def run_result(**fields: Any) -> str:
    base: dict[str, Any] = {
        "status": "ok",
        "stdout": "",
        "stderr": "",
        "result": None,
        "displays": [],
        "images": [],
        "error": None,
        "note": "",
        "elapsed": 0.2,
    }
    return json.dumps({**base, **fields})


def test_a_run_that_made_a_plot_says_it_is_shown() -> None:
    images = [{"mimeType": "image/png", "data": PNG}]

    reply = after("run_python", run_result(displays=["<Figure>"], images=images))

    assert "plot is shown" in reply.text and "agent_" in reply.text
    assert not reply.tool_calls


def test_the_image_the_middleware_injected_after_a_run_is_taken_as_the_plot() -> None:
    call = AIMessage("", tool_calls=[{"name": "run_python", "args": {}, "id": "call_p"}])
    placeholder = [{"mimeType": "image/png", "data": None, "omitted": True}]
    result = ToolMessage(run_result(images=placeholder), tool_call_id="call_p", name="run_python")
    injected = HumanMessage(
        content=[
            {"type": "text", "text": "Plot from run_python:"},
            {"type": "image", "source_type": "base64", "mime_type": "image/png", "data": PNG},
        ],
        additional_kwargs={"gth_image_injected": True},
    )

    reply = plan(HumanMessage("plot revenue by month"), call, result, injected)

    assert "plot is shown" in reply.text and "photo" not in reply.text
    # A photo injected after capture_image is still a photo.
    photo_call = AIMessage("", tool_calls=[{"name": "capture_image", "args": {}, "id": "c"}])
    photo = ToolMessage("[image captured]", tool_call_id="c", name="capture_image")
    assert "photo" in plan(HumanMessage("selfie"), photo_call, photo, injected).text


def test_a_run_without_a_plot_reports_what_it_printed() -> None:
    reply = after("run_python", run_result(stdout="hello\n```\n", result="42"))

    assert reply.text.startswith("The code ran.")
    assert "It printed:\n\n````text\nhello\n```\n````" in reply.text
    assert "It returned:\n\n```text\n42\n```" in reply.text
    assert after("run_python", run_result()).text == "The code ran, with no output."


def test_a_failed_run_reports_its_error() -> None:
    error = {"ename": "KeyError", "evalue": "'revenu'", "traceback": "Traceback...\nKeyError"}

    reply = after("run_python", run_result(status="error", error=error), status="error")

    assert "`KeyError: 'revenu'`" in reply.text and "describe" in reply.text
    timeout = after("run_python", run_result(status="timeout", note="interrupted"), status="error")
    assert "too long" in timeout.text


def test_a_rejected_run_is_acknowledged_politely() -> None:
    rejection = (
        "The user rejected the run_python call; it did not run. Do not retry it unless the user "
        "asks; try another way or ask the user."
    )

    reply = after("run_python", rejection, status="error")

    assert reply.text.startswith("All right, I didn't run the code.")
    assert not reply.tool_calls
    refused = after("run_python", "Refused: the run_python call matches ...", status="error")
    assert "approvals" in refused.text


def test_an_edited_run_is_read_through_the_note() -> None:
    note = (
        'Note: the user edited this call before it ran; it ran with the arguments {"code": '
        '"print(1)"}, not the ones you sent. Do not re-issue your original call.\n\n'
    )

    reply = after("run_python", note + run_result(stdout="1\n"))

    assert reply.text.startswith("You edited the code before it ran. The code ran.")
    # A JSON result carries the note inside (the widget still draws it).
    inside = json.loads(run_result(stdout="1\n")) | {"userEdited": "the user edited this call"}
    reply = after("run_python", json.dumps(inside))
    assert reply.text.startswith("You edited the code before it ran. The code ran.")


@pytest.mark.parametrize(
    "content",
    ["", "not json", "{", "[1, 2]", '{"variables": "x"}', '{"columns": 3, "shape": "big"}'],
)
def test_odd_tool_results_still_get_an_answer(content: str) -> None:
    for name in ("list_variables", "describe_variable", "run_python"):
        for status in ("success", "error"):
            reply = after(name, content, status=status)
            assert reply.text and not reply.tool_calls, (name, content)


# -- in the agent loop -------------------------------------------------------------------------


@tool
def list_variables(offset: int = 0, limit: int = 50) -> str:
    """Lists the kernel's variables (here: a fixed sales DataFrame)."""
    return json.dumps(
        {
            "variables": [frame_entry("sales", SALES_COLUMNS)],
            "total": 1,
            "offset": offset,
            "limit": limit,
            "next_offset": None,
        }
    )


@tool
def run_python(code: str, justification: str | None = None) -> str:
    """Runs code in the kernel (here: checks it parses, and returns a plot)."""
    ast.parse(code)
    return run_result(images=[{"mimeType": "image/png", "data": PNG}])


async def test_the_data_phrases_end_in_an_answer_in_the_agent_loop() -> None:
    agent = create_agent(
        DemoChatModel(tokenDelayMs=0),
        tools=[list_variables, run_python],
        checkpointer=InMemorySaver(),
    )
    thread: Any = {"configurable": {"thread_id": "data"}}

    ask: Any = {"messages": [HumanMessage("what data do I have?")]}
    first = await agent.ainvoke(ask, thread)
    ask = {"messages": [HumanMessage("plot revenue by month")]}
    second = await agent.ainvoke(ask, thread)

    kinds = [type(m).__name__ for m in second["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"] * 2
    assert "`sales`: DataFrame" in first["messages"][-1].text
    plot_call = second["messages"][5].tool_calls[0]
    assert plot_call["name"] == "run_python" and "sales.groupby(" in plot_call["args"]["code"]
    assert "plot is shown" in second["messages"][-1].text
