#!/usr/bin/env bash
# scripts/plot_sweep draws one line per series with one point per row of the shipped studies.
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

# A per-job column against a per-dimension bandwidth ("[50.0, 50.0]" is 50) of the jobs study.
jobs_csv="$3"; jobs_out="${TEST_TMPDIR:-/tmp}/jobs.svg"
python3 "$plot" "$jobs_csv" "$jobs_out" --x network.bandwidth --y job.train.sharing_percent \
  --series jobs --where backend=analytical-aware
python3 - "$jobs_csv" "$jobs_out" <<'PY'
import csv, re, sys, xml.dom.minidom
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["backend"] == "analytical-aware" and r["status"] == "ok"]
svg = open(sys.argv[2]).read()
xml.dom.minidom.parseString(svg)
points = re.findall(r"<title>([^:]+): network.bandwidth=([0-9.e+]+), "
                    r"job.train.sharing_percent=([0-9.e+-]+)</title>", svg)
want = {(r["jobs"], float(r["network.bandwidth"].strip("[]").split(",")[0]),
         round(float(r["job.train.sharing_percent"]), 3)) for r in rows}
got = {(n, float(x), round(float(y), 3)) for n, x, y in points}
ok = svg.count("<polyline") == 2 and len(rows) == 6 and got == want
print(f"plot_sweep (jobs): {len(points)} points, match={got == want}")
sys.exit(0 if ok else 1)
PY
# A list of different numbers is refused with the column named, not a traceback.
printf 'point,status,network.bandwidth,end_ns\n0,ok,"[50.0, 100.0]",7\n' > "${TEST_TMPDIR:-/tmp}/mixed.csv"
if msg=$(python3 "$plot" "${TEST_TMPDIR:-/tmp}/mixed.csv" "$jobs_out" --x network.bandwidth \
    --y end_ns 2>&1); then
  echo "a list of different numbers was plotted"; exit 1
fi
case "$msg" in
  *"column 'network.bandwidth' has '[50.0, 100.0]', a list of different numbers"*) ;;
  *) echo "unexpected message: $msg"; exit 1 ;;
esac
echo "plot_sweep: mixed list refused"
