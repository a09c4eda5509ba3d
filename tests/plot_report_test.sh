#!/usr/bin/env bash
# scripts/plot_report draws one bar per NPU, stacked to the NPU's total, from a real report.
set -euo pipefail
orrery="$1"; plot="$2"; ex="$(dirname "$3")"
out="${TEST_TMPDIR:-/tmp}"
"$orrery" --workload-configuration="$ex/dp_step" --system-configuration="$ex/system.json" \
  --network-configuration="$ex/network.yml" --remote-memory-configuration="$ex/memory.json" \
  --report="$out/report.json" > /dev/null 2>&1
python3 "$plot" "$out/report.json" "$out/chart.svg" --title "dp_step"
python3 - "$out/report.json" "$out/chart.svg" <<'PY'
import json, re, sys, xml.dom.minidom
report = json.load(open(sys.argv[1]))
svg = open(sys.argv[2]).read()
xml.dom.minidom.parseString(svg)  # well-formed
failures = 0
for npu in report["npus"]:
    parts = re.findall(r"<title>NPU %d: [^<]* ([0-9.]+) (us|ms)</title>" % npu["npu"], svg)
    scale = 1e3 if parts and parts[0][1] == "us" else 1e6
    drawn = sum(float(v) for v, _ in parts) * scale
    if not parts or abs(drawn - npu["total"]) > 0.01 * npu["total"] + 5:
        print(f"NPU {npu['npu']}: bars sum to {drawn} ns, total is {npu['total']} ns")
        failures += 1
if len(report["npus"]) != 8:
    print("expected 8 NPUs"); failures += 1
print("plot_report: %d NPUs checked, %d failures" % (len(report["npus"]), failures))
sys.exit(1 if failures else 0)
PY
