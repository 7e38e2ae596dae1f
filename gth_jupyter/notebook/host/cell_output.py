"""A chat widget's cell output: one display, the live widget beside a static copy of its turn.

``%gth`` shows its widget as a ``display_data`` output with a display id (an ``execute_result``
cannot carry one, so it could never be refreshed), holding the widget's view and a static copy
(:mod:`gth_jupyter.copy`): "waiting for the agent…" until the turn ends. Wherever widgets do
not render (GitHub, nbviewer, nbconvert, a kernel that is gone) the static copy is what people
read. The output's metadata ``{"gth_jupyter": {"display": <display id>}}`` lets the notebook
extension find it in the document.

Only the page knows when a turn ends, and each copy is written into the output once: through
the notebook extension's bridge where the page has one (JupyterLab routes a display update
only to the page that ran the cell, not to one reloaded since), else by the kernel's display
update. The page says so with ``{"type": "turn_end", "turnIds": [...]}``:

- over HTTP the server ran the turn, holds its thread and renders the copy from its one read
  of it (``GET gth/threads/{id}?turn=…&copy=1``); a page with no bridge hands it on
  (``"copy": {...}``) and the kernel writes it as it came, rendering and reading nothing and
  importing nothing of the agent (a ``.py`` configuration would run if it loaded);
  ``"copy": null`` says nothing of the turn reached the thread (its run was refused), and the
  kernel shows the cell's prompt, which only it knows, with no answer;
- over the comm (VS Code) the kernel ran the turn and renders it from its own store, on its
  loop thread, never blocking its main thread.

A copy the kernel renders is the kernel's to write, unless the page says it writes it
(``"pageWrites": true``: it has a bridge); then the kernel answers
``{"type": "static", "displayId", "data"}`` instead of updating the display.

A copy the page hands on is the page's own output, as anything its bridge writes: it is
written as it came (its three mimetypes only, as text, under the copy's size cap), not
escaped again. The server rendered it from the thread, escaping what the model wrote.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ...copy.render import COPY_MIMETYPES, MAX_CELL_BYTES, render_static_copy, waiting_copy
from ._host import handed_jupyter, kernel_host

if TYPE_CHECKING:
    from ...agent.registry import AgentRegistry
    from ...agent.runtime import Runtime
    from .loop import LoopThread

__all__ = [
    "MARKER",
    "WIDGET_VIEW",
    "new_display_id",
    "output_metadata",
    "refresh_on_turn_end",
    "show",
]

log = logging.getLogger(__name__)

#: The widget view's mimetype (what ipywidgets and anywidget put in their output).
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: The output metadata key naming a chat output (read by the notebook extension).
MARKER = "gth_jupyter"
#: A page cannot make the kernel read a thousand turns or echo megabytes.
MAX_TURNS = 50
MAX_ID = 200


class ChatOutput(Protocol):
    """What the cell output reads of a ``GthChat`` (kept structural: no import cycle)."""

    display_id: str
    thread_id: str
    turn_id: str
    agent: str

    @property
    def prompt(self) -> str | None: ...

    def _repr_mimebundle_(self, **kwargs: Any) -> Any: ...

    def send(self, content: dict[str, Any], buffers: Any = None) -> None: ...


def _changed(display_id: str, data: Mapping[str, str]) -> bool:
    """Whether ``data`` differs from what ``display_id`` shows, noting it as shown: an update
    that changes nothing is not sent (the notebook would draw the widget again for nothing)."""
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    host = kernel_host()
    with host.lock:
        if host.shown.get(display_id) == digest:
            return False
        host.shown[display_id] = digest
        return True


def new_display_id() -> str:
    return f"gth-{uuid.uuid4().hex}"


def output_metadata(display_id: str) -> dict[str, Any]:
    """The output's metadata: the marker the notebook extension looks for."""
    return {MARKER: {"display": display_id}}


def _widget_view(widget: ChatOutput) -> tuple[dict[str, Any], dict[str, Any]]:
    """The widget's own view entry and the metadata its host wants (Colab adds some)."""
    bundle = widget._repr_mimebundle_()
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
    view = {WIDGET_VIEW: data[WIDGET_VIEW]} if WIDGET_VIEW in data else {}
    return view, dict(metadata or {})


def _bundle(widget: ChatOutput, static: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    view, metadata = _widget_view(widget)
    return {**view, **static}, {**metadata, **output_metadata(widget.display_id)}


def show(widget: ChatOutput) -> None:
    """Displays ``widget`` as the cell's one output: its view and the waiting copy."""
    from IPython.display import display

    static = waiting_copy(widget.prompt)
    _changed(widget.display_id, static)
    data, metadata = _bundle(widget, static)
    # IPython's display functions carry no annotations.
    display(data, raw=True, metadata=metadata, display_id=widget.display_id)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class _Request:
    """What a ``turn_end`` asks, read on the main thread (the loop thread touches no traits)."""

    thread_id: str
    turns: tuple[str, ...]
    #: Whether the server ran the turns (HTTP): then ``copy`` is what it rendered of them, or
    #: ``None`` when it holds nothing of them. Otherwise the kernel ran them (the comm).
    served: bool
    copy: dict[str, str] | None
    #: Whether the page writes a copy the kernel renders (through its bridge): then it is
    #: answered, not displayed.
    page_writes: bool
    agent: str
    prompt: str | None
    display_id: str
    view: dict[str, Any]
    metadata: dict[str, Any]


def refresh_on_turn_end(
    widget: ChatOutput,
    content: Mapping[str, Any],
    *,
    registry: Callable[[], AgentRegistry | None] | None = None,
    loop: Callable[[], LoopThread] | None = None,
) -> Future[None] | None:
    """Handles the page's ``turn_end``: writes the turn's static copy, on the kernel's loop thread.

    ``turnIds`` are the widget's turns so far; none (``%gth`` alone) is the whole thread, as its
    widget shows it. A malformed message gets an ``error`` reply, as the comm transport's do.
    ``registry`` and ``loop`` stand in for the kernel host's built agent and loop thread."""
    request_id = str(content.get("requestId", ""))[:MAX_ID]
    turns = content.get("turnIds", [])
    copy = content.get("copy")
    problem = ""
    if (
        not isinstance(turns, list)
        or len(turns) > MAX_TURNS
        or not all(isinstance(t, str) and 0 < len(t) <= MAX_ID for t in turns)
    ):
        problem = f"turnIds must be a list of at most {MAX_TURNS} turn ids"
    elif copy is not None and not _is_copy(copy):
        problem = (
            f"copy must hold text/html, text/markdown and text/plain as text, at most "
            f"{MAX_CELL_BYTES // 1024} KiB"
        )
    if problem:
        from ...agui.errors import invalid_message
        from .comm_transport import refusal_message

        widget.send(refusal_message(request_id, invalid_message(problem)))
        return None
    if not turns and widget.turn_id:
        turns = [widget.turn_id]
    view, metadata = _widget_view(widget)
    request = _Request(
        thread_id=widget.thread_id,
        turns=tuple(dict.fromkeys(turns)),
        served="copy" in content,
        copy={mime: copy[mime] for mime in COPY_MIMETYPES} if copy is not None else None,
        page_writes=content.get("pageWrites") is True,
        agent=widget.agent,
        prompt=widget.prompt,
        display_id=widget.display_id,
        view=view,
        metadata={**metadata, **output_metadata(widget.display_id)},
    )
    agents = registry or (lambda: kernel_host().built_registry())
    thread = loop() if loop is not None else kernel_host().loop()
    return thread.submit(_refresh(widget, request, agents))


async def _refresh(
    widget: ChatOutput, request: _Request, registry: Callable[[], AgentRegistry | None]
) -> None:
    try:
        data = await _copy(request, registry)
        if data is None:
            return
        if request.page_writes and request.copy is None:
            widget.send({"type": "static", "displayId": request.display_id, "data": data})
        elif _changed(request.display_id, data):
            from IPython.display import update_display

            update_display(  # type: ignore[no-untyped-call]
                {**request.view, **data},
                raw=True,
                metadata=request.metadata,
                display_id=request.display_id,
            )
    except Exception:
        # The page's copy stays as it was; the live widget is unaffected.
        log.exception("gth-jupyter: could not refresh the static copy of %s", request.display_id)
        raise


async def _copy(
    request: _Request, registry: Callable[[], AgentRegistry | None]
) -> dict[str, str] | None:
    """The copy to write: the server's as it came; for turns the server holds nothing of, the
    cell's prompt with no answer; for turns the kernel ran, rendered from its store."""
    if request.copy is not None:
        return request.copy
    if request.served:
        return render_static_copy({"messages": [], "interrupts": []}, prompt=request.prompt)
    found = await _read(request, registry)
    if found is None:
        return None
    view, save_photos = found
    return render_static_copy(view, prompt=request.prompt, save_photos=save_photos)


def _is_copy(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and all(isinstance(value.get(mime), str) for mime in COPY_MIMETYPES)
        and sum(len(value[mime].encode()) for mime in COPY_MIMETYPES) <= MAX_CELL_BYTES
    )


async def _read(
    request: _Request, registry: Callable[[], AgentRegistry | None]
) -> tuple[dict[str, Any], bool] | None:
    """The turns the kernel ran (over the comm) as one view (messages in order, then
    interrupts), read from its own store, and whether photos may be saved
    (``jupyter.savePhotos``). ``None`` when the kernel has no agent to read them with (it ran
    nothing).

    ``None`` too while a run of those turns is in flight again (a follow-up, an approval
    answered since the page asked): refreshing the output draws the widget again, and the view
    that goes stops the run it shows. That run's end asks again."""
    agents = registry()
    if agents is None:
        log.warning("gth-jupyter: no view of %s to refresh its copy from", request.display_id)
        return None
    from ...agui.history import thread_view

    runtime = await reader(agents, request.agent)
    turns = request.turns or (None,)
    views = [await thread_view(runtime, request.thread_id, turn) for turn in turns]
    if _running(views[-1], request.turns):
        return None
    merged: dict[str, Any] = {
        "messages": [m for v in views for m in v["messages"]],
        "interrupts": [i for v in views for i in v["interrupts"]],
        "turns": [t for v in views for t in v["turns"]],  # their usage ends the copy
    }
    return merged, _save_photos(agents)


def _save_photos(agents: AgentRegistry | None) -> bool:
    """``jupyter.savePhotos`` of the server that started this kernel, else of the kernel's
    agent when it is built (reading it must not load a configuration)."""
    handed = handed_jupyter()
    if handed is not None:
        return handed.get("savePhotos") is True
    jupyter = getattr(agents.config, "jupyter", None) if agents is not None else None
    return bool(getattr(jupyter, "save_photos", False))


def _running(view: Mapping[str, Any], turns: tuple[str, ...]) -> bool:
    """Whether a run of ``turns`` (none: the whole thread) holds the thread: the thread's last
    turn is one of them and a run is in flight."""
    if not view.get("busy"):
        return False
    listed = view.get("turns") or []
    return not turns or (bool(listed) and listed[-1].get("turnId") in turns)


async def reader(agents: AgentRegistry, name: str) -> Runtime:
    """A runtime that reads the agent's threads without starting its MCP servers: the agent's
    own model, tools and middleware (the graph's nodes and state, so its interrupts are read
    too) over the registry's store. A widget served over HTTP never runs the agent in the
    kernel; its turn's end must not spawn MCP processes or open remote sessions there."""
    from ...agent.runtime import Runtime
    from ...agui.run import runtime_of

    parts = agents.parts
    if parts is None or name not in agents.names:
        # The refusal the comm transport would give (no agent, or an unknown one).
        return await runtime_of(agents, name)
    readers = kernel_host().readers  # one per registry, built once; the registry outlives it
    reader = readers.get(agents)
    if reader is None:
        reader = readers[agents] = Runtime(
            parts.model,
            parts.tools,
            checkpointer=await agents.store.get(),
            middleware=parts.middleware,
            system_prompt=parts.system_prompt,
            recursion_limit=parts.recursion_limit,
            leases=agents.store.leases,
            threads=agents.store.threads,
            pricer=parts.pricer,
            model_name=(parts.provider, parts.model_name or ""),
        )
    return reader
