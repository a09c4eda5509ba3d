# Shared by the scripts: repository root and the compatibility corpus location.
ORRERY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# ASTRA-sim's example inputs live beside the checkout (../shared/compat) unless told otherwise.
ORRERY_COMPAT_DIR="${ORRERY_COMPAT_DIR:-$(cd "$ORRERY_ROOT/.." && pwd)/shared/compat}"
export ORRERY_ROOT ORRERY_COMPAT_DIR
