#include "tests/layers.h"

#include <sstream>

namespace orrery {
namespace {

// The bracketed text after `name = [` (brackets balanced), or false when there is none.
bool ListText(const std::string& bzl, const std::string& name, std::string* out) {
  const std::string head = "\n" + name + " = [";
  const size_t start = bzl.find(head);
  if (start == std::string::npos) return false;
  int depth = 0;
  for (size_t i = start + head.size() - 1; i < bzl.size(); ++i) {
    if (bzl[i] == '[') ++depth;
    if (bzl[i] == ']' && --depth == 0) {
      *out = bzl.substr(start + head.size(), i - start - head.size());
      return true;
    }
  }
  return false;
}

// The double-quoted strings of `text`, in order.
std::vector<std::string> QuotedStrings(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = text.find('"', i)) != std::string::npos) {
    const size_t end = text.find('"', i + 1);
    if (end == std::string::npos) break;
    out.push_back(text.substr(i + 1, end - i - 1));
    i = end + 1;
  }
  return out;
}

// The inner lists of LAYERS' text: `["a", "b"], ["c"],` -> {{a, b}, {c}}.
std::vector<std::vector<std::string>> InnerLists(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  size_t i = 0;
  while ((i = text.find('[', i)) != std::string::npos) {
    const size_t end = text.find(']', i);
    if (end == std::string::npos) break;
    out.push_back(QuotedStrings(text.substr(i, end - i)));
    i = end + 1;
  }
  return out;
}

std::string Describe(const LayerOrder& order, const std::string& package) {
  const std::string name = package.empty() ? std::string("the root package") : package + "/";
  auto it = order.rank.find(package);
  if (it == order.rank.end()) return name + " (above every layer)";
  std::string members;
  for (const std::string& p : order.layers[it->second])
    members += (members.empty() ? "" : ", ") + p;
  return name + " (layer " + std::to_string(it->second) + ": " + members + ")";
}

bool IsTestSource(const std::string& path, const LayerOrder& order) {
  const std::string suffix = "_test.cc";
  const bool test_cc = path.size() > suffix.size() &&
                       path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return test_cc || order.test_helpers.count(path) > 0;
}

// Why `from` may not include `to`, or "" when it may.
std::string Problem(const std::string& path, const std::string& from, const std::string& to,
                    const LayerOrder& order) {
  if (from == to || order.top.count(from)) return "";
  if (order.top.count(to)) {
    if (to == "tests" && IsTestSource(path, order)) return "";
    return "a layer may not include a package above every layer (only test sources may include "
           "tests/'s helpers)";
  }
  const int a = order.rank.at(from), b = order.rank.at(to);
  if (b < a) return "";
  return b == a ? "sideways: both are in one layer"
                : "up: the included package is in a higher layer";
}

}  // namespace

bool ParseLayers(const std::string& bzl, LayerOrder* out, std::string* error) {
  LayerOrder order;
  std::string layers, top, helpers;
  if (!ListText(bzl, "LAYERS", &layers) || !ListText(bzl, "TOP", &top) ||
      !ListText(bzl, "TEST_HELPERS", &helpers)) {
    *error = "layers.bzl: expected the lists LAYERS = [...], TOP = [...] and TEST_HELPERS = [...]";
    return false;
  }
  order.layers = InnerLists(layers);
  for (size_t i = 0; i < order.layers.size(); ++i) {
    for (const std::string& p : order.layers[i]) {
      if (!order.rank.emplace(p, static_cast<int>(i)).second) {
        *error = "layers.bzl: package '" + p + "' is in LAYERS twice";
        return false;
      }
    }
  }
  for (const std::string& p : QuotedStrings(top)) {
    if (order.rank.count(p) || !order.top.insert(p).second) {
      *error = "layers.bzl: package '" + p + "' is in TOP and elsewhere";
      return false;
    }
  }
  for (const std::string& h : QuotedStrings(helpers)) order.test_helpers.insert(h);
  if (order.rank.empty()) {
    *error = "layers.bzl: LAYERS lists no package";
    return false;
  }
  *out = std::move(order);
  return true;
}

std::string PackageOf(const std::string& path) {
  const size_t slash = path.find('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::vector<IncludeViolation> CheckIncludes(const std::string& path, const std::string& text,
                                            const LayerOrder& order) {
  std::vector<IncludeViolation> out;
  const std::string from = PackageOf(path);
  if (!order.rank.count(from) && !order.top.count(from)) {
    out.push_back({path, 0, "", path + ": package '" + from + "' is in no layer of layers.bzl"});
    return out;
  }
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line.compare(hash, 10, "#include \"") != 0) continue;
    const size_t end = line.find('"', hash + 10);
    if (end == std::string::npos) continue;
    const std::string included = line.substr(hash + 10, end - hash - 10);
    const size_t slash = included.find('/');
    if (slash == std::string::npos) continue;
    const std::string to = included.substr(0, slash);
    if (!order.rank.count(to) && !order.top.count(to)) continue;
    const std::string problem = Problem(path, from, to, order);
    if (problem.empty()) continue;
    out.push_back({path, number, included,
                   path + ":" + std::to_string(number) + ": includes " + included + ": " +
                       Describe(order, from) + " may not include " + Describe(order, to) + "; " +
                       problem + " (layers.bzl)"});
  }
  return out;
}

}  // namespace orrery
