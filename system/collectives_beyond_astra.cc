// Starting the collectives ASTRA-sim lacks: broadcast, reduce, gather, scatter (rooted) and
// barrier, each chunk one phase over one logical ring of every NPU or of the communicator group
// (see README.md, "Collectives beyond ASTRA-sim"); broadcast and reduce as binomial trees or as
// NCCL's ring (broadcast-reduce-algorithm, or the collective's tuned choice). The algorithms are
// in rooted_algorithm.cc and barrier_algorithm.cc.
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "system/collective_engine.h"

namespace orrery {

Status NpuSystem::StartNonNative(const CollectiveRequest& req, CollectiveListener* listener,
                                 uint64_t token) {
  const SystemParams& params = layer_.params();
  StatusOr<const std::vector<int>*> group = layer_.GroupOf(req, id_);
  if (!group.ok()) return group.status();
  const std::vector<int>* members = *group;
  const int n = members ? static_cast<int>(members->size()) : layer_.num_npus();
  auto index_of = [&](int npu) {
    if (!members) return npu >= 0 && npu < n ? npu : -1;
    auto it = std::find(members->begin(), members->end(), npu);
    return it == members->end() ? -1 : static_cast<int>(it - members->begin());
  };
  const int index = index_of(id_);  // >= 0: GroupOf checked membership
  const bool rooted = req.type != CollectiveType::kBarrier;
  const int root = req.root < 0 ? 0 : index_of(req.root);
  if (rooted && root < 0) {
    return Status::Invalid(
        req.label, std::string("root of the ") + CollectiveTypeName(req.type),
        std::to_string(req.root),
        std::string("an NPU id of ") + (members ? layer_.GroupName(req.group) : "the machine") +
            " (comm_src for broadcast and scatter, comm_dst for reduce and gather)");
  }
  if (req.type == CollectiveType::kReduce && params.local_mem_bw_bytes_per_ns <= 0) {
    return Status::Error(req.label + ": reduce needs 'local-mem-bw' (> 0) in " +
                         params.ConfigName() + " for the reduction cost");
  }
  if (members && n == layer_.num_npus()) members = nullptr;  // the whole machine: not "local"
  // A barrier is one 1-byte stream; the others are cut into preferred-dataset-splits chunks
  // (at least one byte each, the last one taking the remainder).
  const uint64_t size = rooted ? req.size : 1;
  uint64_t chunks = rooted ? static_cast<uint64_t>(params.preferred_dataset_splits) : 1;
  chunks = std::min(chunks, size);
  if (n <= 1 || chunks == 0) {  // nothing to communicate
    listener->OnCollectiveDone(token);
    return Status::Ok();
  }
  auto owned = std::make_unique<CollectiveInstance>(listener, token, req, layer_.sim().now());
  CollectiveInstance* coll = owned.get();
  coll->total_streams = static_cast<int>(chunks);
  collectives_.push_back(std::move(owned));
  const int priority = NextPriority(req.explicit_priority);
  const uint64_t chunk = size / chunks;
  const bool ring =
      (req.type == CollectiveType::kBroadcast || req.type == CollectiveType::kReduce) &&
      req.rooted.value_or(params.rooted) == RootedAlgorithm::kRing;
  // NCCL's rings leave each node through a different GPU (and its NICs) per channel: on a
  // machine of several dimensions, when the members are whole blocks of equal size on several
  // nodes (Topology::NpusPerNode), each chunk's ring is rotated inside them as channelRing's.
  const int per_node = ring ? MembersPerNodeOfEqualBlocks(layer_.topology(), members) : 0;
  std::vector<QueueCursor>& cursors = Cursors(req.group);
  for (uint64_t c = 0; c < chunks; ++c) {
    PhaseSpec p;
    p.type = req.type;
    p.collective = req.type;
    p.queue = NextQueue(cursors, 0).first;
    p.fast = members != nullptr;
    p.ring_size = n;
    p.index = index;
    p.members = members;
    p.root = root;
    p.rooted_ring = ring;
    p.rooted_ring_node = per_node;
    p.receiver = p.MemberAt(1);
    p.sender = p.MemberAt(-1);
    p.data_size = c + 1 == chunks ? size - chunk * (chunks - 1) : chunk;
    auto* stream = new Stream(*this, coll, req.group, NextStreamId(req.group), priority, {p});
    ++live_streams_;
    ProceedToNextPhase(stream);
  }
  return Status::Ok();
}

}  // namespace orrery
