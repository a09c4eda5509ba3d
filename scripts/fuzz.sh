#!/usr/bin/env bash
# Builds every parser's fuzz target with clang's libFuzzer (--config=fuzz: ASan and UBSan too) and
# runs each for a bounded time from its seed corpus (fuzz/corpus/<target>/ and, where it has
# inputs of that kind, ../shared). An input that crashes a target is copied to
# fuzz/crashes/<target>/, where the normal suite's <target>_regression test replays it for good.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 60; scripts/test.sh gives 20)
# Ends with "N passed, N failed" (a target that crashed, or did not build, fails).
set -uo pipefail
source "$(dirname "$0")/common.sh"
cd "$ORRERY_ROOT"
seconds="${1:-60}"
opts=(-c opt --config=fuzz)
targets=$(bazel query 'attr(tags, "fuzzer", //fuzz:all)' 2>/dev/null)
if [ -z "$targets" ] || ! bazel build "${opts[@]}" $targets; then
  echo "fuzz: the fuzz targets did not build" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
bin=$(bazel info "${opts[@]}" bazel-bin 2>/dev/null)
# Seeds beside the repository's, by target.
declare -A shared=(
  [chakra_et]="$ORRERY_COMPAT_DIR/astra-sim/examples/workload"
  [nccl_tests_csv]="$ORRERY_COMPAT_DIR/../validation"
)
passed=0 failed=0
for t in $targets; do
  name=${t#//fuzz:}
  base=${name%_fuzzer}
  work=$(mktemp -d) artifacts=$(mktemp -d)
  seeds=("fuzz/corpus/$base")
  extra=${shared[$base]:-}
  if [ -n "$extra" ] && [ -d "$extra" ]; then
    find "$extra" -type f -size -64k \( -name '*.et' -o -name '*.csv' \) | head -50 |
      while read -r f; do cp "$f" "$work/"; done
  fi
  log="$artifacts/log"
  if "$bin/fuzz/$name" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -artifact_prefix="$artifacts/" "$work" "${seeds[@]}" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "fuzz: $base: $(grep -o 'Done [0-9]* runs' "$log" | tail -1) in ${seconds} s, no crash"
  else
    failed=$((failed + 1))
    mkdir -p "fuzz/crashes/$base"
    for a in "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/leak-*; do
      [ -f "$a" ] && cp "$a" "fuzz/crashes/$base/"
    done
    echo "fuzz: $base FAILED; inputs kept in fuzz/crashes/$base/ (commit them: its regression test replays them):" >&2
    grep -m 20 -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "$log" >&2
  fi
  rm -rf "$work" "$artifacts"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
