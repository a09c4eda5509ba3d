"""The layer order of Orrery's packages, written down once (docs/architecture.md, issue 56).

A package may depend on (and #include) packages of LOWER layers only, never up and never
sideways within its layer. Each package's BUILD sets

    package(default_visibility = layer_visibility("runner"))

so a dependency the wrong way is a Bazel visibility error, and //tests:layers_test reads this
file and checks every source's `#include "pkg/..."` lines against the same list. A sub-package
(network/packet, et_feeder/proto, tests/golden) belongs to its top-level package.
"""

# Bottom to top. Keep one list per line: tests/layers.cc parses these lines.
LAYERS = [
    ["common"],
    ["config"],
    ["network", "compute", "memory"],
    ["system"],
    ["et_feeder"],
    ["workload", "profile"],
    ["nccl", "analyze"],
    ["runner"],
    ["report"],
    ["validate", "sweep"],
]

# Above every layer, and may depend on anything: the command line (orrery_main.cc, //:orrery,
# package ""), the manual's checks (configs/), tests and fuzzers. Nothing in LAYERS includes them,
# except that test sources (*_test.cc and TEST_HELPERS) may include the helpers of tests/.
TOP = ["", "configs", "tests", "fuzz"]

# Test-only headers outside tests/ that include tests/ helpers (Bazel: testonly targets).
TEST_HELPERS = [
    "report/recorded_run.h",
]

def _label(package):
    return "//:__pkg__" if package == "" else "//" + package + ":__subpackages__"

def layer_visibility(package):
    """The default visibility of `package`'s targets: its own sub-packages, every higher layer, TOP.

    Args:
      package: a top-level package named in LAYERS.

    Returns:
      A list of visibility labels.
    """
    for rank, layer in enumerate(LAYERS):
        if package in layer:
            above = [p for upper in LAYERS[rank + 1:] for p in upper]
            return [_label(p) for p in [package] + above + TOP]
    fail("package '%s' is not in LAYERS (layers.bzl)" % package)
