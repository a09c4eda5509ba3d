#!/usr/bin/env bash
# Runs an Orrery sweep as a real Slurm array job on this machine and checks that the merged
# shards equal the unsharded sweep. Installs Debian's slurm-wlm and munge if missing, starts a
# controller and a node daemon on localhost with a private config (SLURM_CONF; /etc/slurm is not
# touched), and stops them at the end. Needs root (or sudo). Prints "slurm check: passed" or
# says exactly what failed, and exits non-zero then.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
cd "$ORRERY_ROOT"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
need=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "Installing: ${need[*]}" >&2
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${need[@]}" >&2
fi
scripts/install_deps.sh
bazel build -c opt //:orrery >&2

state=$(mktemp -d /tmp/orrery-slurm.XXXXXX)
chmod 755 "$state"
host=$(hostname -s)
cat > "$state/slurm.conf" <<CONF
ClusterName=orrery-check
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmUser=root
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
mkdir -p "$state/ctld" "$state/d"
export SLURM_CONF="$state/slurm.conf"
passed=0
cleanup() {
  "${sudo_cmd[@]}" env SLURM_CONF="$SLURM_CONF" scontrol shutdown >/dev/null 2>&1 || true
  for _ in $(seq 20); do  # wait for both daemons to let go of their ports
    pgrep -f "slurm(ctld|d)" >/dev/null || break
    sleep 0.5
  done
  [ "$passed" -eq 1 ] && rm -rf "$state"
  return 0
}
trap cleanup EXIT
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  "${sudo_cmd[@]}" mkdir -p /run/munge
  "${sudo_cmd[@]}" chown munge:munge /run/munge 2>/dev/null || true
  "${sudo_cmd[@]}" runuser -u munge -- /usr/sbin/munged || "${sudo_cmd[@]}" /usr/sbin/munged --force
fi
"${sudo_cmd[@]}" env SLURM_CONF="$SLURM_CONF" slurmctld
"${sudo_cmd[@]}" env SLURM_CONF="$SLURM_CONF" slurmd
for _ in $(seq 30); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o %T | grep -q idle || { echo "slurm check: FAILED: the node did not come up (see $state/slurmd.log)"; exit 1; }

work="$state/work"
mkdir -p "$work"
printf 'topology: [ Ring ]\nnpus_count: [ 16 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' > "$work/ring.yml"
cp configs/sweeps/torus_vs_dgx/system.json "$work/system.json"
sed -i 's/\["ring", "ring"\]/["ring"]/' "$work/system.json"
cat > "$work/spec.yaml" <<'SPEC'
base: {system: system.json, network: ring.yml, workload: {collective: all_reduce, size: 1048576}}
grid:
  workload.collective: [all_reduce, all_gather, reduce_scatter]
  workload.size: [1048576, 4194304]
SPEC
chmod -R a+rwX "$state"
sbatch --wait --array=0-2 --output="$work/task-%a.log" scripts/slurm/sweep.sbatch "$work/spec.yaml" "$work/study" >&2
bazel-bin/orrery sweep merge --out "$work/merged" "$work"/study.shard-*-of-3.csv >&2
bazel-bin/orrery sweep "$work/spec.yaml" --quiet --out "$work/whole" >&2
shards=$(ls "$work"/study.shard-*-of-3.csv | wc -l)
if [ "$shards" -eq 3 ] && cmp -s "$work/merged.csv" "$work/whole.csv"; then
  echo "slurm check: passed (3 array tasks, $(($(wc -l < "$work/merged.csv") - 1)) points, merged = unsharded)"
  passed=1
else
  echo "slurm check: FAILED: $shards of 3 shard outputs; merged and unsharded results differ or are missing (see $work)"
  exit 1
fi
