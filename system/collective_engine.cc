#include "system/collective_engine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace orrery {

const char* CollectiveTypeName(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return "all-reduce";
    case CollectiveType::kReduce:
      return "reduce";
    case CollectiveType::kAllGather:
      return "all-gather";
    case CollectiveType::kGather:
      return "gather";
    case CollectiveType::kScatter:
      return "scatter";
    case CollectiveType::kBroadcast:
      return "broadcast";
    case CollectiveType::kAllToAll:
      return "all-to-all";
    case CollectiveType::kReduceScatter:
      return "reduce-scatter";
    case CollectiveType::kReduceScatterBlock:
      return "reduce-scatter-block";
    case CollectiveType::kBarrier:
      return "barrier";
  }
  return "?";
}

namespace {

enum StreamEvent : uint64_t { kHandOffDone = 0, kHandOffThenReduce = 1, kReduceDone = 2 };
// Stream::OnMessage cookies: a receive completed (0) or a notified send arrived.
constexpr uint64_t kSendArrived = 1;

int NativeIndex(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return kNativeAllReduce;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:  // equal blocks: the reduce-scatter itself
      return kNativeReduceScatter;
    case CollectiveType::kAllGather:
      return kNativeAllGather;
    case CollectiveType::kAllToAll:
      return kNativeAllToAll;
    default:
      return -1;
  }
}

const char* ImplKey(CollectiveType t) {
  switch (t) {
    case CollectiveType::kAllReduce:
      return "all-reduce-implementation";
    case CollectiveType::kReduceScatter:
      return "reduce-scatter-implementation";
    case CollectiveType::kAllGather:
      return "all-gather-implementation";
    default:
      return "all-to-all-implementation";
  }
}

const char* AlgorithmName(AlgorithmKind k) {
  switch (k) {
    case AlgorithmKind::kRing:
      return "ring";
    case AlgorithmKind::kOneRing:
      return "oneRing";
    case AlgorithmKind::kDirect:
      return "direct";
    case AlgorithmKind::kOneDirect:
      return "oneDirect";
    case AlgorithmKind::kHalvingDoubling:
      return "halvingDoubling";
    case AlgorithmKind::kOneHalvingDoubling:
      return "oneHalvingDoubling";
    case AlgorithmKind::kDoubleBinaryTree:
      return "doubleBinaryTree";
    case AlgorithmKind::kNvls:
      return "nvls";
    case AlgorithmKind::kChannelRing:
      return "channelRing";
  }
  return "?";
}

bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Whether `algo` can run logical dimension `dim` (n NPUs, built of `block`) of a collective of
// type `type`; `split` = an all-reduce that runs reduce-scatter and all-gather there
// (localBWAware).
// `reordered`: split because the inter-dimension policy may put any dimension before the last.
Status CheckAlgorithm(const AlgorithmSpec& algo, CollectiveType type, bool split, int dim, int n,
                      BlockType block, bool reordered = false) {
  const std::string where = std::string("'") + ImplKey(type) + "' dimension " +
                            std::to_string(dim) + ": '" + AlgorithmName(algo.kind) + "'";
  switch (algo.kind) {
    case AlgorithmKind::kHalvingDoubling:
    case AlgorithmKind::kOneHalvingDoubling:
      if (type == CollectiveType::kAllToAll) {
        return Status::Error(where +
                             " for all-to-all is not supported (ASTRA-sim exits there); "
                             "supported for all-to-all: ring, oneRing, direct, direct<N>, "
                             "oneDirect, oneDirect<N>");
      }
      if (!IsPowerOfTwo(n)) {
        return Status::Error(where + " needs a power-of-two number of NPUs, got " +
                             std::to_string(n) +
                             " (ASTRA-sim would pair NPUs inconsistently and hang); use ring or "
                             "direct there");
      }
      return Status::Ok();
    case AlgorithmKind::kDoubleBinaryTree:
      if (type != CollectiveType::kAllReduce) {
        return Status::Error(where + " implements all-reduce only; supported for " +
                             CollectiveTypeName(type) +
                             ": ring, oneRing, direct, direct<N>, oneDirect, oneDirect<N>" +
                             (type == CollectiveType::kAllToAll
                                  ? std::string()
                                  : std::string(", halvingDoubling, oneHalvingDoubling")));
      }
      if (split && reordered) {
        return Status::Error(
            where +
            " implements all-reduce only, but with collective-optimization localBWAware every "
            "dimension but a chunk's last runs a reduce-scatter and an all-gather, and "
            "inter-dimension-scheduling roundRobin or offlineGreedy may put this one before "
            "another; set inter-dimension-scheduling: ascending (then only the last active "
            "dimension runs an all-reduce), or collective-optimization: baseline");
      }
      if (split) {
        return Status::Error(where +
                             " implements all-reduce only, but with collective-optimization "
                             "localBWAware this dimension runs a reduce-scatter and an "
                             "all-gather (only the last active dimension runs an all-reduce); "
                             "use it on the last dimension or with 'baseline'");
      }
      if (!IsPowerOfTwo(n)) {
        return Status::Error(where + " needs a power-of-two number of NPUs, got " +
                             std::to_string(n) +
                             " (ASTRA-sim's tree leaves the others out and crashes)");
      }
      return Status::Ok();
    case AlgorithmKind::kNvls:
      if (block != BlockType::kSwitch) {
        return Status::Error(where + " reduces in the switch, but this dimension is a " +
                             BlockTypeName(block) +
                             ", not a Switch; use ring there (or make it a Switch)");
      }
      if (type == CollectiveType::kAllToAll) {
        return Status::Error(where +
                             " reduces and multicasts in the switch; it has no all-to-all"
                             "; supported for all-to-all: ring, oneRing, direct, direct<N>, "
                             "oneDirect, oneDirect<N>");
      }
      return Status::Ok();
    default:
      return Status::Ok();
  }
}

// The coordinates a communicator group takes in each network dimension when its members are
// exactly the Cartesian product of those sets (a sub-grid of the network); empty otherwise.
// `members` is sorted.
std::vector<std::vector<int>> SubGridCoordinates(const Topology& topo,
                                                 const std::vector<int>& members) {
  if (std::adjacent_find(members.begin(), members.end()) != members.end()) return {};
  std::vector<std::vector<int>> coords(topo.dims.size());
  int stride = 1;
  uint64_t product = 1;
  for (size_t d = 0; d < topo.dims.size(); ++d) {
    const int n = topo.dims[d].npus;
    for (int m : members) coords[d].push_back((m / stride) % n);
    std::sort(coords[d].begin(), coords[d].end());
    coords[d].erase(std::unique(coords[d].begin(), coords[d].end()), coords[d].end());
    product *= coords[d].size();
    stride *= n;
  }
  // Every member lies in the product, so equal sizes mean the product holds no one else.
  if (product != members.size()) return {};
  return coords;
}

// A hierarchical group phase keeps the dimension's algorithm where it runs over any member
// list: nvls too, since a switch reduces and multicasts for any set of its ports (NCCL runs
// NVLS on 5 to 8 GPUs of a node, NVIDIA/nccl #1455). The one* algorithms and channelRing
// (whole-machine rings) run a ring there instead.
AlgorithmSpec GroupDimAlgorithm(const std::vector<AlgorithmSpec>& impl, int dim) {
  if (dim < static_cast<int>(impl.size())) {
    switch (impl[dim].kind) {
      case AlgorithmKind::kRing:
      case AlgorithmKind::kDirect:
      case AlgorithmKind::kHalvingDoubling:
      case AlgorithmKind::kDoubleBinaryTree:
      case AlgorithmKind::kNvls:
        return impl[dim];
      default:
        break;
    }
  }
  return AlgorithmSpec{AlgorithmKind::kRing};
}

}  // namespace

int MembersPerNodeOfEqualBlocks(const Topology& topo, const std::vector<int>* members) {
  if (topo.dims.size() < 2) return 0;
  const int node = topo.NpusPerNode();
  if (members == nullptr) return node;  // the whole machine: every node whole
  std::map<int, int> count;             // node -> members on it
  for (int m : *members) ++count[m / node];
  const int k = count.begin()->second;
  const bool equal = std::all_of(count.begin(), count.end(),
                                 [k](const std::pair<const int, int>& c) { return c.second == k; });
  return equal && count.size() > 1 && k > 1 ? k : 0;
}

bool RunsAsFlatRing(const Topology& topo, const SystemParams& params,
                    const std::vector<int>& members) {
  if (static_cast<int>(members.size()) >= topo.num_npus()) return false;  // = world
  return params.group_collectives != GroupCollectives::kHierarchical ||
         SubGridCoordinates(topo, members).empty();
}

std::unique_ptr<PhaseAlgorithm> MakePhaseAlgorithm(Stream& stream, const PhaseSpec& phase) {
  switch (phase.type) {
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return MakeRootedPhase(stream, phase);
    case CollectiveType::kBarrier:
      return MakeBarrierPhase(stream, phase);
    default:
      break;
  }
  switch (phase.algorithm.kind) {
    case AlgorithmKind::kDirect:
    case AlgorithmKind::kOneDirect:
      return MakeDirectPhase(stream, phase);
    case AlgorithmKind::kHalvingDoubling:
    case AlgorithmKind::kOneHalvingDoubling:
      return MakeHalvingDoublingPhase(stream, phase);
    case AlgorithmKind::kDoubleBinaryTree:
      return MakeDoubleBinaryTreePhase(stream, phase);
    case AlgorithmKind::kNvls:
      return MakeNvlsPhase(stream, phase);
    case AlgorithmKind::kChannelRing:  // between the peers SetChannelRingPeers gave it
    default:
      return MakeRingPhase(stream, phase);
  }
}

// The same for every algorithm (the double binary tree runs all-reduce phases only).
uint64_t PhaseFinalSize(const PhaseSpec& p) {
  const uint64_t n = static_cast<uint64_t>(p.ring_size);
  switch (p.type) {
    case CollectiveType::kAllGather:
      return p.data_size * n;
    case CollectiveType::kReduceScatter:
      return p.data_size / n;
    default:
      return p.data_size;
  }
}

// ---------------------------------------------------------------------------------------------
// Stream

Stream::Stream(NpuSystem& owner, CollectiveInstance* collective, int group, int id, int priority,
               PoolVector<PhaseSpec> phases)
    : owner_(owner),
      collective_(collective),
      id_(id),
      tag_(static_cast<int64_t>(group) << 32 | static_cast<uint32_t>(id)),
      priority_(priority),
      phases_(std::move(phases)) {}

void Stream::SendToPeer(int dst, uint64_t size, bool notify) {
  MessageKey key{owner_.id(), dst, TagSpace::kCollective, tag_, size};
  owner_.layer_.SendData(key, notify ? this : nullptr, kSendArrived);
}

void Stream::ReceiveFromPeer(int src, uint64_t size) {
  MessageKey key{src, owner_.id(), TagSpace::kCollective, tag_, size};
  owner_.layer_.RecvData(key, this, 0);
}

// Several hand-offs may be in flight: the size to reduce travels in the event argument.
void Stream::HandOff(uint64_t size, bool reduce, BusRoute route) {
  const PhaseSpec& p = phases_[next_phase_ - 1];
  const uint64_t arg = reduce ? (size << 2) | kHandOffThenReduce : kHandOffDone;
  SharedBus* bus = owner_.layer_.bus(owner_.id());
  if (bus != nullptr && !p.fast) {  // a group's local ring keeps its fixed 10 ns (as ASTRA-sim)
    bus->Transfer(route.from_npu, size, reduce, route.send_back, this, arg);
    return;
  }
  owner_.layer_.sim().ScheduleAfter(owner_.layer_.HandOffDelay(p.fast), this, arg);
}

WaitingStream Stream::waiting() const {
  const PhaseSpec& p = phases_[next_phase_ - 1];
  return WaitingStream{priority_, p.data_size, static_cast<int>(phases_.size() - next_phase_ + 1)};
}

const Topology& Stream::topology() const { return owner_.layer_.topology(); }

void Stream::Init() {
  initialized_ = true;
  started_ = owner_.layer_.sim().now();
  algorithm_->Start();
}

void Stream::OnEvent(uint64_t arg) {
  if ((arg & 3) == kHandOffThenReduce) {
    owner_.layer_.sim().ScheduleAfter(owner_.layer_.ReductionDelay(arg >> 2), this, kReduceDone);
    return;
  }
  algorithm_->OnBundleDone();
  AfterAlgorithmStep();
}

void Stream::OnMessage(uint64_t cookie) {
  if (cookie == kSendArrived) {
    algorithm_->OnSent();
  } else {
    algorithm_->OnReceived();
  }
  AfterAlgorithmStep();
}

void Stream::AfterAlgorithmStep() {
  if (!phase_finished_) return;
  phase_finished_ = false;
  // May start the next phase, or finish the stream (which deletes it): nothing may touch
  // `this` afterwards.
  owner_.ProceedToNextPhase(this);
}

std::string Stream::Describe() const {
  std::string s = "chunk stream " + std::to_string(id_) + " of " +
                  CollectiveTypeName(collective_->request.type) + " " + collective_->request.label;
  if (next_phase_ > 0) {
    const PhaseSpec& p = phases_[next_phase_ - 1];
    s += ", phase " + std::to_string(next_phase_) + "/" + std::to_string(phases_.size()) + " (" +
         CollectiveTypeName(p.type) + " with NPUs " + std::to_string(p.sender) + " -> self -> " +
         std::to_string(p.receiver) + ")" + (initialized_ ? "" : " waiting for its queue");
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// NpuSystem

namespace {

std::vector<double> NsPerByte(const Topology& topo) {
  std::vector<double> out;
  for (const Dimension& d : topo.dims) {
    const double bpns = d.bandwidth.bytes_per_ns();
    out.push_back(bpns > 0 ? 1.0 / bpns : 0.0);
  }
  return out;
}

}  // namespace

NpuSystem::NpuSystem(SystemLayer& layer, int id) : layer_(layer), id_(id) {
  const auto& q = layer.params().queues_per_dim;
  int next = 0;
  for (int per_dim : q) {
    QueueLevel level;
    for (int i = 0; i < per_dim; ++i) level.queues.push_back(next++);
    levels_.push_back(level);
  }
  active_.resize(next);
  running_.assign(next, 0);
  const int q0 = q.empty() ? 1 : q[0];
  queue_threshold_ = static_cast<int>(
      std::ceil(static_cast<double>(layer.params().active_chunks_per_dimension) / q0));
}

NpuSystem::~NpuSystem() {
  for (auto& queue : active_) {
    for (Stream* s : queue) delete s;
  }
}

std::vector<NpuSystem::QueueCursor>& NpuSystem::Cursors(int group) {
  std::vector<QueueCursor>& cursors = cursors_[group];
  if (cursors.empty()) {
    for (const QueueLevel& l : levels_) {
      QueueCursor c;
      c.next_last = l.queues.size() / 2;
      cursors.push_back(c);
    }
  }
  return cursors;
}

InterDimensionScheduler& NpuSystem::Inter(int group) {
  auto it = inter_.find(group);
  if (it == inter_.end()) {
    it = inter_
             .emplace(group, InterDimensionScheduler(layer_.params().inter_dimension,
                                                     NsPerByte(layer_.topology())))
             .first;
  }
  return it->second;
}

std::pair<int, bool> NpuSystem::NextQueue(std::vector<QueueCursor>& cursors, int level) {
  const QueueLevel& l = levels_[level];
  QueueCursor& c = cursors[level];
  const bool clockwise = !(l.queues.size() > 1 && c.next >= l.queues.size() / 2);
  const int q = l.queues[c.next];
  if (++c.next == l.queues.size()) c.next = 0;
  return {q, clockwise};
}

// With one queue per dimension both halves are that queue (ASTRA-sim reads past its one-entry
// list there and in practice lands on the same queue).
std::pair<int, bool> NpuSystem::NextQueueFirst(std::vector<QueueCursor>& cursors, int level) {
  const QueueLevel& l = levels_[level];
  QueueCursor& c = cursors[level];
  const size_t half = std::max<size_t>(1, l.queues.size() / 2);
  const int q = l.queues[c.next_first];
  if (++c.next_first >= half) c.next_first = 0;
  return {q, true};
}

std::pair<int, bool> NpuSystem::NextQueueLast(std::vector<QueueCursor>& cursors, int level) {
  const QueueLevel& l = levels_[level];
  QueueCursor& c = cursors[level];
  const size_t half = l.queues.size() / 2;
  const int q = l.queues[c.next_last];
  if (++c.next_last >= l.queues.size()) c.next_last = half;
  return {q, false};
}

int NpuSystem::NextPriority(int explicit_priority) {
  switch (layer_.params().scheduling) {
    case SchedulingPolicy::kLifo:
      return priority_counter_++;
    case SchedulingPolicy::kFifo:
      return priority_counter_--;
    case SchedulingPolicy::kExplicit:
      return explicit_priority;
  }
  return 0;
}

PhaseSpec NpuSystem::MakeDimPhase(CollectiveType type, int dim, uint64_t size,
                                  std::pair<int, bool> queue, const AlgorithmSpec& algo,
                                  const std::vector<int>* members) {
  const Topology& topo = layer_.topology();
  PhaseSpec p;
  if (members != nullptr) {
    p.ring_size = static_cast<int>(members->size());
    p.index = static_cast<int>(std::find(members->begin(), members->end(), id_) - members->begin());
    p.members = members;
  } else if (IsFlattened(algo.kind)) {
    // One logical ring over every NPU in id order (ASTRA-sim's one* algorithms).
    p.ring_size = layer_.num_npus();
    p.index = id_;
  } else {
    int stride = 1;
    for (int d = 0; d < dim; ++d) stride *= topo.dims[d].npus;
    p.ring_size = topo.dims[dim].npus;
    p.index = (id_ / stride) % p.ring_size;
    p.stride = stride;
    p.base = id_ - p.index * stride;
  }
  p.type = type;
  p.collective = type;
  p.queue = queue.first;
  p.clockwise = queue.second;
  p.receiver = p.MemberAt(queue.second ? 1 : -1);
  p.sender = p.MemberAt(queue.second ? -1 : 1);
  p.data_size = size;
  p.algorithm = algo;
  if (algo.kind == AlgorithmKind::kDoubleBinaryTree && members == nullptr) {
    p.tree = tree_counter_[{0, dim}]++ % 2;
  }
  return p;
}

const std::vector<int>* NpuSystem::GroupDimMembers(int dim, const std::vector<int>& coords) {
  const Topology& topo = layer_.topology();
  int stride = 1;
  for (int d = 0; d < dim; ++d) stride *= topo.dims[d].npus;
  const int base = id_ - ((id_ / stride) % topo.dims[dim].npus) * stride;
  std::vector<int> ring;
  for (int c : coords) ring.push_back(base + c * stride);
  return &*group_rings_.insert(std::move(ring)).first;
}

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

NpuSystem::Span NpuSystem::CollectiveSpan(const CollectiveRequest& req) const {
  StatusOr<const std::vector<int>*> group = layer_.GroupOf(req, id_);
  // A group of every NPU runs as a world collective (StartCollective), below.
  if (group.ok() && *group != nullptr && !(*group)->empty() &&
      static_cast<int>((*group)->size()) != layer_.num_npus()) {
    const std::vector<int>& members = **group;
    // A hierarchical sub-grid group's collective confined by involved_dim runs over the members
    // that differ from this NPU only in the involved dimensions, as StartCollective runs it.
    const Topology& topo = layer_.topology();
    if (req.involved_dims.empty() || NativeIndex(req.type) < 0 ||
        layer_.params().group_collectives != GroupCollectives::kHierarchical ||
        SubGridCoordinates(topo, members).empty()) {
      return Span{static_cast<int>(members.size()), members.front()};
    }
    Span span{0, -1};
    for (int m : members) {
      bool same = true;
      int stride = 1;
      for (size_t d = 0; d < topo.dims.size() && same; ++d) {
        const int n = topo.dims[d].npus;
        const bool involved = d < req.involved_dims.size() && req.involved_dims[d];
        same = involved || (m / stride) % n == (id_ / stride) % n;
        stride *= n;
      }
      if (!same) continue;
      ++span.members;
      if (span.first < 0) span.first = m;
    }
    return span;
  }
  const int native = NativeIndex(req.type);
  const Topology& topo = layer_.topology();
  if (native < 0 || layer_.custom().Find(req) != nullptr) return Span{layer_.num_npus(), 0};
  const std::vector<AlgorithmSpec>& impl =
      req.impl != nullptr ? (*req.impl)[native] : layer_.params().impl[native];
  Span span{1, id_};
  int stride = 1;
  for (size_t d = 0; d < topo.dims.size(); ++d) {
    const int n = topo.dims[d].npus;
    const bool involved =
        d < impl.size() &&
        (req.involved_dims.empty() || (d < req.involved_dims.size() && req.involved_dims[d]));
    if (involved && IsFlattened(impl[d].kind)) return Span{layer_.num_npus(), 0};
    if (involved) {
      span.members *= n;
      span.first -= ((id_ / stride) % n) * stride;
    }
    if (d < impl.size() && IsFlattened(impl[d].kind)) break;  // later entries are never reached
    stride *= n;
  }
  return span;
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
  const SystemParams& params = layer_.params();
  const int native = NativeIndex(request.type);
  if (native < 0) return StartNonNative(request, listener, token);
  CollectiveRequest req = request;
  if (req.type == CollectiveType::kReduceScatterBlock) req.type = CollectiveType::kReduceScatter;
  const std::vector<AlgorithmSpec>& impl =
      request.impl != nullptr ? (*request.impl)[native] : params.impl[native];
  const Topology& topo = layer_.topology();
  StatusOr<const std::vector<int>*> group = layer_.GroupOf(req, id_);
  if (!group.ok()) return group.status();
  const std::vector<int>* members = *group;
  if (members != nullptr && static_cast<int>(members->size()) == layer_.num_npus()) {
    members = nullptr;  // = world
  }
  // A group smaller than the machine runs one flat ring over its members (ASTRA-sim), unless
  // group-collectives is hierarchical and the group is a sub-grid (RunsAsFlatRing, which the
  // NCCL tuner asks so that it offers such a group ring only): then it runs like a world
  // collective, one phase per network dimension where it has more than one coordinate, over
  // the members that differ from this NPU only there (`group_dims`).
  std::vector<std::vector<int>> coords;
  std::vector<const std::vector<int>*> group_dims;
  if (members != nullptr && params.group_collectives == GroupCollectives::kHierarchical) {
    coords = SubGridCoordinates(topo, *members);
    for (size_t d = 0; d < coords.size(); ++d) {
      group_dims.push_back(coords[d].size() > 1 ? GroupDimMembers(static_cast<int>(d), coords[d])
                                                : nullptr);
    }
  }
  const bool hierarchical = !group_dims.empty();
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
  for (size_t d = 0; d < coords.size(); ++d) {
    if (coords[d].size() < 2) continue;
    ++spanned_dims;
    if (!req.involved_dims.empty() && !(d < req.involved_dims.size() && req.involved_dims[d])) {
      spanned_involved = false;
    }
  }
  const bool channel_group = hierarchical && !impl.empty() &&
                             impl[0].kind == AlgorithmKind::kChannelRing && spanned_dims > 1 &&
                             spanned_involved;
  // A channel ring's node in the group: its members on one node (every dimension but the last).
  int members_per_node = 1;
  for (size_t d = 0; d + 1 < coords.size(); ++d) members_per_node *= coords[d].size();
  auto algorithm = [&](int d) {
    if (channel_group) return impl[0];
    return hierarchical ? GroupDimAlgorithm(impl, d) : impl[d];
  };
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
  int num_dims = 1;
  if (hierarchical && !channel_group) {
    num_dims = static_cast<int>(topo.dims.size());
  } else if (!members) {
    num_dims = static_cast<int>(impl.size());
    for (int d = 0; d < num_dims; ++d) {
      if (IsFlattened(impl[d].kind)) num_dims = d + 1;
    }
  }
  auto dim_size = [&](int d) {
    if (hierarchical && !channel_group) return static_cast<int>(coords[d].size());
    if (members) return static_cast<int>(members->size());
    return IsFlattened(impl[d].kind) ? layer_.num_npus() : topo.dims[d].npus;
  };
  auto active = [&](int d) {
    if (members && (!hierarchical || channel_group)) return members->size() > 1;
    const bool involved = req.involved_dims.empty() ||
                          (d < static_cast<int>(req.involved_dims.size()) && req.involved_dims[d]);
    return dim_size(d) > 1 && involved;
  };
  if (!members || hierarchical) {
    // A flat communicator group always runs a ring; otherwise check that every active
    // dimension's algorithm can run the phases it will get.
    int last_active = 0, num_active = 0;
    bool flattens = false;
    for (int d = 0; d < num_dims; ++d) {
      if (!active(d)) continue;
      last_active = d;
      ++num_active;
      if (!members && IsFlattened(impl[d].kind)) flattens = true;
    }
    // roundRobin and offlineGreedy order each chunk's dimensions themselves: any of them may
    // come before the last.
    const bool reordered =
        params.inter_dimension != InterDimensionPolicy::kAscending && num_active > 1 && !flattens;
    for (int d = 0; d < num_dims; ++d) {
      if (!active(d)) continue;
      const bool split = req.type == CollectiveType::kAllReduce && params.local_bw_aware &&
                         (d != last_active || reordered);
      Status s = CheckAlgorithm(algorithm(d), req.type, split, d, dim_size(d), topo.dims[d].type,
                                reordered);
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
  auto owned = std::make_unique<CollectiveInstance>(listener, token, req, layer_.sim().now());
  CollectiveInstance* coll = owned.get();

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

  // The active logical dimensions; the inter-dimension policy orders them per chunk (only
  // network dimensions: a flattened one* dimension keeps the ascending order).
  std::vector<int> active_dims, active_sizes;
  bool flattened = members != nullptr && (!hierarchical || channel_group);
  for (int d = 0; d < num_dims; ++d) {
    if (!active(d)) continue;
    active_dims.push_back(d);
    active_sizes.push_back(dim_size(d));
    if (!members && IsFlattened(impl[d].kind)) flattened = true;
  }
  auto make_phase = [&](CollectiveType type, int d, uint64_t in, std::pair<int, bool> queue) {
    if (!members) return MakeDimPhase(type, d, in, queue, impl[d]);
    if (channel_group) {
      PhaseSpec p = MakeDimPhase(type, d, in, queue, impl[0], members);
      p.channel_ring_node = members_per_node;
      return p;
    }
    if (hierarchical) {
      PhaseSpec p = MakeDimPhase(type, d, in, queue, algorithm(d), group_dims[d]);
      // Trees alternate per group and dimension: all members see the group's collectives in
      // the same order, but not necessarily the same world or other-group ones in between.
      if (p.algorithm.kind == AlgorithmKind::kDoubleBinaryTree) {
        p.tree = tree_counter_[{req.group, d}]++ % 2;
      }
      return p;
    }
    // A flat communicator group: one local ring over its sorted members, whatever the
    // implementation list says (as ASTRA-sim); but an all-to-all chosen by an NCCL model runs
    // NCCL's sends to every member at once (direct), whatever the group.
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
    if (type == CollectiveType::kAllToAll && request.impl != nullptr && !impl.empty() &&
        impl[0].kind == AlgorithmKind::kDirect) {
      p.algorithm = impl[0];
    }
    // NCCL's ring across nodes (channelRing) on equal blocks of members per node that are not a
    // sub-grid ({0, 1, 10, 11} on nodes of 8): rotated inside the blocks per channel, as on a
    // sub-grid (every channel had left each node through the same GPU, 2-4x slower).
    if (type != CollectiveType::kAllToAll && !impl.empty() &&
        impl[0].kind == AlgorithmKind::kChannelRing) {
      if (const int k = MembersPerNodeOfEqualBlocks(topo, members); k > 0) {
        p.algorithm = impl[0];
        p.channel_ring_node = k;
      }
    }
    return p;
  };

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
      PhaseSpec p = make_phase(type, d, remain, queue);
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
  if (streams == 0) {
    // Nothing to communicate (every dimension skipped): done at once.
    listener->OnCollectiveDone(token);
    return Status::Ok();
  }
  collectives_.push_back(std::move(owned));
  return Status::Ok();
}

void NpuSystem::InsertStream(std::deque<Stream*>& queue, Stream* stream) {
  // After the running streams and every waiting one the policy does not put it before.
  const IntraDimensionPolicy policy = layer_.params().intra_dimension;
  const WaitingStream incoming = stream->waiting();
  // The waiting streams are in the policy's order (each was inserted so) after the running
  // ones: one that is not served before the last goes last, without walking a queue of
  // thousands of chunks for each (FIFO with many splits was quadratic).
  if (queue.empty() || queue.back()->initialized() ||
      !ServedBefore(policy, incoming, queue.back()->waiting())) {
    queue.push_back(stream);
    return;
  }
  auto it = queue.begin();
  while (it != queue.end() &&
         ((*it)->initialized() || !ServedBefore(policy, incoming, (*it)->waiting()))) {
    ++it;
  }
  queue.insert(it, stream);
}

void NpuSystem::InitWaiting(int q) {
  std::deque<Stream*>& queue = active_[q];
  for (size_t i = static_cast<size_t>(running_[q]);
       i < queue.size() && running_[q] < queue_threshold_; ++i) {
    ++running_[q];
    queue[i]->Init();
  }
}

void NpuSystem::NotePhaseDone(const Stream& stream) {
  SystemObserver* observer = layer_.observer();
  if (observer == nullptr) return;
  PhaseRecord r;
  r.npu = id_;
  r.request = &stream.collective_->request;
  r.token = stream.collective_->token;
  r.stream = stream.id_;
  r.phase = static_cast<int>(stream.next_phase_) - 1;
  r.num_phases = static_cast<int>(stream.phases_.size());
  r.spec = &stream.phases_[stream.next_phase_ - 1];
  r.algorithm = AlgorithmName(r.spec->algorithm.kind);
  r.queued = stream.queued_;
  r.started = stream.started_;
  r.ended = layer_.sim().now();
  observer->OnPhaseDone(r);
}

void NpuSystem::NoteQueue(int queue) {
  if (SystemObserver* observer = layer_.observer()) {
    observer->OnQueueLength(id_, queue, layer_.sim().now(),
                            static_cast<int>(active_[queue].size()));
  }
}

void NpuSystem::ProceedToNextPhase(Stream* stream) {
  const int previous = stream->current_queue_;
  if (previous >= 0) NotePhaseDone(*stream);
  if (stream->next_phase_ == stream->phases_.size()) {
    // The collective hears first (ASTRA-sim order): what it issues in response is queued while
    // this stream still holds its slot, so priorities decide who runs next.
    CollectiveInstance* coll = stream->collective_;
    if (++coll->finished_streams == coll->total_streams) {
      CollectiveListener* listener = coll->listener;
      const uint64_t token = coll->token;
      auto it = std::find_if(collectives_.begin(), collectives_.end(),
                             [coll](const auto& c) { return c.get() == coll; });
      std::unique_ptr<CollectiveInstance> done = std::move(*it);
      collectives_.erase(it);
      listener->OnCollectiveDone(token);
    }
    if (previous >= 0) {
      auto& queue = active_[previous];
      queue.erase(std::find(queue.begin(), queue.end(), stream));
      NoteQueue(previous);
    }
    delete stream;
    --live_streams_;
    if (previous >= 0) {
      --running_[previous];
      InitWaiting(previous);
    }
    return;
  }
  if (previous >= 0) {
    auto& queue = active_[previous];
    queue.erase(std::find(queue.begin(), queue.end(), stream));
    NoteQueue(previous);
  }
  PhaseSpec& phase = stream->phases_[stream->next_phase_++];
  // A channel ring's peers depend on its channel (the stream): set here, where it starts, for
  // the algorithm and for what the run records.
  if (phase.algorithm.kind == AlgorithmKind::kChannelRing) {
    SetChannelRingPeers(
        &phase, stream->id(),
        phase.channel_ring_node > 0 ? phase.channel_ring_node : layer_.topology().NpusPerNode());
  }
  if (layer_.symmetry() != nullptr) layer_.CheckPhaseSymmetry(phase);
  stream->current_queue_ = phase.queue;
  stream->initialized_ = false;
  stream->queued_ = layer_.sim().now();
  stream->algorithm_ = MakePhaseAlgorithm(*stream, phase);
  InsertStream(active_[phase.queue], stream);
  NoteQueue(phase.queue);
  if (previous >= 0) {
    --running_[previous];
    InitWaiting(previous);
  }
  InitWaiting(phase.queue);
}

void NpuSystem::SendMessage(int dst, int64_t tag, uint64_t size, MessageSink* sink,
                            uint64_t cookie) {
  layer_.SendData(MessageKey{id_, dst, TagSpace::kNative, tag, size}, sink, cookie);
}

void NpuSystem::ReceiveMessage(int src, int64_t tag, uint64_t size, MessageSink* sink,
                               uint64_t cookie) {
  layer_.RecvData(MessageKey{src, id_, TagSpace::kNative, tag, size}, sink, cookie);
}

std::vector<std::string> NpuSystem::DescribeActive() const {
  std::vector<std::string> out;
  for (const auto& queue : active_) {
    for (const Stream* s : queue) out.push_back(s->Describe());
  }
  for (std::string& s : layer_.custom().DescribeActive(id_)) out.push_back(std::move(s));
  return out;
}

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
