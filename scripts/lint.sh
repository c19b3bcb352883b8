#!/usr/bin/env bash
# Lint and type checks: the one list used by scripts/test.sh and `nox -s lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh  # PYTHON: the project's .venv (scripts/setup.sh makes it)
command -v "$PYTHON" >/dev/null || { echo "lint: no $PYTHON: run scripts/setup.sh --test dev (or set PYTHON)" >&2; exit 1; }
paths=(aistore tests benchmarks examples scripts)
"$PYTHON" -m ruff check --no-cache "${paths[@]}"  # import sorting depends on other files
"$PYTHON" -m ruff format --check --no-cache "${paths[@]}"
"$PYTHON" -m mypy aistore
