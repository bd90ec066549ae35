#!/usr/bin/env bash
# Lists the tests the last ctest run in BUILD_DIR skipped, each with its reason (ctest itself
# prints only "Skipped"): a GTEST_SKIP's message, a placeholder test's "skipped: ..." line, or
# pytest's -rs lines. A test that stops running on some host is then seen with its cause
# rather than taken for a pass. Usage: scripts/skipped-tests.sh BUILD_DIR
set -euo pipefail
log="${1:?usage: scripts/skipped-tests.sh BUILD_DIR}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "no ctest log at $log" >&2; exit 1; }
awk '
  /^[0-9]+\/[0-9]+ Testing: / { name = $3 }
  /: Skipped$/ { if ((getline reason) > 0) { print "  " name ": " reason; n++ } }
  /^skipped: / { print "  " name ": " substr($0, 10); n++ }  # a placeholder test (tests/CMakeLists.txt)
  /^SKIPPED \[/ { print "  " name ": " $0; n++ }              # pytest -rs: a skip inside the Python suite
  END { printf "== %d tests skipped%s\n", n, (n ? " (above, with the reason each gave)" : "") }
' "$log"
