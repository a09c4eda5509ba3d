"""One golden test target per cases file (tests/golden/README.md)."""

def golden_test(name, group, data, size = "medium"):
    """Checks the cases of tests/golden/<group>.cases against tests/golden/expected/<group>/.

    Args:
      name: the test target.
      group: the cases file's name, and the goldens' directory.
      data: the inputs the cases read, beside the tools.
      size: Bazel's test size (its timeout).
    """
    native.cc_test(
        name = name,
        size = size,
        args = ["--group=" + group],
        data = [
            group + ".cases",
            "//:orrery",
            "//et_feeder:gen_workload",
        ] + native.glob(["expected/" + group + "/**"]) + data,
        deps = [":golden_main"],
    )
