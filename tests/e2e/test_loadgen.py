# The load generator against a real server: a concurrency sweep whose JSON
# counts every request and token, and the three PNG charts it draws.
import json
import pathlib
import subprocess
import sys

import pytest

from server_fixture import ServerProcess

ROOT_DIR = pathlib.Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--no-access-log"])
    yield srv
    assert srv.stop() == 0, srv.final_log


def test_sweep_counts_and_charts(server, tmp_path):
    out = tmp_path / "runs.json"
    r = subprocess.run([sys.executable, str(ROOT_DIR / "tools" / "loadgen.py"), "--url", server.base_url,
                        "--requests", "6", "--concurrency", "1,3", "--prompt-words", "12", "--max-tokens", "8",
                        "--ignore-eos", "--json", str(out), "--plot", str(tmp_path / "plots"), "--title", "test"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    runs = json.loads(out.read_text())["runs"]
    assert [run["summary"]["concurrency"] for run in runs] == [1, 3]
    for run in runs:
        s = run["summary"]
        assert s["requests"] == 6 and s["errors"] == 0 and s["output_tokens"] == 6 * 8
        assert all(0 <= q["start"] <= s["wall_s"] and 0 < q["ttft"] <= q["e2e"] for q in run["results"])
    for name in ("latency_cdf.png", "throughput_vs_concurrency.png", "ttft_over_time.png"):
        data = (tmp_path / "plots" / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000, name
