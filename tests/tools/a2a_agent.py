"""A tiny A2A agent (official ``a2a-sdk`` 1.x server) served by uvicorn on a loopback port.

What it says depends on the text it gets:

- ``book ...``: a task that asks "Which date?" (``input-required``); the answer to that task
  completes it with "Booked for <answer>.";
- ``sleep``: waits far longer than any test's timeout;
- ``long``: a reply of 50,000 characters (``A`` then ``Z``);
- ``fail``: the executor raises;
- anything else: a completed task whose reply counts the turns seen in the message's context
  (``turn <n> in context``) and repeats the text, so a test can tell that context ids were kept.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from tests.helpers import free_port


@dataclass
class Memory:
    """What the agent saw, by context id; and the tasks it asked a question in."""

    turns: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    asked: set[str] = field(default_factory=set)


class TestExecutor(AgentExecutor):
    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        task = context.current_task
        if task is None:
            assert context.message is not None
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        turns = self.memory.turns[task.context_id]
        turns.append(text)
        if task.id in self.memory.asked:
            self.memory.asked.discard(task.id)
            await updater.complete(
                updater.new_agent_message([new_text_part(f"Booked for {text}.")])
            )
        elif text.startswith("book"):
            self.memory.asked.add(task.id)
            await updater.requires_input(updater.new_agent_message([new_text_part("Which date?")]))
        elif text == "sleep":
            await asyncio.sleep(60)
        elif text == "long":
            body = "A" * 25_000 + "Z" * 25_000
            await updater.add_artifact([new_text_part(body)], name="long", last_chunk=True)
            await updater.complete()
        elif text == "fail":
            raise RuntimeError("the test agent failed on purpose")
        else:
            reply = f"turn {len(turns)} in context: {text}"
            await updater.complete(updater.new_agent_message([new_text_part(reply)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def make_card(url: str, *, streaming: bool = False, legacy: bool = False) -> AgentCard:
    """The card; ``legacy`` names only a v0.3 JSON-RPC interface (an older agent, such as ADK's)."""
    return AgentCard(
        name="test agent",
        description="Echoes, asks a question, sleeps, fails.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version="0.3" if legacy else "1.0", url=url
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["test"])],
    )


def make_app(card: AgentCard, memory: Memory, *, legacy: bool = False) -> Starlette:
    handler = DefaultRequestHandler(
        agent_executor=TestExecutor(memory), task_store=InMemoryTaskStore(), agent_card=card
    )
    rpc = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=legacy)
    return Starlette(routes=[*create_agent_card_routes(card), *rpc])


@contextmanager
def serve(
    card_url: str | None = None, *, streaming: bool = False, legacy: bool = False
) -> Iterator[tuple[str, Memory]]:
    """Serve the agent on ``http://127.0.0.1:<port>/`` in a thread; yields its URL and memory.

    ``card_url`` replaces the interface URL the card names (to test a card pointing elsewhere).
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    memory = Memory()
    card = make_card(card_url or url, streaming=streaming, legacy=legacy)
    with serve_app(make_app(card, memory, legacy=legacy), port):
        yield url, memory


@contextmanager
def serve_app(app: Starlette, port: int | None = None) -> Iterator[str]:
    """Serve ``app`` on a loopback port in a thread; yields ``http://127.0.0.1:<port>/``."""
    port = port or free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        else:
            raise RuntimeError("the test server did not start")
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        server.force_exit = True  # do not wait for the "sleep" request still open
        thread.join(10)
