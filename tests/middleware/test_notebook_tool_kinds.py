"""The notebook tools' kinds per call, and how ``run_python``'s rules and grants reach the code
cells ``insert_cell`` and ``edit_cell`` write (the flows over a real server are in
``tests/server/test_notebook_tools_gating.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.agent.client_tools import make_client_tool
from gth_jupyter.config.schema import ApprovalEntry, ApprovalsConfig
from gth_jupyter.contract.run import ClientToolSpec
from gth_jupyter.middleware.approval_policy import decide
from gth_jupyter.middleware.approval_rules import Subject
from gth_jupyter.middleware.grants import grant_key
from gth_jupyter.tools.kinds import code_of_call, kind_of, kind_of_call
from gth_jupyter.tools.notebook_tools import notebook_spec

CODE = "agent_x = 1"


def declared(name: str, **extra: Any) -> Any:
    """The placeholder tool for what a page declared, however it declared it."""
    schema = {"type": "object", "properties": {}, "gth_kind": "read"}
    return make_client_tool(ClientToolSpec(name, "a page's own words", schema, **extra))


@pytest.mark.parametrize(
    ("name", "args", "kind"),
    [
        ("read_notebook", {}, "read"),
        # A markdown cell is a write; a code cell the agent writes runs at the next Run All,
        # so it is code whether or not the call runs it.
        ("edit_cell", {"cell_id": "c", "source": "x", "cell_type": "markdown"}, "write"),
        ("edit_cell", {"cell_id": "c", "source": "x"}, "code"),
        ("edit_cell", {"cell_id": "c", "source": "x", "cell_type": "code"}, "code"),
        ("insert_cell", {"source": "# Notes", "cell_type": "markdown"}, "write"),
        ("insert_cell", {"source": "# Notes", "cell_type": "markdown", "run": True}, "write"),
        ("insert_cell", {"source": CODE}, "code"),
        ("insert_cell", {"source": CODE, "run": False}, "code"),
        ("insert_cell", {"source": CODE, "cell_type": "code", "run": 0}, "code"),
        ("insert_cell", {"source": CODE, "run": True}, "code"),
        # Only exactly "markdown" is exempt: whatever else the browser reads is not markdown.
        ("insert_cell", {"source": CODE, "cell_type": "Markdown"}, "code"),
        ("insert_cell", {"source": CODE, "cell_type": ["markdown"]}, "code"),
        ("edit_cell", {"cell_id": "c", "source": "x", "cell_type": None}, "code"),
    ],
)
def test_the_kind_of_each_call_is_ours(name: str, args: dict[str, Any], kind: str) -> None:
    tool = declared(name)
    assert kind_of_call(tool, args) == kind
    # Our schema and description, not the page's.
    assert tool.description == notebook_spec(name).description != "a page's own words"
    assert set(tool.args) == set(notebook_spec(name).parameters["properties"])


def test_the_code_of_insert_cell_is_its_source() -> None:
    tool = declared("insert_cell")
    assert code_of_call(tool, {"source": CODE, "run": True, "code": "other"}) == CODE


def test_other_client_tools_stay_ungated_kinds() -> None:
    assert kind_of(declared("roll_dice")) == "other"
    assert (declared("roll_dice").metadata or {}) == {"client": True}


def rules(mode: str, **lists: list[dict[str, Any]]) -> ApprovalsConfig:
    entries = {k: [ApprovalEntry(**e) for e in v] for k, v in lists.items()}
    return ApprovalsConfig(mode=mode, **entries)  # type: ignore[arg-type]


def entry(pattern: str) -> dict[str, Any]:
    return {"type": "tool", "matcher": "exact", "pattern": pattern}


RUN_CELL = Subject("tool", "insert_cell", command=CODE)


@pytest.mark.parametrize(
    ("mode", "action"),
    [("manual", "ask"), ("write", "ask"), ("assisted", "ask"), ("auto", "rate"), ("bypass", "run")],
)
def test_insert_cell_with_run_is_gated_as_run_python_at_every_mode(mode: str, action: str) -> None:
    run_python = Subject("tool", "run_python", command=CODE)
    assert decide(rules(mode), RUN_CELL, "code").action == action
    assert decide(rules(mode), run_python, "code").action == action


def test_run_pythons_restrictive_rules_reach_insert_cell_with_run() -> None:
    assert decide(rules("bypass", deny=[entry("run_python")]), RUN_CELL, "code").action == "deny"
    assert decide(rules("auto", escalate=[entry("run_python")]), RUN_CELL, "code").action == "ask"
    # An escalate rule for run_python outranks an allow entry for insert_cell.
    both = rules("manual", allow=[entry("insert_cell")], escalate=[entry("run_python")])
    assert decide(both, RUN_CELL, "code").action == "ask"


def test_run_pythons_allow_entry_does_not_reach_insert_cell() -> None:
    assert decide(rules("manual", allow=[entry("run_python")]), RUN_CELL, "code").action == "ask"
    assert decide(rules("manual", allow=[entry("insert_cell")]), RUN_CELL, "code").action == "run"


def test_code_grants_are_kept_apart_per_tool() -> None:
    run_python = Subject("tool", "run_python", command=CODE)
    assert grant_key(run_python, "code") == ("code", CODE)  # unchanged for run_python
    assert grant_key(RUN_CELL, "code") == ("code", CODE, "insert_cell")
