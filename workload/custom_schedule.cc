#include "workload/custom_schedule.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "et_feeder/trace.h"

namespace orrery {
namespace {

bool RankFileExists(const std::string& prefix, int r) {
  return access(et::RankTracePath(prefix, r).c_str(), F_OK) == 0;
}

// Ranks 0 .. n-1, up to the first missing file.
StatusOr<std::vector<et::Trace>> ReadRankFiles(const std::string& prefix) {
  et::LoadOptions options;
  options.strict = true;
  std::vector<et::Trace> ranks;
  for (int r = 0; RankFileExists(prefix, r); ++r) {
    StatusOr<et::Trace> t = et::Trace::Load(et::RankTracePath(prefix, r), options);
    if (!t.ok()) return t.status();
    ranks.push_back(std::move(t).value());
  }
  if (ranks.empty()) {
    return Status::Error("custom collective algorithm '" + prefix + "': cannot read " +
                         et::RankTracePath(prefix, 0) +
                         " (one ET per rank, <prefix>.<rank>.et; relative paths start from the "
                         "working directory, as in ASTRA-sim)");
  }
  return ranks;
}

// The peers past the files: how many nodes name one, the highest, and one such node.
struct PeersBeyond {
  int64_t highest = -1;
  int count = 0;
  std::string example;
};

PeersBeyond PeersPastTheFiles(const std::vector<et::Trace>& ranks) {
  const int n = static_cast<int>(ranks.size());
  PeersBeyond b;
  for (const et::Trace& t : ranks) {
    for (uint32_t i = 0; i < t.size(); ++i) {
      const et::NodeType type = t.type(i);
      if (type != et::NodeType::kCommSend && type != et::NodeType::kCommRecv) continue;
      const bool send = type == et::NodeType::kCommSend;
      const auto peer = send ? t.comm_dst(i) : t.comm_src(i);
      if (!peer || *peer < n || *peer >= (int64_t{1} << 16)) continue;
      ++b.count;
      if (*peer > b.highest) {
        b.highest = *peer;
        b.example = t.path() + ": node " + std::to_string(t.id(i)) + " '" + std::string(t.name(i)) +
                    "' has " + (send ? "comm_dst " : "comm_src ") + std::to_string(*peer);
      }
    }
  }
  return b;
}

// A gap in the files: ranks 0 .. n-1 were read, but a higher rank's file exists or the ETs
// name higher ranks as peers. One message naming the missing ranks and files, not one per node
// that talks to them. One node naming a rank past the files, with no file past the gap, is more
// likely a wrong peer than a missing file: CheckNodes reports it.
Status CheckNoRankGap(const std::string& prefix, const std::vector<et::Trace>& ranks) {
  const int n = static_cast<int>(ranks.size());
  const PeersBeyond beyond = PeersPastTheFiles(ranks);
  // The highest rank file past the gap, looking up to 64 ranks beyond the last one found.
  int highest_file = -1;
  for (int r = n + 1, last = n; r <= last + 64; ++r) {
    if (RankFileExists(prefix, r)) highest_file = last = r;
  }
  if (highest_file < 0 && beyond.count <= 1) return Status::Ok();
  const int expected = static_cast<int>(std::max<int64_t>(beyond.highest, highest_file) + 1);
  std::string evidence;
  if (highest_file >= 0) evidence = et::RankTracePath(prefix, highest_file) + " exists";
  if (beyond.count > 0) {
    evidence += std::string(evidence.empty() ? "" : " and ") + std::to_string(beyond.count) +
                (beyond.count == 1 ? " node names " : " nodes name ") +
                (beyond.highest == n
                     ? "rank " + std::to_string(n)
                     : "ranks " + std::to_string(n) + " to " + std::to_string(beyond.highest)) +
                (beyond.count == 1 ? " as a peer" : " as peers") + " (e.g. " + beyond.example + ")";
  }
  std::vector<int> missing;
  for (int r = n; r < expected; ++r) {
    if (!RankFileExists(prefix, r)) missing.push_back(r);
  }
  std::string list, files;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i < 8) list += (i ? ", " : "") + std::to_string(missing[i]);
    if (i < 3) files += (i ? ", " : "") + et::RankTracePath(prefix, missing[i]);
  }
  if (missing.size() > 8) list += ", ... (" + std::to_string(missing.size()) + " ranks)";
  if (missing.size() > 3) files += ", ...";
  return Status::Error(
      "custom collective algorithm '" + prefix + "': " +
      (missing.size() == 1 ? "rank " + list + " is missing (no file "
                           : "ranks " + list + " are missing (no files ") +
      files + "), but " + evidence + "; expected one ET for each rank 0 .. " +
      std::to_string(expected - 1) + " (<prefix>.<rank>.et)" +
      (highest_file >= 0 ? std::string() : ", or peers in [0, " + std::to_string(n - 1) + "]"));
}

// Every node a send, a receive or a compute, its peer another rank, its size given.
Status CheckNodes(const std::string& prefix, const std::vector<et::Trace>& ranks) {
  const int n = static_cast<int>(ranks.size());
  Status problems;
  for (int r = 0; r < n; ++r) {
    const et::Trace& t = ranks[r];
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
  return Status::Ok();
}

// One checked rank's ET as its schedule.
CustomRankSchedule ScheduleOf(const et::Trace& t) {
  CustomRankSchedule s;
  s.source = t.path();
  s.steps.resize(t.size());
  s.parents.resize(t.size());
  s.children.resize(t.size());
  for (uint32_t i = 0; i < t.size(); ++i) {
    CustomRankSchedule::Step& step = s.steps[i];
    step.id = t.id(i);
    switch (t.type(i)) {
      case et::NodeType::kCommSend:
        step.kind = CustomRankSchedule::Kind::kSend;
        step.peer = static_cast<int>(*t.comm_dst(i));
        break;
      case et::NodeType::kCommRecv:
        step.kind = CustomRankSchedule::Kind::kRecv;
        step.peer = static_cast<int>(*t.comm_src(i));
        break;
      default: {
        step.kind = CustomRankSchedule::Kind::kCompute;
        const uint64_t us = t.duration_micros(i);
        step.duration = us == 0 ? Time::FromNs(1) : Time::FromNs(1000 * us);
      }
    }
    if (step.kind != CustomRankSchedule::Kind::kCompute) {
      step.bytes = t.comm_size(i).value_or(0);
      step.tag = t.comm_tag(i).value_or(0);
    }
    for (uint32_t p : t.parents(i)) s.parents[i].push_back(p);
    for (uint32_t c : t.children(i)) s.children[i].push_back(c);
  }
  return s;
}

}  // namespace

StatusOr<std::shared_ptr<const CustomAlgorithm>> LoadCustomAlgorithm(const std::string& prefix) {
  StatusOr<std::vector<et::Trace>> ranks = ReadRankFiles(prefix);
  if (!ranks.ok()) return ranks.status();
  if (Status s = CheckNoRankGap(prefix, *ranks); !s.ok()) return s;
  if (Status s = CheckNodes(prefix, *ranks); !s.ok()) return s;
  std::vector<CustomRankSchedule> schedules;
  for (const et::Trace& t : *ranks) schedules.push_back(ScheduleOf(t));
  return std::shared_ptr<const CustomAlgorithm>(
      std::make_shared<CustomAlgorithm>(prefix, std::move(schedules)));
}

}  // namespace orrery
