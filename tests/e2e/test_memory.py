# Peak memory of `tessera run` as the kernel counts it (the child's maximum
# RSS from wait4): the weights are the file's mapping, the KV cache costs
# only the pages a sequence has written, and what the process adds beyond
# both (code, tokenizer, activations) stays small and fixed. Not against
# sanitizer builds, whose allocators change every figure.
import os
import subprocess
import sys

import gguf
import pytest

pytestmark = pytest.mark.skipif("TESSERA_BIN" in os.environ, reason="RSS means nothing under ASan")

MIB = 1 << 20
# Measured 23.4 MiB on SmolLM2-135M (session 18): about 10.6 MiB of code
# (3.2 of it libcrypto, linked by the cpp-httplib transport since replaced
# by header-only Beast), the tokenizer's tables (~8), sampler and activations.
FIXED_OVERHEAD_MAX = 32 * MIB


# The kernel's maximum RSS of a process counts its pages before exec too,
# and a child forked from this interpreter (numpy, the GGUF reader) starts
# at ~200 MB: a fresh small interpreter spawns tessera instead and reports
# its exit status and maximum RSS.
SPAWN_AND_MEASURE = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def peak_rss_bytes(args):
    r = subprocess.run([sys.executable, "-c", SPAWN_AND_MEASURE, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    exit_code, max_rss_kib = map(int, r.stdout.split())
    assert exit_code == 0, r.stderr
    return max_rss_kib * 1024


def kv_bytes_per_token(model_path):
    """F16 K and V of every layer for one position (the default KV type)."""
    reader = gguf.GGUFReader(model_path)
    arch = bytes(reader.fields["general.architecture"].parts[-1]).decode()

    def value(key):
        return int(reader.fields[f"{arch}.{key}"].parts[-1][0])

    head_dim = value("embedding_length") // value("attention.head_count")
    return value("block_count") * value("attention.head_count_kv") * head_dim * 2 * 2


def run_args(tessera_bin, model_path, ctx, n):
    return [tessera_bin, "run", "-m", model_path, "-p", "Once upon a time", "-n", str(n), "-c", str(ctx),
            "--ignore-eos", "--temp", "0"]


def test_kv_budget_is_not_resident_until_written(tessera_bin, model_path):
    small = peak_rss_bytes(run_args(tessera_bin, model_path, 256, 16))
    large = peak_rss_bytes(run_args(tessera_bin, model_path, 8192, 16))
    budget_gap = (8192 - 256) * kv_bytes_per_token(model_path)  # 186 MB for SmolLM2-135M
    assert abs(large - small) < 4 * MIB, (small, large, budget_gap)


def test_peak_rss_is_weights_and_written_kv_plus_a_fixed_overhead(tessera_bin, model_path):
    ctx = 512  # filled to the last few positions
    peak = peak_rss_bytes(run_args(tessera_bin, model_path, ctx, ctx - 16))
    weights_and_kv = os.path.getsize(model_path) + ctx * kv_bytes_per_token(model_path)
    assert peak <= weights_and_kv + FIXED_OVERHEAD_MAX, (peak, weights_and_kv)
    # And it does read the weights: the mapping is part of the peak.
    assert peak >= os.path.getsize(model_path) * 0.9, peak
