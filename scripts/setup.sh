#!/usr/bin/env bash
# Installs what building (and, with --test, testing) needs, skipping what is already there, then
# builds and installs the package (server binary + extension) into the project's virtual
# environment .venv, made here on first use (or into $PYTHON: scripts/python-env.sh).
#   scripts/setup.sh [--test] [EXTRAS]     e.g. scripts/setup.sh torch; scripts/setup.sh --test dev
# Used by quickstart.sh and test.sh; safe to run again (the C++ build is incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh
# Each step with the seconds since this script started (where the time goes).
step() { echo "==> $1   [${SECONDS}s]"; }
with_test_tools=0
if [ "${1:-}" = --test ]; then
  with_test_tools=1
  shift
fi
# What building the package needs: the compiler and build tools, Python's headers, and the C++
# libraries the server and the extension link.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  python3-dev python3-pip python3-venv
  libboost-dev libssl-dev libxxhash-dev nlohmann-json3-dev libmsgpack-cxx-dev
  libarchive-dev liblz4-dev libzstd-dev
  libcurl4-openssl-dev libpugixml-dev  # remote S3 buckets: SigV4-signed HTTP, XML replies
  zlib1g-dev libisal-dev  # the S3 front end: CRC32 and CRC32C body checksums
  prometheus-cpp-dev  # GET /metrics: Prometheus's data model and text format
  libjwt-dev  # access control: verifying the signatures of JWT bearer tokens
)
# What the test suite needs besides: the C++ unit tests' framework, command-line tools the tests
# drive or check against, and libFuzzer.
APT_TEST_PACKAGES=(
  libgtest-dev
  curl wrk  # TLS checks with another client; the benchmarks' smoke test
  lz4 zstd  # tests check our frames against them
  clang libclang-rt-14-dev  # libFuzzer and its sanitizer runtimes (scripts/fuzz.sh)
)
# Azurite, the Azure Blob service the az:// tests run against, comes from npm: Debian's Node.js
# and npm where the machine has no npm of its own (e.g. NodeSource's, which Debian's would clash with).
command -v npm >/dev/null || APT_TEST_PACKAGES+=(nodejs npm)
AZURITE_VERSION=3.35.0  # pinned: later releases need Node.js 22, Debian 12 has 18
((with_test_tools)) && APT_PACKAGES+=("${APT_TEST_PACKAGES[@]}")

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  step "apt: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -n "${AISTORE_VENV:-}" ] && ! "$PYTHON" -c "" 2>/dev/null; then
  step "venv: creating $AISTORE_VENV (the project's Python environment)"
  python3 -m venv --clear "$AISTORE_VENV"
fi

# pip's output without its blank lines and the root warning; pip's exit status stays the
# pipeline's (pipefail), so a failed install stops this script.
quiet_pip() { grep -v -E "^\s*$|WARNING: Running pip as" || true; }

extras=${1:-}
spec="."
[ -n "$extras" ] && spec=".[${extras}]"
# Debian 12's pip (23.0) resolves the dev extra's dependency set by backtracking for an hour or
# more; a current pip resolves it in under a minute.
if ! "$PYTHON" -c 'import sys, pip; sys.exit(int(pip.__version__.split(".")[0]) < 24)' 2>/dev/null; then
  step "pip: upgrading pip (its resolver)"
  "$PYTHON" -m pip install --disable-pip-version-check -q --root-user-action=ignore --upgrade "pip>=24" 2>&1 \
    | quiet_pip
fi
# The distribution named "aistore" (the official SDK, or this package before it was renamed)
# installs the same import package: installed side by side, each overwrites the other's files.
if "$PYTHON" -m pip show -q aistore >/dev/null 2>&1; then
  step "pip: uninstalling the distribution 'aistore' (the official SDK, or an old build of this one): it installs the same import package"
  "$PYTHON" -m pip uninstall --disable-pip-version-check -q -y --root-user-action=ignore aistore 2>&1 | quiet_pip
fi
# AIS_WERROR=1 (test.sh): compiler warnings fail this optimized build, as in development.
build_args=()
[ "${AIS_WERROR:-0}" = 1 ] && build_args=(-C cmake.define.AIS_WERROR=ON)
pip_install() { "$PYTHON" -m pip install --disable-pip-version-check -q --root-user-action=ignore "$@"; }
# The dependencies (torch alone is a minute of downloading) install while the C++ build runs;
# pip would do one after the other. dependencies.py exits 2 where it cannot read pyproject.toml
# (Python 3.10): then pip resolves them after the build.
deps_status=0
deps=$("$PYTHON" scripts/dependencies.py "$extras") || deps_status=$?
if ((deps_status == 0)); then
  step "pip: installing the dependencies${extras:+ of [$extras]} while building aistore-embedded (server + extension)"
  deps_log=$(mktemp)
  mapfile -t requirements <<<"$deps"
  pip_install "${requirements[@]}" >"$deps_log" 2>&1 &
  deps_pid=$!
  trap 'kill "$deps_pid" 2>/dev/null || true; rm -f "$deps_log"' EXIT
  pip_install --no-deps "${build_args[@]}" . 2>&1 | quiet_pip
  step "pip: aistore-embedded built and installed; waiting for its dependencies"
  wait "$deps_pid" || deps_status=$?
  trap - EXIT
  quiet_pip <"$deps_log"
  rm -f "$deps_log"
  ((deps_status == 0)) || { echo "setup: installing the dependencies failed (pip exit $deps_status)" >&2; exit 1; }
elif ((deps_status == 2)); then
  step "pip: building and installing aistore-embedded${extras:+[$extras]} (server + extension)"
  pip_install "${build_args[@]}" "$spec" 2>&1 | quiet_pip
else
  exit 1
fi
# Azurite into the cache directory tests/integration/_azure.py looks in (where it is missing
# there, as in a checkout set up without --test, those tests skip, saying so).
AZURITE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/aistore-embedded/azurite"
if ((with_test_tools)) && command -v npm >/dev/null && [ ! -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" ]; then
  step "npm: installing azurite into $AZURITE_DIR"
  mkdir -p "$AZURITE_DIR"
  npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >/dev/null
fi
# From / so the source tree's aistore/ (no binary, no extension) cannot shadow the installed one.
(cd / && "$PYTHON" -c "import aistore, aistore._native; from aistore.server import find_server_binary; find_server_binary()") \
  || { echo "setup: the aistore package did not install correctly" >&2; exit 1; }
step "setup done"
