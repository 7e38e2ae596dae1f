"""The host object: which notebook kernel a run's kernel tools reach is the host's to say."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.agui import ProtocolError
from gth_jupyter.config import GthConfig
from gth_jupyter.runs import RunService
from gth_jupyter.server.host import GthHost
from gth_jupyter.store import CheckpointStore


async def test_a_kernel_is_asked_for_only_when_named_and_allowed() -> None:
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": []}})
    registry = AgentRegistry(config, command="notebook", store=CheckpointStore("memory"))
    host = GthHost(registry, RunService())  # a host that runs no kernels
    allowed_calls: list[Any] = []

    async def allowed() -> bool:
        allowed_calls.append(True)
        return True

    async def refused() -> bool:
        return False

    assert await host.kernel_for(None, refused) is None
    with pytest.raises(ProtocolError) as forbidden:
        await host.kernel_for("k1", refused)
    assert (forbidden.value.status, forbidden.value.code) == (403, "kernel_forbidden")
    with pytest.raises(ProtocolError) as missing:
        await host.kernel_for("k1", allowed)  # this host runs no kernels
    assert (missing.value.status, missing.value.code) == (404, "kernel_not_found")
    assert allowed_calls == [True]
