// SystemLayer: the NPUs' systems, communicator groups, collective order checks, messages and
// the symmetry shortcut's checks.
#include <algorithm>
#include <map>
#include <numeric>

#include "system/collective_engine.h"
#include "system/collective_engine_internal.h"

namespace orrery {

using engine_internal::AlgorithmName;

// ---------------------------------------------------------------------------------------------
// SystemLayer

SystemLayer::SystemLayer(Simulation& sim, Network& net, SystemParams params)
    : sim_(sim),
      net_(net),
      params_(std::move(params)),
      matcher_(sim, net, params_.p2p_chunk_bytes),
      custom_(std::make_unique<CustomCollectives>(*this)) {
  if (params_.queues_per_dim.empty()) params_.queues_per_dim.assign(net.topology().dims.size(), 1);
  endpoint_delay_ = Time::FromNs(params_.endpoint_delay_ns);
  npus_.reserve(net.num_npus());
  for (int i = 0; i < net.num_npus(); ++i) npus_.emplace_back(*this, i);
  if (params_.model_shared_bus) {
    buses_.reserve(net.num_npus());
    for (int i = 0; i < net.num_npus(); ++i) {
      buses_.push_back(std::make_unique<SharedBus>(sim, params_.loggp, /*attach_memory=*/true));
    }
  }
}

SystemLayer::~SystemLayer() = default;

Status SystemLayer::AddGroup(int id, std::vector<int> members) {
  if (id <= 0) return Status::Invalid("", "communicator group id", std::to_string(id), "> 0");
  std::sort(members.begin(), members.end());
  for (int m : members) {
    if (m < 0 || m >= num_npus()) {
      return Status::Invalid("", "member of communicator group " + std::to_string(id),
                             std::to_string(m),
                             "an NPU id in [0, " + std::to_string(num_npus() - 1) + "]");
    }
  }
  // A member listed twice would send to itself in a ring.
  auto twice = std::adjacent_find(members.begin(), members.end());
  if (twice != members.end()) {
    return Status::Error("communicator group " + std::to_string(id) + " lists NPU " +
                         std::to_string(*twice) + " more than once; expected each member once");
  }
  groups_[id] = std::move(members);
  simulated_members_.erase(id);
  return Status::Ok();
}

Status SystemLayer::CheckSameMembers(int id, std::vector<int> members,
                                     const std::string& name) const {
  std::sort(members.begin(), members.end());
  const std::vector<int>* before = GroupMembers(id);
  if (before == nullptr || *before == members) return Status::Ok();
  auto show = [](const std::vector<int>& m) {
    std::string out = "[";
    for (size_t k = 0; k < m.size() && k < 16; ++k) out += (k ? ", " : "") + std::to_string(m[k]);
    return out + (m.size() > 16 ? ", ... " + std::to_string(m.size()) + " NPUs]" : "]");
  };
  return Status::Error(name + " is " + show(members) + " here, but " + show(*before) +
                       " where it was defined first (another rank's METADATA, an earlier node, "
                       "or the comm-group file); expected the same members everywhere");
}

StatusOr<const std::vector<int>*> SystemLayer::GroupOf(const CollectiveRequest& req,
                                                       int npu) const {
  if (req.group == 0) return static_cast<const std::vector<int>*>(nullptr);
  const std::vector<int>* members = GroupMembers(req.group);
  if (members == nullptr) {
    return Status::Error(req.label + ": " + GroupName(req.group) + " is not defined");
  }
  if (!std::binary_search(members->begin(), members->end(), npu)) {
    return Status::Error(req.label + ": NPU " + std::to_string(npu) + " is not a member of " +
                         GroupName(req.group));
  }
  return members;
}

const std::vector<int>* SystemLayer::GroupMembers(int id) const {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second;
}

std::vector<std::string> SystemLayer::DescribeIncompleteCollectives(int max_items) const {
  return order_.DescribeIncomplete(
      [this](int group) {
        if (const std::vector<int>* m = GroupMembers(group)) return *m;
        std::vector<int> all(npus_.size());
        std::iota(all.begin(), all.end(), 0);
        return all;
      },
      max_items);
}

Status SystemLayer::CheckOrder(int npu, const CollectiveRequest& req) {
  const std::vector<int>* members = req.group != 0 ? GroupMembers(req.group) : nullptr;
  if (req.group != 0 &&
      (members == nullptr || !std::binary_search(members->begin(), members->end(), npu))) {
    return Status::Ok();  // StartCollective reports it
  }
  const int size = SimulatedMembers(req.group);
  CollectiveSignature sig{req.type, req.size, req.root, {}};
  // The dimensions a world collective runs on, when the trace limits them (entries past the
  // network's dimensions do not count: StartCollective checks them).
  if (req.group == 0 && !req.involved_dims.empty()) {
    const size_t n = topology().dims.size();
    sig.dims.assign(n, false);
    for (size_t d = 0; d < n && d < req.involved_dims.size(); ++d) {
      sig.dims[d] = req.involved_dims[d];
    }
    if (std::all_of(sig.dims.begin(), sig.dims.end(), [](bool b) { return b; })) sig.dims.clear();
  }
  return order_.Record(npu, req.group, size, sig, req.label);
}

namespace {

constexpr uint64_t kRendezvousBytes = 8192;

MessageKey HandshakeKey(const MessageKey& data) {
  // Receiver -> sender, in its own tag space; the data's space is folded into the tag.
  return MessageKey{data.dst, data.src, TagSpace::kRendezvous,
                    data.tag * 4 + static_cast<int64_t>(data.space), kRendezvousBytes};
}

}  // namespace

void SystemLayer::SendData(const MessageKey& key, MessageSink* on_sent, uint64_t cookie) {
  if (!params_.rendezvous) return matcher_.Send(key, on_sent, cookie);
  rendezvous_.Wait(HandshakeKey(key), key, on_sent, cookie);
}

void SystemLayer::RendezvousSends::Wait(const MessageKey& ready, const MessageKey& data,
                                        MessageSink* on_sent, uint64_t cookie) {
  const uint32_t slot = pending_.Acquire();
  pending_[slot] = Pending{data, on_sent, cookie};
  m_.Recv(ready, this, slot);
}

void SystemLayer::RendezvousSends::OnMessage(uint64_t slot) {
  const Pending p = pending_[static_cast<uint32_t>(slot)];
  pending_.Release(static_cast<uint32_t>(slot));
  m_.Send(p.key, p.on_sent, p.cookie);
}

void SystemLayer::RecvData(const MessageKey& key, MessageSink* sink, uint64_t cookie) {
  if (!params_.rendezvous) return matcher_.Recv(key, sink, cookie);
  // The receive is posted now and the ready message goes with no sink of its own: the data can
  // only come after the sender has it, so it completes as when posted at the ready message's
  // delivery. (A sink that deleted itself there was kept by the matcher when no send waited
  // for the ready message, and a stuck run's report then read it after it was freed.)
  matcher_.Recv(key, sink, cookie);
  matcher_.Send(HandshakeKey(key), nullptr, 0);
}

void SystemLayer::SetSymmetry(const NpuSymmetry* symmetry) {
  symmetry_ = symmetry;
  matcher_.set_symmetry(symmetry);
  simulated_members_.clear();
}

int SystemLayer::SimulatedMembers(int group) {
  auto it = simulated_members_.find(group);
  if (it != simulated_members_.end()) return it->second;
  const std::vector<int>* members = group != 0 ? GroupMembers(group) : nullptr;
  int count = members ? static_cast<int>(members->size()) : num_npus();
  if (symmetry_ != nullptr) {
    count = 0;
    if (members != nullptr) {
      for (int m : *members) count += symmetry_->IsRep(m) ? 1 : 0;
    } else {
      for (int m = 0; m < num_npus(); ++m) count += symmetry_->IsRep(m) ? 1 : 0;
    }
  }
  simulated_members_[group] = count;  // AddGroup forgets a group it replaces
  return count;
}

bool SystemLayer::CheckPhaseSymmetry(const PhaseSpec& p) {
  // Which shifts of the ring the algorithm runs alike: `multiple` 0 = only none.
  int multiple = 1;
  switch (p.type) {
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      multiple = 0;
      break;
    case CollectiveType::kBarrier:
      break;
    default:
      switch (p.algorithm.kind) {
        case AlgorithmKind::kHalvingDoubling:
        case AlgorithmKind::kOneHalvingDoubling:
        case AlgorithmKind::kDoubleBinaryTree:
          multiple = 0;
          break;
        case AlgorithmKind::kChannelRing: {
          const int node = p.channel_ring_node > 0 ? p.channel_ring_node : topology().NpusPerNode();
          multiple = node > 0 && p.ring_size % node == 0 ? node : p.ring_size;
          break;
        }
        default:
          break;
      }
  }
  // The ring, ascending: the members; or the dimension's line through this NPU; or every NPU.
  const bool flattened = p.members == nullptr && IsFlattened(p.algorithm.kind);
  const auto key =
      std::make_tuple(static_cast<const void*>(p.members), p.members ? 0 : p.base,
                      p.members ? 0 : p.stride, p.ring_size, multiple * 2 + (flattened ? 1 : 0));
  auto cached = phase_symmetry_.find(key);
  if (cached != phase_symmetry_.end()) return cached->second;
  std::vector<int> ring(static_cast<size_t>(p.ring_size));
  for (int i = 0; i < p.ring_size; ++i) ring[i] = flattened ? i : p.Member(i);
  bool holds = true;
  for (int d = 0; d < symmetry_->num_dims() && holds; ++d) {
    if (symmetry_->Period(d) == 1) continue;
    std::vector<int> image(ring.size());
    for (size_t i = 0; i < ring.size(); ++i) image[i] = symmetry_->Apply(d, 1, ring[i]);
    std::vector<int> sorted = image;
    std::sort(sorted.begin(), sorted.end());
    const size_t shift = static_cast<size_t>(
        std::lower_bound(sorted.begin(), sorted.end(), image[0]) - sorted.begin());
    for (size_t i = 0; i < image.size() && holds; ++i) {
      holds = image[i] == sorted[(i + shift) % sorted.size()];
    }
    if (holds && shift != 0) holds = multiple > 0 && shift % static_cast<size_t>(multiple) == 0;
    if (!holds && broken_dim_ < 0) {
      broken_dim_ = d;
      broken_reason_ = std::string(CollectiveTypeName(p.type)) + " phase (" +
                       AlgorithmName(p.algorithm.kind) + ") over " + std::to_string(p.ring_size) +
                       " NPUs from NPU " + std::to_string(ring.front()) +
                       ", which the symmetry of dimension " + std::to_string(d) +
                       " does not map onto itself";
      sim_.Abort();
    }
  }
  phase_symmetry_[key] = holds;
  return holds;
}

Time SystemLayer::ReductionDelay(uint64_t size) const {
  // ASTRA-sim: mem_write(size) + 2 * mem_read(size), each size / local-mem-bw in whole ns.
  return Time::FromNsTruncated(static_cast<double>(size) / params_.local_mem_bw_bytes_per_ns) * 3;
}

}  // namespace orrery
