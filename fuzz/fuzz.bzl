"""One macro per parser's fuzz target: a libFuzzer binary and its regression test."""

load("//:build_defs.bzl", "ORRERY_COPTS")

def orrery_fuzz_target(name, deps, src = "targets.cc", define = None):
    """Declares the fuzz target `name` of one parser.

    name_fuzzer: the libFuzzer binary (tagged manual and fuzzer; scripts/fuzz.sh builds it with
    --config=fuzz, clang). name_regression: a test of the normal suite that runs the target over
    its seed corpus (corpus/name/) and every input a fuzzing run found to crash (crashes/name/).
    `src` holds LLVMFuzzerTestOneInput; targets.cc picks the parser by the ORRERY_FUZZ_<NAME>
    define. Adding a parser (the profile/ importers) is one call in fuzz/BUILD.
    """
    native.cc_library(
        name = name + "_target",
        testonly = True,
        srcs = [src],
        copts = ORRERY_COPTS,
        local_defines = [define or ("ORRERY_FUZZ_" + name.upper())],
        deps = deps + [":fuzz_input"],
        alwayslink = True,
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual", "fuzzer"],
        deps = [":" + name + "_target"],
    )
    native.filegroup(
        name = name + "_inputs",
        testonly = True,
        srcs = native.glob(["corpus/%s/*" % name, "crashes/%s/*" % name]),
    )
    native.cc_test(
        name = name + "_regression",
        srcs = ["replay_main.cc"],
        args = ["$(locations :%s_inputs)" % name],
        data = [":" + name + "_inputs"],
        copts = ORRERY_COPTS,
        deps = [":" + name + "_target"],
    )
