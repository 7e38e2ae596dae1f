#!/usr/bin/env bash
# JupyterLab with the quickstart notebook, on the offline demo model (no API key needed).
#
# The server's root is my-notebooks/ (ignored by git): working copies of notebooks/ and the
# .gsloth.config.json beside them, made on the first run and kept afterwards, so what you run,
# type and save never shows up in `git status`. Delete my-notebooks/ to start again from the
# shipped notebooks. Extra arguments go to `jupyter lab` (e.g. --port 9999 --no-browser).
#
#   GTH_LAB_DIR=DIR        serve the working copies from DIR instead of my-notebooks/
#   GTH_LAB_SKIP_SETUP=1   skip scripts/setup.sh (the tests run it once themselves)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ "${GTH_LAB_SKIP_SETUP:-0}" != 1 ]; then
  bash scripts/setup.sh
fi

work=${GTH_LAB_DIR:-$repo/my-notebooks}
if [ ! -d "$work" ]; then
  mkdir -p "$work"
  cp notebooks/*.ipynb notebooks/.gsloth.config.json "$work/"
  echo "lab.sh: copied the shipped notebooks to $work (delete it to start again from notebooks/)"
fi

# JupyterLab's settings for these copies live beside them: its "news" question is answered
# (no), so its pop-up does not cover the notebook on the first run.
settings="$work/.jupyterlab-settings"
news="$settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
if [ ! -f "$news" ]; then
  mkdir -p "$(dirname "$news")"
  echo '{"fetchNews": "false"}' > "$news"
fi
export JUPYTERLAB_SETTINGS_DIR="$settings"

args=()
if [ "$(id -u)" = 0 ]; then
  # Docker images, dev containers and CI run as root; Jupyter refuses that without the flag.
  echo "lab.sh: running as root, so passing --allow-root to jupyter lab"
  args+=(--allow-root)
fi

cd "$work"
exec "$repo/.venv/bin/jupyter" lab quickstart.ipynb "${args[@]}" "$@"
