// The system layer: turns collectives into chunk streams and per-dimension phases, schedules
// them on per-dimension queues, and runs the collective algorithm of each phase.
//
//   SystemLayer sys(sim, net, params);
//   sys.npu(3).StartCollective(req, &listener, /*token=*/node_index);
//   sys.npu(3).SendMessage(/*dst=*/5, /*tag=*/7, /*size=*/4096, &sink, cookie);
//
// Semantics follow ASTRA-sim 2.0 (see system/README.md): a collective of S bytes is cut into
// `preferred-dataset-splits` chunks; each chunk is a stream that visits the dimensions in order
// (all-gather in reverse; all-reduce with localBWAware as reduce-scatter up, all-reduce on the last
// dimension, all-gather down); each queue runs at most ceil(active-chunks / queues-per-dim[0])
// streams at once, the rest wait in priority order (LIFO/FIFO/EXPLICIT). Every message an
// algorithm moves costs endpoint-delay on the way into and out of the network, plus
// 3 * size / local-mem-bw when the receiver must reduce it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/event_queue.h"
#include "common/slot_pool.h"
#include "common/small_object_pool.h"
#include "common/status.h"
#include "network/network.h"
#include "network/symmetry.h"
#include "system/collective_order.h"
#include "system/custom_collective.h"
#include "system/loggp.h"
#include "system/message_matcher.h"
#include "system/scheduling.h"
#include "system/system_params.h"

namespace orrery {

class CollectiveListener {
 public:
  virtual ~CollectiveListener() = default;
  virtual void OnCollectiveDone(uint64_t token) = 0;
};

struct CollectiveRequest {
  CollectiveType type = CollectiveType::kAllReduce;
  uint64_t size = 0;                // bytes (comm_size)
  std::vector<bool> involved_dims;  // empty = all
  int group = 0;                    // 0 = world; else a registered communicator group id
  int explicit_priority = 0;        // comm_priority, used with EXPLICIT scheduling
  int root = -1;         // broadcast, reduce, gather, scatter: the root's NPU id (-1: first member)
  int64_t node_id = -1;  // the Chakra node, for per-node custom algorithms (-1: none)
  std::string label;     // for reports ("node 12 'allreduce'")
  // Native algorithms per collective type and dimension for this collective only (an NCCL
  // tuner's choice, nccl/nccl_tuner.h); null = SystemParams::impl. Must outlive the run.
  const std::array<std::vector<AlgorithmSpec>, kNumNativeColl>* impl = nullptr;
  // Broadcast and reduce: the algorithm for this collective only (an NCCL tuner's choice); unset
  // = SystemParams::rooted.
  std::optional<RootedAlgorithm> rooted;
};

class SystemLayer;
class NpuSystem;
class Stream;

// One visit of a chunk to one logical dimension. The dimension's NPUs form a logical ring,
// indexed 0..ring_size-1: member i is `members[i]` for a communicator group, otherwise
// `base + i * stride` (a network dimension, or all NPUs in id order for the one* algorithms).
struct PhaseSpec {
  CollectiveType type = CollectiveType::kAllReduce;  // AR, RS, AG, A2A; or a rooted one, barrier
  // The whole collective's type: an all-reduce's phases may be reduce-scatters and all-gathers.
  CollectiveType collective = CollectiveType::kAllReduce;
  int queue = 0;
  bool clockwise = true;
  bool fast = false;  // communicator-group local ring: fixed 10 ns hand-off
  int ring_size = 1;  // NPUs in this dimension's ring
  int index = 0;      // this NPU's position in the ring
  int base = 0;       // NPU id of member 0 (without `members`)
  int stride = 1;     // id distance between consecutive members (without `members`)
  const std::vector<int>* members = nullptr;  // communicator group, sorted
  int receiver = 0;                           // next NPU in the chosen direction
  int sender = 0;                             // previous NPU
  uint64_t data_size = 0;                     // input size of the phase
  int tree = 0;              // doubleBinaryTree: 0 = root at the last index, 1 = root at index 0
  int root = 0;              // broadcast, reduce, gather, scatter: ring index of the root
  bool rooted_ring = false;  // broadcast, reduce: NCCL's ring pipeline (RootedAlgorithm::kRing)
  // rooted_ring across nodes: members per node, each chunk's ring rotated inside the nodes as
  // channelRing's (0 = one ring in member order).
  int rooted_ring_node = 0;
  // channelRing: members per node in member order (a communicator group's; 0 = the world's,
  // Topology::NpusPerNode).
  int channel_ring_node = 0;
  AlgorithmSpec algorithm;

  int Member(int i) const { return members ? (*members)[i] : base + i * stride; }
  // The member `hops` positions away (negative = anticlockwise), wrapping around.
  int MemberAt(int hops) const {
    return Member(((index + hops) % ring_size + ring_size) % ring_size);
  }
};

// The algorithm running one phase of one stream. Implementations call back into the stream.
// Pool-allocated: one is made for every phase of every chunk.
class PhaseAlgorithm : public PoolAllocated {
 public:
  virtual ~PhaseAlgorithm() = default;
  virtual void Start() = 0;         // the stream got its turn on the queue
  virtual void OnBundleDone() = 0;  // a message finished its hand-off (and reduction)
  virtual void OnReceived() = 0;    // a message of this phase arrived
  virtual void OnSent() {}          // a message sent with SendToPeer(..., notify) arrived
  virtual uint64_t final_size() const = 0;
};

std::unique_ptr<PhaseAlgorithm> MakePhaseAlgorithm(Stream& stream, const PhaseSpec& phase);
// The algorithms, one file each (*_algorithm.cc); MakePhaseAlgorithm picks by phase.algorithm.
std::unique_ptr<PhaseAlgorithm> MakeRingPhase(Stream& stream, const PhaseSpec& phase);
std::unique_ptr<PhaseAlgorithm> MakeDirectPhase(Stream& stream, const PhaseSpec& phase);
std::unique_ptr<PhaseAlgorithm> MakeHalvingDoublingPhase(Stream& stream, const PhaseSpec& phase);
std::unique_ptr<PhaseAlgorithm> MakeDoubleBinaryTreePhase(Stream& stream, const PhaseSpec& phase);
// Broadcast, reduce, gather, scatter (rooted_algorithm.cc) and barrier (barrier_algorithm.cc):
// chosen by phase.type, whatever phase.algorithm says.
std::unique_ptr<PhaseAlgorithm> MakeRootedPhase(Stream& stream, const PhaseSpec& phase);
std::unique_ptr<PhaseAlgorithm> MakeBarrierPhase(Stream& stream, const PhaseSpec& phase);
std::unique_ptr<PhaseAlgorithm> MakeNvlsPhase(Stream& stream, const PhaseSpec& phase);
// Sets a channelRing phase's receiver and sender for channel `channel` (the stream), rotated
// inside nodes of `node_size` members (where the channels rotate); the phase then runs as a ring
// between them (MakeRingPhase), and what the run records (a timeline's send_to / receive_from)
// names the same peers.
void SetChannelRingPeers(PhaseSpec* phase, int channel, int node_size);
// Output size of a phase (RS shrinks, AG grows), without running it.
uint64_t PhaseFinalSize(const PhaseSpec& phase);

// NCCL's rings leave each node (Topology::NpusPerNode: every dimension but the last) through a
// different GPU per channel: the members per node when `members` (sorted; null = the whole machine)
// are blocks of equal size k > 1 on two or more nodes of a machine of several dimensions, else 0
// (one ring in member order). Rooted rings and channelRing in a flat group rotate inside such
// blocks.
int MembersPerNodeOfEqualBlocks(const Topology& topo, const std::vector<int>* members);

// Whether NpuSystem::StartCollective runs a native collective of the communicator group
// `members` (sorted) as one flat ring over them, whatever the implementation lists say: a group
// smaller than the machine does, unless group-collectives is hierarchical and the group is a
// sub-grid of the network.
bool RunsAsFlatRing(const Topology& topo, const SystemParams& params,
                    const std::vector<int>& members);

// All chunks of one collective on one NPU.
struct CollectiveInstance {
  CollectiveInstance(CollectiveListener* l, uint64_t t, const CollectiveRequest& r, Time now)
      : listener(l), token(t), request(r), start(now) {}
  int total_streams = 0;
  int finished_streams = 0;
  CollectiveListener* listener = nullptr;
  uint64_t token = 0;
  CollectiveRequest request;
  Time start;
};

// One phase of one chunk stream, as it happened (SystemObserver::OnPhaseDone). The pointers
// are valid during the callback only.
struct PhaseRecord {
  int npu = 0;
  const CollectiveRequest* request = nullptr;
  uint64_t token = 0;  // the collective's listener token
  int stream = 0;      // chunk stream id
  int phase = 0;       // 0-based, of num_phases
  int num_phases = 0;
  const PhaseSpec* spec = nullptr;
  const char* algorithm = "";
  Time queued;   // entered its queue
  Time started;  // got its turn (the algorithm started)
  Time ended;
};

// Watches the system layer for timelines and reports (SystemLayer::set_observer). Without an
// observer the layer does no bookkeeping for it.
class SystemObserver {
 public:
  virtual ~SystemObserver() = default;
  virtual void OnPhaseDone(const PhaseRecord& r) = 0;
  // Streams on a queue (running and waiting) changed to `length` at time `t`.
  virtual void OnQueueLength(int npu, int queue, Time t, int length) = 0;
};

// Which way a hand-off crosses the LogGP shared bus (model-shared-bus; ignored otherwise).
struct BusRoute {
  bool from_npu = true;    // injected by the NPU (else taken from the network)
  bool send_back = false;  // returned over the bus after it landed (and was reduced)
};

// Pool-allocated: one is made for every chunk.
class Stream : public EventTarget, public MessageSink, public PoolAllocated {
 public:
  // `id` numbers the streams of communicator group `group` (0 = every NPU) alike on every
  // member: the chunk's channel in a channel ring. Its messages are tagged by both.
  Stream(NpuSystem& owner, CollectiveInstance* collective, int group, int id, int priority,
         PoolVector<PhaseSpec> phases);

  // Called by algorithms. With `notify`, the algorithm's OnSent() runs when the message has
  // arrived (the phase must then not finish before it).
  void SendToPeer(int dst, uint64_t size, bool notify = false);
  void ReceiveFromPeer(int src, uint64_t size);
  // A message moves between NPU and network interface (endpoint-delay, or the LogGP shared bus
  // with model-shared-bus); `reduce` adds the reduction cost before the algorithm is told.
  void HandOff(uint64_t size, bool reduce, BusRoute route = {});
  void PhaseFinished() { phase_finished_ = true; }

  void OnEvent(uint64_t arg) override;
  void OnMessage(uint64_t cookie) override;

  int id() const { return id_; }
  int priority() const { return priority_; }
  const Topology& topology() const;  // the network's, for algorithms that follow it
  bool initialized() const { return initialized_; }
  // What the intra-dimension policy compares while this stream waits for its queue.
  WaitingStream waiting() const;
  std::string Describe() const;

 private:
  friend class NpuSystem;
  void Init();
  void AfterAlgorithmStep();

  NpuSystem& owner_;
  CollectiveInstance* collective_;
  const int id_;
  const int64_t tag_;  // group << 32 | id: unique among the streams of every group
  const int priority_;
  PoolVector<PhaseSpec> phases_;
  size_t next_phase_ = 0;
  int current_queue_ = -1;
  bool initialized_ = false;
  bool phase_finished_ = false;
  Time queued_, started_;  // of the current phase, for the observer
  std::unique_ptr<PhaseAlgorithm> algorithm_;
};

class NpuSystem {
 public:
  NpuSystem(SystemLayer& layer, int id);
  ~NpuSystem();
  NpuSystem(NpuSystem&&) = default;

  int id() const { return id_; }
  // Starts a collective now. The listener is told when all its chunks are done on this NPU.
  Status StartCollective(const CollectiveRequest& req, CollectiveListener* listener,
                         uint64_t token);
  // The NPUs this NPU's collective `req` runs with, as StartCollective runs it: a communicator
  // group's members; for a world collective the NPUs that differ from this one only in the
  // dimensions it spans (its implementation list, cut at a one* entry that spans the machine,
  // and the trace's involved_dim), the whole machine for the other kinds. `first` is the
  // lowest of them: with the k-th collective of the group, it names the same collective on
  // every member. Errors (a group this NPU is not in) are StartCollective's to report.
  struct Span {
    int members = 1;
    int first = 0;
  };
  Span CollectiveSpan(const CollectiveRequest& req) const;
  // Point-to-point (COMM_SEND / COMM_RECV). Completion when the message has arrived.
  void SendMessage(int dst, int64_t tag, uint64_t size, MessageSink* sink, uint64_t cookie);
  void ReceiveMessage(int src, int64_t tag, uint64_t size, MessageSink* sink, uint64_t cookie);

  // Collectives in progress, for deadlock reports.
  std::vector<std::string> DescribeActive() const;
  int active_streams() const { return live_streams_; }

 private:
  friend class Stream;
  struct QueueLevel {
    std::vector<int> queues;
  };
  // Where the round robins over a level's queues stand. One set per communicator group (world =
  // 0): every member starts the group's collectives in the same order, but not the other
  // groups' collectives, so a shared cursor would send one ring's members round it in
  // different directions (and a per-chunk dimension order likewise: Inter).
  struct QueueCursor {
    size_t next = 0, next_first = 0, next_last = 0;
  };
  std::vector<QueueCursor>& Cursors(int group);  // one per level; stable (a map's node)
  InterDimensionScheduler& Inter(int group);
  // Round robin over all queues of a level; its first half, clockwise; its second half,
  // anticlockwise. `cursors`: the collective's group's (Cursors).
  std::pair<int, bool> NextQueue(std::vector<QueueCursor>& cursors, int level);
  std::pair<int, bool> NextQueueFirst(std::vector<QueueCursor>& cursors, int level);
  std::pair<int, bool> NextQueueLast(std::vector<QueueCursor>& cursors, int level);
  int NextPriority(int explicit_priority);
  // A native collective (StartCollective) in stages: its plan (group, logical dimensions), the
  // plan checked against the configuration, each phase of a chunk, the chunks' streams started
  // (how many).
  struct CollectivePlan;
  StatusOr<CollectivePlan> PlanCollective(const CollectiveRequest& request, int native);
  Status CheckPlan(const CollectivePlan& plan) const;
  PhaseSpec MakePlanPhase(const CollectivePlan& plan, CollectiveType type, int dim, uint64_t size,
                          std::pair<int, bool> queue);
  int LaunchStreams(const CollectivePlan& plan, CollectiveInstance* coll, uint64_t size,
                    uint64_t chunk, int priority);
  // Broadcast, reduce, gather, scatter, barrier: one phase per chunk over one logical ring of
  // every NPU (or of the communicator group).
  Status StartNonNative(const CollectiveRequest& req, CollectiveListener* listener, uint64_t token);
  // Network dimension `dim` (or the whole machine for a one* algorithm); with `members`, the
  // ring is those NPUs instead (a hierarchical communicator group's dimension).
  PhaseSpec MakeDimPhase(CollectiveType type, int dim, uint64_t size, std::pair<int, bool> queue,
                         const AlgorithmSpec& algo, const std::vector<int>* members = nullptr);
  // The NPUs of a sub-grid group that differ from this one only in dimension `dim`, whose
  // coordinates there are `coords`: stored once, so phases can point to them.
  const std::vector<int>* GroupDimMembers(int dim, const std::vector<int>& coords);
  void ProceedToNextPhase(Stream* stream);
  void InsertStream(std::deque<Stream*>& queue, Stream* stream);
  void InitWaiting(int queue);
  void NotePhaseDone(const Stream& stream);  // to the observer, if any
  void NoteQueue(int queue);

  SystemLayer& layer_;
  int id_;
  std::vector<QueueLevel> levels_;
  std::vector<std::deque<Stream*>>
      active_;  // per queue, in scheduling order (running first: a deque, so one ending near the
                // front moves only those before it)
  std::vector<int> running_;  // initialised streams per queue
  int queue_threshold_ = 1;
  std::map<int, std::vector<QueueCursor>> cursors_;  // per communicator group
  std::map<int, InterDimensionScheduler> inter_;     // per communicator group
  int priority_counter_ = 0;
  // The next stream (or custom collective) of communicator group `group` (0 = every NPU): 0, 1,
  // 2, ... in the order this NPU starts them, the same on every member.
  int NextStreamId(int group) {
    return group != 0 ? group_stream_counter_[group]++ : stream_counter_++;
  }
  int stream_counter_ = 0;
  std::map<int, int> group_stream_counter_;
  // doubleBinaryTree all-reduce phases per (communicator group, logical dimension); world = 0.
  std::map<std::pair<int, int>, int> tree_counter_;
  std::set<std::vector<int>> group_rings_;  // GroupDimMembers
  int live_streams_ = 0;
  std::vector<std::unique_ptr<CollectiveInstance>> collectives_;  // owned until done
};

class SystemLayer {
 public:
  SystemLayer(Simulation& sim, Network& net, SystemParams params);
  ~SystemLayer();

  // Communicator groups: id > 0, members are NPU ids. Replaces a group with the same id.
  Status AddGroup(int id, std::vector<int> members);
  // Group `id` defined again, as `name` ("process group 3"): `members` (any order) must be the
  // ones it has, or the ranks would disagree on who is in it; the error names both lists.
  Status CheckSameMembers(int id, std::vector<int> members, const std::string& name) const;
  bool HasGroup(int id) const { return groups_.count(id) > 0; }
  // How messages name group `id` (CollectiveOrder::set_group_namer).
  void set_group_namer(const std::function<std::string(int)>& namer) {
    order_.set_group_namer(namer);
    matcher_.set_group_namer(namer);
  }
  std::string GroupName(int id) const { return order_.GroupName(id); }
  // Groups a trace's METADATA node created (not the comm-group file's): a rank may use one only
  // when its own trace defines it too (NpuExecutor), as ASTRA-sim keeps groups per rank.
  void MarkTraceDefined(int id) { trace_defined_groups_.insert(id); }
  bool TraceDefined(int id) const { return trace_defined_groups_.count(id) > 0; }

  NpuSystem& npu(int i) { return npus_[i]; }
  int num_npus() const { return static_cast<int>(npus_.size()); }
  Simulation& sim() { return sim_; }
  Network& net() { return net_; }
  MessageMatcher& matcher() { return matcher_; }
  const SystemParams& params() const { return params_; }
  const Topology& topology() const { return net_.topology(); }
  // Reduction cost of `size` bytes: one write and two reads of local memory (whole ns each).
  Time ReductionDelay(uint64_t size) const;
  Time HandOffDelay(bool fast) const { return fast ? Time::FromNs(10) : endpoint_delay_; }
  const std::vector<int>* GroupMembers(int id) const;
  // The sorted members of `req`'s communicator group, nullptr for all NPUs; an error naming the
  // request if the group is not defined or `npu` is not one of its members.
  StatusOr<const std::vector<int>*> GroupOf(const CollectiveRequest& req, int npu) const;
  void set_observer(SystemObserver* observer) { observer_ = observer; }
  SystemObserver* observer() const { return observer_; }
  // NPU `npu`'s LogGP shared bus with model-shared-bus, else nullptr.
  SharedBus* bus(int npu) { return buses_.empty() ? nullptr : buses_[npu].get(); }
  // Custom (MSCCL-style) algorithms and their runs.
  CustomCollectives& custom() { return *custom_; }
  // NPU `npu` issues `req`: an error if it is not what the group's other members issued at the
  // same position of their sequences (see collective_order.h).
  Status CheckOrder(int npu, const CollectiveRequest& req);
  // Collectives that some members of their group have issued and others never did.
  std::vector<std::string> DescribeIncompleteCollectives(int max_items) const;

  // Sends and receives through the matcher, with ASTRA-sim's rendezvous handshake when
  // --rendezvous-protocol is on: before the data moves, the receiver sends the sender an
  // 8192-byte ready message; the data send starts when it arrives.
  void SendData(const MessageKey& key, MessageSink* on_sent, uint64_t cookie);
  void RecvData(const MessageKey& key, MessageSink* sink, uint64_t cookie);

  // Symmetry reduction (network/symmetry.h; the network must use it too): only `symmetry`'s
  // representatives start collectives and send; messages to other NPUs are matched as their
  // images (MessageMatcher::set_symmetry) and a group's order is checked among its simulated
  // members. Every phase a representative starts is checked to map onto the phase its images
  // would run (CheckPhaseSymmetry); the first that does not aborts the run and says which
  // generator failed, for the caller to run without it.
  void SetSymmetry(const NpuSymmetry* symmetry);
  const NpuSymmetry* symmetry() const { return symmetry_; }
  // The dimension whose generator a phase broke, or -1; and the phase, for a message.
  int broken_symmetry_dim() const { return broken_dim_; }
  const std::string& broken_symmetry_reason() const { return broken_reason_; }
  // Whether phase `p` (as an NPU starts it) maps onto itself under every generator: its ring of
  // members, ascending, goes to a rotation of the ring its images use, by a shift the algorithm
  // allows (any for the ring-like ones, a whole number of nodes for channelRing, none for the
  // trees, halving-doubling and the rooted collectives, whose steps depend on the index).
  bool CheckPhaseSymmetry(const PhaseSpec& p);

 private:
  // A group's members that run (all of them without a symmetry).
  int SimulatedMembers(int group);
  const NpuSymmetry* symmetry_ = nullptr;
  int broken_dim_ = -1;
  std::string broken_reason_;
  std::map<std::tuple<const void*, int, int, int, int>, bool> phase_symmetry_;
  std::map<int, int> simulated_members_;

  Simulation& sim_;
  Network& net_;
  SystemParams params_;
  MessageMatcher matcher_;
  Time endpoint_delay_;
  std::map<int, std::vector<int>> groups_;
  std::set<int> trace_defined_groups_;
  CollectiveOrder order_;
  std::unique_ptr<CustomCollectives> custom_;
  std::vector<NpuSystem> npus_;
  SystemObserver* observer_ = nullptr;
  std::vector<std::unique_ptr<SharedBus>> buses_;

  // The senders' halves of rendezvous handshakes (SendData): each data send waits here for its
  // ready message, then starts. Owned by the layer, so that a send whose ready message never
  // comes (a stuck run) is freed with it (a sink that deleted itself on its message leaked).
  class RendezvousSends final : public MessageSink {
   public:
    explicit RendezvousSends(MessageMatcher& m) : m_(m) {}
    // The receive of `data`'s ready message (`ready`) is posted; `data` is sent when it comes.
    void Wait(const MessageKey& ready, const MessageKey& data, MessageSink* on_sent,
              uint64_t cookie);
    void OnMessage(uint64_t slot) override;

   private:
    struct Pending {
      MessageKey key;
      MessageSink* on_sent = nullptr;
      uint64_t cookie = 0;
    };
    MessageMatcher& m_;
    SlotPool<Pending> pending_;
  };
  RendezvousSends rendezvous_{matcher_};
};

}  // namespace orrery
