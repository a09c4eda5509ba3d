#include "system/custom_collective.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>

#include "system/collective_engine.h"

namespace orrery {

// One NPU's part of one custom collective: its rank's schedule, each step issued when the steps
// it waits for are done, the ready ones lowest index first.
class CustomRun final : public EventTarget, public MessageSink {
 public:
  CustomRun(SystemLayer& layer, int npu, const CustomAlgorithm& algo, int rank,
            const std::vector<int>* members, int64_t instance, CollectiveListener* listener,
            uint64_t token, std::string label)
      : layer_(layer),
        npu_(npu),
        schedule_(algo.rank(rank)),
        members_(members),
        instance_(instance),
        listener_(listener),
        token_(token),
        label_(std::move(label)) {
    waiting_.reserve(schedule_.steps.size());
    for (size_t s = 0; s < schedule_.steps.size(); ++s) {
      waiting_.push_back(static_cast<uint32_t>(schedule_.parents[s].size()));
      if (waiting_.back() == 0) ready_.push(static_cast<uint32_t>(s));
    }
  }

  void Start() { Issue(); }
  bool done() const { return done_; }
  int npu() const { return npu_; }
  void OnEvent(uint64_t step) override { Finish(static_cast<uint32_t>(step)); }
  void OnMessage(uint64_t step) override { Finish(static_cast<uint32_t>(step)); }
  std::string DescribeCookie(uint64_t step) const override {
    return "custom collective " + label_ + " on NPU " + std::to_string(npu_) + ", " +
           schedule_.source + " node " + std::to_string(schedule_.steps[step].id);
  }
  std::string Describe() const {
    return "custom collective " + label_ + " (" + schedule_.source +
           "): " + std::to_string(done_count_) + " of " + std::to_string(schedule_.steps.size()) +
           " nodes done";
  }

 private:
  using Step = CustomRankSchedule::Step;

  int Npu(int rank) const {
    return members_ ? (*members_)[static_cast<size_t>(rank)] : static_cast<int>(rank);
  }
  // This instance's messages, told apart by the step's tag (taken modulo 2^24).
  int64_t Tag(const Step& s) const { return instance_ * (int64_t{1} << 24) + (s.tag & 0xFFFFFF); }

  void Issue() {
    if (issuing_) {
      again_ = true;
      return;
    }
    issuing_ = true;
    do {
      again_ = false;
      // The steps ready now, lowest first; those that become ready meanwhile wait for the next
      // round.
      std::vector<uint32_t> ready;
      while (!ready_.empty()) {
        ready.push_back(ready_.top());
        ready_.pop();
      }
      for (uint32_t step : ready) IssueStep(step);
    } while (again_);
    issuing_ = false;
    if (!done_ && done_count_ == schedule_.steps.size()) {
      done_ = true;
      listener_->OnCollectiveDone(token_);  // may start more collectives: touch nothing after
    }
  }

  void IssueStep(uint32_t step) {
    const Step& s = schedule_.steps[step];
    switch (s.kind) {
      case CustomRankSchedule::Kind::kSend:
        layer_.SendData(MessageKey{npu_, Npu(s.peer), TagSpace::kCustom, Tag(s), s.bytes}, this,
                        step);
        return;
      case CustomRankSchedule::Kind::kRecv:
        layer_.RecvData(MessageKey{Npu(s.peer), npu_, TagSpace::kCustom, Tag(s), s.bytes}, this,
                        step);
        return;
      case CustomRankSchedule::Kind::kCompute:
        layer_.sim().ScheduleAfter(s.duration, this, step);
        return;
    }
  }

  void Finish(uint32_t step) {
    ++done_count_;
    for (uint32_t child : schedule_.children[step]) {
      if (--waiting_[child] == 0) ready_.push(child);
    }
    Issue();
  }

  SystemLayer& layer_;
  const int npu_;
  const CustomRankSchedule& schedule_;
  std::vector<uint32_t> waiting_;  // per step, the steps it waits for that are not done
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready_;
  size_t done_count_ = 0;
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
    return Status::Error(
        req.label + ": custom collective algorithm '" + algorithm.prefix() + "' has " +
        std::to_string(algorithm.ranks()) + " ranks (" + algorithm.rank(0).source + " .. " +
        algorithm.rank(algorithm.ranks() - 1).source + ") but the collective runs on " +
        std::to_string(size) + " NPUs; it needs one ET per NPU of its group");
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
