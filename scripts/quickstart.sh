#!/usr/bin/env bash
# The main job: install, build, start the embedded server on a generated dataset, read it back.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh  # PYTHON: the project's .venv, which setup.sh makes
scripts/setup.sh torch
exec "$PYTHON" examples/quickstart.py "$@"
