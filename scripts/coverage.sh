#!/usr/bin/env bash
# Line coverage of src/ by the test suite, per concern folder (src/<concern>/): builds the
# `coverage` preset (gcc --coverage, -O0), runs every test, and prints one line per concern
# plus the total, with gcovr (Debian's gcovr package, installed here: only this script needs
# it), each against its floor in scripts/coverage-floors.txt: exit status 1 when a concern is
# below its floor or has none. Also writes build-coverage/coverage.json (gcovr's per-file
# summary) and build-coverage/coverage-by-concern.txt. CI runs it (.ci/run).
#
#   scripts/coverage.sh            # build, test, report
#   scripts/coverage.sh --report   # report only, from the last run's counters
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
source scripts/lib/debian-packages.sh
[ -z "$(missing_packages gcovr)" ] || install_packages coverage gcovr

tests_failed=0
if [ "${1:-}" != "--report" ]; then
  cmake --preset coverage > /dev/null
  cmake --build --preset coverage -j "$(nproc)"
  find build-coverage -name '*.gcda' -delete
  # A failing test still leaves its counters: the report says what ran, then the run fails.
  ctest --preset coverage -j "$(nproc)" || tests_failed=1
fi

# Negative branch counts ("branch 2 taken -1") come from counters updated by many threads at
# once; gcovr 5.2 stops at them unless told to skip: lines are still counted.
gcovr --root . --object-directory build-coverage --filter 'src/' --exclude 'src/engine/cuda/' --gcov-ignore-parse-errors \
  --json-summary build-coverage/coverage.json --json-summary-pretty > /dev/null
# One row per concern, held against scripts/coverage-floors.txt: a concern below its floor, or
# without one, fails the run (scripts/lib/coverage_by_concern.py says the rules).
python3 scripts/lib/coverage_by_concern.py build-coverage/coverage.json scripts/coverage-floors.txt \
  | tee build-coverage/coverage-by-concern.txt
if [ "$tests_failed" != 0 ]; then
  echo "coverage: some tests failed (see above); the coverage above is of what ran" >&2
  exit 1
fi
