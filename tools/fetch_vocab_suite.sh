#!/usr/bin/env bash
# Fetches llama.cpp's own tokenizer suite (models/ggml-vocab-*.gguf with their
# .inp/.out cases, MIT licence), and gpt-oss's chat template (the harmony
# format's tests), from the llama-cpp-python sdist on PyPI, which
# vendors llama.cpp, checks the tarball's sha256 and caches the files under
# models/ggml-vocab/ (the files are too large to commit: 77 MB together).
# Prints the folder. Fetches only once.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
DEST=models/ggml-vocab
STAMP=$DEST/.llama-cpp-python-$VERSION-2  # -2: with gpt-oss's chat template

if [ -f "$STAMP" ]; then
  echo "$DEST"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch_vocab_suite: downloading llama-cpp-python $VERSION sdist from PyPI (about 77 MB)" >&2
PYTHON=${PYTHON:-python3}
# --no-binary names the package alone: with :all:, pip also built the sdist's
# build dependencies from source to read its metadata (minutes of CI time).
"$PYTHON" -m pip download --progress-bar on --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
  "llama-cpp-python==$VERSION" -d "$tmp" >&2
tarball="$tmp/llama_cpp_python-$VERSION.tar.gz"
if [ ! -f "$tarball" ]; then
  echo "fetch_vocab_suite: download failed" >&2
  exit 1
fi
if ! echo "$SHA256  $tarball" | sha256sum -c --status; then
  echo "fetch_vocab_suite: sha256 mismatch for $tarball" >&2
  exit 1
fi
models="llama_cpp_python-$VERSION/vendor/llama.cpp/models"
tar -xzf "$tarball" -C "$tmp" --wildcards "$models/ggml-vocab-*" "$models/templates/openai-gpt-oss-120b.jinja"
rm -rf "$DEST" && mkdir -p "$DEST"
mv "$tmp/$models/"ggml-vocab-* "$tmp/$models/templates/openai-gpt-oss-120b.jinja" "$DEST/"
touch "$STAMP"
echo "$DEST"
