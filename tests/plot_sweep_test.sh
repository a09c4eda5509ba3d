#!/usr/bin/env bash
# scripts/plot_sweep draws one line per series with one point per row of the shipped study.
set -euo pipefail
plot="$1"; csv="$2"; out="${TEST_TMPDIR:-/tmp}/sweep.svg"
python3 "$plot" "$csv" "$out" --x workload.size --y bus_bw_gbps --series network \
  --where workload.collective=all_reduce --logx
python3 - "$csv" "$out" <<'PY'
import csv, re, sys, xml.dom.minidom
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["workload.collective"] == "all_reduce" and r["status"] == "ok"]
svg = open(sys.argv[2]).read()
xml.dom.minidom.parseString(svg)
lines = svg.count("<polyline")
points = re.findall(r"<title>([^:]+): workload.size=([0-9.e+]+), bus_bw_gbps=([0-9.e+-]+)</title>", svg)
want = {(r["network"], float(r["workload.size"]), round(float(r["bus_bw_gbps"]), 3)) for r in rows}
got = {(n, float(x), round(float(y), 3)) for n, x, y in points}
ok = lines == len({r["network"] for r in rows}) and got == want
print(f"plot_sweep: {lines} lines, {len(points)} points, match={got == want}")
sys.exit(0 if ok else 1)
PY
