"""``bash scripts/lab.sh`` as a newcomer runs it: as root it starts (saying it passed
``--allow-root``), serves working copies of the shipped notebooks from ``my-notebooks/``, and a
Run All and a save there leave ``git status`` clean.

The script runs in a small git repository made of this checkout's ``scripts/``, ``notebooks/``
and ``.gitignore`` (the files that decide what it writes where), with ``.venv`` linked in, so the
test reads a real ``git status`` without touching this checkout's own ``my-notebooks/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import CHROMIUM, REPO, STEP_MS, JupyterServer, NotebookPage, free_port
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(300),
]

NEWS = "official Jupyter news"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def mini_repo(target: Path) -> Path:
    """A git repository holding what lab.sh reads and writes beside, committed."""
    for name in ("scripts", "notebooks"):
        shutil.copytree(REPO / name, target / name)
    shutil.copy(REPO / ".gitignore", target / ".gitignore")
    (target / ".venv").symlink_to(REPO / ".venv")
    git(target, "init", "-q")
    # The link stands for the .venv/ folder the real checkout has (ignored there).
    (target / ".git" / "info" / "exclude").write_text(".venv\n")
    git(target, "add", ".")
    git(target, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
    return target


class LabScript(JupyterServer):
    """The server ``scripts/lab.sh`` starts, driven like the harness's own servers."""

    def __init__(self, repo: Path, home: Path) -> None:
        super().__init__("lab", home, {"default": []})
        self.repo = repo
        self.root = repo / "my-notebooks"

    def start(self, from_key: str | None = None) -> None:
        self.port = free_port()
        self._log = self.log_path.open("ab")
        env = self.env()
        env.pop("JUPYTERLAB_SETTINGS_DIR")  # lab.sh sets its own, beside the copies
        env["GTH_LAB_SKIP_SETUP"] = "1"  # the test command has set up .venv already
        self.proc = subprocess.Popen(
            [
                "bash",
                str(self.repo / "scripts" / "lab.sh"),
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                "--LabApp.extension_manager=readonly",
            ],
            cwd=self.home,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"lab.sh exited:\n{self.log_tail()}")
            try:
                self.api("GET", "api/status", timeout=2)
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.2)
            if time.monotonic() > deadline:
                raise AssertionError(f"lab.sh's server did not start:\n{self.log_tail()}")


@pytest.fixture
def lab(tmp_path: Path, chromium: Any) -> Iterator[LabScript]:
    server = LabScript(mini_repo(tmp_path / "repo"), tmp_path / "home")
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_lab_sh_serves_working_copies_and_leaves_the_clone_clean(
    lab: LabScript, chromium: Any
) -> None:
    log = lab.log_tail()
    if os.geteuid() == 0:
        assert "passing --allow-root" in log, log
    # The server's root is the working copies' folder: /lab/tree/quickstart.ipynb is the copy.
    listing = {item["name"] for item in lab.api("GET", "api/contents")["content"]}
    assert {"quickstart.ipynb", "data-agent.ipynb", "frontend-tools.ipynb"} <= listing
    assert (lab.root / ".gsloth.config.json").exists()
    before = git(lab.repo, "status", "--porcelain")
    assert before == "", before

    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        nb = NotebookPage(context.new_page(), lab, "lab-script")
        nb.open("quickstart.ipynb")
        nb.run_all(timeout_s=240)
        expect(nb.widget(0).locator(".gth-msg-assistant")).to_be_visible(timeout=STEP_MS)
        # The "news" question was answered in the copies' settings: no pop-up over the notebook.
        assert nb.page.get_by_text(NEWS).count() == 0
        nb.save()
    finally:
        context.close()
        lab.shutdown_sessions()

    saved = (lab.root / "quickstart.ipynb").read_text()
    assert "application/vnd.jupyter.widget-view+json" in saved  # the copy was written
    assert git(lab.repo, "status", "--porcelain") == ""
    assert (lab.repo / "notebooks" / "quickstart.ipynb").read_bytes() == (
        REPO / "notebooks" / "quickstart.ipynb"
    ).read_bytes()


def test_lab_sh_keeps_existing_copies(tmp_path: Path) -> None:
    """A second run keeps what the person changed in the copies (no browser needed)."""
    repo = mini_repo(tmp_path / "repo")
    work = repo / "my-notebooks"
    work.mkdir()
    (work / "quickstart.ipynb").write_text("mine")
    env = {**os.environ, "GTH_LAB_SKIP_SETUP": "1"}
    # --version makes jupyter lab print and exit: the script's copying has happened by then.
    out = subprocess.run(
        ["bash", str(repo / "scripts" / "lab.sh"), "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.strip().splitlines()[-1][0].isdigit(), out.stdout
    assert (work / "quickstart.ipynb").read_text() == "mine"
