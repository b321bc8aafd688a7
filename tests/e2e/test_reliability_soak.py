# The short CI version of tools/soak.py: 16 streaming clients for 60 s (6
# reference prompts, 4 of them sharing a long prefix) with
# shared-prefix and unique prompts, stop strings and random disconnects; every
# completed stream checked, RSS, fds and KV blocks back to normal afterwards.
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import soak  # noqa: E402


def test_short_soak(tessera_bin, model_path, tmp_path):
    out = tmp_path / "soak.json"
    # A KV cache of 2,048 tokens (128 blocks) is full within the warm-up, so the
    # RSS growth measured after it is what a leak would add, not KV pages
    # touched for the first time (the pool's pages are zero until written;
    # with 512 blocks a run kept touching new ones and grew 20-50%).
    code = soak.main(["--bin", tessera_bin, "--model", model_path, "--clients", "16", "--duration", "60", "--pool", "6",
                      "--json", str(out), "--server-args", "--threads", "2", "--ctx-size", "2048"])
    report = out.read_text()
    assert code == 0, report
    assert '"checked_against_reference": 0' not in report
