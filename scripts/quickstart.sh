#!/usr/bin/env bash
# The main job: install, build, start the embedded server on a generated dataset, read it back.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh torch
exec "${PYTHON:-python3}" examples/quickstart.py "$@"
