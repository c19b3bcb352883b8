#!/usr/bin/env bash
# Installs a built wheel (scripts/build-wheel.sh) into a new virtual environment, as a user would
# (pip alone: its dependencies from the index, nothing built), and tries it: tests/wheel/smoke.py.
# Usage: scripts/wheel-smoke.sh [dist/aistore_embedded-*.whl]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh
wheel=${1:-$(ls dist/aistore_embedded-*.whl | head -n 1)}
venv=$(mktemp -d "${TMPDIR:-/tmp}/wheel-smoke.XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install --disable-pip-version-check -q "$wheel"
# PyTorch (for the datasets' part) is a 1 GB+ download: the new environment reads it from the
# project's venv, after its own packages (so aistore and its dependencies are the wheel's).
if "$PYTHON" -c 'import torch' 2>/dev/null; then
  site=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$venv/bin/python" -c 'import sysconfig, sys; open(sysconfig.get_paths()["purelib"] + "/zz-torch-from-project.pth", "w").write(sys.argv[1] + "\n")' "$site"
fi
# From / and with a safe path: nothing of the checkout can be imported instead of the wheel.
(cd / && PYTHONSAFEPATH=1 "$venv/bin/python" "$OLDPWD/tests/wheel/smoke.py" "$wheel")
