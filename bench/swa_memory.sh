#!/usr/bin/env bash
# Sliding-window KV: `tessera run` on a sliding-window model (gemma 2/3,
# gpt-oss) with the window layers' own pool (default) and with --swa-full
# (every layer keeps the whole context), alternated, at several prompt
# lengths. Prints per run the prompt and decode speeds and the process's
# peak RSS, which holds the KV pages written (the pools are reserved but
# resident only where written).
#
# Usage: bench/swa_memory.sh MODEL TEXT [REPS] [CHARS...]
#   TEXT: any long plain text; the prompt is its first CHARS characters
#   (default 1000 4000 16000 32000: about 250 to 8000 tokens)
# Settings: -c 8448, 128 tokens generated past EOS, greedy, 2 threads.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,12p "$0"; exit 2; }
MODEL=$1 TEXT=$2 REPS=${3:-2}
shift $(($# < 3 ? $# : 3))
LENGTHS=("$@")
[ ${#LENGTHS[@]} -gt 0 ] || LENGTHS=(1000 4000 16000 32000)
T=${TESSERA_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/tessera}

one() {  # chars mode -> one line
    local prompt log
    prompt=$(head -c "$1" "$TEXT")
    log=$(/usr/bin/time -v "$T" run -m "$MODEL" -c 8448 -t 2 -n 128 --ignore-eos --temp 0 -p "$prompt" \
          $([ "$2" = full ] && echo --swa-full) 2>&1 >/dev/null)
    awk -v mode="$2" '
        /^prompt:/ { pt = $2; pps = $7 }
        /^generation:/ { gps = $7 }
        /Maximum resident/ { rss = $6 }
        END { gsub(/[(]/, "", pps); gsub(/[(]/, "", gps);
              printf "%-7s prompt %5d tokens  pp %7s t/s  tg %6s t/s  peak RSS %5.0f MiB\n", mode, pt, pps, gps, rss / 1024 }' \
        <<<"$log"
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(basename "$MODEL")"
for chars in "${LENGTHS[@]}"; do
    for ((r = 0; r < REPS; r++)); do
        one "$chars" window
        one "$chars" full
    done
done
