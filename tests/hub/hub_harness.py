"""A real JupyterHub for the hub tests: its proxy, its users and their single-user servers.

``Hub`` writes a ``jupyterhub_config.py`` into a temporary directory and runs ``jupyterhub``
from this interpreter's environment: the dummy authenticator (one shared password), the
``SimpleLocalProcessSpawner`` (each user's home under the temporary directory, the single-user
server started with ``--allow-root`` because the tests run as root), ``configurable-http-proxy``
from ``tests/hub/node_modules`` (``npm ci`` in this folder; ``scripts/setup.sh --test`` does it),
free loopback ports, an SQLite database, sharing allowed for every user on their own servers,
and a service token the tests drive the Hub's REST API with.

Given a PostgreSQL superuser URL (and a Redis URL), the Hub runs as docs/deployment.md
("JupyterHub deployment") says: a ``pre_spawn_hook`` provisions each user's database role and
schema with ``provision_user`` and their Redis user with ``provision_redis_user``, and hands the
server those URLs as ``$GTH_JUPYTER_DATABASE_URL`` and ``$GTH_JUPYTER_REDIS_URL``; the servers
use ``--GthJupyterApp.checkpointer=postgres``; the admin URLs stay in the Hub's environment.

Each user's home holds a ``.gsloth.config.json`` with the scripted model, which answers every
call on that user's server with :func:`reply_of` the owner, so what a test sees does not depend
on the order tests ran in. The single-user servers load the extension as any install does
(enabled by the package's jupyter-config). Everything the Hub and the servers print goes to one
log, shown when start-up fails and kept in ``test-artifacts/hub/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from browser_harness import kill_tree

from tests.helpers import free_port, run_input, user_message

HUB_DIR = Path(__file__).resolve().parent
REPO = HUB_DIR.parents[1]
ARTIFACTS = REPO / "test-artifacts" / "hub"
BIN = Path(sys.prefix) / "bin"
PROXY = HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
PASSWORD = "gth-hub-shared-password"
HUB_START_S = 60
SERVER_START_S = 120
SERVICE = "gth-test"
#: A Hub admin, and an admin of gth-jupyter's threads (``--GthJupyterApp.admin_users``).
ADMIN = "ops"


# The hook and settings of docs/deployment.md; the admin URLs come from the Hub's environment only.
DEPLOYMENT_CONFIG = """
import os
from gth_jupyter.store.provision import provision_user
from gth_jupyter.store.redis_users import provision_redis_user

ADMIN_URL = os.environ["GTH_JUPYTER_ADMIN_DATABASE_URL"]
ADMIN_REDIS_URL = os.environ.get("GTH_JUPYTER_ADMIN_REDIS_URL")

async def gth_services(spawner):
    name = spawner.user.name
    env = {"GTH_JUPYTER_DATABASE_URL": await provision_user(ADMIN_URL, name)}
    if ADMIN_REDIS_URL:
        env["GTH_JUPYTER_REDIS_URL"] = await provision_redis_user(ADMIN_REDIS_URL, name)
    spawner.environment = {**spawner.environment, **env}

c.Spawner.pre_spawn_hook = gth_services
c.Spawner.args.append("--GthJupyterApp.checkpointer=postgres")
"""


@dataclass(frozen=True)
class Services:
    """A PostgreSQL superuser URL (of a database for this Hub alone) and a Redis URL."""

    database_admin_url: str
    redis_url: str | None = None


def reply_of(owner: str) -> str:
    """What the scripted model on ``owner``'s server answers, every time."""
    return f"Hello from {owner}'s server."


@dataclass
class HubUser:
    name: str
    home: Path
    token: str


class HubError(RuntimeError):
    pass


class Hub:
    """``jupyterhub`` with its proxy on loopback, in its own process group."""

    def __init__(self, root: Path, services: Services | None = None) -> None:
        self.root = root
        self.services = services
        self.homes = root / "home"
        self.log_path = root / "jupyterhub.log"
        self.config_path = root / "jupyterhub_config.py"
        self.service_token = secrets.token_hex(32)
        self.port = free_port()
        self.hub_port = free_port()
        self.proxy_api_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.users: dict[str, HubUser] = {}
        self._log: Any = None
        self.http = httpx.Client(base_url=self.url, timeout=30, follow_redirects=False)

    @property
    def url(self) -> str:
        """The public URL (the proxy), ending in ``/``."""
        return f"http://127.0.0.1:{self.port}/"

    # -- configuration and process -------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """Every ``c.<Class>.<trait>`` the Hub is started with."""
        return {
            "JupyterHub.bind_url": self.url,
            "JupyterHub.hub_bind_url": f"http://127.0.0.1:{self.hub_port}",
            "JupyterHub.db_url": f"sqlite:///{self.root / 'jupyterhub.sqlite'}",
            "JupyterHub.cookie_secret_file": str(self.root / "jupyterhub_cookie_secret"),
            "JupyterHub.cleanup_servers": True,
            # A spawn request answers 202 at once, so both servers start side by side.
            "JupyterHub.tornado_settings": {"slow_spawn_timeout": 0},
            "JupyterHub.authenticator_class": "jupyterhub.auth.DummyAuthenticator",
            "DummyAuthenticator.password": PASSWORD,
            # Only the users the tests create (through the REST API) may log in.
            "Authenticator.allow_all": False,
            "Authenticator.allow_existing_users": True,
            "Authenticator.admin_users": {ADMIN},
            "JupyterHub.spawner_class": "jupyterhub.spawner.SimpleLocalProcessSpawner",
            "SimpleLocalProcessSpawner.home_dir_template": str(self.homes / "{username}"),
            "Spawner.cmd": [str(BIN / "jupyterhub-singleuser")],
            "Spawner.args": [
                "--allow-root",
                # Never ask PyPI for extensions (JupyterLab's extension manager).
                "--LabApp.extension_manager=readonly",
                f"--GthJupyterApp.admin_users={ADMIN}",
            ],
            "Spawner.default_url": "/lab",
            "Spawner.environment": {"PYTHONUNBUFFERED": "1"},
            "Spawner.start_timeout": SERVER_START_S,
            "Spawner.http_timeout": SERVER_START_S,
            "ConfigurableHTTPProxy.command": [str(PROXY)],
            "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{self.proxy_api_port}",
            "ConfigurableHTTPProxy.pid_file": str(self.root / "proxy.pid"),
            "JupyterHub.services": [{"name": SERVICE, "api_token": self.service_token}],
            "JupyterHub.load_roles": [
                # JupyterHub 5+ sharing: each user may share their own servers, naming the
                # user they share with.
                {"name": "user", "scopes": ["self", "shares!user", "read:users:name"]},
                {
                    "name": "gth-test-admin",
                    "scopes": ["admin:users", "admin:servers", "tokens", "shares", "read:hub"],
                    "services": [SERVICE],
                },
            ],
        }

    def write_config(self) -> None:
        lines = ["# Written by tests/hub/hub_harness.py", "c = get_config()  # noqa: F821"]
        lines += [f"c.{key} = {value!r}" for key, value in self.config().items()]
        if self.services is not None:
            lines.append(DEPLOYMENT_CONFIG)
        self.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def env(self) -> dict[str, str]:
        """The Hub's environment: this one without Jupyter's or our own settings, with this
        interpreter's scripts first on PATH (the spawner passes PATH on)."""
        skip = ("JUPYTER", "JPY_", "GTH_JUPYTER", "CONFIGPROXY")
        env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
        env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = sys.prefix
        env["PYTHONUNBUFFERED"] = "1"
        if self.services is not None:
            env["GTH_JUPYTER_ADMIN_DATABASE_URL"] = self.services.database_admin_url
            if self.services.redis_url:
                env["GTH_JUPYTER_ADMIN_REDIS_URL"] = self.services.redis_url
        return env

    def start(self) -> None:
        if not PROXY.exists():
            raise HubError(f"{PROXY} is missing: run `npm ci` in {HUB_DIR}")
        self.root.mkdir(parents=True, exist_ok=True)
        self.homes.mkdir(exist_ok=True)
        self.write_config()
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [str(BIN / "jupyterhub"), "-f", str(self.config_path)],
            cwd=self.root,
            env=self.env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait("the Hub API", HUB_START_S, lambda: self.api("GET", "").get("version"))

    def stop(self) -> None:
        """SIGTERM the Hub (it stops the servers and its proxy), then kill what is left: the
        Hub's process group and every process under it (the servers run in their own sessions,
        their kernels in theirs)."""
        self.http.close()
        if self.proc is not None:
            kill_tree(self.proc, grace_s=20)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, 9)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, chars: int = 12_000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def save_log(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        with contextlib.suppress(OSError):
            path.write_text(self.log_tail(4_000_000))
        return path

    def _wait(self, what: str, timeout_s: float, probe: Any) -> Any:
        """Calls ``probe`` until it returns something truthy; fails with the log when the
        Hub exits or time runs out."""
        deadline = time.monotonic() + timeout_s
        last: object = None
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise HubError(f"jupyterhub exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                value = probe()
                if value:
                    return value
            except (httpx.HTTPError, HubError, KeyError, ValueError) as e:
                last = e
            if time.monotonic() > deadline:
                raise HubError(
                    f"{what}: not ready after {timeout_s} s ({last!r}):\n{self.log_tail()}"
                )
            time.sleep(0.25)

    # -- REST -----------------------------------------------------------------------------

    def request(
        self, method: str, path: str, token: str, body: Any = None, timeout: float = 30
    ) -> httpx.Response:
        """``path`` below the public URL (``hub/api/...``, ``user/a/gth/...``) with a token."""
        headers = {"Authorization": f"token {token}"}
        return self.http.request(method, path, headers=headers, json=body, timeout=timeout)

    def api(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        """The Hub's REST API (``hub/api/{path}``), as the test service unless ``token``."""
        response = self.request(method, f"hub/api/{path}", token or self.service_token, body)
        if response.status_code >= 400:
            raise HubError(f"{method} hub/api/{path}: {response.status_code} {response.text}")
        return response.json() if response.content else None

    def run(
        self, owner: str, token: str, thread_id: str, text: str, **extra: Any
    ) -> httpx.Response:
        """A run of the default agent on ``owner``'s server, with ``token``."""
        message = user_message(text, f"u-{uuid.uuid4().hex[:8]}")
        body = run_input(thread_id, f"r-{uuid.uuid4().hex[:8]}", [message], **extra)
        return self.request("POST", f"user/{owner}/gth/agents/default/run", token, body, 60)

    # -- users and servers ----------------------------------------------------------------

    def new_token(self, name: str, note: str = "gth hub test") -> str:
        """A new API token of user ``name`` (scopes: whatever the user may do, shares
        included)."""
        model = self.api("POST", f"users/{name}/tokens", {"note": note, "expires_in": 3600})
        return str(model["token"])

    def add_user(self, name: str, responses: int = 50) -> HubUser:
        """Creates the user, writes the scripted model into their home, makes a token."""
        response = self.request("POST", f"hub/api/users/{name}", self.service_token)
        if response.status_code not in (201, 409):  # 409: the admin exists from the start
            raise HubError(f"creating {name}: {response.status_code} {response.text}")
        home = self.homes / name
        home.mkdir(parents=True, exist_ok=True)
        config = {"llm": {"type": "fake", "responses": [reply_of(name)] * responses}}
        (home / ".gsloth.config.json").write_text(json.dumps(config), encoding="utf-8")
        # No "official Jupyter news?" toast over the notebook.
        settings = home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab"
        (settings / "apputils-extension").mkdir(parents=True, exist_ok=True)
        (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        user = HubUser(name, home, self.new_token(name))
        self.users[name] = user
        return user

    def spawn(self, names: Iterable[str]) -> None:
        """Starts each user's default server (all at once), then waits until each is ready
        and answers ``gth/health`` through the proxy with its owner's token."""
        names = list(names)
        for name in names:
            response = self.request("POST", f"hub/api/users/{name}/server", self.service_token)
            if response.status_code not in (201, 202, 400):  # 400: already running
                raise HubError(f"spawning {name}: {response.status_code} {response.text}")
        for name in names:
            self._wait(
                f"{name}'s server",
                SERVER_START_S,
                lambda n=name: self.api("GET", f"users/{n}")["servers"][""]["ready"],
            )
            self._wait(f"{name}'s gth/health", 30, lambda n=name: self.health(n, n))

    def health(self, owner: str, visitor: str) -> bool:
        response = self.request("GET", f"user/{owner}/gth/health", self.users[visitor].token)
        return response.status_code == 200 and response.json().get("status") == "ok"
