"""The widget behind JupyterHub: each user logs in with the Hub's login form, opens a notebook on
their own server in JupyterLab (``/user/<name>/lab``, through the Hub's proxy), runs
``%gth …`` and sees their server's scripted reply. The run goes over HTTP to
``/user/<name>/gth/agents/default/run`` with the server's login cookie and the XSRF header (not
over the kernel's comm), so base URL, cookies and XSRF all work behind the Hub. A last cell
shows that the server's database and Redis URLs are not in the kernel's environment.

Headless Debian chromium. Playwright's sync API runs each test in a thread of its own: the
browser suite keeps its own Playwright (one per module) on the main thread, and two cannot
share a thread.
"""

from __future__ import annotations

import contextlib
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    STEP_MS,
    NotebookPage,
    slug,
    transcript,
    write_notebook,
)
from hub_harness import ARTIFACTS, PASSWORD, Hub, HubUser, reply_of
from playwright.sync_api import Page, Request, expect, sync_playwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(300),
]

TEST_TIMEOUT_S = 240
KERNEL_ENV = (
    "import os\n"
    "gth = {k: v for k, v in os.environ.items() if k.startswith('GTH_JUPYTER')}\n"
    "urls = [k for k, v in gth.items() if '://' in v]\n"
    "print('gth-jupyter variables:', sorted(gth), 'urls:', urls)"
)
PAGE_TOKEN = "JSON.parse(document.getElementById('jupyter-config-data').textContent).token || ''"


class UserServer:
    """A user's single-user server through the Hub's proxy, shaped as ``NotebookPage`` uses a
    ``JupyterServer`` (the REST calls carry the user's own token)."""

    def __init__(self, hub: Hub, user: HubUser) -> None:
        self.hub = hub
        self.user = user
        self.root = user.home
        self.app = "lab"

    @property
    def base_url(self) -> str:
        return f"{self.hub.url}user/{self.user.name}/"

    def ensure_started(self) -> None:
        assert self.hub.health(self.user.name, self.user.name)

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10) -> Any:
        response = self.hub.request(
            method, f"user/{self.user.name}/{path}", self.user.token, body, timeout
        )
        response.raise_for_status()
        return response.json() if response.content else None

    def notebook_url(self, rel_path: str) -> str:
        return f"{self.base_url}lab/tree/{urllib.parse.quote(rel_path)}?reset"


@dataclass
class Seen:
    """What the page sent and heard (for the assertions and for a failure's report)."""

    console: list[str] = field(default_factory=list)
    runs: list[tuple[str, dict[str, str], int | None]] = field(default_factory=list)

    def request_done(self, request: Request) -> None:
        if "/gth/agents/" in request.url:
            response = request.response()
            status = response.status if response is not None else None
            self.runs.append((request.url, request.all_headers(), status))


def in_own_thread(fn: Callable[[], None], timeout_s: float) -> None:
    """Runs ``fn`` on a new thread and re-raises what it raised."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            fn()
        except BaseException as e:  # handed to the test's thread
            errors.append(e)

    thread = threading.Thread(target=target, name="playwright", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise AssertionError(f"the browser scenario did not finish in {timeout_s} s")
    if errors:
        raise errors[0]


def log_in(page: Page, hub: Hub, name: str) -> None:
    """The Hub's login form, as a person fills it in."""
    page.goto(f"{hub.url}hub/login")
    page.locator("#username_input").fill(name)
    page.locator("#password_input").fill(PASSWORD)
    page.locator("#login_submit").click()
    page.wait_for_url(lambda url: "/hub/login" not in url, timeout=STEP_MS)


def save_diagnostics(name: str, page: Page, seen: Seen) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(Exception):
        page.screenshot(path=str(ARTIFACTS / f"{name}-FAILED.png"), full_page=True)
    with contextlib.suppress(Exception):
        html = page.locator(".gth-root").evaluate_all("els => els.map(e => e.outerHTML)")
        (ARTIFACTS / f"{name}-widget.html").write_text("\n\n".join(html))
    runs = [f"{status} {url} {sorted(headers)}" for url, headers, status in seen.runs]
    (ARTIFACTS / f"{name}-console.log").write_text("\n".join(seen.console + runs) + "\n")


def chat_through_the_hub(hub: Hub, user: HubUser, name: str) -> None:
    rel = f"hub-{user.name}.ipynb"
    prompt = f"hello from {user.name} through the hub"
    write_notebook(user.home / rel, ["%load_ext gth_jupyter", f"%gth {prompt}", KERNEL_ENV])
    seen = Seen()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(STEP_MS)
        page.on("console", lambda m: seen.console.append(f"[{m.type}] {m.text}"))
        page.on("pageerror", lambda e: seen.console.append(f"[pageerror] {e}"))
        page.on("requestfinished", seen.request_done)
        page.on("requestfailed", lambda r: seen.console.append(f"[failed] {r.url} {r.failure}"))
        try:
            log_in(page, hub, user.name)
            nb = NotebookPage(page, UserServer(hub, user), name)  # type: ignore[arg-type]
            nb.open(rel)
            assert f"/user/{user.name}/lab" in page.url, page.url
            nb.run_cells(0, 1, 2)
            root = nb.ready_widget(0)
            expect(root.locator(".gth-msg-assistant")).to_have_text(
                [reply_of(user.name)], timeout=STEP_MS
            )
            expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
            assert transcript(root) == [("user", prompt), ("assistant", reply_of(user.name))]
            assert page.locator(".gth-error").all_inner_texts() == []
            nb.shot("reply")
            # The server's database and Redis URLs never reached the kernel's environment; what
            # does is the server's configuration (which files, its root), no URL among it.
            output = nb.cells.nth(2).locator(".jp-OutputArea-output")
            expect(output).to_have_text(
                "gth-jupyter variables: ['GTH_JUPYTER_SERVER_CONFIG'] urls: []"
            )

            # The run went over HTTP (not the kernel's comm), under this user's prefix, with
            # the server's login cookie and what JupyterLab itself sends: the XSRF header, and
            # the page's own token where the Hub gave the page one.
            run_url = f"{hub.url}user/{user.name}/gth/agents/default/run"
            assert [(url, status) for url, _, status in seen.runs] == [(run_url, 200)], seen.runs
            headers = seen.runs[0][1]
            cookies = headers.get("cookie", "")
            assert f"jupyterhub-user-{user.name}=" in cookies, cookies
            xsrf = page.evaluate("document.cookie.match(/\\b_xsrf=([^;]*)/)?.[1] ?? ''")
            assert xsrf and headers.get("x-xsrftoken") == xsrf, headers
            page_token = page.evaluate(PAGE_TOKEN)
            assert headers.get("authorization", "") in ("", f"token {page_token}"), headers
            # The widget's thread is the Hub user's.
            listed = UserServer(hub, user).api("GET", "gth/threads")["threads"]
            assert listed and {t["owner"] for t in listed} == {user.name}, listed
            print("\n".join(f"{t:7.2f}s  {what}" for what, t in nb.timeline))
        except BaseException:
            save_diagnostics(name, page, seen)
            raise
        finally:
            context.close()
            browser.close()


@pytest.mark.parametrize("user", ["a", "b"])
def test_the_widget_chats_through_the_hub_on_the_users_own_server(
    hub: Hub, user: str, request: pytest.FixtureRequest
) -> None:
    name = slug(request.node.name)
    in_own_thread(lambda: chat_through_the_hub(hub, hub.users[user], name), TEST_TIMEOUT_S)
