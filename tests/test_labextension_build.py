"""The wheel ships the prebuilt JupyterLab / Notebook 7 extension (the notebook bridge), and
JupyterLab finds it: `pip install` is the whole install.

One wheel is built for the module (``pip wheel`` of this tree); its data files are unpacked into
a prefix that ``jupyter labextension list`` is pointed at, as pip would install them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NAME = "gth-jupyter-notebook"
SHARE = f"share/jupyter/labextensions/{NAME}"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(REPO), "-w", str(out)],
        check=True,
        cwd=out,
        timeout=540,
    )
    (path,) = out.glob("gth_jupyter-*.whl")
    with zipfile.ZipFile(path) as zf:
        yield zf


def _data_files(wheel: zipfile.ZipFile) -> dict[str, str]:
    """The extension's files in the wheel, by path below its labextension folder."""
    found = {}
    for name in wheel.namelist():
        _, sep, rest = name.partition(f".data/data/{SHARE}/")
        if sep:
            found[rest] = name
    return found


def _labextension_list(jupyter_path: Path | None = None) -> str:
    env = dict(os.environ)
    if jupyter_path is not None:
        env["JUPYTER_PATH"] = str(jupyter_path)
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    # JupyterLab prints the list on stderr (stdout in some versions).
    return ANSI.sub("", done.stdout + done.stderr)


def test_wheel_holds_the_built_extension(wheel: zipfile.ZipFile) -> None:
    files = _data_files(wheel)
    assert "package.json" in files, sorted(wheel.namelist())
    meta = json.loads(wheel.read(files["package.json"]))
    assert meta["name"] == NAME
    # The federated entry point the page loads, and the settings schema (askGthOnErrors).
    load = meta["jupyterlab"]["_build"]["load"]
    assert load in files, (load, sorted(files))
    schema = json.loads(wheel.read(files[f"schemas/{NAME}/plugin.json"]))
    assert schema["properties"]["askGthOnErrors"]["default"] is True
    install = json.loads(wheel.read(files["install.json"]))
    assert install["packageName"] == "gth-jupyter"
    # The widget bundle is still there beside it, and the specs the Python side reads.
    assert "gth_jupyter/static/widget.js" in wheel.namelist()
    specs = {n for n in wheel.namelist() if n.startswith("gth_jupyter/contract/spec/")}
    assert {f"gth_jupyter/contract/spec/{n}.json" for n in ("media", "output")} <= specs


def test_jupyterlab_lists_the_wheels_extension_enabled(
    wheel: zipfile.ZipFile, tmp_path: Path
) -> None:
    prefix = tmp_path / "prefix"
    for rest, name in _data_files(wheel).items():
        target = prefix / SHARE / rest
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(wheel.read(name))
    text = _labextension_list(prefix / "share" / "jupyter")
    section = text.split(str(prefix / "share" / "jupyter" / "labextensions"), 1)
    assert len(section) == 2, text
    line = next((ln for ln in section[1].splitlines() if NAME in ln), "")
    assert re.search(r"enabled\s+OK\s+\(python, gth-jupyter\)", line), text


def test_the_development_install_is_enabled() -> None:
    """scripts/setup.sh links the tree's build into the environment, as JupyterLab's
    `labextension develop` does: the servers of the browser tests load it."""
    line = next((ln for ln in _labextension_list().splitlines() if NAME in ln), "")
    assert re.search(r"enabled\s+OK", line), _labextension_list()
