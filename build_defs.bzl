"""Compiler flags shared by every Orrery target."""

# Warnings are errors everywhere (STYLE.md: "treated as errors in CI"; one set of flags keeps
# one build cache for developers and CI alike).
ORRERY_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]
