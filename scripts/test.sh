#!/usr/bin/env bash
# The whole test suite: C++ unit tests (under ASan/UBSan), lint and type checks,
# Python unit, integration and compatibility tests against the real server.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh  # PYTHON: the project's .venv, which setup.sh makes
# Import the installed package (with its server binary and extension), never ./aistore from the tree.
export PYTHONSAFEPATH=1
# Each phase's start, with the seconds since this script started (where the time goes).
phase() { echo "==> $1   [${SECONDS}s]"; }
# The package's optimized build (server + extension) with warnings as errors: the flow-based
# warnings only an optimizing build reports are checked here.
AIS_WERROR=1 scripts/setup.sh --test dev,torch
jobs=$(nproc)

# The wheel a machine without compilers installs: packed from the build setup.sh left, its
# libraries vendored (auditwheel), then installed into a new venv and tried there.
phase "binary wheel: build, repair, install into a new venv, smoke test"
AIS_WERROR=1 scripts/build-wheel.sh
scripts/wheel-smoke.sh

# The C++ unit tests run once, under the sanitizers (a plain build of them would only repeat
# what the sanitized run checks, at the cost of another full compile).
phase "C++ unit tests under AddressSanitizer + UBSan"
cmake -S . -B build/asan -G Ninja -DAIS_BUILD_TESTS=ON -DAIS_WERROR=ON -DAIS_SANITIZE=ON -DAIS_UNITY_BUILD=ON \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build/asan -j "$jobs" -- --quiet
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build/asan/server/ais_server_tests --gtest_brief=1

phase "fuzz (smoke)"
scripts/fuzz.sh 5

phase "lint: ruff check, ruff format --check, mypy"
PYTHON=$PYTHON scripts/lint.sh

phase "Python tests (unit, integration against the real server, official SDK compatibility)"
"$PYTHON" -m pytest -q -p no:cacheprovider "$@"

phase "Python integration tests against the ASan/UBSan server (build/asan)"
# The same tests with the sanitized server binary, so every handler they reach runs under ASan,
# LeakSanitizer and UBSan. The server halts on the first report (-fno-sanitize-recover,
# halt_on_error); tests/conftest.py fails the test whose server printed a report or did not exit
# 0 on SIGTERM (leaks are checked at that exit), and prints the report.
# The PyTorch dataset modules are left out of this pass: what they test is client-side (samplers,
# workers, resume), and the requests they make (GET, ranges, GetBatch, listing) are the ones the
# other modules make here too; spawned DataLoader workers made them a quarter of its time. So is
# the real-cluster module (its time is the real cluster's; its calls to ours are the others'),
# and the ETL runtime's (it starts no server).
AISTORE_SERVER_BIN="$PWD/build/asan/server/aistore-server" \
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$PYTHON" -m pytest -q -p no:cacheprovider tests/integration --ignore-glob='*/test_pytorch_*.py' \
  --ignore=tests/integration/test_real_cluster.py --ignore=tests/integration/test_etl_runtime.py
phase "done"
