#!/bin/bash
# llama.cpp's full-vocabulary reference (`llama-perplexity --kl-divergence-base`)
# of the default model on a few short chunks of GPL-3, F32 KV with flash
# attention off (with it on, llama.cpp casts F32 K/V to F16), for
# tests/e2e/test_perplexity.py: tessera reads the file and compares its own
# run with it. Kept under 1 MB: 49,152 tokens x 2 bytes per scored position.
# Usage: tools/gen_llama_kld_golden.sh LLAMA_BIN_DIR MODEL OUT_DIR
set -euo pipefail
bin=$1 model=$2 out=$3
ctx=10 chunks=2
LD_LIBRARY_PATH=$bin "$bin/llama-perplexity" -m "$model" -f /usr/share/common-licenses/GPL-3 -c $ctx --chunks $chunks \
  -t 2 -ctk f32 -ctv f32 -fa off --kl-divergence-base "$out/smollm2_gpl3_c${ctx}_llama.kld" > "$out/llama.log" 2>&1
ppl=$(sed -n 's/.*Final estimate: PPL = \([0-9.]*\).*/\1/p' "$out/llama.log")
printf '{"n_ctx": %d, "n_chunks": %d, "perplexity": %s, "made_by": "llama-perplexity (llama-cpp-python 0.3.36 sdist)"}\n' \
  $ctx $chunks "$ppl" > "$out/smollm2_gpl3_c${ctx}_llama.json"
rm "$out/llama.log"
