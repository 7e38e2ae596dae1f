"""list_variables and describe_variable at their edges: the kernel's own names (its cell history)
are refused, a huge value is described without being copied whole, and listing runs none of the
user's code (no property, ``__len__``, ``__sizeof__`` or ``__class__`` of theirs)."""

from __future__ import annotations

import pytest

from gth_jupyter.kernel import KernelClient, describe_variable, list_variables, run_python
from gth_jupyter.kernel.introspect import _inspect

from .conftest import evaluate

SECRET = "sk-live-4242-deleted"


@pytest.mark.parametrize("name", ["In", "Out", "_ih", "_i1", "_", "__builtins__", "get_ipython"])
async def test_names_hidden_from_the_list_are_refused(kernel: KernelClient, name: str) -> None:
    # A real cell, kept in the history as a notebook keeps it, and then deleted.
    await kernel.execute(f"API_KEY = {SECRET!r}", shell="main", store_history=True)
    await kernel.execute("del API_KEY\nkept = 1", shell="main", store_history=True)
    assert await evaluate(kernel, f"any({SECRET!r} in cell for cell in In)")  # still there

    listed = (await list_variables(kernel)).data["variables"]
    assert [v["name"] for v in listed] == ["kept"]
    answer = await describe_variable(kernel, name)
    assert answer.error == "hidden_name" and SECRET not in str(answer.data)
    assert "hidden" in answer.data["message"]
    # The kernel applies the same rule when the check before sending is skipped.
    direct = await _inspect(
        kernel,
        {"op": "describe", "name": name, "data_context": "full"},
        shell="subshell",
        timeout=10.0,
    )
    assert direct.error == "hidden_name" and SECRET not in str(direct.data)
    assert (await describe_variable(kernel, "kept")).data["repr"] == "1"


PEAK_KB = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"


async def test_a_large_bytes_is_sliced_before_its_repr(kernel: KernelClient) -> None:
    await run_python(kernel, "blob = b'\\x01' * 50_000_000\nwide = [blob, bytearray(blob)]")
    before = await evaluate(kernel, PEAK_KB)
    blob = await describe_variable(kernel, "blob", data_context="full")
    wide = await describe_variable(kernel, "wide", data_context="full")
    grown_mb = (await evaluate(kernel, PEAK_KB) - before) / 1024
    # A whole repr would be 200 MB for each (four characters a byte); a slice is a few KB.
    assert grown_mb < 50, f"the kernel's peak memory grew {grown_mb:.0f} MB"
    assert blob.data["length"] == 50_000_000
    assert blob.data["repr"].startswith("b'\\x01\\x01") and len(blob.data["repr"]) <= 10_001
    assert wide.data["repr"].startswith("[b'\\x01") and "bytearray(b'\\x01" in wide.data["repr"]
    assert len(wide.data["repr"]) <= 10_001


TRAPS = """
import pathlib
def agent_ran(what):
    pathlib.Path('user_code_ran').open('a').write(what + '\\n')

class Trap:
    @property
    def shape(self):
        agent_ran('shape'); return (1, 2)
    def __len__(self):
        agent_ran('len'); return 3
    def __sizeof__(self):
        agent_ran('sizeof'); return 10
    @property
    def __class__(self):
        agent_ran('class'); return list

class TrapList(list):
    def __len__(self):
        agent_ran('list len'); return 0
    def __iter__(self):
        agent_ran('list iter'); return iter([])

trap = Trap()
trap_list = TrapList([1, 2, 3])
numbers = [1, 2]
"""


async def test_listing_runs_none_of_the_users_code(kernel: KernelClient) -> None:
    await run_python(kernel, TRAPS)
    answer = await list_variables(kernel)
    listed = {v["name"]: v for v in answer.data["variables"]}
    assert listed["trap"]["type"] == "__main__.Trap" and "shape" not in listed["trap"]
    assert "length" not in listed["trap"] and listed["trap"]["size_bytes"] > 0
    assert (
        listed["trap_list"]["type"] == "__main__.TrapList" and "length" not in listed["trap_list"]
    )
    assert listed["numbers"]["length"] == 2  # builtins still have their length
    for context in ("schema", "sample"):
        described = await describe_variable(kernel, "trap_list", data_context=context)
        assert described.error is None
    assert described.data["repr"] == "TrapList([1, 2, 3])"  # the builtin's own iteration
    schema = await describe_variable(kernel, "trap", data_context="schema")
    assert schema.error is None and "shape" not in schema.data
    ran = await run_python(kernel, "import os; os.path.exists('user_code_ran')")
    assert ran.result == "False"
