#!/usr/bin/env bash
# Every test: lint, types, and pytest (unit, a real Jupyter server, the official AG-UI client
# from Node, and the browser suite in headless Chromium). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

cat <<'TXT'
== scripts/test.sh: every test of gth-jupyter
Installs what is missing first: .venv/ with the package and its test extras (uv), the widget's
npm packages and build, and with apt: ripgrep, chromium (browser tests), PostgreSQL and Redis
(started on loopback for this run, stopped at the end). Then ruff, mypy, tsc, eslint and pytest.
A first run on a fresh machine takes about 5 minutes to install; the tests about 20 minutes on
2 cores (single browser tests can take a minute or two: pytest prints each as it ends).
TXT

bash scripts/setup.sh --test --browser

echo "== ruff"
.venv/bin/ruff check gth_jupyter tests bench
.venv/bin/ruff format --check gth_jupyter tests bench
echo "== mypy"
.venv/bin/mypy
# The widget's JavaScript: its JSDoc types checked by TypeScript (strict), and ESLint.
echo "== tsc"
(cd js && npm run --silent typecheck)
echo "== eslint"
(cd js && npm run --silent lint)
echo "== services"
# A real PostgreSQL and Redis on loopback, in a temporary directory, for the store and journal
# tests; stopped (and the directory removed) however the run ends.
SERVICES=$(mktemp -d)
trap 'bash scripts/services.sh stop "$SERVICES"' EXIT
eval "$(bash scripts/services.sh start "$SERVICES")"
echo "PostgreSQL: ${GTH_TEST_DATABASE_URL:-not available}; Redis: ${GTH_TEST_REDIS_URL:-not available}"
echo "== pytest"
.venv/bin/pytest "$@"
