# A test of scripts/skip_summary.py, the list of skipped tests printed at the
# end of scripts/test.sh, on real reports: CTest runs a few unit tests of the
# build under test with the kernels capped at AVX2 (so the AMX tests skip on
# any CPU, and matmul_level_ab_smoke has no second level to compare), and
# pytest runs a generated file with one skip. Every skip must be listed with
# its reason, and a report that is missing or lacks the SIMD levels fails.
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "scripts" / "skip_summary.py"
CTEST_TESTS = "^(AmxTilesTest\\.|SimdLevelsTest\\.|matmul_level_ab_smoke$)"


def summarize(*reports):
    return subprocess.run([sys.executable, str(SUMMARY), *reports], capture_output=True, text=True, timeout=60)


def ctest_report(build_dir, out):
    env = dict(os.environ, TESSERA_KERNELS="avx2")
    r = subprocess.run(["ctest", "-R", CTEST_TESTS, "--no-tests=error", "--output-junit", str(out)],
                       cwd=build_dir, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]
    return out


def pytest_report(tmp_path):
    (tmp_path / "test_one_skip.py").write_text(
        "import pytest\n\n"
        "def test_runs():\n    assert 1 + 1 == 2\n\n"
        "def test_skips():\n    pytest.skip('needs a unicorn')\n")
    out = tmp_path / "py.xml"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={out}",
                        str(tmp_path / "test_one_skip.py")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout
    return out


def test_every_skip_is_listed_with_its_reason(tessera_bin, tmp_path):
    unit = ctest_report(pathlib.Path(tessera_bin).parent, tmp_path / "unit.xml")
    py = pytest_report(tmp_path)
    r = summarize(f"unit={unit}", f"e2e={py}")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # The header's count is the listed skips' (more AMX tests may come).
    m = re.search(r"^unit: (\d+) tests, (\d+) skipped", out, re.MULTILINE)
    assert m and int(m.group(2)) >= 3, out
    unit_part = out[m.start():out.index("\ne2e: ")]
    assert unit_part.count("  SKIPPED ") == int(m.group(2)), out
    assert "SKIPPED AmxTilesTest.TilesGiveTheVnniBits: no AMX-INT8 here" in out, out
    assert "SKIPPED AmxTilesTest.MatmulAtTheAmxLevelEqualsTheVnniLevel: no AMX-INT8 here" in out, out
    assert "SKIPPED matmul_level_ab_smoke: both levels are avx2: nothing to compare on this CPU" in out, out
    assert ("SIMD levels: exercised: scalar avx2; not exercised: avx512vnni (TESSERA_KERNELS caps the level "
            "at avx2), avx512amx (TESSERA_KERNELS caps the level at avx2)") in out, out
    assert "e2e: 2 tests, 1 skipped" in out, out
    assert "test_skips: needs a unicorn" in out, out


def test_a_missing_report_or_levels_line_fails(tmp_path):
    py = pytest_report(tmp_path)
    r = summarize(f"e2e={py}", f"unit={tmp_path / 'absent.xml'}")
    assert r.returncode == 1 and "cannot read" in r.stderr, r.stderr
    # A CTest report with no SimdLevelsTest output: the levels went unreported.
    bare = tmp_path / "bare.xml"
    bare.write_text('<?xml version="1.0"?><testsuite name="(empty)" tests="1">'
                    '<testcase name="x" classname="x" status="run"><system-out>ok</system-out></testcase>'
                    '</testsuite>')
    r = summarize(f"unit={bare}")
    assert r.returncode == 1 and "[simd levels]" in r.stderr, r.stderr
