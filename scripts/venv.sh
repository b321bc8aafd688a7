#!/usr/bin/env bash
# Creates .venv with the Python packages the tests and tools need
# (requirements-test.txt), using the python3 on the PATH (on Debian 12,
# Debian's own, which refuses system-wide pip installs). Installs Debian's
# python3-venv first if it is missing. Idempotent: reinstalls only when
# requirements-test.txt changed. Prints the venv's directory.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  echo "venv: installing python3-venv" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
fi

stamp=.venv/.requirements-test.sha256
want="$(sha256sum requirements-test.txt | cut -d' ' -f1)"
if [ ! -x .venv/bin/python3 ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "venv: creating .venv from requirements-test.txt" >&2
  python3 -m venv .venv
  .venv/bin/python3 -m pip install -q --disable-pip-version-check -r requirements-test.txt >&2
  echo "$want" >"$stamp"
fi
echo "$(pwd)/.venv"
