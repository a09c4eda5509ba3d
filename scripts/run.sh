#!/usr/bin/env bash
# Installs what is missing, builds Orrery optimised, and simulates the bundled example
# (examples/dp_step: one data-parallel training step on 8 NPUs) on both analytical backends.
# Extra arguments are passed to orrery (e.g. scripts/run.sh --num-queues-per-dim=2).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$ORRERY_ROOT"
scripts/install_deps.sh
bazel build -c opt //:orrery
ex=examples/dp_step
for backend in analytical-aware analytical-unaware; do
  echo "== examples/dp_step on the $backend backend"
  bazel-bin/orrery \
    --workload-configuration="$ex/dp_step" \
    --system-configuration="$ex/system.json" \
    --network-configuration="$ex/network.yml" \
    --remote-memory-configuration="$ex/memory.json" \
    --network-backend="$backend" "$@"
  echo
done
