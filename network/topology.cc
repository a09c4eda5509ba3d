#include <cstdlib>
#include <cstring>

#include "network/network.h"

namespace orrery {

int64_t BandwidthBits(Bandwidth bw) {
  const double bps = bw.bytes_per_sec();
  int64_t bits;
  static_assert(sizeof bits == sizeof bps, "a double is 64 bits");
  std::memcpy(&bits, &bps, sizeof bps);
  return bits;
}

const char* BlockTypeName(BlockType t) {
  switch (t) {
    case BlockType::kRing:
      return "Ring";
    case BlockType::kFullyConnected:
      return "FullyConnected";
    case BlockType::kSwitch:
      return "Switch";
    case BlockType::kMesh:
      return "Mesh";
  }
  return "?";
}

int Topology::num_npus() const {
  int n = 1;
  for (const auto& d : dims) n *= d.npus;
  return n;
}

void SendEndpointsFailed(int src, int dst, int num_npus) {
  ORRERY_CHECK(src >= 0 && src < num_npus && dst >= 0 && dst < num_npus,
               "NPU id out of range: " + std::to_string(src) + " -> " + std::to_string(dst));
  ORRERY_CHECK(src != dst, "a message needs src != dst (both are NPU " + std::to_string(src) + ")");
  std::abort();  // not reached: one of the checks failed
}

int Topology::NpusPerNode() const {
  return dims.size() > 1 ? num_npus() / dims.back().npus : num_npus();
}

std::vector<int> Topology::Address(int npu) const {
  std::vector<int> addr(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    addr[d] = npu % dims[d].npus;
    npu /= dims[d].npus;
  }
  return addr;
}

int Topology::FirstDifferingDim(int a, int b) const {
  for (size_t d = 0; d < dims.size(); ++d) {
    if (a % dims[d].npus != b % dims[d].npus) return static_cast<int>(d);
    a /= dims[d].npus;
    b /= dims[d].npus;
  }
  return -1;
}

}  // namespace orrery
