#!/usr/bin/env bash
# Regenerates the golden outputs (tests/golden/expected/) on purpose, after a change that moves
# an output deliberately: scripts/update_goldens.sh [GROUP...] (default: every group, i.e. every
# tests/golden/*.cases file). Then review `git diff tests/golden configs/sweeps` and say in the
# commit message which outputs moved and why (tests/golden/README.md).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$ORRERY_ROOT"
groups=("$@")
if [ ${#groups[@]} -eq 0 ]; then
  for f in tests/golden/*.cases; do groups+=("$(basename "$f" .cases)"); done
fi
for g in "${groups[@]}"; do
  if [ ! -f "tests/golden/$g.cases" ]; then
    echo "error: no tests/golden/$g.cases; groups: $(cd tests/golden && ls *.cases | sed 's/\.cases$//' | tr '\n' ' ')" >&2
    exit 2
  fi
done
for g in "${groups[@]}"; do
  echo "== $g"
  bazel run -c opt --ui_event_filters=-info --noshow_progress "//tests/golden:${g}_test" -- --update
done
echo "goldens written; review them with: git status tests/golden configs/sweeps; git diff tests/golden configs/sweeps"
