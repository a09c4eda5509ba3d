// NpuSystem::StartCollective: a native collective's plan (its group and logical dimensions),
// the plan checked against the configuration, then one stream per chunk, each a list of phases.
#include <algorithm>
#include <memory>

#include "system/collective_engine.h"
#include "system/collective_engine_internal.h"

namespace orrery {

using engine_internal::CheckAlgorithm;
using engine_internal::GroupDimAlgorithm;
using engine_internal::ImplKey;
using engine_internal::NativeIndex;
using engine_internal::SubGridCoordinates;

namespace {

// One bool per network dimension. Entries past the last dimension are harmless when false
// (traces written for a larger machine carry them); a true one names a dimension this network
// does not have.
Status CheckInvolvedDims(const CollectiveRequest& req, size_t num_dims) {
  for (size_t d = num_dims; d < req.involved_dims.size(); ++d) {
    if (!req.involved_dims[d]) continue;
    return Status::Error(
        req.label + ": 'involved_dim' has " + std::to_string(req.involved_dims.size()) +
        " entries but the network has " + std::to_string(num_dims) +
        (num_dims == 1 ? " dimension" : " dimensions") + ", and entry " + std::to_string(d + 1) +
        " is true; expected one bool per network dimension (" + std::to_string(num_dims) +
        "), any entries beyond them false");
  }
  return Status::Ok();
}

}  // namespace

// How a native collective runs on this NPU: its request (a block reduce-scatter runs as a
// reduce-scatter), the implementation list, the communicator group and, for a hierarchical
// sub-grid group, its coordinates and the members per dimension; the logical dimensions.
struct NpuSystem::CollectivePlan {
  CollectiveRequest req;
  const std::vector<AlgorithmSpec>* impl = nullptr;
  const Topology* topo = nullptr;
  int num_npus = 0;
  const std::vector<int>* members = nullptr;  // nullptr = world
  std::vector<std::vector<int>> coords;       // a sub-grid group's, per network dimension
  std::vector<const std::vector<int>*> group_dims;
  bool hierarchical = false;
  // NCCL's ring across nodes in a sub-grid group that spans several dimensions (PlanCollective).
  bool channel_group = false;
  int members_per_node = 1;  // a channel ring's node in the group (every dimension but the last)
  int num_dims = 1;          // logical dimensions

  AlgorithmSpec algorithm(int d) const {
    if (channel_group) return (*impl)[0];
    return hierarchical ? GroupDimAlgorithm(*impl, d) : (*impl)[d];
  }
  int dim_size(int d) const {
    if (hierarchical && !channel_group) return static_cast<int>(coords[d].size());
    if (members) return static_cast<int>(members->size());
    return IsFlattened((*impl)[d].kind) ? num_npus : topo->dims[d].npus;
  }
  bool active(int d) const {
    if (members && (!hierarchical || channel_group)) return members->size() > 1;
    const bool involved = req.involved_dims.empty() ||
                          (d < static_cast<int>(req.involved_dims.size()) && req.involved_dims[d]);
    return dim_size(d) > 1 && involved;
  }
};

StatusOr<NpuSystem::CollectivePlan> NpuSystem::PlanCollective(const CollectiveRequest& request,
                                                              int native) {
  const SystemParams& params = layer_.params();
  CollectivePlan plan;
  plan.req = request;
  CollectiveRequest& req = plan.req;
  if (req.type == CollectiveType::kReduceScatterBlock) req.type = CollectiveType::kReduceScatter;
  plan.impl = request.impl != nullptr ? &(*request.impl)[native] : &params.impl[native];
  const std::vector<AlgorithmSpec>& impl = *plan.impl;
  const Topology& topo = layer_.topology();
  plan.topo = &topo;
  plan.num_npus = layer_.num_npus();
  StatusOr<const std::vector<int>*> group = layer_.GroupOf(req, id_);
  if (!group.ok()) return group.status();
  plan.members = *group;
  if (plan.members != nullptr && static_cast<int>(plan.members->size()) == layer_.num_npus()) {
    plan.members = nullptr;  // = world
  }
  const std::vector<int>* members = plan.members;
  // A group smaller than the machine runs one flat ring over its members (ASTRA-sim), unless
  // group-collectives is hierarchical and the group is a sub-grid (RunsAsFlatRing, which the
  // NCCL tuner asks so that it offers such a group ring only): then it runs like a world
  // collective, one phase per network dimension where it has more than one coordinate, over
  // the members that differ from this NPU only there (`group_dims`).
  if (members != nullptr && params.group_collectives == GroupCollectives::kHierarchical) {
    plan.coords = SubGridCoordinates(topo, *members);
    for (size_t d = 0; d < plan.coords.size(); ++d) {
      plan.group_dims.push_back(plan.coords[d].size() > 1
                                    ? GroupDimMembers(static_cast<int>(d), plan.coords[d])
                                    : nullptr);
    }
  }
  plan.hierarchical = !plan.group_dims.empty();
  // NCCL's ring across nodes (channelRing) in a sub-grid group that spans several dimensions:
  // one flat ring over the members per channel, node by node and rotated inside each node, as
  // for the world. Rings per dimension would send only each GPU's share of its node's data
  // across the nodes, a hierarchical algorithm NCCL does not run (on two nodes of 4 GPUs, a
  // reduce-scatter 35% faster than NCCL's ring).
  // Only when every dimension it spans is involved (involved_dim confines a collective to the
  // members that differ from this NPU only there: then the rings per dimension, as
  // CollectiveSpan says).
  int spanned_dims = 0;
  bool spanned_involved = true;
  for (size_t d = 0; d < plan.coords.size(); ++d) {
    if (plan.coords[d].size() < 2) continue;
    ++spanned_dims;
    if (!req.involved_dims.empty() && !(d < req.involved_dims.size() && req.involved_dims[d])) {
      spanned_involved = false;
    }
  }
  plan.channel_group = plan.hierarchical && !impl.empty() &&
                       impl[0].kind == AlgorithmKind::kChannelRing && spanned_dims > 1 &&
                       spanned_involved;
  for (size_t d = 0; d + 1 < plan.coords.size(); ++d) {
    plan.members_per_node *= plan.coords[d].size();
  }
  if (impl.empty()) {
    return Status::Error(req.label + ": " + params.ConfigName() + " has no '" +
                         std::string(ImplKey(req.type)) + "' (one algorithm per dimension)");
  }
  if (members == nullptr && impl.size() > topo.dims.size()) {
    return Status::Error(params.ConfigName() + ": '" + ImplKey(req.type) + "' lists " +
                         std::to_string(impl.size()) + " dimensions but the network has " +
                         std::to_string(topo.dims.size()));
  }
  // Logical dimensions: one per list entry, up to and including the first one* entry, which
  // flattens the whole machine into one ring (later entries are never reached, as in ASTRA-sim).
  if (plan.hierarchical && !plan.channel_group) {
    plan.num_dims = static_cast<int>(topo.dims.size());
  } else if (!members) {
    plan.num_dims = static_cast<int>(impl.size());
    for (int d = 0; d < plan.num_dims; ++d) {
      if (IsFlattened(impl[d].kind)) plan.num_dims = d + 1;
    }
  }
  return plan;
}

Status NpuSystem::CheckPlan(const CollectivePlan& plan) const {
  const SystemParams& params = layer_.params();
  const CollectiveRequest& req = plan.req;
  if (!plan.members || plan.hierarchical) {
    // A flat communicator group always runs a ring; otherwise check that every active
    // dimension's algorithm can run the phases it will get.
    int last_active = 0, num_active = 0;
    bool flattens = false;
    for (int d = 0; d < plan.num_dims; ++d) {
      if (!plan.active(d)) continue;
      last_active = d;
      ++num_active;
      if (!plan.members && IsFlattened((*plan.impl)[d].kind)) flattens = true;
    }
    // roundRobin and offlineGreedy order each chunk's dimensions themselves: any of them may
    // come before the last.
    const bool reordered =
        params.inter_dimension != InterDimensionPolicy::kAscending && num_active > 1 && !flattens;
    for (int d = 0; d < plan.num_dims; ++d) {
      if (!plan.active(d)) continue;
      const bool split = req.type == CollectiveType::kAllReduce && params.local_bw_aware &&
                         (d != last_active || reordered);
      Status s = CheckAlgorithm(plan.algorithm(d), req.type, split, d, plan.dim_size(d),
                                plan.topo->dims[d].type, reordered);
      if (!s.ok()) return Status::Error(req.label + ": " + s.message());
    }
  }
  const bool needs_reduction =
      req.type == CollectiveType::kAllReduce || req.type == CollectiveType::kReduceScatter;
  if (needs_reduction && params.local_mem_bw_bytes_per_ns <= 0) {
    return Status::Error(req.label + ": " + CollectiveTypeName(req.type) +
                         " needs 'local-mem-bw' (> 0) in " + params.ConfigName() +
                         " for the reduction cost");
  }
  // Past 2^53 bytes (8 PiB) a size is no longer exact in the doubles that time it, and its time
  // nears the simulated clock's range: no real collective is that large; a size that is, is a
  // unit mistake or a protocol efficiency inflating a huge one.
  constexpr uint64_t kMaxCollectiveBytes = uint64_t{1} << 53;
  if (req.size > kMaxCollectiveBytes) {
    return Status::Error(req.label + ": " + CollectiveTypeName(req.type) + " of " +
                         std::to_string(req.size) +
                         " bytes (after --comm-scale and any protocol efficiency) is more than "
                         "Orrery simulates: at most 2^53 bytes (8 PiB)");
  }
  return Status::Ok();
}

PhaseSpec NpuSystem::MakePlanPhase(const CollectivePlan& plan, CollectiveType type, int d,
                                   uint64_t in, std::pair<int, bool> queue) {
  const std::vector<AlgorithmSpec>& impl = *plan.impl;
  if (!plan.members) return MakeDimPhase(type, d, in, queue, impl[d]);
  if (plan.channel_group) {
    PhaseSpec p = MakeDimPhase(type, d, in, queue, impl[0], plan.members);
    p.channel_ring_node = plan.members_per_node;
    return p;
  }
  if (plan.hierarchical) {
    PhaseSpec p = MakeDimPhase(type, d, in, queue, plan.algorithm(d), plan.group_dims[d]);
    // Trees alternate per group and dimension: all members see the group's collectives in
    // the same order, but not necessarily the same world or other-group ones in between.
    if (p.algorithm.kind == AlgorithmKind::kDoubleBinaryTree) {
      p.tree = tree_counter_[{plan.req.group, d}]++ % 2;
    }
    return p;
  }
  // A flat communicator group: one local ring over its sorted members, whatever the
  // implementation list says (as ASTRA-sim); but an all-to-all chosen by an NCCL model runs
  // NCCL's sends to every member at once (direct), whatever the group.
  const std::vector<int>* members = plan.members;
  PhaseSpec p;
  p.type = type;
  p.queue = queue.first;
  p.clockwise = queue.second;
  p.fast = true;
  p.ring_size = static_cast<int>(members->size());
  p.index = static_cast<int>(std::find(members->begin(), members->end(), id_) - members->begin());
  p.members = members;
  p.receiver = p.MemberAt(queue.second ? 1 : -1);
  p.sender = p.MemberAt(queue.second ? -1 : 1);
  p.data_size = in;
  p.algorithm = AlgorithmSpec{AlgorithmKind::kRing};
  if (type == CollectiveType::kAllToAll && plan.req.impl != nullptr && !impl.empty() &&
      impl[0].kind == AlgorithmKind::kDirect) {
    p.algorithm = impl[0];
  }
  // NCCL's ring across nodes (channelRing) on equal blocks of members per node that are not a
  // sub-grid ({0, 1, 10, 11} on nodes of 8): rotated inside the blocks per channel, as on a
  // sub-grid (every channel had left each node through the same GPU, 2-4x slower).
  if (type != CollectiveType::kAllToAll && !impl.empty() &&
      impl[0].kind == AlgorithmKind::kChannelRing) {
    if (const int k = MembersPerNodeOfEqualBlocks(*plan.topo, members); k > 0) {
      p.algorithm = impl[0];
      p.channel_ring_node = k;
    }
  }
  return p;
}

int NpuSystem::LaunchStreams(const CollectivePlan& plan, CollectiveInstance* coll, uint64_t size,
                             uint64_t chunk, int priority) {
  const SystemParams& params = layer_.params();
  const CollectiveRequest& req = plan.req;
  // The active logical dimensions; the inter-dimension policy orders them per chunk (only
  // network dimensions: a flattened one* dimension keeps the ascending order).
  std::vector<int> active_dims, active_sizes;
  bool flattened = plan.members != nullptr && (!plan.hierarchical || plan.channel_group);
  for (int d = 0; d < plan.num_dims; ++d) {
    if (!plan.active(d)) continue;
    active_dims.push_back(d);
    active_sizes.push_back(plan.dim_size(d));
    if (!plan.members && IsFlattened((*plan.impl)[d].kind)) flattened = true;
  }
  int streams = 0;
  std::vector<int> order;  // each chunk's visiting order, in one buffer
  // This group's rotations, looked up once per collective.
  std::vector<QueueCursor>& cursors = Cursors(req.group);
  InterDimensionScheduler* inter = flattened ? nullptr : &Inter(req.group);
  const bool split_all_reduce = req.type == CollectiveType::kAllReduce && params.local_bw_aware;
  while (size > 0) {
    size = chunk > size ? 0 : size - chunk;
    uint64_t remain = chunk;
    if (!flattened) {
      inter->NextOrder(req.type, params.local_bw_aware, chunk, active_dims, active_sizes, &order);
    } else {
      order.assign(active_dims.begin(), active_dims.end());
      if (req.type == CollectiveType::kAllGather) std::reverse(order.begin(), order.end());
    }
    PoolVector<PhaseSpec> phases;
    phases.reserve(split_all_reduce && !order.empty() ? 2 * order.size() - 1 : order.size());
    auto add_phase = [&](CollectiveType type, int d, std::pair<int, bool> queue) {
      PhaseSpec p = MakePlanPhase(plan, type, d, remain, queue);
      p.collective = req.type;
      remain = PhaseFinalSize(p);
      phases.push_back(p);
    };
    if (!split_all_reduce) {
      for (int d : order) add_phase(req.type, d, NextQueue(cursors, d));
    } else if (!order.empty()) {
      // Reduce-scatter up the order, all-reduce on its last dimension, all-gather back down.
      const size_t k = order.size();
      for (size_t i = 0; i + 1 < k; ++i) {
        add_phase(CollectiveType::kReduceScatter, order[i], NextQueueFirst(cursors, order[i]));
      }
      add_phase(CollectiveType::kAllReduce, order[k - 1], NextQueueFirst(cursors, order[k - 1]));
      for (size_t i = k - 1; i-- > 0;) {
        add_phase(CollectiveType::kAllGather, order[i], NextQueueLast(cursors, order[i]));
      }
    }
    if (phases.empty()) break;
    ++streams;
    auto* stream =
        new Stream(*this, coll, req.group, NextStreamId(req.group), priority, std::move(phases));
    ++live_streams_;
    coll->total_streams = streams;
    ProceedToNextPhase(stream);
  }
  return streams;
}

Status NpuSystem::StartCollective(const CollectiveRequest& request, CollectiveListener* listener,
                                  uint64_t token) {
  Status dims = CheckInvolvedDims(request, layer_.topology().dims.size());
  if (!dims.ok()) return dims;
  Status in_order = layer_.CheckOrder(id_, request);
  if (!in_order.ok()) return in_order;
  if (const CustomAlgorithm* custom = layer_.custom().Find(request)) {
    return layer_.custom().Start(id_, *custom, request, NextStreamId(request.group), listener,
                                 token);
  }
  const int native = NativeIndex(request.type);
  if (native < 0) return StartNonNative(request, listener, token);
  StatusOr<CollectivePlan> plan = PlanCollective(request, native);
  if (!plan.ok()) return plan.status();
  if (Status s = CheckPlan(*plan); !s.ok()) return s;
  const CollectiveRequest& req = plan->req;
  const SystemParams& params = layer_.params();
  auto owned = std::make_unique<CollectiveInstance>(listener, token, req, layer_.sim().now());

  // Chunking: size / splits, but never smaller than the number of NPUs (except all-gather),
  // in which case the collective grows to splits * NPUs bytes. An all-gather smaller than its
  // splits does not grow: its chunks are 1 B (ASTRA-sim's 0-byte chunks never end the loop).
  // With whole_chunks (lanes) the size is first rounded up to a multiple of the splits.
  uint64_t size = req.size;
  const uint64_t splits = static_cast<uint64_t>(params.preferred_dataset_splits);
  if (params.whole_chunks && size % splits != 0) size += splits - size % splits;
  uint64_t chunk = std::max<uint64_t>(size / splits, 1);
  const uint64_t total_nodes = static_cast<uint64_t>(layer_.num_npus());
  if (req.type != CollectiveType::kAllGather && total_nodes > chunk) {
    chunk = total_nodes;
    size = splits * chunk;
  }
  const int priority = NextPriority(req.explicit_priority);
  if (LaunchStreams(*plan, owned.get(), size, chunk, priority) == 0) {
    // Nothing to communicate (every dimension skipped): done at once.
    listener->OnCollectiveDone(token);
    return Status::Ok();
  }
  collectives_.push_back(std::move(owned));
  return Status::Ok();
}

}  // namespace orrery
