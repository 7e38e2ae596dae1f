"""``GthChat``: the chat widget the ``%gth`` magic shows.

Each instance carries only a tiny loader as its ``_esm`` (it imports the real bundle from the
server extension's static route, cached by the browser) and a few small traits; the transcript
is never stored in widget state, the widget rebuilds it from the server on every render.
Displayed, it is one output with a display id holding the widget's view and a static copy of
its turn, refreshed when the page says the turn ended (``host/cell_output.py``).
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...contract.names import DEFAULT_AGENT
from ..host import cell_output, client_tools
from ..host.kernel_access import kernel_id
from ..host.label import configured_model
from ..host.threads import notebook_thread_id
from ..host.turns import next_turn
from .front_end import asking_cell_id

if TYPE_CHECKING:
    from ..host.comm_transport import CommTransport

_MISSING_BUNDLE = """export default { render({ el }) {
  el.textContent = "gth-jupyter: the widget bundle is missing; run `npm run build` in js/.";
} };"""


def _loader() -> str:
    path = resources.files("gth_jupyter") / "static" / "loader.js"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _MISSING_BUNDLE


def _synced_text(help: str, default: str = "") -> t.Unicode[str, str | bytes]:
    """A text trait the page shares (synced both ways with the widget's view)."""
    return t.Unicode(default, help=help).tag(sync=True)


def _synced_flag(help: str) -> t.Bool[bool, bool | int]:
    """A flag the page shares, off by default."""
    return t.Bool(False, help=help).tag(sync=True)


class GthChat(anywidget.AnyWidget):  # type: ignore[misc]
    """A chat with the agent on one thread; the browser talks AG-UI to the agent."""

    _esm = _loader()

    thread_id = _synced_text("The thread the chat talks on (by default one per notebook).")
    agent = _synced_text("The agent's name in gth/agents/{name}/run.", DEFAULT_AGENT)
    transport = t.Enum(
        ["auto", "http", "comm"],
        default_value="auto",
        help="How the page reaches the agent: the server extension over HTTP, the kernel over "
        "this widget's comm, or auto (HTTP where the extension answers, else the comm).",
    ).tag(sync=True)
    model_label = _synced_text("The model shown in the chat's header.")
    offline = _synced_flag("Whether the model is the offline demo.")
    pending_prompt = _synced_text(
        "A prompt for the page to send (set by ask(); cleared once sent)."
    )
    base_url = _synced_text("The Jupyter server's base URL; empty: read from the page.")
    show_event_log = _synced_flag("Show the panel that lists each AG-UI event as it arrives.")
    turn_id = _synced_text(
        "The turn this widget started (a %gth <prompt> cell): it shows that turn alone and "
        "tags what is typed into it; empty: the whole thread (%gth alone)."
    )
    kernel_id = _synced_text(
        "The id the Jupyter server knows this widget's kernel by, sent with each run so the "
        "agent's kernel tools work in this kernel's live namespace; empty: not known."
    )
    after_turn = _synced_text(
        "The turn of the %gth cell the kernel ran before this one on the same thread: the "
        "page sends this widget's prompt only once that turn is done."
    )
    display_id = _synced_text(
        "The display id of this widget's output (view and static copy), whose copy is "
        "written when a turn ends; the page names it to the notebook extension."
    )
    cell_id = _synced_text(
        "The id of the cell that made this widget, as its front end sent it; empty: none."
    )
    client_tools = t.List(
        t.Dict(),
        help="Browser tools from client_tool(): {name, description, parameters, js} each, "
        "declared to the agent on every run beside the built-in ones.",
    ).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("thread_id", notebook_thread_id())
        kwargs.setdefault("client_tools", client_tools.registered_tools())
        kwargs.setdefault("kernel_id", kernel_id())
        kwargs.setdefault("cell_id", asking_cell_id())
        kwargs.setdefault("display_id", cell_output.new_display_id())
        super().__init__(**kwargs)
        #: The cell's prompt, shown by the static copy before the thread has it.
        self._prompt: str | None = None
        if not self.model_label:
            # From the configuration alone: building the agent would import LangChain.
            configured = configured_model()
            if configured is not None:
                self.model_label, self.offline = configured.label, configured.offline
        # The comm transport loads with the page's first comm message (hosts with no server).
        self._comm_transport: CommTransport | None = None
        self.on_msg(self._on_message)
        client_tools.track(self)

    def ask(self, prompt: str) -> None:
        """Sends ``prompt`` from the widget, as if typed into it."""
        if self._prompt is None:
            self._prompt = prompt
        self.pending_prompt = prompt

    @property
    def prompt(self) -> str | None:
        """The first prompt this widget was asked to send (``None``: none yet)."""
        return self._prompt

    def _ipython_display_(self) -> None:
        # One output with a display id (view and static copy) instead of the widget's own
        # bundle: a cell's value is then no execute_result, and `display(w)` shows the same.
        cell_output.show(self)

    def _send_message(self, content: dict[str, Any]) -> None:
        self.send(content)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict):
            if content.get("type") == "turn_end":
                cell_output.refresh_on_turn_end(self, content)
                return
            if self._comm_transport is None:
                from ..host.comm_transport import CommTransport

                self._comm_transport = CommTransport(self._send_message)
            self._comm_transport.handle(content)


def chat(
    prompt: str | None = None,
    *,
    thread: str | None = None,
    agent: str = DEFAULT_AGENT,
    transport: str = "auto",
    event_log: bool = False,
) -> GthChat:
    """A chat widget on the notebook's thread (or ``thread``), optionally sending ``prompt``.

    With a prompt the widget is a turn of its own, sent after the turn the kernel started before
    it on that thread (so Run All keeps cell order); without one it shows the whole thread."""
    thread_id = thread or notebook_thread_id()
    turn_id, after_turn = next_turn(thread_id) if prompt else ("", "")
    widget = GthChat(
        thread_id=thread_id,
        agent=agent,
        transport=transport,
        show_event_log=event_log,
        turn_id=turn_id,
        after_turn=after_turn,
    )
    if prompt:
        widget.ask(prompt)
    return widget
