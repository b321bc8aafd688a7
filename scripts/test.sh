#!/usr/bin/env bash
# Sets up, builds and runs every test: the C++ unit tests (CTest), the same
# unit tests under AddressSanitizer + UBSan, a short run of each libFuzzer
# target (docs/RELIABILITY.md), and the end-to-end tests (pytest) against the
# Release server and again against the ASan+UBSan one. Python packages go
# into .venv (scripts/venv.sh), never into the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# Test and tool packages live in .venv, never in the system Python.
source "$(bash scripts/venv.sh)/bin/activate"
export TESSERA_MODEL
TESSERA_MODEL="$(pwd)/$(bash scripts/fetch_model.sh)"
# The real Gemma 3 270M for its golden and serving tests (about 250 MB).
export TESSERA_GEMMA3_MODEL
TESSERA_GEMMA3_MODEL="$(pwd)/$(bash scripts/fetch_model.sh gemma3-270m)"
# llama.cpp's tokenizer suite (ggml-vocab-*.gguf), cached under models/ggml-vocab/.
bash tools/fetch_vocab_suite.sh >/dev/null

# JUnit reports of every run feed the skip summary at the end (a skip passes
# in CTest and pytest alike); --no-tests=error: an empty test list fails.
reports="$(pwd)/build/test-reports"
rm -rf "$reports" && mkdir -p "$reports"

echo "== unit tests =="
(cd build && ctest --output-on-failure --no-tests=error --output-junit "$reports/unit.xml" -j"$(nproc)")

# The sanitized builds keep line tables only (-g1 / -gline-tables-only): a
# report still names file and line, and the builds take a quarter less time
# than with full debug info (dot_avx512.cpp alone: 127 s against 93 s).
echo "== unit tests under ASan+UBSan =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DTESSERA_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 TESSERA_SANITIZED=1 \
   ctest --output-on-failure --no-tests=error --output-junit "$reports/asan-unit.xml" -j"$(nproc)")

# A fixed seed and run count make CI's fuzz step repeatable; longer exploratory
# runs: docs/RELIABILITY.md. The time cap only guards against a hung run: a
# fuzzer that it cuts below FUZZ_MIN_RUNS executions fails the step, since a
# short run tests less than it claims. 20,000 runs took 2.1-3.7 s a target on
# a loaded 2-core machine (ASan+UBSan builds), a 12x margin under 45 s.
FUZZ_SECONDS="${FUZZ_SECONDS:-45}"
FUZZ_RUNS="${FUZZ_RUNS:-20000}"
FUZZ_MIN_RUNS="${FUZZ_MIN_RUNS:-$FUZZ_RUNS}"
echo "== fuzzers (libFuzzer + ASan/UBSan, ${FUZZ_RUNS} runs or ${FUZZ_SECONDS} s each) =="
fuzz_pkgs=()
for p in clang libclang-rt-14-dev; do dpkg -s "$p" >/dev/null 2>&1 || fuzz_pkgs+=("$p"); done
if [ ${#fuzz_pkgs[@]} -gt 0 ]; then
  SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${fuzz_pkgs[@]}" >/dev/null
fi
fuzz_targets=(gguf tokenizer template openai_request grammar reference_logits llama_kld tool_calls model_spec kv_disk_tier key_file imatrix)
CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" -DTESSERA_FUZZ=ON -DTESSERA_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${fuzz_targets[@]/#/fuzz_}" >/dev/null
for t in "${fuzz_targets[@]}"; do
  new_units="$(mktemp -d)"  # new inputs go here; the committed seeds stay as they are
  log="$(mktemp)"
  if ! build-fuzz/fuzz/fuzz_"$t" -seed=1 -runs="$FUZZ_RUNS" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 "$new_units" fuzz/corpus/"$t" >"$log" 2>&1; then
    tail -n 80 "$log"
    echo "fuzz_$t failed (crash, leak, timeout or sanitizer report above)"
    exit 1
  fi
  runs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
  if [ -z "$runs" ] || [ "$runs" -lt "$FUZZ_MIN_RUNS" ]; then
    echo "fuzz_$t: ${runs:-no} executions, fewer than FUZZ_MIN_RUNS=$FUZZ_MIN_RUNS (the ${FUZZ_SECONDS} s cap cut it short)"
    exit 1
  fi
  echo "fuzz_$t: $runs executions (at least $FUZZ_MIN_RUNS), ok"
  rm -rf "$new_units" "$log"
done

# The chat page's test drives Debian's headless Chromium (tests/e2e/test_web_ui.py).
browser_pkgs=()
for p in chromium chromium-driver; do dpkg -s "$p" >/dev/null 2>&1 || browser_pkgs+=("$p"); done
if [ ${#browser_pkgs[@]} -gt 0 ]; then
  SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${browser_pkgs[@]}" >/dev/null
fi

echo "== end-to-end tests =="
python3 -m pytest -q -rs --durations=15 --junitxml="$reports/e2e.xml" tests/e2e

# Every server and CLI process of the suite runs sanitized: a report aborts
# it, a leak at exit makes its exit status non-zero, and the tests check both.
# The soak's RSS bound means nothing under ASan's allocator, so it is left out;
# so is the 20,000-sample distribution test of speculative decoding (80 s in
# the Release run, several times that sanitized): arithmetic, whose code paths
# the other speculative tests run sanitized. The schema corpus (160
# constrained answers) likewise: test_structured_output runs those paths.
# So is the importance-matrix quality comparison (five quantizations and
# KL runs of the default model): its paths run sanitized in test_imatrix's
# other tests and in the quantize and perplexity tests.
echo "== end-to-end tests against the ASan+UBSan build =="
TESSERA_BIN="$(pwd)/build-asan/tessera" ASAN_OPTIONS=detect_leaks=1 \
  python3 -m pytest -q -rs --durations=15 --junitxml="$reports/asan-e2e.xml" tests/e2e --deselect tests/e2e/test_reliability_soak.py \
  --deselect tests/e2e/test_speculative.py::test_temperature_one_distribution_is_exact \
  --deselect tests/e2e/test_schema_corpus.py::test_every_corpus_schema_validates_greedy_and_sampled \
  --deselect tests/e2e/test_imatrix.py::test_importance_lowers_the_kl_divergence

python3 scripts/skip_summary.py unit="$reports/unit.xml" asan-unit="$reports/asan-unit.xml" \
  e2e="$reports/e2e.xml" asan-e2e="$reports/asan-e2e.xml"
