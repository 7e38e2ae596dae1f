#!/usr/bin/env bash
# Every test: lint, types, and pytest (unit, a real Jupyter server, the official AG-UI client
# from Node, and the browser suite in headless Chromium). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --test --browser

echo "== ruff"
.venv/bin/ruff check gth_jupyter tests bench
.venv/bin/ruff format --check gth_jupyter tests bench
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
exec .venv/bin/pytest "$@"
