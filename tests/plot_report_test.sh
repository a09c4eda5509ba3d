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

# GPU compute, CPU, communication and remote memory are unions that overlap one another: the
# segments are disjoint parts that sum to the NPU's total, and no bar passes the chart's top.
# NPU 0: 10 us of compute, under which 4 us of CPU and 5 us of remote memory ran.
# NPU 1: 20 us; compute 8, communication 9 (3 under compute, 6 exposed), CPU 5, idle 2; busy 18,
# of which compute or communication 8 + 6 = 14, so 4 us of CPU alone.
cat > "$out/overlap.json" <<'JSON'
{"num_npus": 2, "step_time_ns": 20000, "npus": [
 {"npu": 0, "total": 10000, "compute": 10000, "cpu": 4000, "communication": 0,
  "exposed_communication": 0, "overlapped_communication": 0, "memory": 5000, "idle": 0,
  "overlap_percent": 0, "astra_sim_exposed_communication": 0},
 {"npu": 1, "total": 20000, "compute": 8000, "cpu": 5000, "communication": 9000,
  "exposed_communication": 6000, "overlapped_communication": 3000, "memory": 0, "idle": 2000,
  "overlap_percent": 33.3, "astra_sim_exposed_communication": 12000}]}
JSON
python3 "$plot" "$out/overlap.json" "$out/overlap.svg"
python3 - "$out/overlap.svg" <<'PY'
import re, sys, xml.dom.minidom
svg = open(sys.argv[1]).read()
xml.dom.minidom.parseString(svg)
want = {
    0: {"GPU compute": 10.0},
    1: {"GPU compute": 5.0, "communication under compute": 3.0, "exposed communication": 6.0,
        "CPU or remote memory only": 4.0, "idle": 2.0},
}
got = {}
for npu, label, value in re.findall(r"<title>NPU (\d+): ([^<]*) ([0-9.]+) us</title>", svg):
    got.setdefault(int(npu), {})[label] = float(value)
top = min(float(y) for y in re.findall(r'<rect x="\d+" y="(-?[0-9.]+)" width="18"', svg))
ok = got == want and top >= 50 - 0.01
print(f"plot_report (overlap): {got}, highest bar at y={top}")
sys.exit(0 if ok else 1)
PY
# No NPU with remote memory: the part is CPU only.
sed 's/"memory": 5000/"memory": 0/' "$out/overlap.json" > "$out/cpu.json"
python3 "$plot" "$out/cpu.json" "$out/cpu.svg"
grep -q '>CPU only</text>' "$out/cpu.svg" || { echo "no 'CPU only' legend"; exit 1; }
grep -q 'NPU 1: CPU only 4.000 us' "$out/cpu.svg" || { echo "no 'CPU only' segment"; exit 1; }
echo "plot_report: overlapping parts drawn disjoint"
