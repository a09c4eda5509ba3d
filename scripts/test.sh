#!/usr/bin/env bash
# Installs what is missing, builds and runs every test, and ends with "N passed, N failed".
# Exits non-zero if anything failed or did not build.
set -uo pipefail
source "$(dirname "$0")/common.sh"
cd "$ORRERY_ROOT"
scripts/install_deps.sh || { echo "0 passed, 1 failed"; exit 1; }

# The tests read the shared reference material through Bazel (WORKSPACE: @orrery_shared is
# ../shared beside the checkout); without it they cannot build, and the run fails.
if [ ! -d "$ORRERY_ROOT/../shared/compat" ]; then
  echo "error: the shared reference material is not at $(cd "$ORRERY_ROOT/.." && pwd)/shared" \
    "(compat/, validation/): the tests that read it cannot build" >&2
fi

# Test cases counted from each target's JUnit XML (bazel-testlogs), for the targets a bazel test
# log ($1) reports; a target with no XML (did not build, crashed before writing it) counts as
# one failure. Prints "PASSED FAILED".
count_cases() {
  python3 - "$1" <<'PY'
import os, re, sys, xml.etree.ElementTree as ET
log = open(sys.argv[1]).read()
targets = re.findall(r'^(//\S+)\s+(?:\(cached\) )?(PASSED|FAILED|FAILED TO BUILD|NO STATUS|TIMEOUT|FLAKY)', log, re.M)
passed = failed = 0
for target, status in targets:
    path = os.path.join('bazel-testlogs', target[2:].replace(':', '/'), 'test.xml')
    cases = fails = 0
    if status in ('PASSED', 'FAILED', 'FLAKY') and os.path.exists(path):
        root = ET.parse(path).getroot()
        for tc in root.iter('testcase'):
            cases += 1
            if tc.find('failure') is not None or tc.find('error') is not None:
                fails += 1
    if cases == 0:
        if status == 'PASSED':
            passed += 1
        else:
            failed += 1
        continue
    if status != 'PASSED' and fails == 0:
        fails = 1  # crashed or timed out after its cases ran
    passed += cases - fails
    failed += fails
if not targets:
    failed += 1
print(f"{passed} {failed}")
PY
}

log=$(mktemp)
bazel test //... -c opt --test_output=errors "$@" 2>&1 | tee "$log"
bazel_rc=${PIPESTATUS[0]}
counts=$(count_cases "$log")
passed=${counts% *} failed=${counts#* }
rm -f "$log"
[ "$bazel_rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=$((failed + 1))

# The sanitizer passes (docs/robustness.md): a test suite built again under a sanitizer, its
# test cases counted in the line below like the others. ASan (with LeakSanitizer) and UBSan on
# the fast subset, tests of every package (ORRERY_SANITIZE=0 leaves it out); ThreadSanitizer on
# the tests that run the OpenMP loops on several threads (ORRERY_TSAN=0 leaves it out). Then
# every fuzz target for a bounded time (ORRERY_FUZZ_SECONDS, 0 = none).
# Usage: sanitizer_pass LABEL SUITE BAZEL_FLAGS...
sanitizer_pass() {
  local label=$1 suite=$2
  shift 2
  local san_log san_start=$SECONDS san_rc san_counts san_passed san_failed
  san_log=$(mktemp)
  bazel test -c opt "$@" --test_output=errors "$suite" 2>&1 | tee "$san_log"
  san_rc=${PIPESTATUS[0]}
  san_counts=$(count_cases "$san_log")
  san_passed=${san_counts% *} san_failed=${san_counts#* }
  [ "$san_rc" -eq 0 ] || [ "$san_failed" -gt 0 ] || san_failed=$((san_failed + 1))
  passed=$((passed + san_passed))
  failed=$((failed + san_failed))
  echo "sanitizers: $suite under $label: $san_passed test cases passed, $san_failed failed," \
    "in $((SECONDS - san_start)) s"
  rm -f "$san_log"
}
if [ "${ORRERY_SANITIZE:-1}" != 0 ]; then
  # //tests:sanitizer_subset (tests/BUILD) names the targets.
  sanitizer_pass ASan+UBSan //tests:sanitizer_subset --config=asan --config=ubsan
fi
if [ "${ORRERY_TSAN:-1}" != 0 ]; then
  # //tests:tsan_subset (tests/BUILD) names the targets; --config=tsan runs them on 4 threads.
  sanitizer_pass TSan //tests:tsan_subset --config=tsan
fi
fuzz_seconds="${ORRERY_FUZZ_SECONDS:-20}"
if [ "$fuzz_seconds" != 0 ]; then
  fuzz_log=$(mktemp)
  scripts/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$fuzz_log"
  fuzz_counts=$(tail -1 "$fuzz_log")
  rm -f "$fuzz_log"
  if [[ "$fuzz_counts" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    failed=$((failed + 1))
  fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
