#!/usr/bin/env bash
# Line coverage of src/ by the test suite, per concern folder (src/<concern>/): builds the
# `coverage` preset (gcc --coverage, -O0), runs every test, and prints one line per concern
# plus the total, with gcovr (Debian's gcovr package, installed here: only this script needs
# it). Also writes build-coverage/coverage.json (gcovr's per-file summary) and
# build-coverage/coverage-by-concern.txt.
#
#   scripts/coverage.sh            # build, test, report
#   scripts/coverage.sh --report   # report only, from the last run's counters
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
source scripts/lib/debian-packages.sh
[ -z "$(missing_packages gcovr)" ] || install_packages coverage gcovr

if [ "${1:-}" != "--report" ]; then
  cmake --preset coverage > /dev/null
  cmake --build --preset coverage -j "$(nproc)"
  find build-coverage -name '*.gcda' -delete
  # A failing test still leaves its counters; the report says what ran.
  ctest --preset coverage -j "$(nproc)" || echo "coverage: some tests failed (see above); coverage is of what ran"
fi

# Negative branch counts ("branch 2 taken -1") come from counters updated by many threads at
# once; gcovr 5.2 stops at them unless told to skip: lines are still counted.
gcovr --root . --object-directory build-coverage --filter 'src/' --exclude 'src/engine/cuda/' --gcov-ignore-parse-errors \
  --json-summary build-coverage/coverage.json --json-summary-pretty > /dev/null
python3 - build-coverage/coverage.json <<'PY' | tee build-coverage/coverage-by-concern.txt
import json, sys
files = json.load(open(sys.argv[1]))["files"]
by = {}
for f in files:
    parts = f["filename"].split("/")
    concern = parts[1] if len(parts) > 2 and parts[0] == "src" else parts[0]
    t = by.setdefault(concern, [0, 0])
    t[0] += f["line_covered"]
    t[1] += f["line_total"]
covered = sum(v[0] for v in by.values())
total = sum(v[1] for v in by.values())
print(f"{'concern':<10} {'lines':>7} {'covered':>8} {'coverage':>9}")
for concern in sorted(by):
    c, t = by[concern]
    print(f"{concern:<10} {t:>7} {c:>8} {100.0 * c / t if t else 0:>8.1f}%")
print(f"{'total':<10} {total:>7} {covered:>8} {100.0 * covered / total if total else 0:>8.1f}%")
PY
