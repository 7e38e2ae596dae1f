#!/usr/bin/env bash
# JupyterLab with the quickstart notebook, on the offline demo model (no API key needed).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cd notebooks
exec ../.venv/bin/jupyter lab quickstart.ipynb "$@"
