#!/usr/bin/env bash
# Installs what the project needs into .venv: Python packages (editable), the widget's npm
# build, and with --browser Debian's chromium for the browser tests. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS="lab,data"  # data: pandas and matplotlib, for notebooks/data-agent.ipynb
BROWSER=0
for arg in "$@"; do
  case "$arg" in
    --test) EXTRAS="test,lab,data" ;;  # data: the kernel tools are tested on real DataFrames and plots
    --browser) BROWSER=1 ;;
  esac
done

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if [ ! -x .venv/bin/uv ]; then
  .venv/bin/python -m ensurepip -q >/dev/null 2>&1 || true
  .venv/bin/python -m pip install -q --disable-pip-version-check uv
fi

# The widget bundle: npm install when node_modules is missing or older than the lockfile (a
# pull that added a package: npm writes node_modules/.package-lock.json last), build every
# time (cheap, and never stale).
(cd js && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm install --no-audit --no-fund --loglevel=error; } && npm run --silent build)

.venv/bin/uv pip install -q --python .venv/bin/python -e ".[${EXTRAS}]"

# The JupyterLab / Notebook 7 extension (labextension/, built above by js/'s build script): the
# editable install copied its build into .venv; a link to the build in the tree instead, so a
# rebuild is what JupyterLab loads (what `jupyter labextension develop` does).
LABEXT=.venv/share/jupyter/labextensions/gth-jupyter-notebook
rm -rf "$LABEXT" && mkdir -p "$(dirname "$LABEXT")" && ln -s "$PWD/gth_jupyter/labextension" "$LABEXT"

# The tests drive our server through CopilotKit's runtime (a pre-1.0 AG-UI client), pinned by
# its lockfile: installed once for the test command only.
if [[ ",$EXTRAS," == *",test,"* ]] && [ ! -d tests/copilotkit/node_modules ]; then
  (cd tests/copilotkit && npm ci --no-audit --no-fund --loglevel=error)
fi
# JupyterHub's proxy for the hub tests (tests/hub), pinned the same way.
if [[ ",$EXTRAS," == *",test,"* ]] && [ ! -d tests/hub/node_modules ]; then
  (cd tests/hub && npm ci --no-audit --no-fund --loglevel=error)
fi

# Servers started by tests import ~900 modules; with PYTHONDONTWRITEBYTECODE set, nothing is
# cached and each start recompiles them all. Compile once.
if [ ! -f .venv/.compiled ] || [ pyproject.toml -nt .venv/.compiled ]; then
  .venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null 2>&1 || true
  touch .venv/.compiled
fi

# ripgrep backs gth_grep (the tool falls back to an in-process scanner without it), and its
# tests compare both engines. Best effort: a machine without apt or rights still gets the rest.
if ! command -v rg >/dev/null && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq ripgrep >/dev/null; } \
    || echo "setup.sh: could not install ripgrep; gth_grep will use its fallback" >&2
fi

if [ "$BROWSER" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
  fi
fi
