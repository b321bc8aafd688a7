#!/usr/bin/env bash
# Sets up, builds and runs every test: the C++ unit tests (CTest), the same
# unit tests under AddressSanitizer + UBSan, and the end-to-end tests (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
export TESSERA_MODEL
TESSERA_MODEL="$(pwd)/$(bash scripts/fetch_model.sh)"

echo "== unit tests =="
(cd build && ctest --output-on-failure -j"$(nproc)")

echo "== unit tests under ASan+UBSan =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 TESSERA_SANITIZED=1 ctest --output-on-failure -j"$(nproc)")

echo "== end-to-end tests =="
python3 -m pytest -q tests/e2e
