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

# --logy: a row with 0 there is left out and named on stderr, the others drawn; with no row left,
# an error naming the column (not Python's "math domain error").
tmp="${TEST_TMPDIR:-/tmp}"
printf 'point,status,workload.size,end_ns\n0,ok,1024,0\n1,ok,2048,5\n2,ok,4096,-3\n3,ok,8192,50\n' \
  > "$tmp/zero.csv"
if ! msg=$(python3 "$plot" "$tmp/zero.csv" "$tmp/zero.svg" --x workload.size --y end_ns \
    --logy 2>&1); then
  echo "--logy with a 0 failed: $msg"; exit 1
fi
want="note: point 0 left out: end_ns is 0, which a log axis (--logy) cannot show
note: point 2 left out: end_ns is -3, which a log axis (--logy) cannot show"
[ "$msg" = "$want" ] || { echo "unexpected notes: $msg"; exit 1; }
drawn=$(grep -o '<title>[^<]*</title>' "$tmp/zero.svg" | tr '\n' ' ')
[ "$drawn" = "<title>end_ns: workload.size=2048, end_ns=5</title> <title>end_ns: workload.size=8192, end_ns=50</title> " ] \
  || { echo "--logy drew: $drawn"; exit 1; }
# The same on --logx; and without a log axis the 0 is drawn.
printf 'point,status,workload.size,end_ns\n0,ok,0,7\n1,ok,2048,5\n' > "$tmp/zerox.csv"
msg=$(python3 "$plot" "$tmp/zerox.csv" "$tmp/zerox.svg" --x workload.size --y end_ns --logx 2>&1)
[ "$msg" = "note: point 0 left out: workload.size is 0, which a log axis (--logx) cannot show" ] \
  || { echo "unexpected --logx note: $msg"; exit 1; }
[ "$(grep -c '<circle' "$tmp/zerox.svg")" = 1 ] || { echo "--logx drew the 0"; exit 1; }
python3 "$plot" "$tmp/zero.csv" "$tmp/zero.svg" --x workload.size --y end_ns
[ "$(grep -c '<circle' "$tmp/zero.svg")" = 4 ] || { echo "a 0 was left out of a linear axis"; exit 1; }
printf 'point,status,workload.size,end_ns\n0,ok,1024,0\n' > "$tmp/allzero.csv"
if msg=$(python3 "$plot" "$tmp/allzero.csv" "$tmp/allzero.svg" --x workload.size --y end_ns \
    --logy 2>&1); then
  echo "nothing left to plot, yet it succeeded"; exit 1
fi
case "$msg" in
  *"error: no rows left to plot: each has a value <= 0 on a log axis (end_ns, --logy)") ;;
  *) echo "unexpected message: $msg"; exit 1 ;;
esac
case "$msg" in *Traceback*) echo "traceback: $msg"; exit 1 ;; esac
echo "plot_sweep: 0 on a log axis left out and named"

# Several rows on one (series, x): the jobs study without --where jobs=... has two jobs files per
# backend and bandwidth. Refused with the differing column named, not drawn as a zig-zag.
if msg=$(python3 "$plot" "$jobs_csv" "$tmp/zigzag.svg" --x network.bandwidth \
    --y job.train.sharing_percent --series backend 2>&1); then
  echo "two rows per (series, x) were drawn as one line"; exit 1
fi
case "$msg" in
  "error: points 0, 3 all have series 'analytical-aware' and network.bandwidth=50, so one line"*"they differ in jobs ('../../examples/jobs/blocks.yaml', '../../examples/jobs/interleaved.yaml'): pick one value with --where jobs=VALUE") ;;
  *) echo "unexpected message: $msg"; exit 1 ;;
esac
# Without --series: every differing column is named, and --series offered.
if msg=$(python3 "$plot" "$jobs_csv" "$tmp/zigzag.svg" --x network.bandwidth \
    --y job.train.sharing_percent 2>&1); then
  echo "four rows per x were drawn as one line"; exit 1
fi
case "$msg" in
  *"they differ in backend ('analytical-aware', 'packet'); jobs ("*"): pick one value with --where backend=VALUE, or draw one line each with --series backend") ;;
  *) echo "unexpected message: $msg"; exit 1 ;;
esac
echo "plot_sweep: several rows per (series, x) refused"
