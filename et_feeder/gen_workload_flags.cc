#include "et_feeder/gen_workload_flags.h"

#include <cerrno>
#include <cstdlib>

namespace orrery::et {

namespace {

constexpr uint64_t kMaxSize = uint64_t{1} << 53;

// A size is written in digits, at most 2^53 (the largest collective the system layer runs); the
// one value is checked as text, so that 1e6 or 1048576.0 are refused as a sweep's size is.
std::string CheckSize(const std::string& text) {
  const std::string expected = "a whole number of digits in [0, " + std::to_string(kMaxSize) + "]";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 20) {
    return expected;
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  return errno == ERANGE || v > kMaxSize ? expected : "";
}

// The collectives, each spelling once.
const std::vector<std::pair<std::string, ChakraProtoMsg::CollectiveCommType>>& CollectiveTypes() {
  static const std::vector<std::pair<std::string, ChakraProtoMsg::CollectiveCommType>> types = {
      {"all_reduce", ChakraProtoMsg::ALL_REDUCE},
      {"all_gather", ChakraProtoMsg::ALL_GATHER},
      {"reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER},
      {"all_to_all", ChakraProtoMsg::ALL_TO_ALL}};
  return types;
}

}  // namespace

const std::vector<std::string>& CollectiveTypeNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, type] : CollectiveTypes()) v.push_back(name);
    return v;
  }();
  return names;
}

ChakraProtoMsg::CollectiveCommType CommType(const CollectiveFlags& f) {
  for (const auto& [name, type] : CollectiveTypes()) {
    if (name == f.type) return type;
  }
  return ChakraProtoMsg::ALL_REDUCE;  // the default; the schema admits no other spelling
}

const FlagSchema<CollectiveFlags>& CollectiveFlagSchema() {
  static const FlagSchema<CollectiveFlags>* schema = [] {
    using F = CollectiveFlags;
    auto* s = new FlagSchema<F>();
    s->Enum("type", &F::type, CollectiveTypeNames()).Help("the collective every rank runs");
    s->String("size", &F::size)
        .Unit("bytes")
        .Check(CheckSize)
        .AllowedText("in [0, " + std::to_string(kMaxSize) + "]")
        .Help("the collective's size, in digits (at most 2^53)");
    s->Integer("npus", &F::npus).Required().Min(1).Max(1 << 24).Help("ranks: one trace file each");
    s->String("out", &F::out).Required().Help("write PREFIX.0.et, PREFIX.1.et, ...");
    return s;
  }();
  return *schema;
}

const FlagSchema<DpStepFlags>& DpStepFlagSchema() {
  static const FlagSchema<DpStepFlags>* schema = [] {
    using F = DpStepFlags;
    auto* s = new FlagSchema<F>();
    s->Integer("npus", &F::npus).Required().Min(1).Max(1 << 24).Help("ranks: one trace file each");
    s->Integer("layers", &F::layers)
        .Min(1)
        .Max(4096)
        .Help("layers, each with its gradient all-reduce");
    s->String("out", &F::out).Required().Help("write PREFIX.0.et, PREFIX.1.et, ...");
    return s;
  }();
  return *schema;
}

std::vector<KeyDoc> CollectiveFlagDocs() {
  std::vector<KeyDoc> docs = CollectiveFlagSchema().Docs();
  for (KeyDoc& d : docs) {
    if (d.name == "size") d.type = "int";  // held as its text, checked as a whole number
  }
  return docs;
}

std::vector<KeyDoc> DpStepFlagDocs() { return DpStepFlagSchema().Docs(); }

uint64_t SizeBytes(const CollectiveFlags& f) { return std::strtoull(f.size.c_str(), nullptr, 10); }

}  // namespace orrery::et
