#!/usr/bin/env bash
# Benchmarks: prints wall time and peak memory of Orrery on ASTRA-sim's scaling case, a ring
# all-reduce of 1 MiB (Ring_4chunks.json) on a 1024- and a 4096-NPU ring at 50 GB/s and 500 ns,
# on both analytical backends, and the simulated time (which must equal ASTRA-sim's).
#   scripts/bench.sh            # all cases
#   scripts/bench.sh 1024       # one size
#   scripts/bench.sh sweep      # only the sweep scaling case
#   scripts/bench.sh validate   # only orrery validate on a published table, 1 job and all cores
#   scripts/bench.sh packet     # only the packet-level backend
#   scripts/bench.sh trace      # only the real PyTorch trace on 1024 NPUs
#   scripts/bench.sh profile    # only orrery import / analyze on a 1-million-event profile
#                                 (HTA_SRC, CHAKRA_SRC: the Python tools' sources, to time them)
#   scripts/bench.sh scale [--exact] [--only NAME...]
#                               # only the scale benchmark (docs/scale.md): GPT-3 175B on 1,024 to
#                                 16,384 NPUs, Llama 3 405B's shape on 16,384 and 65,536, the
#                                 4,096-NPU ring all-reduce (ASTRA_SIM_BIN: ASTRA-sim's unaware
#                                 binary, run beside it); one core
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$ORRERY_ROOT"
scripts/install_deps.sh
bazel build -c opt //:orrery //et_feeder:gen_workload >/dev/null 2>&1 || bazel build -c opt //:orrery //et_feeder:gen_workload
bin="$ORRERY_ROOT/bazel-bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = scale ]; then
  shift
  "$ORRERY_ROOT/scripts/bench_scale" "$bin" "$work" "$@"
  exit $?
fi
sizes=("$@")
[ $# -eq 0 ] && sizes=(1024 4096)
[ "${1:-}" = sweep ] && sizes=()
[ "${1:-}" = packet ] && sizes=()
[ "${1:-}" = trace ] && sizes=()
[ "${1:-}" = validate ] && sizes=()
[ "${1:-}" = profile ] && sizes=()

cat > "$work/system.json" <<'JSON'
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4,
  "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"],
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1600,
  "boost-mode": 0
}
JSON
# ASTRA-sim's own file when the corpus is beside the checkout; the copy above is the same keys.
ring4="$ORRERY_COMPAT_DIR/astra-sim/examples/system/native_collectives/Ring_4chunks.json"
[ -f "$ring4" ] && cp "$ring4" "$work/system.json"
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > "$work/memory.json"

# measure LABEL WORKLOAD SYSTEM NETWORK BACKEND [EXTRA ORRERY ARGS...]: runs orrery once and
# prints one row: wall time, peak resident memory, simulated time, events.
measure() {
  python3 - "$bin/orrery" "$work" "$@" <<'PY'
import re, resource, subprocess, sys, time
binary, work, label, workload, system, network, backend, *extra = sys.argv[1:]
cmd = [binary, f"--workload-configuration={work}/{workload}",
       f"--system-configuration={work}/{system}", f"--network-configuration={work}/{network}",
       f"--remote-memory-configuration={work}/memory.json", f"--network-backend={backend}", *extra]
t0 = time.monotonic()
p = subprocess.run(cmd, capture_output=True, text=True)
wall = time.monotonic() - t0
if p.returncode != 0:
    sys.exit(f"orrery failed: {p.stderr}")
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
ends = {int(x) for x in re.findall(r"finished, (\d+) cycles", p.stdout)}
events = re.search(r"(\d+) events in", p.stderr).group(1)
print(f"{label:<66} {wall:12.2f} {peak_mb:12.0f} {max(ends):16d} {events:>12}")
PY
}

# two_dimension_system OUT: the system file with ring on two dimensions, as $work/OUT.
two_dimension_system() {
  python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
for k in [k for k in c if k.endswith("-implementation")]: c[k] = ["ring", "ring"]
json.dump(c, open(sys.argv[2], "w"), indent=1)' "$work/system.json" "$work/$1"
}

printf '%-66s %12s %12s %16s %12s\n' "case" "wall (s)" "peak (MB)" "simulated (ns)" "events"
for n in "${sizes[@]}"; do
  mkdir -p "$work/ar$n"
  "$bin/et_feeder/gen_workload" collective --type all_reduce --size 1048576 --npus "$n" \
    --out "$work/ar$n/all_reduce"
  printf 'topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' "$n" \
    > "$work/ring$n.yml"
  # Each backend with the symmetry shortcut (every NPU runs the same file: one is simulated)
  # and in full (--exact), the same answer.
  runs=(analytical-unaware analytical-unaware+exact analytical-aware analytical-aware+exact)
  # The cost of every output (timeline, Chakra lines, JSON and CSV reports) on the 1024 case.
  [ "$n" = 1024 ] && runs+=(analytical-aware+outputs)
  # The aware backend with pipelined forwarding (aware-forwarding: pipelined) on the same ring.
  if [ "$n" = 1024 ]; then
    cp "$work/ring$n.yml" "$work/ring${n}_pipelined.yml"
    echo "aware-forwarding: pipelined" >> "$work/ring${n}_pipelined.yml"
    runs+=(analytical-aware+pipelined)
  fi
  # A 2-D network at the large scale: a 64 x 64 torus (two ring dimensions), congestion-aware.
  if [ "$n" = 4096 ]; then
    printf 'topology: [ Ring, Ring ]\nnpus_count: [ 64, 64 ]\nbandwidth: [ 50.0, 50.0 ]\n' \
      > "$work/torus$n.yml"
    printf 'latency: [ 500.0, 500.0 ]\n' >> "$work/torus$n.yml"
    two_dimension_system system2d.json
    runs+=(analytical-aware+2d)
  fi
  for run in "${runs[@]}"; do
    backend=${run%%+*}
    label="ring all-reduce 1 MiB, $n NPUs, $backend"
    system=system.json network=ring$n.yml extra=()
    case "$run" in
      *+outputs)
        label+=", all outputs"
        extra=(--timeline="$work/t.json" --timeline-chakra="$work/t.txt" \
               --report="$work/r.json" --report-csv="$work/r") ;;
      *+pipelined) label+=", pipelined" network=ring${n}_pipelined.yml ;;
      *+exact) label+=", --exact" extra=(--exact) ;;
      *+2d)
        label="64x64 torus all-reduce 1 MiB, $n NPUs, $backend"
        system=system2d.json network=torus$n.yml ;;
    esac
    measure "$label" "ar$n/all_reduce" "$system" "$network" "$backend" "${extra[@]}"
  done
done

# Sweep scaling: 16 independent points (a 512-NPU ring all-reduce of 1 MiB at 16 link
# bandwidths) with 1 and 2 jobs.
if [ $# -eq 0 ] || [ "${1:-}" = sweep ]; then
  printf 'topology: [ Ring ]\nnpus_count: [ 512 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
    > "$work/ring512.yml"
  mkdir -p "$work/ar512"
  "$bin/et_feeder/gen_workload" collective --type all_reduce --size 1048576 --npus 512 \
    --out "$work/ar512/all_reduce"
  {
    echo "base: {system: system.json, network: ring512.yml, backend: analytical-aware,"
    echo "       workload: ar512/all_reduce}"
    echo "grid:"
    echo "  network.bandwidth: [$(seq -s, 25 5 100 | sed 's/\([0-9]*\)/[\1]/g')]"
  } > "$work/sweep16.yaml"
  python3 - "$bin/orrery" "$work" <<'PY'
import filecmp, subprocess, sys, time
binary, work = sys.argv[1:]
took = {}
for jobs in (1, 2):
    t0 = time.monotonic()
    subprocess.run([binary, "sweep", f"{work}/sweep16.yaml", "--jobs", str(jobs), "--quiet",
                    "--out", f"{work}/sweep_j{jobs}"], check=True, stdout=subprocess.DEVNULL)
    took[jobs] = time.monotonic() - t0
same = "identical" if filecmp.cmp(f"{work}/sweep_j1.csv", f"{work}/sweep_j2.csv", False) else "DIFFERENT"
print(f"\nsweep of 16 points: {took[1]:.2f} s with 1 job, {took[2]:.2f} s with 2 jobs: "
      f"{took[1] / took[2]:.2f}x faster; results {same}")
PY
fi

# ---- orrery validate: a published table's sizes side by side --------------------------------------
# AWS p5's all-reduce table (45 sizes on 16-256 GPUs, ../shared/validation) on p5-h100-efa, with
# 1 job and all cores; the outputs must be identical.
if [ $# -eq 0 ] || [ "${1:-}" = validate ]; then
  table="$ORRERY_COMPAT_DIR/../validation/aws-p5-efa-all_reduce.csv"
  if [ -f "$table" ]; then
    python3 - "$bin/orrery" "$work" "$table" <<'PY'
import os, subprocess, sys, time
binary, work, table = sys.argv[1:]
took, out = {}, {}
for jobs in (1, 0):
    t0 = time.monotonic()
    p = subprocess.run([binary, "validate", "--nccl-tests", table, "--machine",
                        "configs/machines/p5-h100-efa", "--jobs", str(jobs)],
                       check=True, capture_output=True, text=True)
    took[jobs], out[jobs] = time.monotonic() - t0, p.stdout
same = "identical" if out[1] == out[0] else "DIFFERENT"
print(f"\nvalidate, AWS p5 all-reduce table (45 sizes, 16-256 GPUs): {took[1]:.1f} s with "
      f"--jobs 1, {took[0]:.1f} s on all {os.cpu_count()} cores: {took[1] / took[0]:.2f}x "
      f"faster; output {same}; {out[0].strip().splitlines()[-1]}")
PY
  else
    echo "the validate case needs $table (set ORRERY_COMPAT_DIR)"
  fi
fi

# ---- Packet-level backend (network/packet) ------------------------------------------------------
# Packet-hop events per second on one core (target >= 2 M/s): 64 NPUs on one switch, each packet
# two hops, without contention (shift) and with every NPU sending to NPU 0 (incast). Then a
# 64-NPU ring all-reduce of 64 MiB on one Switch (50 GB/s, 500 ns; target < 60 s wall) on the
# packet backend, with both analytical backends beside it for the simulated time.
if [ $# -eq 0 ] || [ "${1:-}" = packet ]; then
  bazel build -c opt //network/packet:packet_bench >/dev/null 2>&1 || bazel build -c opt //network/packet:packet_bench
  echo
  echo "packet-level backend"
  "$bin/network/packet/packet_bench" 64 16 shift
  "$bin/network/packet/packet_bench" 64 4 incast
  mkdir -p "$work/ar64p"
  "$bin/et_feeder/gen_workload" collective --type all_reduce --size 67108864 --npus 64 \
    --out "$work/ar64p/all_reduce"
  printf 'topology: [ Switch ]\nnpus_count: [ 64 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
    > "$work/switch64.yml"
  printf '%-66s %12s %12s %16s %12s\n' "case" "wall (s)" "peak (MB)" "simulated (ns)" "events"
  for backend in packet analytical-aware analytical-unaware; do
    measure "switch ring all-reduce 64 MiB, 64 NPUs, $backend" ar64p/all_reduce system.json \
      switch64.yml "$backend"
  done
fi

# ---- A real trace at scale ----------------------------------------------------------------------
# The real PyTorch Chakra trace (one rank, 3,664 nodes, ../shared/compat/chakra) on 1024 NPUs
# (rings of 8 on a switch), run as 1024 copies with --replicate-trace (the file loaded once) and
# from 1024 written-out copies of the file (loaded 1024 times); the outputs are the same.
if [ $# -eq 0 ] || [ "${1:-}" = trace ]; then
  pt="$ORRERY_COMPAT_DIR/chakra/pytorch_model.0.et"
  echo
  if [ -f "$pt" ]; then
    mkdir -p "$work/pt"
    ln -s "$pt" "$work/pt/one.0.et"
    # Real copies (the loader shares one load of a file linked under many names).
    for r in $(seq 0 1023); do cp "$pt" "$work/pt/all.$r.et"; done
    printf 'topology: [ Ring, Switch ]\nnpus_count: [ 8, 128 ]\nbandwidth: [ 200.0, 50.0 ]\n' \
      > "$work/pt1024.yml"
    printf 'latency: [ 500.0, 2000.0 ]\n' >> "$work/pt1024.yml"
    two_dimension_system system_pt.json
    printf '%-66s %12s %12s %16s %12s\n' "case" "wall (s)" "peak (MB)" "simulated (ns)" "events"
    measure "PyTorch trace, 1024 NPUs, --replicate-trace (1 file)" pt/one system_pt.json \
      pt1024.yml analytical-aware --replicate-trace
    measure "PyTorch trace, 1024 NPUs, 1024 files" pt/all system_pt.json pt1024.yml \
      analytical-aware
    rm -f "$work"/pt/all.*.et
  else
    echo "the real-trace case needs $pt (set ORRERY_COMPAT_DIR)"
  fi
fi

# ---- PyTorch profiles: orrery import and analyze -------------------------------------------------
# A Kineto profile of about a million events (HTA's nccl_data, 40k events, repeated 25 times by
# scripts/repeat_profile; 218 MB of JSON, 18 MB gzipped), imported and analysed on one core
# (target <= 3 s each), and resnet's execution trace imported. With HTA_SRC (Holistic Trace
# Analysis' source, e.g. a clone of facebookresearch/HolisticTraceAnalysis) and CHAKRA_SRC (a
# directory holding chakra/ with mlcommons/chakra's src/ and schema/, et_def_pb2.py generated by
# protoc) set, the same inputs through HTA's analyses and chakra_converter PyTorch, with Debian's
# python3 and its python3-pandas, -numpy, -plotly, -psutil, -networkx, -protobuf packages.
if [ $# -eq 0 ] || [ "${1:-}" = profile ]; then
  traces="$ORRERY_COMPAT_DIR/../traces"
  if [ -f "$traces/hta/nccl_parser_config/nccl_data.json.gz" ]; then
    echo
    scripts/repeat_profile "$traces/hta/nccl_parser_config/nccl_data.json.gz" \
      "$work/big.json.gz" --events 1000000
    # Both commands are single-threaded: their CPU time (user + system) is the one-core cost, and
    # the wall time on a machine shared with other work can be several times larger.
    python3 - "$bin/orrery" "$work" "$traces" <<'PY'
import resource, subprocess, sys, time
binary, work, traces = sys.argv[1:]
def run(label, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([binary] + args, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(f"{label:<60} {cpu:9.2f} s {wall:9.2f} s {after.ru_maxrss / 1024:8.0f} MB")
print(f"{'case':<60} {'CPU':>11} {'wall':>11} {'peak so far':>11}")
run("orrery import, 1 M events (.json.gz)", ["import", "--kineto", f"{work}/big.json.gz",
    "--output", f"{work}/big/big"])
run("orrery analyze, 1 M events (.json.gz)", ["analyze", f"{work}/big.json.gz", "--report",
    f"{work}/big_report.json"])
run("orrery analyze, nccl_data (40 k events)", ["analyze",
    f"{traces}/hta/nccl_parser_config/nccl_data.json.gz"])
run("orrery import --et, resnet (14 k nodes)", ["import", "--et",
    f"{traces}/param/1.1.0-chakra.0.0.4/resnet_2gpu_et.json.gz", "--output", f"{work}/resnet/r"])
PY
    if [ -n "${HTA_SRC:-}" ]; then
      mkdir -p "$work/hta_big" "$work/hta_one"
      cp "$work/big.json.gz" "$work/hta_big/"
      cp "$traces/hta/nccl_parser_config/nccl_data.json.gz" "$work/hta_one/"
      for d in hta_one hta_big; do
        /usr/bin/python3 - "$HTA_SRC" "$work/$d" <<'PY' 2>/dev/null | tail -1
import sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.monotonic()
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[2], include_last_profiler_step=True)
a.get_temporal_breakdown(visualize=False)
a.get_comm_comp_overlap(visualize=False)
a.get_idle_time_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)
a.get_cuda_kernel_launch_stats(visualize=False)
import resource
u = resource.getrusage(resource.RUSAGE_SELF)
c = resource.getrusage(resource.RUSAGE_CHILDREN)  # HTA parses in worker processes
cpu = u.ru_utime + u.ru_stime + c.ru_utime + c.ru_stime
print(f"{'HTA (load and five analyses), ' + sys.argv[2].rsplit('/', 1)[1]:<60} "
      f"{cpu:9.2f} s {time.monotonic() - t0:9.2f} s {max(u.ru_maxrss, c.ru_maxrss) / 1024:8.0f} MB")
PY
      done
    fi
    if [ -n "${CHAKRA_SRC:-}" ]; then
      gunzip -c "$traces/param/1.1.0-chakra.0.0.4/resnet_2gpu_et.json.gz" > "$work/resnet_et.json"
      /usr/bin/python3 - "$CHAKRA_SRC" "$work" <<'PY' 2>/dev/null
import sys, time
sys.path.insert(0, sys.argv[1])
from chakra.src.converter.pytorch_converter import PyTorchConverter
t0 = time.monotonic()
PyTorchConverter().convert(f"{sys.argv[2]}/resnet_et.json", f"{sys.argv[2]}/resnet_chakra.et", False)
import resource
u = resource.getrusage(resource.RUSAGE_SELF)
print(f"{'chakra_converter PyTorch, resnet (14 k nodes)':<60} {u.ru_utime + u.ru_stime:9.2f} s "
      f"{time.monotonic() - t0:9.2f} s {u.ru_maxrss / 1024:8.0f} MB")
PY
    fi
  else
    echo "the profile case needs $traces (set ORRERY_COMPAT_DIR)"
  fi
fi
