"""Compiler flags shared by every Orrery target."""

ORRERY_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
]
