#include "system/collective_engine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "system/collective_engine_internal.h"

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

namespace engine_internal {

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
                      BlockType block, bool reordered) {
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

}  // namespace engine_internal

using engine_internal::AlgorithmName;
using engine_internal::CheckAlgorithm;
using engine_internal::GroupDimAlgorithm;
using engine_internal::ImplKey;
using engine_internal::kHandOffDone;
using engine_internal::kHandOffThenReduce;
using engine_internal::kReduceDone;
using engine_internal::kSendArrived;
using engine_internal::NativeIndex;
using engine_internal::SubGridCoordinates;

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

}  // namespace orrery
