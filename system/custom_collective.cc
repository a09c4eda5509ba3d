#include "system/custom_collective.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "et_feeder/feeder.h"
#include "system/collective_engine.h"

namespace orrery {

StatusOr<std::shared_ptr<const CustomAlgorithm>> CustomAlgorithm::Load(const std::string& prefix) {
  auto algo = std::make_shared<CustomAlgorithm>();
  algo->prefix_ = prefix;
  et::LoadOptions options;
  options.strict = true;
  auto exists = [&](int r) { return access(et::RankTracePath(prefix, r).c_str(), F_OK) == 0; };
  for (int r = 0; exists(r); ++r) {
    StatusOr<et::Trace> t = et::Trace::Load(et::RankTracePath(prefix, r), options);
    if (!t.ok()) return t.status();
    algo->ranks_.push_back(std::make_unique<et::Trace>(std::move(t).value()));
  }
  const int n = algo->ranks();
  if (n == 0) {
    return Status::Error("custom collective algorithm '" + prefix + "': cannot read " +
                         et::RankTracePath(prefix, 0) +
                         " (one ET per rank, <prefix>.<rank>.et; relative paths start from the "
                         "working directory, as in ASTRA-sim)");
  }
  // A gap in the files: ranks 0 .. n-1 were read, but a higher rank's file exists or the ETs
  // name higher ranks as peers. One message naming the missing ranks and files, not one per
  // node that talks to them.
  int64_t highest_peer = -1;
  int beyond = 0;
  std::string example;
  for (const auto& t : algo->ranks_) {
    for (uint32_t i = 0; i < t->size(); ++i) {
      const et::NodeType type = t->type(i);
      if (type != et::NodeType::kCommSend && type != et::NodeType::kCommRecv) continue;
      const bool send = type == et::NodeType::kCommSend;
      const auto peer = send ? t->comm_dst(i) : t->comm_src(i);
      if (!peer || *peer < n || *peer >= (int64_t{1} << 16)) continue;
      ++beyond;
      if (*peer > highest_peer) {
        highest_peer = *peer;
        example = t->path() + ": node " + std::to_string(t->id(i)) + " '" +
                  std::string(t->name(i)) + "' has " + (send ? "comm_dst " : "comm_src ") +
                  std::to_string(*peer);
      }
    }
  }
  // The highest rank file past the gap, looking up to 64 ranks beyond the last one found.
  int highest_file = -1;
  for (int r = n + 1, last = n; r <= last + 64; ++r) {
    if (exists(r)) highest_file = last = r;
  }
  const int expected = static_cast<int>(std::max<int64_t>(highest_peer, highest_file) + 1);
  std::string evidence;
  if (highest_file >= 0) evidence = et::RankTracePath(prefix, highest_file) + " exists";
  if (beyond > 0) {
    evidence +=
        std::string(evidence.empty() ? "" : " and ") + std::to_string(beyond) +
        (beyond == 1 ? " node names " : " nodes name ") +
        (highest_peer == n ? "rank " + std::to_string(n)
                           : "ranks " + std::to_string(n) + " to " + std::to_string(highest_peer)) +
        (beyond == 1 ? " as a peer" : " as peers") + " (e.g. " + example + ")";
  }
  // One node naming a rank past the files, with no file past the gap, is more likely a wrong
  // peer than a missing file: it gets the per-node message below.
  if (highest_file >= 0 || beyond > 1) {
    std::vector<int> missing;
    for (int r = n; r < expected; ++r) {
      if (!exists(r)) missing.push_back(r);
    }
    std::string ranks, files;
    for (size_t i = 0; i < missing.size(); ++i) {
      if (i < 8) ranks += (i ? ", " : "") + std::to_string(missing[i]);
      if (i < 3) files += (i ? ", " : "") + et::RankTracePath(prefix, missing[i]);
    }
    if (missing.size() > 8) ranks += ", ... (" + std::to_string(missing.size()) + " ranks)";
    if (missing.size() > 3) files += ", ...";
    return Status::Error(
        "custom collective algorithm '" + prefix + "': " +
        (missing.size() == 1 ? "rank " + ranks + " is missing (no file "
                             : "ranks " + ranks + " are missing (no files ") +
        files + "), but " + evidence + "; expected one ET for each rank 0 .. " +
        std::to_string(expected - 1) + " (<prefix>.<rank>.et)" +
        (highest_file >= 0 ? std::string() : ", or peers in [0, " + std::to_string(n - 1) + "]"));
  }
  Status problems;
  for (int r = 0; r < n; ++r) {
    const et::Trace& t = *algo->ranks_[r];
    for (uint32_t i = 0; i < t.size(); ++i) {
      const std::string where =
          t.path() + ": node " + std::to_string(t.id(i)) + " '" + std::string(t.name(i)) + "'";
      const et::NodeType type = t.type(i);
      if (type == et::NodeType::kComp) continue;
      if (type != et::NodeType::kCommSend && type != et::NodeType::kCommRecv) {
        problems.Add(where + ": node type " + et::NodeTypeName(type) +
                     " in a custom collective; valid: COMM_SEND_NODE, COMM_RECV_NODE, COMP_NODE");
        continue;
      }
      const bool send = type == et::NodeType::kCommSend;
      const auto peer = send ? t.comm_dst(i) : t.comm_src(i);
      if (!peer || *peer < 0 || *peer >= n || *peer == r) {
        problems.Add(where + ": '" + (send ? "comm_dst" : "comm_src") + "' is " +
                     (peer ? std::to_string(*peer) : std::string("missing")) +
                     "; valid: another rank of the algorithm in [0, " + std::to_string(n - 1) +
                     "]");
      }
      if (!t.comm_size(i)) problems.Add(where + ": no 'comm_size'");
    }
  }
  if (!problems.ok()) {
    return problems.Capped(kMaxProblemsPerFile,
                           "the ETs of custom collective algorithm '" + prefix + "'");
  }
  return std::shared_ptr<const CustomAlgorithm>(std::move(algo));
}

// One NPU's part of one custom collective: its rank's ET, fed like a workload.
class CustomRun final : public EventTarget, public MessageSink {
 public:
  CustomRun(SystemLayer& layer, int npu, const CustomAlgorithm& algo, int rank,
            const std::vector<int>* members, int64_t instance, CollectiveListener* listener,
            uint64_t token, std::string label)
      : layer_(layer),
        npu_(npu),
        trace_(algo.rank(rank)),
        feeder_(trace_),
        members_(members),
        instance_(instance),
        listener_(listener),
        token_(token),
        label_(std::move(label)) {}

  void Start() { Issue(); }
  bool done() const { return done_; }
  int npu() const { return npu_; }
  void OnEvent(uint64_t node) override { Finish(static_cast<uint32_t>(node)); }
  void OnMessage(uint64_t node) override { Finish(static_cast<uint32_t>(node)); }
  std::string DescribeCookie(uint64_t node) const override {
    return "custom collective " + label_ + " on NPU " + std::to_string(npu_) + ", " +
           trace_.path() + " node " + std::to_string(trace_.id(static_cast<uint32_t>(node)));
  }
  std::string Describe() const {
    return "custom collective " + label_ + " (" + trace_.path() +
           "): " + std::to_string(feeder_.done_count()) + " of " + std::to_string(trace_.size()) +
           " nodes done";
  }

 private:
  int Npu(int64_t rank) const {
    return members_ ? (*members_)[static_cast<size_t>(rank)] : static_cast<int>(rank);
  }
  // This instance's messages, told apart by the ET's comm_tag (taken modulo 2^24).
  int64_t Tag(uint32_t node) const {
    return instance_ * (int64_t{1} << 24) + (trace_.comm_tag(node).value_or(0) & 0xFFFFFF);
  }

  void Issue() {
    if (issuing_) {
      again_ = true;
      return;
    }
    issuing_ = true;
    do {
      again_ = false;
      // The issuable nodes, lowest first; taking them this way also drops the entries of nodes
      // taken before (Issuable() would scan them again at every step).
      std::vector<uint32_t> ready;
      feeder_.FirstIssuable(0, SIZE_MAX, &ready);
      for (uint32_t node : ready) {
        feeder_.Take(node);
        IssueNode(node);
      }
    } while (again_);
    issuing_ = false;
    if (!done_ && feeder_.AllDone()) {
      done_ = true;
      listener_->OnCollectiveDone(token_);  // may start more collectives: touch nothing after
    }
  }

  void IssueNode(uint32_t node) {
    const uint64_t size = trace_.comm_size(node).value_or(0);
    switch (trace_.type(node)) {
      case et::NodeType::kCommSend:
        layer_.SendData(
            MessageKey{npu_, Npu(*trace_.comm_dst(node)), TagSpace::kCustom, Tag(node), size}, this,
            node);
        return;
      case et::NodeType::kCommRecv:
        layer_.RecvData(
            MessageKey{Npu(*trace_.comm_src(node)), npu_, TagSpace::kCustom, Tag(node), size}, this,
            node);
        return;
      default: {
        const uint64_t us = trace_.duration_micros(node);
        layer_.sim().ScheduleAfter(us == 0 ? Time::FromNs(1) : Time::FromNs(1000 * us), this, node);
        return;
      }
    }
  }

  void Finish(uint32_t node) {
    feeder_.Finish(node);
    Issue();
  }

  SystemLayer& layer_;
  const int npu_;
  const et::Trace& trace_;
  et::Feeder feeder_;
  const std::vector<int>* members_;
  const int64_t instance_;
  CollectiveListener* listener_;
  const uint64_t token_;
  const std::string label_;
  bool issuing_ = false;
  bool again_ = false;
  bool done_ = false;
};

CustomCollectives::CustomCollectives(SystemLayer& layer) : layer_(layer) {}
CustomCollectives::~CustomCollectives() = default;

void CustomCollectives::SetForType(CollectiveType type,
                                   std::shared_ptr<const CustomAlgorithm> algorithm) {
  by_type_[type] = std::move(algorithm);
}

void CustomCollectives::SetForNode(uint64_t node_id,
                                   std::shared_ptr<const CustomAlgorithm> algorithm) {
  by_node_[node_id] = std::move(algorithm);
}

const CustomAlgorithm* CustomCollectives::Find(const CollectiveRequest& req) const {
  if (req.node_id >= 0) {
    auto it = by_node_.find(static_cast<uint64_t>(req.node_id));
    if (it != by_node_.end()) return it->second.get();
  }
  auto it = by_type_.find(req.type);
  return it == by_type_.end() ? nullptr : it->second.get();
}

Status CustomCollectives::Start(int npu, const CustomAlgorithm& algorithm,
                                const CollectiveRequest& req, int sequence,
                                CollectiveListener* listener, uint64_t token) {
  // Finished runs are dropped here. The run whose completion led to this call may be one of
  // them: it touches nothing after telling its listener (as a stream that finishes).
  runs_.remove_if([](const std::unique_ptr<CustomRun>& r) { return r->done(); });
  StatusOr<const std::vector<int>*> group = layer_.GroupOf(req, npu);
  if (!group.ok()) return group.status();
  const std::vector<int>* members = *group;
  int rank = npu;
  int size = layer_.num_npus();
  if (members != nullptr) {
    rank = static_cast<int>(std::find(members->begin(), members->end(), npu) - members->begin());
    size = static_cast<int>(members->size());
  }
  if (algorithm.ranks() != size) {
    return Status::Error(req.label + ": custom collective algorithm '" + algorithm.prefix() +
                         "' has " + std::to_string(algorithm.ranks()) + " ranks (" +
                         et::RankTracePath(algorithm.prefix(), 0) + " .. " +
                         et::RankTracePath(algorithm.prefix(), algorithm.ranks() - 1) +
                         ") but the collective runs on " + std::to_string(size) +
                         " NPUs; it needs one ET per NPU of its group");
  }
  auto it = instances_.find({req.group, sequence});
  if (it == instances_.end()) {
    it = instances_.emplace(std::make_pair(req.group, sequence), Instance{next_instance_++, size})
             .first;
  }
  const int64_t instance = it->second.id;
  if (--it->second.members_to_start == 0) instances_.erase(it);
  runs_.push_back(std::make_unique<CustomRun>(layer_, npu, algorithm, rank, members, instance,
                                              listener, token, req.label));
  runs_.back()->Start();
  return Status::Ok();
}

std::vector<std::string> CustomCollectives::DescribeActive(int npu) const {
  std::vector<std::string> out;
  for (const auto& r : runs_) {
    if (r->npu() == npu && !r->done()) out.push_back(r->Describe());
  }
  return out;
}

}  // namespace orrery
