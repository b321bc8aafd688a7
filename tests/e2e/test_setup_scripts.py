# The README's commands as a new user on a stock Debian 12 machine runs them:
# with Debian's own Python first on the PATH, which refuses system-wide pip
# installs (PEP 668). CI runs the whole test command that way (.ci/run); these
# tests check the demo command and where the test packages went.
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEBIAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEBIAN_PYTHON = pathlib.Path("/usr/bin/python3")


def debian_python_or_skip():
    managed = list(pathlib.Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED"))
    if DEBIAN_PYTHON.exists() and managed:
        return
    message = "no externally managed Debian Python at /usr/bin/python3"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI runs on Debian 12)")
    pytest.skip(message)


def test_debian_python_refuses_system_installs():
    # The premise of the setup: if this ever passes, the venv checks below
    # prove nothing about a stock Debian.
    debian_python_or_skip()
    r = subprocess.run([str(DEBIAN_PYTHON), "-m", "pip", "install", "--dry-run", "--no-deps", "pytest"],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "PATH": DEBIAN_PATH})
    assert r.returncode != 0
    assert "externally-managed-environment" in r.stdout + r.stderr


def test_test_packages_live_in_the_venv():
    debian_python_or_skip()
    if os.environ.get("CI") != "true":
        pytest.skip("a developer may run pytest from any Python; CI runs it from .venv")
    assert sys.prefix != sys.base_prefix, "pytest is not running inside a virtual environment"
    assert pathlib.Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()
    assert sys.base_prefix == "/usr", f"the venv was made from {sys.base_prefix}, not Debian's Python"


def test_demo_command_answers_with_debian_python_only():
    debian_python_or_skip()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = DEBIAN_PATH
    r = subprocess.run(["bash", "scripts/demo.sh", "--chat", "--temp", "0", "-n", "32",
                        "-p", "What is the capital of France? Answer in one sentence."],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert "Paris" in r.stdout
