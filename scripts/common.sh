# Shared by the scripts: repository root and the compatibility corpus location.
ORRERY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# ASTRA-sim's example inputs live beside the checkout (../shared/compat) unless told otherwise
# (scripts/bench.sh reads them from here; the tests read ../shared through Bazel, @orrery_shared).
ORRERY_COMPAT_DIR="${ORRERY_COMPAT_DIR:-$(cd "$ORRERY_ROOT/.." && pwd)/shared/compat}"
export ORRERY_ROOT ORRERY_COMPAT_DIR
