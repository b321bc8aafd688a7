# A test of the test suite: the unit tests that read ../shared/fixtures must
# fail in CI when the fixtures are missing (CTest counts a skip as a pass),
# naming the path they looked at, and may only skip, loudly, elsewhere
# (tests/unit/fixtures.h). Runs the unit-test binary next to the tessera
# binary under test (build/ or build-asan/) with the fixtures pointed away.
import os
import pathlib
import re
import subprocess

import pytest

# Every unit test that reads the vocabulary fixtures (12 today).
FIXTURE_TESTS = "*FixtureTest.*:FixtureVocab.*:*HostileText.*:Gguf.LoadsVocabOnlyFixtures"


@pytest.fixture(scope="module")
def unit_tests(tessera_bin):
    path = pathlib.Path(tessera_bin).parent / "unit_tests"
    assert path.exists(), f"build unit_tests next to {tessera_bin}"
    return str(path)


def run_without_fixtures(unit_tests, tmp_path, ci):
    missing = tmp_path / "no-fixtures-here"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TESSERA_FIXTURES"] = str(missing)
    if ci is not None:
        env["CI"] = ci
    r = subprocess.run([unit_tests, f"--gtest_filter={FIXTURE_TESTS}"], capture_output=True, text=True,
                       env=env, timeout=120)
    return r, str(missing / "vocab")


def ran_count(output):
    m = re.search(r"\[==========\] (\d+) tests? from .* ran", output)
    assert m, output[-2000:]
    return int(m.group(1))


@pytest.mark.parametrize("ci", ["true", "1"])
def test_missing_fixtures_fail_in_ci_and_name_the_path(unit_tests, tmp_path, ci):
    r, missing = run_without_fixtures(unit_tests, tmp_path, ci)
    assert r.returncode != 0, r.stdout[-2000:]
    assert ran_count(r.stdout) >= 12
    assert f"MISSING TEST FIXTURES: {missing}" in r.stdout
    assert re.search(r"\[  FAILED  \] (\d+) tests?, listed below", r.stdout)
    assert "[  SKIPPED ]" not in r.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_missing_fixtures_skip_loudly_outside_ci(unit_tests, tmp_path, ci):
    r, missing = run_without_fixtures(unit_tests, tmp_path, ci)
    assert r.returncode == 0, r.stdout[-2000:]
    n = ran_count(r.stdout)
    assert n >= 12
    assert f"[  SKIPPED ] {n} tests, listed below" in r.stdout
    assert r.stdout.count(f"MISSING TEST FIXTURES: {missing}") == n
    assert "THIS TEST CHECKED NOTHING" in r.stdout
