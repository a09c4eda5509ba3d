// The layer order of layers.bzl, and a check of a source's `#include "pkg/..."` lines against it.
//
//   LayerOrder order;
//   std::string error;
//   if (!ParseLayers(Slurp("layers.bzl"), &order, &error)) ...
//   for (const IncludeViolation& v : CheckIncludes("runner/run.cc", text, order))
//     ADD_FAILURE() << v.message;   // "runner/run.cc:12: includes report/outputs.h: ..."
//
// A package may include its own headers and those of lower layers. Including a package of a
// higher layer (up) or of the same layer (sideways) is a violation, and so is including a TOP
// package (tests/, fuzz/, ...) from a layer, except that test sources (`*_test.cc`, and the
// headers layers.bzl lists in TEST_HELPERS) may include tests/'s helpers. TOP packages may
// include anything. A package is a path's first component ("" for files at the root).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace orrery {

struct LayerOrder {
  std::vector<std::vector<std::string>> layers;  // bottom first, as LAYERS lists them
  std::map<std::string, int> rank;               // package -> index into layers
  std::set<std::string> top;                     // TOP
  std::set<std::string> test_helpers;            // TEST_HELPERS
};

// Reads LAYERS, TOP and TEST_HELPERS from the text of layers.bzl. False (with *error saying
// what is wrong) when a list is missing, a package is listed twice, or LAYERS is empty.
bool ParseLayers(const std::string& bzl, LayerOrder* out, std::string* error);

// The package a workspace-relative path belongs to: its first component, "" at the root.
std::string PackageOf(const std::string& path);

struct IncludeViolation {
  std::string file;
  int line = 0;  // 1-based; 0 for a file whose package is not in the order
  std::string included;
  std::string message;  // file:line, the include, both packages and their layers
};

// The violations of the `#include "..."` lines of `text`, the source at workspace-relative
// `path`. Includes of paths whose first component is no declared package (gtest/, google/)
// are not checked.
std::vector<IncludeViolation> CheckIncludes(const std::string& path, const std::string& text,
                                            const LayerOrder& order);

}  // namespace orrery
