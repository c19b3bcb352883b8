#!/usr/bin/env bash
# Lint and type checks: the one list used by scripts/test.sh and `nox -s lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
paths=(aistore tests benchmarks examples scripts)
"$PYTHON" -m ruff check --no-cache "${paths[@]}"  # import sorting depends on other files
"$PYTHON" -m ruff format --check --no-cache "${paths[@]}"
"$PYTHON" -m mypy aistore
