#!/usr/bin/env bash
# The HTML API reference, generated from docstrings by pdoc into build/api (or the given folder).
# Nothing generated is committed: run this to browse it (open build/api/index.html).
#   scripts/docs.sh [OUTPUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh  # PYTHON: the project's .venv, which setup.sh makes
# Document the installed package (the one users get), never ./aistore from the tree.
export PYTHONSAFEPATH=1
scripts/setup.sh docs,torch
exec "$PYTHON" scripts/api_docs.py "${1:-build/api}"
