"""MCP servers (``mcpServers``): their tools, as ``mcp__<key>__<tool>``, over long-lived sessions.

Built on ``langchain-mcp-adapters`` and the official ``mcp`` SDK (1.x), both in the ``mcp`` extra
and imported only when a command configures servers. :class:`McpServers` connects every server
concurrently (a timeout each), lists its tools and keeps one session per server open until
:meth:`McpServers.close`. Each session lives in its own task, which enters and leaves the
transport's contexts (anyio cancel scopes must be left in the task that entered them). A server
that fails to start or to list its tools is skipped and reported by :meth:`McpServers.info`; the
others work.

A server with ``authProvider: "OAuth"`` (HTTP or SSE) signs in with the SDK's OAuth client
(:mod:`gth_jupyter.tools.mcp.oauth`): tokens and the client registration live in a 0600 file per
server and user (:attr:`McpServers.owner`; the registry keeps one ``McpServers`` of the OAuth
servers per user, so a user's run never holds another's session). When it needs the person to
authorize, the start does not wait: the server is reported as ``needs_authorization`` with its
``authorizationUrl`` and has no tools; once the host's callback route delivers the code
(:meth:`McpServers.deliver_oauth`, from the user who started the sign-in alone), its session
completes in the background, it turns ``ok`` and :attr:`McpServers.generation` grows, so the
registry rebuilds the agent's tools on the next run.

Tool names: ``mcp__<key>__<tool>`` when that fits what providers accept
(``^[A-Za-z0-9_-]{1,64}$``), else cleaned and capped with a short hash (:func:`mcp_tool_name`).
Every tool carries our kind ``mcp`` (gated as ``other``), ``metadata["mcp"] = {"server",
"tool"}`` (the real names, also for a capped one) and ``metadata["annotations"]``: the four MCP
hints, with the spec's defaults for those the server leaves out (a read-only tool is not
destructive), which only the approvals ``hint`` matcher reads. Nothing else the server declares
is kept.

A stdio server's child gets a clean environment: the allow-list of
:func:`~gth_jupyter.tools.process.child_env` (plus ``passEnv``) and the server's own ``env``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from gth_jupyter.config.schema import McpServerConfig
from gth_jupyter.tools.kinds import HINTS_KEY, KIND_KEY, MCP_KEY
from gth_jupyter.tools.process import child_env

if TYPE_CHECKING:
    from .oauth import Delivery, OAuthCallbacks

__all__ = [
    "DEFAULT_HINTS",
    "MCP_EXTRA_MISSING",
    "McpServers",
    "ServerState",
    "mcp_tool_name",
]

log = logging.getLogger(__name__)

#: The MCP spec's defaults for hints a tool does not declare (the fail-closed reading).
DEFAULT_HINTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
MCP_EXTRA_MISSING = (
    "MCP support is not installed: pip install 'gth-jupyter[mcp]' (langchain-mcp-adapters and mcp)"
)
OAUTH_NEEDS_HTTP = "OAuth needs an HTTP or SSE server (url), not stdio"
#: For a host without the OAuth callback route (a kernel, a bare :class:`McpServers`).
OAUTH_UNSUPPORTED = "OAuth is not supported yet"
DEFAULT_TIMEOUT = 30.0

_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64

Status = Literal["pending", "ok", "error", "needs_authorization"]


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, or, when that is not a name providers accept, a cleaned and
    capped one that ends in a hash of the real names (so two long names never collide)."""
    name = f"mcp__{server}__{tool}"
    if _NAME_OK.match(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    clean_server = _BAD_CHARS.sub("_", server)[:24] or "_"
    clean_tool = _BAD_CHARS.sub("_", tool) or "_"
    head = f"mcp__{clean_server}__"
    room = _MAX_NAME - len(head) - len(digest) - 1
    return f"{head}{clean_tool[:room]}_{digest}"


def _hints(declared: Mapping[str, Any]) -> dict[str, bool]:
    """The four hints: those ``declared`` as booleans, the spec's defaults for the rest, except
    that a read-only tool's undeclared ``destructiveHint`` is false (the spec gives it meaning
    only when ``readOnlyHint`` is false; a read-only tool destroys nothing)."""
    hints = {
        h: v if isinstance(v := declared.get(h), bool) else d for h, d in DEFAULT_HINTS.items()
    }
    if hints["readOnlyHint"] and not isinstance(declared.get("destructiveHint"), bool):
        hints["destructiveHint"] = False
    return hints


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, which anyio raises."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if not inner:
            return exc
        exc = inner[0]


_CLOSED = frozenset({"BrokenResourceError", "ClosedResourceError", "EndOfStream"})


def _describe(exc: BaseException, transport: str | None = None) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip()
    if type(leaf).__name__ in _CLOSED or text == "Connection closed":
        if transport == "stdio":
            return "the server process ended before it answered (see its stderr)"
        return f"the connection closed before the server answered ({type(leaf).__name__})"
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _errlog() -> TextIO | None:
    """Where a stdio server's stderr goes: ours when it is a real file; ``None`` (nowhere) in a
    kernel, whose ``sys.stderr`` has no descriptor."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return sys.stderr


def _guard(tool: BaseTool, key: str) -> None:
    """A failure of the session or transport (a server that died, a connection that closed)
    becomes the call's error result, as an MCP error result already is, instead of ending the
    run: the adapter lets anything but an MCP ``isError`` result propagate."""
    inner = getattr(tool, "coroutine", None)
    if not isinstance(tool, StructuredTool) or inner is None:
        return
    real = (tool.metadata or {}).get("mcp", {}).get("tool", tool.name)

    async def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return await inner(*args, **kwargs)
        except ToolException:
            raise
        except Exception as exc:
            raise ToolException(
                f"The MCP server '{key}' could not run '{real}': {_describe(exc)}"
            ) from exc

    handler = tool.handle_tool_error

    def handle(error: ToolException) -> Any:
        if callable(handler):
            try:
                return handler(error)
            except ToolException:
                pass
        return str(error)

    tool.coroutine = guarded
    tool.handle_tool_error = handle


@dataclass
class ServerState:
    """One server: its status, its tools once listed, the error that skipped it."""

    key: str
    status: Status = "pending"
    tools: list[BaseTool] = field(default_factory=list)
    error: str | None = None
    #: Where the person authorizes this server (while ``needs_authorization``).
    authorization_url: str | None = None

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "tools": len(self.tools)}
        if self.error is not None:
            out["error"] = self.error
        if self.status == "needs_authorization" and self.authorization_url:
            out["authorizationUrl"] = self.authorization_url
        names = {t.name: (t.metadata or {}).get("mcp", {}).get("tool") for t in self.tools}
        if names:
            out["names"] = names
        return out


class McpServers:
    """The sessions to a command's MCP servers, opened by :meth:`start`, closed by :meth:`close`."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        cwd: Path,
        pass_env: Sequence[str] = (),
        timeout: float = DEFAULT_TIMEOUT,
        oauth_dir: Path | None = None,
        oauth_redirect_uri: str | None = None,
        owner: str | None = None,
        oauth_callbacks: OAuthCallbacks | None = None,
        oauth_legacy: bool = False,
    ) -> None:
        from .oauth import OAuthCallbacks

        self.servers = dict(servers)
        self.cwd = cwd
        self.pass_env = list(pass_env)
        self.timeout = timeout
        self.states = {key: ServerState(key) for key in self.servers}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stop: asyncio.Event | None = None
        self._started = False
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Where OAuth token files live (``None``: the Jupyter data directory's).
        self.oauth_dir = oauth_dir
        #: The absolute URL of the host's callback route; the host sets it.
        self.oauth_redirect_uri = oauth_redirect_uri
        #: The user whose sign-ins these sessions use (``None``: a host without users, whose
        #: token files are ``<oauth_dir>/<key>.json``); ``oauth_legacy``: that user is the
        #: server's owner, who takes over a token file of that single-user layout.
        self.owner = owner
        self.oauth_legacy = oauth_legacy
        #: Shared by every user's ``McpServers`` of a host, so one callback route finds them.
        self.oauth_callbacks = oauth_callbacks if oauth_callbacks is not None else OAuthCallbacks()
        #: Grows whenever the set of started servers' tools changes (after the start, and when
        #: an authorized server becomes ready), so a holder of :attr:`tools` knows to refresh.
        self.generation = 0

    def deliver_oauth(self, state: str, code: str, owner: str | None = None) -> Delivery:
        """The callback route's code for the authorization ``state``, from user ``owner``
        (see :meth:`~gth_jupyter.tools.mcp.oauth.OAuthCallbacks.deliver`)."""
        return self.oauth_callbacks.deliver(state, code, owner)

    @property
    def tools(self) -> list[BaseTool]:
        """The tools of the servers that started, in the order the servers are written."""
        return [t for state in self.states.values() for t in state.tools]

    def info(self) -> dict[str, dict[str, Any]]:
        """Per server: ``status`` (``pending`` until started), ``tools`` (how many), ``error``
        when skipped, ``names`` (tool name -> the server's own name)."""
        return {key: state.info() for key, state in self.states.items()}

    async def start(self) -> list[BaseTool]:
        """Connect every server at once (each within ``timeout``); the tools of those that
        started. Calling it again returns the same tools."""
        async with self._lock:
            if not self._started:
                self._started = True
                await self._start_all()
        return self.tools

    async def _start_all(self) -> None:
        if not self.servers:
            return
        try:
            import langchain_mcp_adapters  # noqa: F401
            import mcp  # noqa: F401
        except ImportError:
            for state in self.states.values():
                state.status, state.error = "error", MCP_EXTRA_MISSING
            log.warning("gth-jupyter: %s", MCP_EXTRA_MISSING)
            return
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        await asyncio.gather(*(self._start_one(key) for key in self.servers))
        self.generation += 1

    async def _start_one(self, key: str) -> None:
        state, config = self.states[key], self.servers[key]
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[BaseTool]] = loop.create_future()
        auth: Any = None
        asked: asyncio.Future[str] = loop.create_future()
        if config.auth_provider == "OAuth":
            problem = (
                OAUTH_NEEDS_HTTP
                if config.transport == "stdio" or not config.url
                else OAUTH_UNSUPPORTED
                if not self.oauth_redirect_uri
                else None
            )
            if problem is not None:
                state.status, state.error = "error", problem
                log.warning(
                    "gth-jupyter: MCP server %r skipped: %s%s",
                    key,
                    problem,
                    "" if self.oauth_redirect_uri else " (this host has no OAuth callback route)",
                )
                return
            auth = self._oauth(key, config, asked)
        task = asyncio.create_task(self._hold(key, config, ready, auth), name=f"gth-mcp-{key}")
        self._tasks[key] = task
        try:
            await asyncio.wait(
                (ready, asked), timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if not ready.done() and asked.done():
                state.status = "needs_authorization"
                ready.add_done_callback(lambda done: self._authorized(key, done))
                log.warning("gth-jupyter: MCP server %r needs authorization", key)
                return
            if not ready.done():
                raise asyncio.TimeoutError
            tools = ready.result()
        except asyncio.TimeoutError:
            state.status = "error"
            state.error = f"did not start and list its tools within {self.timeout:g} s"
            await self._end(key)
        except Exception as exc:
            state.status, state.error = "error", _describe(exc, config.transport)
            await self._end(key)
        else:
            state.status, state.tools = "ok", tools
            return
        log.warning("gth-jupyter: MCP server %r skipped: %s", key, state.error)

    def _oauth(self, key: str, config: McpServerConfig, asked: asyncio.Future[str]) -> Any:
        """The ``httpx.Auth`` that signs server ``key`` in; ``asked`` resolves with the
        authorization URL when the person has to authorize."""
        from .oauth import (
            FileTokenStorage,
            oauth_dir,
            oauth_provider,
            token_file,
            user_token_file,
        )

        state = self.states[key]
        url = config.url or ""
        base = oauth_dir(self.oauth_dir)
        path = (
            token_file(base, key)
            if self.owner is None
            else user_token_file(base, self.owner, key, legacy=self.oauth_legacy)
        )

        def on_authorization_url(authorization_url: str) -> None:
            state.authorization_url = authorization_url
            if state.status != "pending":
                state.status = "needs_authorization"
            if not asked.done():
                asked.set_result(authorization_url)

        return oauth_provider(
            url=url,
            storage=FileTokenStorage(path, url),
            callbacks=self.oauth_callbacks,
            redirect_uri=self.oauth_redirect_uri or "",
            on_authorization_url=on_authorization_url,
            owner=self.owner,
        )

    def _authorized(self, key: str, ready: asyncio.Future[list[BaseTool]]) -> None:
        """Server ``key`` finished starting after the person authorized it (or failed)."""
        state = self.states[key]
        state.authorization_url = None
        if ready.cancelled():
            return
        exc = ready.exception()
        if exc is not None:
            state.status, state.error = "error", _describe(exc)
            log.warning("gth-jupyter: MCP server %r skipped: %s", key, state.error)
            return
        state.status, state.tools, state.error = "ok", ready.result(), None
        self.generation += 1

    async def _hold(
        self,
        key: str,
        config: McpServerConfig,
        ready: asyncio.Future[list[BaseTool]],
        auth: Any = None,
    ) -> None:
        """The server's lifetime task: open the session, list the tools, wait for close()."""
        from langchain_mcp_adapters.tools import load_mcp_tools
        from mcp import ClientSession

        assert self._stop is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                session: ClientSession = await stack.enter_async_context(
                    self._session(config, auth)
                )
                await session.initialize()
                loaded = await load_mcp_tools(session, server_name=key)
                ready.set_result(self._named(key, loaded))
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
                ready.exception()  # marked read: a timed-out start no longer awaits it
                return
            state = self.states[key]
            state.status, state.error = "error", f"the session ended: {_describe(exc)}"
            log.warning("gth-jupyter: MCP server %r ended: %s", key, state.error)
        finally:
            if not ready.done():
                ready.cancel()

    def _session(self, config: McpServerConfig, auth: Any = None) -> Any:
        """The context manager that opens ``config``'s transport and session."""
        from langchain_mcp_adapters.sessions import create_session

        if config.transport == "stdio":
            return self._stdio_session(config)
        connection: dict[str, Any] = {"transport": config.transport, "url": config.url}
        if config.headers:
            connection["headers"] = dict(config.headers)
        if auth is not None:
            connection["auth"] = auth
        return create_session(connection)  # type: ignore[arg-type]

    def _stdio_session(self, config: McpServerConfig) -> Any:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {**child_env(self.pass_env), **(config.env or {})}
        params = StdioServerParameters(
            command=config.command or "", args=list(config.args), env=env, cwd=self.cwd
        )

        @contextlib.asynccontextmanager
        async def opened() -> Any:
            errlog = _errlog()
            with contextlib.ExitStack() as files:
                if errlog is None:
                    errlog = files.enter_context(open(os.devnull, "w"))  # noqa: ASYNC230
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    yield session

        return opened()

    @staticmethod
    def _named(key: str, loaded: list[BaseTool]) -> list[BaseTool]:
        """``loaded`` renamed ``mcp__<key>__<tool>`` and carrying our kind ``mcp``, the real names
        and the hints (the adapter puts the MCP annotations at the top of ``metadata``)."""
        for t in loaded:
            real = t.name
            t.name = mcp_tool_name(key, real)
            # Nothing else the server declared is kept: its annotations may carry any extra key
            # (``gth_kind``...), and a server must not choose how its own tool is gated.
            hints = _hints(t.metadata or {})
            t.metadata = {KIND_KEY: "mcp", MCP_KEY: {"server": key, "tool": real}, HINTS_KEY: hints}
            _guard(t, key)
        return loaded

    async def _end(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is None or task.done():
            return
        task.cancel()
        try:
            await asyncio.wait_for(task, 10)
        except (asyncio.CancelledError, asyncio.TimeoutError, Exception):
            pass

    async def close(self) -> None:
        """End every session (each in the task that opened it) and the stdio children.

        Called on another loop than the one the sessions run on (a notebook session closes its
        registry with ``asyncio.run`` on a thread of its own), it hands the closing to that loop
        while it still runs; a stopped loop's sessions end with the process."""
        home = self._loop
        if home is not None and home is not asyncio.get_running_loop():
            if home.is_running():
                done = asyncio.run_coroutine_threadsafe(self._close_here(), home)
                await asyncio.wait_for(asyncio.wrap_future(done), 15)
            return
        await self._close_here()

    async def _close_here(self) -> None:
        if self._stop is not None:
            self._stop.set()
        tasks = list(self._tasks.values())
        for key, task in self._tasks.items():
            if self.states[key].status == "needs_authorization":
                task.cancel()  # it waits on the person, not on the stop event
        self._tasks.clear()
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved, so it is never logged as unretrieved
        for state in self.states.values():
            state.tools = []
            if state.status == "ok":
                state.status = "pending"
