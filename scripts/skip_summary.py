#!/usr/bin/env python3
"""The end of scripts/test.sh: every skipped test with its reason, and the
SIMD levels the unit tests exercised on this CPU, read from the JUnit XML that
CTest (--output-junit) and pytest (--junitxml) wrote. A skip counts as a pass
in both runners, so without this list a CI machine that never runs a path
(AMX on a CPU without it, a level capped by TESSERA_KERNELS) would say nothing.

Usage: skip_summary.py LABEL=REPORT.xml [LABEL=REPORT.xml ...]
A missing or unreadable report, or a CTest report without the SIMD-level
line of SimdLevelsTest, is an error: the step it stands for did not run.
"""
import re
import sys
import xml.etree.ElementTree as ET

SIMD_LINE = re.compile(r"^\[simd levels\] (.*)$", re.MULTILINE)
# GoogleTest prints "file:line: Skipped", the message, then "[  SKIPPED ] name".
GTEST_SKIP = re.compile(r": Skipped\n(.*?)\n\[  SKIPPED \]", re.DOTALL)


def skip_reason(case, skipped):
    """The runner's skip message, or for CTest the test's own words."""
    out = case.findtext("system-out") or ""
    m = GTEST_SKIP.search(out)
    if m:
        return " ".join(m.group(1).split())
    message = skipped.get("message") or ""
    # CTest's own messages (SKIP_REGULAR_EXPRESSION_MATCHED, SKIP_RETURN_CODE=77) say how, not why.
    if message and not message.startswith("SKIP_"):
        return message
    # A SKIP_RETURN_CODE test (e.g. matmul_level_ab_smoke): its last line.
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no reason given)"


def case_name(case):
    cls, name = case.get("classname") or "", case.get("name") or ""
    # CTest repeats the name as the class; pytest gives a module path.
    return name if cls in ("", name) else f"{cls}::{name}"


def summarize(label, path):
    """Prints the report's skips; returns an error string or None."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        return f"{label}: cannot read {path}: {e}"
    cases = list(root.iter("testcase"))
    skips = [(c, c.find("skipped")) for c in cases if c.find("skipped") is not None]
    print(f"{label}: {len(cases)} tests, {len(skips)} skipped ({path})")
    for case, skipped in skips:
        print(f"  SKIPPED {case_name(case)}: {skip_reason(case, skipped)}")
    # pytest names its suite "pytest"; a CTest report must carry the levels.
    if not any(s.get("name") == "pytest" for s in root.iter("testsuite")):
        levels = [m.group(1) for c in cases for m in SIMD_LINE.finditer(c.findtext("system-out") or "")]
        if not levels:
            return f"{label}: no '[simd levels]' line in {path} (did SimdLevelsTest run?)"
        print(f"  SIMD levels: {levels[0]}")
    return None


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    print("== skipped tests and SIMD levels exercised ==")
    errors = [e for a in argv[1:] if (e := summarize(*a.split("=", 1)))]
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
