# Shared fixtures for end-to-end tests: paths to the built binary and the model.
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tessera_bin():
    # TESSERA_BIN runs the suite against another build (sanitizers).
    path = pathlib.Path(os.environ.get("TESSERA_BIN") or ROOT / "build" / "tessera")
    assert path.exists(), "build tessera first (scripts/setup.sh)"
    return str(path)


@pytest.fixture(scope="session")
def model_path():
    path = os.environ.get("TESSERA_MODEL") or str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf")
    assert os.path.exists(path), "fetch the model first (scripts/fetch_model.sh)"
    return path
