"""list_variables and describe_variable against a real kernel: silent, bounded, read-only."""

from __future__ import annotations

import pytest

from gth_jupyter.kernel import KernelClient, describe_variable, list_variables, run_python

from .conftest import user_names

SETUP = """
import os, json
from collections import OrderedDict
def helper(): pass
class Thing: pass
_private = 1
numbers = [1, 2, 3]
text = "hello"
mapping = {"a": 1}
thing = Thing()
"""


async def test_user_variables_are_listed_and_the_rest_left_out(kernel: KernelClient) -> None:
    await run_python(kernel, SETUP)
    answer = await list_variables(kernel)
    assert answer.error is None, answer.data
    listed = {v["name"]: v for v in answer.data["variables"]}
    assert sorted(listed) == ["mapping", "numbers", "text", "thing"]
    assert listed["numbers"]["type"] == "list" and listed["numbers"]["length"] == 3
    assert listed["thing"]["type"] == "__main__.Thing"
    assert listed["text"]["size_bytes"] > 0
    assert answer.data["total"] == 4 and answer.data["next_offset"] is None


async def test_a_large_namespace_is_paged(kernel: KernelClient) -> None:
    await run_python(kernel, "for agent_i in range(60): globals()[f'v{agent_i:03d}'] = agent_i")
    first = await list_variables(kernel, limit=25)
    assert first.data["total"] == 61 and first.data["next_offset"] == 25
    assert first.data["variables"][0]["name"] == "agent_i"
    last = await list_variables(kernel, offset=50, limit=25)
    assert [v["name"] for v in last.data["variables"]][-1] == "v059"
    assert len(last.data["variables"]) == 11 and last.data["next_offset"] is None


async def test_introspection_leaves_no_names_and_no_history(kernel: KernelClient) -> None:
    await run_python(kernel, SETUP)
    before = await user_names(kernel)
    await list_variables(kernel)
    await describe_variable(kernel, "numbers")
    await describe_variable(kernel, "missing")
    assert await user_names(kernel) == before


@pytest.mark.parametrize(
    "name",
    ["numbers.__class__", "numbers[0]", "__import__('os').system('touch agent_pwned')", "lambda"],
)
async def test_a_name_that_is_code_is_refused(kernel: KernelClient, name: str) -> None:
    await run_python(kernel, SETUP)
    answer = await describe_variable(kernel, name)
    assert answer.error == "invalid_name"
    assert (await run_python(kernel, "import os; os.path.exists('agent_pwned')")).result == "False"


async def test_an_unknown_name_and_a_bounded_repr(kernel: KernelClient) -> None:
    await run_python(kernel, "big = 'x' * 1_000_000\nnested = [list(range(1000))] * 1000")
    assert (await describe_variable(kernel, "nope")).error == "variable_not_found"
    big = await describe_variable(kernel, "big")
    assert big.data["length"] == 1_000_000 and len(big.data["repr"]) <= 2002
    assert "repr" not in (await describe_variable(kernel, "big", data_context="schema")).data
    nested = await describe_variable(kernel, "nested", data_context="full")
    assert len(nested.data["repr"]) <= 10_002


FRAME = """
import pandas as pd
sales = pd.DataFrame({
    "month": [f"2026-{m:02d}" for m in range(1, 13)] * 5,
    "revenue": [float(i) for i in range(60)],
    "units": list(range(60)),
    "region": ["north", None, "south", "east", "west", "north"] * 10,
})
"""


async def test_a_dataframe_schema_is_exact(kernel: KernelClient) -> None:
    pytest.importorskip("pandas")
    await run_python(kernel, FRAME)
    listed = (await list_variables(kernel)).data["variables"]
    assert [v["name"] for v in listed] == ["sales"]
    assert listed[0]["type"] == "pandas.DataFrame" and listed[0]["shape"] == [60, 4]
    dtypes = [(c["name"], c["dtype"]) for c in listed[0]["columns"]]
    assert dtypes[1:3] == [("revenue", "float64"), ("units", "int64")]
    assert [name for name, _ in dtypes] == ["month", "revenue", "units", "region"]
    schema = await describe_variable(kernel, "sales", data_context="schema")
    assert schema.data["columns"] == listed[0]["columns"]
    assert schema.data["null_counts"] == {"month": 0, "revenue": 0, "units": 0, "region": 10}
    assert "head" not in schema.data and "describe" not in schema.data


async def test_describe_follows_the_data_context(kernel: KernelClient) -> None:
    pytest.importorskip("pandas")
    await run_python(kernel, FRAME)
    sample = await describe_variable(kernel, "sales")
    assert len(sample.data["head"]["data"]) == 5
    assert sample.data["head"]["columns"] == ["month", "revenue", "units", "region"]
    assert sample.data["describe"]["data"][0][0] == 60.0  # count of revenue
    full = await describe_variable(kernel, "sales", data_context="full")
    assert len(full.data["head"]["data"]) == 50
    series = await describe_variable(kernel, "sales", data_context="sample")
    assert series.shell == "subshell"
    await run_python(kernel, "revenue = sales['revenue']")
    column = await describe_variable(kernel, "revenue")
    assert column.data["dtype"] == "float64" and column.data["null_count"] == 0


async def test_an_array_has_shape_dtype_and_statistics(kernel: KernelClient) -> None:
    pytest.importorskip("numpy")
    code = "import numpy as np\ngrid = np.arange(12, dtype='float64').reshape(3, 4)"
    await run_python(kernel, code)
    answer = await describe_variable(kernel, "grid")
    assert answer.data["shape"] == [3, 4] and answer.data["dtype"] == "float64"
    assert answer.data["stats"]["min"] == 0.0 and answer.data["stats"]["max"] == 11.0
    assert answer.data["stats"]["mean"] == 5.5
    schema = await describe_variable(kernel, "grid", data_context="schema")
    assert "stats" not in schema.data and "head" not in schema.data


HOSTILE = """
class Hostile:
    @property
    def shape(self):
        raise RuntimeError("no shape for you")
    def __repr__(self):
        raise RuntimeError("no repr either")
hostile = Hostile()
plain = 1
"""


async def test_a_variable_that_raises_does_not_spoil_the_page(kernel: KernelClient) -> None:
    await run_python(kernel, HOSTILE)
    listed = {v["name"]: v for v in (await list_variables(kernel)).data["variables"]}
    assert "shape" not in listed["hostile"] and "error" not in listed["hostile"]  # never read
    assert listed["plain"] == {"name": "plain", "type": "int", "size_bytes": 28}
    described = await describe_variable(kernel, "hostile")
    assert described.error is None and described.data["repr"].startswith("<Hostile instance")
    assert "shape" not in described.data and "shape_error" not in described.data
