// What generate-llm's parts (llm_workload.cc, llm_config.cc, llm_files.cc, llm_copies.cc) share:
// the integer helpers and constants of the model's shape, and the comm-group file's JSON. Private
// to //et_feeder:llm_workload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "et_feeder/llm_workload.h"

namespace orrery {
namespace et {
namespace llm_internal {

// Megatron-LM pads the vocabulary so every tensor-parallel shard is a multiple of 128 entries.
constexpr int64_t kVocabMultiple = 128;

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The MLP width when none is given: 4h for GELU (GPT), 8h/3 up to a multiple of 256 for SwiGLU
// (Llama).
inline int64_t DefaultFfnHidden(Mlp mlp, int64_t hidden) {
  return mlp == Mlp::kGelu ? 4 * hidden : CeilDiv(8 * hidden / 3, 256) * 256;
}

// `groups` as a comm-group file: {"<id>": [<ranks>], ...} (llm_files.cc).
std::string GroupsJson(const std::vector<LlmGroup>& groups);

}  // namespace llm_internal
}  // namespace et
}  // namespace orrery
