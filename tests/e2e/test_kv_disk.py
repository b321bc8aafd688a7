# The KV disk tier (--kv-disk): a restarted server answers a long cached
# prompt from the tier (cached_tokens shows the hit, the text is the same,
# the answer comes sooner); flipped bytes in the tier file and a tier file
# written by another model are ignored, never loaded, and counted.
import pathlib
import shutil
import time

import httpx
import pytest

from server_fixture import ServerProcess, metric

PROMPT = "".join(f"Entry {k}: the inventory lists {k * 7} crates of item {k % 13}. " for k in range(64))


def serve(tessera_bin, model_path, tier_dir):
    return ServerProcess(tessera_bin, model_path, ["--kv-disk", str(tier_dir), "--kv-disk-size", "128M"])


def complete(server, prompt=PROMPT):
    start = time.monotonic()
    r = httpx.post(server.base_url + "/v1/completions", json={"prompt": prompt, "max_tokens": 4, "temperature": 0},
                   timeout=300)
    assert r.status_code == 200, r.text
    body = r.json()
    return {"text": body["choices"][0]["text"], "prompt": body["usage"]["prompt_tokens"],
            "cached": body["usage"]["prompt_tokens_details"]["cached_tokens"], "seconds": time.monotonic() - start}


def metrics(server):
    return httpx.get(server.base_url + "/metrics").text


def tier_file(tier_dir):
    files = list(pathlib.Path(tier_dir).glob("kv-*.tier"))
    assert len(files) == 1, files
    return files[0]


@pytest.fixture(scope="module")
def populated(tessera_bin, model_path, tmp_path_factory):
    """A tier written by one server that answered PROMPT once, and that answer."""
    tier_dir = tmp_path_factory.mktemp("tier")
    srv = serve(tessera_bin, model_path, tier_dir)
    cold = complete(srv)
    assert srv.stop() == 0, srv.final_log
    assert 900 < cold["prompt"] < 2048
    assert cold["cached"] == 0
    return tier_dir, cold


def copy_tier(populated, tmp_path):
    tier_dir = tmp_path / "tier"
    shutil.copytree(populated[0], tier_dir)
    return tier_dir


def restart_and_complete(tessera_bin, model_path, tier_dir):
    """A server started on `tier_dir` answers the long prompt once; its answer and /metrics."""
    srv = serve(tessera_bin, model_path, tier_dir)
    try:
        return complete(srv), metrics(srv)
    finally:
        assert srv.stop() == 0, srv.final_log


def test_a_restarted_server_answers_from_the_tier(tessera_bin, model_path, populated, tmp_path):
    cold = populated[1]
    hit, m = restart_and_complete(tessera_bin, model_path, copy_tier(populated, tmp_path))
    assert hit["cached"] >= cold["prompt"] - 16, hit
    assert hit["text"] == cold["text"]
    assert hit["seconds"] < cold["seconds"], (hit, cold)
    assert metric(m, "tessera_kv_disk_blocks_loaded_total") >= hit["cached"] // 16
    assert metric(m, "tessera_kv_disk_blocks_rejected_total") == 0


def test_flipped_bytes_in_the_tier_are_ignored(tessera_bin, model_path, populated, tmp_path):
    tier_dir = copy_tier(populated, tmp_path)
    path = tier_file(tier_dir)
    data = bytearray(path.read_bytes())
    for at in range(4096 + 1000, len(data), 4096):  # every record, past the file header
        data[at] ^= 0x40
    path.write_bytes(data)
    again, m = restart_and_complete(tessera_bin, model_path, tier_dir)
    assert again["cached"] == 0, again
    assert again["text"] == populated[1]["text"]
    assert metric(m, "tessera_kv_disk_blocks_rejected_total") > 0
    assert metric(m, "tessera_kv_disk_blocks_loaded_total") == 0


def other_model(model_path, tmp_path):
    """A copy of the model with one byte of its metadata (general.name) changed."""
    data = bytearray(pathlib.Path(model_path).read_bytes())
    key = data.find(b"general.name")
    assert key > 0
    value = key + len(b"general.name") + 4 + 8  # value type (u32), string length (u64), then the text
    data[value] = ord("X") if data[value] != ord("X") else ord("Y")
    path = tmp_path / "other.gguf"
    path.write_bytes(data)
    return str(path)


def test_a_tier_written_by_another_model_is_ignored(tessera_bin, model_path, populated, tmp_path):
    tier_dir = copy_tier(populated, tmp_path)
    mine = tier_file(tier_dir)
    foreign_dir = tmp_path / "foreign"
    other = serve(tessera_bin, other_model(model_path, tmp_path), foreign_dir)
    complete(other, "A short prompt that fills one block of the other model's tier, and then some.")
    assert other.stop() == 0, other.final_log
    theirs = tier_file(foreign_dir)
    assert theirs.name != mine.name  # the model's identity names the file
    shutil.copyfile(theirs, mine)  # their blocks under this model's name
    again, m = restart_and_complete(tessera_bin, model_path, tier_dir)
    assert again["cached"] == 0, again
    assert again["text"] == populated[1]["text"]
    assert metric(m, "tessera_kv_disk_files_rejected_total") == 1
    assert metric(m, "tessera_kv_disk_blocks_loaded_total") == 0
