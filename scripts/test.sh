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

log=$(mktemp)
bazel test //... -c opt --test_output=errors "$@" 2>&1 | tee "$log"
bazel_rc=${PIPESTATUS[0]}

# Count test cases from each target's JUnit XML; a target with no XML (did not build, crashed
# before writing it) counts as one failure.
python3 - "$log" <<'PY'
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
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
rc=$?
rm -f "$log"
[ $rc -eq 0 ] && [ $bazel_rc -eq 0 ] || exit 1
