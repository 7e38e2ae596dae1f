"""A run that names a kernel needs Jupyter's own permission to run code in kernels, not just the
``gth`` resource: on a real Jupyter server whose authorizer gives Bob ``gth`` but not
``kernels``, Bob naming Alice's kernel in ``forwardedProps.gth.kernelId`` is refused with ``403
kernel_forbidden`` before his run starts, so no kernel tool reads or changes her namespace."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import User
from tornado.httpclient import HTTPClientError

from gth_jupyter.kernel.access import ClientAccess
from gth_jupyter.kernel.pool import KernelPool
from gth_jupyter.server.host import HOST_KEY
from tests.sse import sse_events
from tests.users import HeaderIdentity

KERNEL_TOOLS = ["list_variables", "describe_variable", "run_python"]
#: The model's turns, in call order across runs. Alice's first run sets ``secret``; the next run
#: to reach the model reads the kernel's variables and overwrites ``secret``. Were Bob's run let
#: through, it would be that run, in Alice's kernel.
SCRIPT: list[Any] = [
    {"toolCalls": [{"name": "run_python", "args": {"code": "secret = 'alice-only'"}, "id": "a1"}]},
    "Set.",
    {
        "toolCalls": [
            {"name": "list_variables", "args": {}, "id": "next-read"},
            {"name": "run_python", "args": {"code": "secret = 'overwritten'"}, "id": "next-write"},
        ]
    },
    "Read and changed.",
]


class NoKernelsForBob(Authorizer):
    """Everything for everyone, except that Bob may not touch ``kernels`` (he keeps ``gth``).
    Asynchronous, as an authorizer may be; it notes every question about kernels."""

    asked: list[tuple[str, str]] = []

    async def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:
        if resource == "kernels":
            self.asked.append((user.username, action))
        return not (user.username == "bob" and resource == "kernels")


@pytest.fixture
def gth_config() -> dict[str, Any]:
    NoKernelsForBob.asked = []
    return {
        "llm": {"type": "fake", "responses": SCRIPT},
        "builtInTools": KERNEL_TOOLS,
        # run_python runs without asking, so that Bob's run would need no approval either.
        "approvals": {"allow": [{"type": "tool", "matcher": "exact", "pattern": "run_python"}]},
    }


@pytest.fixture(autouse=True)
def patient_introspection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded CI machine took over the 10 s an inspection is given (``kernel_busy``); what is
    tested here is who may reach the kernel, not how fast it answers."""

    def access(self: KernelPool, kernel_id: str) -> ClientAccess:
        return ClientAccess(lambda: self.client(kernel_id), introspection_timeout=120.0)

    monkeypatch.setattr(KernelPool, "access", access)


@pytest.fixture
def gth_server_app() -> dict[str, Any]:
    return {"identity_provider_class": HeaderIdentity, "authorizer_class": NoKernelsForBob}


def body(thread: str, run: str, kernel: str, **extra: Any) -> str:
    message = {"id": f"u-{run}", "role": "user", "content": "what data is there?"}
    return json.dumps(
        {
            "threadId": thread,
            "runId": run,
            "messages": [message],
            "forwardedProps": {"gth": {"kernelId": kernel}},
            **extra,
        }
    )


async def as_user(jp_fetch: Any, user: str, *path: str, **kwargs: Any) -> Any:
    headers = {"X-Test-User": user, **kwargs.pop("headers", {})}
    return await jp_fetch(*path, headers=headers, request_timeout=120, **kwargs)


async def refusal(jp_fetch: Any, user: str, *path: str, **kwargs: Any) -> tuple[int, Any]:
    with pytest.raises(HTTPClientError) as info:
        await as_user(jp_fetch, user, *path, **kwargs)
    assert info.value.response is not None
    return info.value.code, json.loads(info.value.response.body)


def results(raw: bytes) -> dict[str, Any]:
    return {
        e["toolCallId"]: json.loads(e["content"])
        for e in sse_events(raw)
        if e["type"] == "TOOL_CALL_RESULT"
    }


async def test_a_user_without_kernels_cannot_reach_anothers_kernel_through_the_agent(
    jp_fetch, jp_serverapp
) -> None:
    run = ("gth", "agents", "default", "run")
    kernel = json.loads(
        (await as_user(jp_fetch, "alice", "api", "kernels", method="POST", body="{}")).body
    )["id"]
    in_kernel = jp_serverapp.web_app.settings[HOST_KEY].kernels.access(kernel)
    try:
        first = await as_user(
            jp_fetch, "alice", *run, method="POST", body=body("ta", "ra1", kernel)
        )
        assert results(first.body)["a1"]["status"] == "ok"

        # The authorizer is as described: Bob has the agent, but not Jupyter's kernels API.
        assert (await refusal(jp_fetch, "bob", "api", "kernels"))[0] == 403
        assert (await as_user(jp_fetch, "bob", "gth", "threads")).code == 200

        status, answer = await refusal(
            jp_fetch, "bob", *run, method="POST", body=body("tb", "rb1", kernel)
        )
        assert status == 403 and answer["code"] == "kernel_forbidden"
        assert kernel in answer["message"] and "list_variables" in answer["message"]
        assert ("bob", "execute") in NoKernelsForBob.asked
        # Refused before the run started: no thread of his, no run to attach to, and Alice's
        # kernel is as she left it.
        threads = json.loads((await as_user(jp_fetch, "bob", "gth", "threads")).body)
        assert threads == {"threads": []}
        code, missing = await refusal(jp_fetch, "bob", "gth", "runs", "rb1", "events")
        assert (code, missing["code"]) == (404, "run_not_found")
        assert (await in_kernel.describe_variable("secret", "sample"))["repr"] == "'alice-only'"

        # A resume run (an approval's answer) is asked about the same way, before its interrupt
        # is looked for; and a kernel that does not exist is no different (nothing is revealed).
        resume = [{"interruptId": "i", "status": "resolved"}]
        status, answer = await refusal(
            jp_fetch, "bob", *run, method="POST", body=body("tb", "rb2", kernel, resume=resume)
        )
        assert (status, answer["code"]) == (403, "kernel_forbidden")
        status, answer = await refusal(
            jp_fetch, "bob", *run, method="POST", body=body("tb", "rb3", "no-such-kernel")
        )
        assert (status, answer["code"]) == (403, "kernel_forbidden")
        assert (await in_kernel.describe_variable("secret", "sample"))["repr"] == "'alice-only'"

        # Alice, allowed, still works in her kernel; hers is the run that got the model's next
        # turn, so none of Bob's requests ever reached the model.
        second = await as_user(
            jp_fetch, "alice", *run, method="POST", body=body("ta", "ra2", kernel)
        )
        done = results(second.body)
        listed = done["next-read"]
        assert [v["name"] for v in listed.get("variables", [])] == ["secret"], listed
        assert done["next-write"]["status"] == "ok"
        assert (await in_kernel.describe_variable("secret", "sample"))["repr"] == "'overwritten'"
    finally:
        await as_user(jp_fetch, "alice", "api", "kernels", kernel, method="DELETE")
