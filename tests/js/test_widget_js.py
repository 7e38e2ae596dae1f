"""The widget's JavaScript unit tests (Node's test runner), run as part of pytest."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parents[2] / "js"


@pytest.mark.node
def test_widget_unit_tests_pass() -> None:
    if shutil.which("node") is None or not (JS / "node_modules").is_dir():
        pytest.skip("node or js/node_modules is missing: run scripts/setup.sh")
    files = sorted(str(p.relative_to(JS)) for p in (JS / "test").glob("*.test.mjs"))
    result = subprocess.run(
        ["node", "--test", "--test-reporter=tap", *files],
        cwd=JS,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    report = result.stdout[-6000:] + result.stderr[-3000:]
    assert result.returncode == 0, report
    passed = re.search(r"^# pass (\d+)$", result.stdout, re.MULTILINE)
    assert passed and int(passed.group(1)) >= 50, report
