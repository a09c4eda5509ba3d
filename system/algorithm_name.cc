#include "system/algorithm_name.h"

#include <vector>

#include "config/system_config.h"

namespace orrery {

StatusOr<AlgorithmSpec> ParseAlgorithm(const std::string& name) {
  static const struct {
    const char* name;
    AlgorithmKind kind;
  } kNames[] = {
      {"ring", AlgorithmKind::kRing},
      {"oneRing", AlgorithmKind::kOneRing},
      {"direct", AlgorithmKind::kDirect},
      {"oneDirect", AlgorithmKind::kOneDirect},
      {"halvingDoubling", AlgorithmKind::kHalvingDoubling},
      {"oneHalvingDoubling", AlgorithmKind::kOneHalvingDoubling},
      {"doubleBinaryTree", AlgorithmKind::kDoubleBinaryTree},
      {"nvls", AlgorithmKind::kNvls},
      {"channelRing", AlgorithmKind::kChannelRing},
  };
  std::string base;
  int window = -1;
  const std::string problem = SplitCollectiveAlgorithm(name, &base, &window);
  if (!problem.empty()) {
    return Status::Error("collective algorithm '" + name + "': expected " + problem);
  }
  std::vector<std::string> valid;
  for (const auto& n : kNames) {
    if (base == n.name) return AlgorithmSpec{n.kind, window};
    valid.push_back(n.name);
  }
  std::string message = "unknown collective algorithm '" + name + "'";
  const std::string guess = DidYouMean(base, valid);
  if (!guess.empty()) message += " (did you mean '" + guess + "'?)";
  message +=
      "; valid: ring, oneRing, direct, direct<N>, oneDirect, oneDirect<N>, "
      "halvingDoubling, oneHalvingDoubling, doubleBinaryTree, nvls, channelRing";
  return Status::Error(message);
}

}  // namespace orrery
