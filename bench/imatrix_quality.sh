#!/usr/bin/env bash
# Importance-matrix quantization, tessera against llama.cpp on one F32 model:
# each engine makes its importance matrix from the same calibration text
# (tessera imatrix / llama-imatrix), each quantizes with none, its own and
# the other's matrix (so the files cross over), and every file is scored by
# one judge, llama-perplexity --kl-divergence against the F32 model's run on
# a held-out text, so only the quantizers differ. Prints one line per file.
#
# Usage: bench/imatrix_quality.sh LLAMA_BIN F32.gguf CALIBRATION.txt EVAL.txt [TYPES...]
#   LLAMA_BIN: folder with llama-imatrix, llama-quantize, llama-perplexity
#   TYPES: mixes both engines name alike (default: Q4_0 Q3_K_M Q4_K_M)
# Work files go to ./imatrix-bench/. Settings: -c 512, all calibration
# chunks, the first 20 chunks of EVAL.txt, F32 KV, flash attention off, 2 threads.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,14p "$0"; exit 2; }
L=$1 F32=$2 CAL=$3 EVAL=$4
shift 4
TYPES=("$@")
[ ${#TYPES[@]} -gt 0 ] || TYPES=(Q4_0 Q3_K_M Q4_K_M)
T=${TESSERA_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/tessera}
export LD_LIBRARY_PATH="$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=imatrix-bench
mkdir -p "$W"

[ -f "$W/base.kld" ] || "$L/llama-perplexity" -m "$F32" -f "$EVAL" -c 512 --chunks 20 -t 2 -ctk f32 -ctv f32 -fa off \
  --kl-divergence-base "$W/base.kld" >"$W/base.log" 2>&1
[ -f "$W/tessera.imatrix.gguf" ] || "$T" imatrix -m "$F32" -f "$CAL" -c 512 -t 2 -o "$W/tessera.imatrix.gguf" >/dev/null 2>&1
[ -f "$W/llama.imatrix.gguf" ] || "$L/llama-imatrix" -m "$F32" -f "$CAL" -c 512 -t 2 -o "$W/llama.imatrix.gguf" >/dev/null 2>&1

score() {  # file -> "KL mean, top-1, PPL" as llama-perplexity reports them
  "$L/llama-perplexity" -m "$1" -f "$EVAL" -c 512 --chunks 20 -t 2 -ctk f32 -ctv f32 -fa off \
    --kl-divergence-base "$W/base.kld" --kl-divergence >"$1.log" 2>&1
  local kl top ppl
  kl=$(sed -nE 's/.*Mean +KLD: *([0-9.]+) ± *([0-9.]+).*/\1 ± \2/p' "$1.log")
  top=$(sed -nE 's/.*Same top p: *([0-9.]+) ± *([0-9.]+).*/\1 ± \2/p' "$1.log")
  ppl=$(sed -nE 's/.*Mean PPL\(Q\) +: *([0-9.]+) ± *([0-9.]+).*/\1 ± \2/p' "$1.log")
  echo "KL $kl | top-1 $top % | PPL $ppl"
}

for t in "${TYPES[@]}"; do
  for q in tessera llama; do
    for m in none tessera llama; do
      out="$W/$t-$q-$m.gguf"
      flag=()
      [ "$m" = none ] || flag=(--imatrix "$W/$m.imatrix.gguf")
      if [ "$q" = tessera ]; then
        "$T" quantize "${flag[@]}" "$F32" "$out" "$t" >"$out.quantize.log" 2>&1
      else
        "$L/llama-quantize" "${flag[@]}" "$F32" "$out" "$t" 2 >"$out.quantize.log" 2>&1
      fi
      printf '%-7s quantized by %-7s imatrix %-7s %s MiB | %s\n' "$t" "$q" "$m" \
        "$(( $(stat -c %s "$out") / 1048576 ))" "$(score "$out")"
    done
  done
done
