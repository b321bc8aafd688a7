#!/usr/bin/env bash
# One command from a fresh machine to text: installs the build packages,
# builds the tessera binary (no tests), fetches the default model and
# generates from it. Extra arguments go to `tessera run`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh tessera
model=$(bash scripts/fetch_model.sh)
if [ $# -eq 0 ]; then
  set -- --chat -p "What is the capital of France? Answer in one sentence." -n 64
fi
./build/tessera run -m "$model" "$@"
