#!/usr/bin/env bash
# scripts/plot_compare draws, per pair, the measured and the simulated rank's span in disjoint
# parts that add up to it, from real analyze reports (a synthetic profile and an Orrery timeline).
set -euo pipefail
orrery="$1"; plot="$2"
out="${TEST_TMPDIR:-/tmp}"
# A profile of one rank: a kernel, an NCCL kernel partly under it, a memcpy alone, gaps.
cat > "$out/profile.json" <<'JSON'
{"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100, "dur": 50, "args": {"stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 40, "ts": 130, "dur": 40, "args": {"stream": 40}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "pid": 0, "tid": 7, "ts": 180, "dur": 10, "args": {"stream": 7}}
]}
JSON
"$orrery" analyze "$out/profile.json" --report "$out/m.json" > /dev/null
"$orrery" analyze "$out/profile.json" --report "$out/s.json" > /dev/null
python3 "$plot" "$out/chart.svg" --pair "one" "$out/m.json" "$out/s.json" --pair "two" \
  "$out/m.json" "$out/s.json"
python3 - "$out/m.json" "$out/chart.svg" <<'PY'
import json, re, sys, xml.dom.minidom
report = json.load(open(sys.argv[1]))
svg = open(sys.argv[2]).read()
xml.dom.minidom.parseString(svg)  # well-formed
span = report["ranks"][0]["span_us"]  # 90 us: compute 50, 20 of it under communication,
failures = 0                          # exposed communication 20, memory only 10, idle 10
if abs(span - 90) > 1e-9:
    print(f"span {span}, expected 90"); failures += 1
for label in ("one", "two"):
    for which in ("measured", "simulated"):
        parts = re.findall(r"<title>%s %s: [^<]* ([0-9.]+) (us|ms)</title>" % (label, which), svg)
        drawn = sum(float(v) for v, _ in parts)
        if abs(drawn - span) > 0.01:
            print(f"{label} {which}: parts sum to {drawn} us, the span is {span} us"); failures += 1
for name, us in (("compute", 30), ("communication under compute", 20),
                 ("exposed communication", 20), ("memory only", 10), ("idle", 10)):
    if f"one measured: {name} {us:.3f} us" not in svg:
        print(f"no part '{name}' of {us} us"); failures += 1
print("plot_compare: %d failures" % failures)
sys.exit(1 if failures else 0)
PY
# Not a report: a clear error.
if python3 "$plot" "$out/bad.svg" --pair x "$out/profile.json" "$out/s.json" 2> "$out/err.txt"; then
  echo "expected an error for a file that is not a report"; exit 1
fi
grep -q "not a report of orrery analyze" "$out/err.txt"
