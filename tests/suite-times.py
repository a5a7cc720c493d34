#!/usr/bin/env python3
"""Prints how long each suite of a nextest run took, from the run's JUnit report.

A suite is a test binary, and within the service's one integration-test binary (`it`), one of
its modules (`app`, `http_api`, …). The time is the sum of its tests' times: with tests running
side by side it is what the suite costs, not the wall-clock time it spanned.

    tests/suite-times.py TARGET_DIR/nextest/default/junit.xml
"""

import sys
import xml.etree.ElementTree as ET


def suite_of(binary: str, test: str) -> str:
    """The suite of one test: its binary, or `it::MODULE` for the integration tests."""
    if binary.endswith("::it"):
        return "it::" + test.split("::", 1)[0]
    return binary


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"no JUnit report to read: {e}", file=sys.stderr)
        return 1
    times: dict[str, list[float]] = {}
    for case in root.iter("testcase"):
        suite = suite_of(case.get("classname", "?"), case.get("name", "?"))
        entry = times.setdefault(suite, [0, 0.0])
        entry[0] += 1
        entry[1] += float(case.get("time", "0") or 0)
    total = sum(seconds for _, seconds in times.values())
    print(f"\n{'suite':<40} {'tests':>6} {'seconds':>9}")
    for suite, (count, seconds) in sorted(times.items(), key=lambda kv: -kv[1][1]):
        print(f"{suite:<40} {count:>6} {seconds:>9.1f}")
    print(f"{'all':<40} {sum(c for c, _ in times.values()):>6} {total:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
