# TESSERA_KERNELS caps the kernel level (docs/ARCHITECTURE.md), and the AMX
# level generates the VNNI level's text: greedy runs whose prompts and
# batched prefill go through the AMX tiles give the same tokens.
import json
import os
import subprocess

import pytest


def run(args, env_extra=None, timeout=180):
    env = dict(os.environ)
    env.pop("TESSERA_KERNELS", None)
    env.update(env_extra or {})
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)


def bench_kernels(tessera_bin, model_path, env_extra=None):
    r = run([tessera_bin, "bench", "-m", model_path, "-p", "32", "-n", "2", "-b", "0", "-r", "1",
             "--bw-mib", "0", "--peak-reps", "0", "--json"], env_extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["kernels"], r.stderr


def test_the_cap_lowers_the_level_and_unknown_names_are_reported(tessera_bin, model_path):
    best, _ = bench_kernels(tessera_bin, model_path)
    assert best in ("scalar", "avx2", "avx512vnni", "avx512amx")
    capped, _ = bench_kernels(tessera_bin, model_path, {"TESSERA_KERNELS": "scalar"})
    assert capped == "scalar"
    # A cap above the CPU's level leaves it where it is.
    high, _ = bench_kernels(tessera_bin, model_path, {"TESSERA_KERNELS": "avx512amx"})
    assert high == best
    bogus, err = bench_kernels(tessera_bin, model_path, {"TESSERA_KERNELS": "avx9000"})
    assert bogus == best
    assert "TESSERA_KERNELS=avx9000" in err and "ignored" in err


def test_amx_level_generates_the_vnni_levels_text(tessera_bin, model_path):
    best, _ = bench_kernels(tessera_bin, model_path)
    if best != "avx512amx":
        pytest.skip("no AMX-INT8 on this machine")
    # A prompt of well over 32 tokens, so its prefill runs the AMX tiles.
    prompt = ("The history of the printing press begins in the fifteenth century, when movable type "
              "changed how books were made across Europe. Write a short summary of what followed:")
    cmd = [tessera_bin, "run", "-m", model_path, "-p", prompt, "-n", "48", "--temp", "0", "--ignore-eos"]
    amx = run(cmd)
    vnni = run(cmd, {"TESSERA_KERNELS": "avx512vnni"})
    assert amx.returncode == 0 and vnni.returncode == 0, (amx.stderr, vnni.stderr)
    assert amx.stdout == vnni.stdout
    assert len(amx.stdout.split()) > 20
