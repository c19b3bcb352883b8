# Sourced by the scripts, in the checkout: PYTHON, the interpreter they install into and run.
# By default the project's virtual environment, .venv (scripts/setup.sh creates it): pip never
# writes into the system's Python (Debian marks it externally managed, PEP 668), and the venv's
# bin/ goes first on PATH (its console scripts, its python3). PYTHON=/path/to/python runs that
# interpreter instead, as it is.
if [ -z "${PYTHON:-}" ]; then
  export AISTORE_VENV="$PWD/.venv"
  export PYTHON="$AISTORE_VENV/bin/python"
  export PATH="$AISTORE_VENV/bin:$PATH"
fi
